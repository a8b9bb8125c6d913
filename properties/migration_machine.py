"""Both protocols on one group id: the classic machine's clients and KIP-848 consumers side by
side, checked against :class:`~kgc.model.consumer.migration.MigratingGroupModel`.

The classic clients are :class:`~kgc.properties.machine.GroupMachine`'s, with all its rules and
invariants. Up to :data:`MAX_CONSUMERS` consumers join beside them with ConsumerGroupHeartbeat, as
a consumer with ``group.protocol=consumer`` does — the consumer machine's
:class:`~kgc.model.client_view.ConsumerView`, subscribed to the run's topic by name: a member id of
its own (KIP-1082), epoch 0 to join with a full request, then the epoch and the partitions it was
last given; on ``FENCED_MEMBER_EPOCH``, ``UNKNOWN_MEMBER_ID`` or ``GROUP_ID_NOT_FOUND`` it drops its
partitions and joins again. So the group id passes from one protocol to the other whenever one
side's group is Empty, and each side meets the other's group while it has members: what the
crossing rules of ``model/consumer/migration.py`` are about.

``aim`` is off here: its candidates and cells are the classic machine's alone.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import Bundle, initialize, rule
from kgc.model.client_view import ConsumerView, consumer_version, simple_commit
from kgc.model.commands import (
    NO_GENERATION,
    JoinGroupResponse,
    LeaveGroup,
    MemberIdentity,
    Response,
    TopicPartitionOffset,
)
from kgc.model.errors import NONE
from kgc.properties.machine import VERSION_INDEX, GroupMachine, SuiteContext

MAX_CONSUMERS = 2
REBALANCE_TIMEOUTS_MS = (1000, 2000)
CONSUMER_ACTIONS = (
    "beat",
    "beat",
    "leave",
    "stale",
)  # ``consumers_act``; heartbeats twice as often


class MigrationMachine(GroupMachine):
    """Classic clients and consumers on one group id (:func:`migration_machine_for` binds it)."""

    consumers = Bundle("migration_consumers")

    def __init__(self) -> None:
        super().__init__()
        self.consumer_views: dict[str, ConsumerView] = {}
        self.crossed = False  # a JoinGroup was answered by a consumer group (``_learn``)

    def aim(self, plan: tuple[int, int, int]) -> None:  # not a rule here (module docstring)
        return None

    def _learn(self, request: Any, response: Response) -> None:
        k = self.consumer_views.get(request.client)
        if k is None:
            if isinstance(response, JoinGroupResponse) and response.error == NONE:
                if not response.leader:
                    # a consumer group's answer (``classicGroupJoinToConsumerGroup``): the
                    # generation is the member's own epoch and no member leads, so the classic
                    # invariants on leaders and generations do not apply; a classic group met
                    # after it (a downgrade, or a group made anew) starts their record again
                    self.crossed = True
                    view = self.views.get(request.client)
                    if view is not None:
                        view.learn(response)
                    return
                if self.crossed:
                    self.crossed = False
                    self.leaders, self.max_generation = {}, NO_GENERATION
            super()._learn(request, response)
            return
        k.learn(request, response)

    def _add_consumer(self, rebalance: int) -> str:
        if len(self.consumer_views) >= MAX_CONSUMERS:
            return f"k{MAX_CONSUMERS}"
        name = f"k{len(self.consumer_views) + 1}"
        self.consumer_views[name] = ConsumerView(
            client=name, rebalance_timeout_ms=rebalance, topics=(self.topic,)
        )
        return name

    @initialize(
        target=consumers,
        rebalance=st.sampled_from(REBALANCE_TIMEOUTS_MS),
        first=st.sampled_from(("commit", "join", "none")),
        vi=VERSION_INDEX,
    )
    def first_consumer(self, rebalance: int, first: str, vi: int) -> str:
        """A consumer from the start. ``first``: it joins before anything else (the group id
        starts as a consumer group, which the classic clients meet), or it commits an offset
        from outside any membership (generation -1), which makes an Empty classic group with
        offsets: one the coordinator's cleanup never deletes, so each Empty state after it is
        certain, and its cells count (an Empty group without offsets may be gone at any moment:
        the model cannot say which, and its cells go to ``?``)."""
        name = self._add_consumer(rebalance)
        if first == "join":
            self._heartbeat(name, vi)
        elif first == "commit":
            offsets = (TopicPartitionOffset(topic=self.topic, partition=0, offset=vi),)
            self._run(
                simple_commit(
                    name, offsets=offsets, version=self.context.version("OffsetCommit", vi)
                )
            )
        return name

    @initialize(target=consumers, rebalance=st.sampled_from(REBALANCE_TIMEOUTS_MS))
    def second_consumer(self, rebalance: int) -> str:
        """Two consumers from the start: one may revoke while the other waits (Reconciling)."""
        return self._add_consumer(rebalance)

    @rule(target=consumers, rebalance=st.sampled_from(REBALANCE_TIMEOUTS_MS))
    def new_consumer(self, rebalance: int) -> str:
        """Another consumer (at most :data:`MAX_CONSUMERS`; one drawn past that is the last one
        again, so the draw never depends on what the machine did)."""
        return self._add_consumer(rebalance)

    @rule(side=st.sampled_from(("classic", "consumer")), vi=VERSION_INDEX, take_over=st.booleans())
    def hand_over(self, side: str, vi: int, take_over: bool) -> None:
        """Every member of one protocol leaves, so the group id can pass to the other one; with
        ``take_over`` a client of the other protocol then joins at once."""
        if side == "consumer":
            for name, k in self.consumer_views.items():
                if k.member_epoch > 0:
                    self._heartbeat(name, vi, epoch=-1, owned="null")
            if take_over and self.views:
                self._enter(min(self.views), self.context.version("JoinGroup", vi))
            return
        version = self.context.version("LeaveGroup", vi)
        for name, v in self.views.items():
            if v.member_id and self._idle(name):
                command = v.leave_group(version=version, who="self")
                if command is not None:
                    self._run(command)
        if take_over and self.consumer_views:
            self._heartbeat(min(self.consumer_views), vi)

    def _heartbeat(
        self, client: str, vi: int, *, epoch: int | None = None, owned: str = "acked"
    ) -> None:
        """The consumer's next heartbeat (:meth:`ConsumerView.heartbeat`); a leave reports
        nothing as owned (``owned="null"``)."""
        if not self._idle(client):
            return
        command = self.consumer_views[client].heartbeat(
            index=vi, negotiated=self.context.versions, epoch=epoch, owned=owned
        )
        if command is not None:
            self._run(command)

    @rule(consumer=consumers, vi=VERSION_INDEX)
    def consumer_heartbeat(self, consumer: str, vi: int) -> None:
        """Join (epoch 0) or heartbeat with the epoch and partitions last given."""
        self._heartbeat(consumer, vi)

    @rule(consumer=consumers, vi=VERSION_INDEX)
    def consumer_leave(self, consumer: str, vi: int) -> None:
        if self.consumer_views[consumer].member_id:
            self._heartbeat(consumer, vi, epoch=-1, owned="null")

    @rule(consumer=consumers, vi=VERSION_INDEX)
    def consumer_stale_epoch(self, consumer: str, vi: int) -> None:
        """A heartbeat with an epoch the consumer has not been given (one past its own): what a
        consumer still holding its epoch from a group that is no longer there sends."""
        k = self.consumer_views[consumer]
        if k.member_id:
            self._heartbeat(consumer, vi, epoch=k.member_epoch + 1)

    @rule(client=GroupMachine.clients, consumer=consumers, vi=VERSION_INDEX)
    def remove_consumer(self, client: str, consumer: str, vi: int) -> None:
        """A classic client's LeaveGroup (v3+) naming a consumer's member id, as an admin tool
        removing members does: a consumer group removes that member
        (``model/consumer/migration.py``, rule 3)."""
        k = self.consumer_views[consumer]
        version = self.context.version_from("LeaveGroup", 3, vi)
        if k.member_id and version is not None and not self._busy(client):
            who = (MemberIdentity(member_id=k.member_id),)
            self._run(LeaveGroup(client=client, members=who, version=version))

    @rule(
        plan=st.lists(
            st.tuples(st.integers(0, MAX_CONSUMERS - 1), st.sampled_from(CONSUMER_ACTIONS)),
            min_size=1,
            max_size=4,
        ),
        vi=VERSION_INDEX,
    )
    def consumers_act(self, plan: list[tuple[int, str]], vi: int) -> None:
        """Several consumer steps in one rule (one drawn argument, so Hypothesis draws it as
        often as any classic rule, which are many more): heartbeats, leaves, a stale epoch."""
        names = sorted(self.consumer_views)
        for index, action in plan:
            name = names[index % len(names)]
            k = self.consumer_views[name]
            if action == "beat":
                self._heartbeat(name, vi)
            elif k.member_id and action == "leave":
                self._heartbeat(name, vi, epoch=-1, owned="null")
            elif k.member_id and action == "stale":
                self._heartbeat(name, vi, epoch=k.member_epoch + 1)

    @rule(consumer=consumers, vi=VERSION_INDEX)
    def consumer_describe(self, consumer: str, vi: int) -> None:
        version = consumer_version("ConsumerGroupDescribe", vi, self.context.versions)
        if self._idle(consumer) and version is not None:
            self._run(self.consumer_views[consumer].describe(version=version))


def migration_machine_for(context: SuiteContext) -> type[MigrationMachine]:
    """A concrete migration machine bound to ``context``."""
    return type("MigrationMachineUnderTest", (MigrationMachine,), {"context": context})
