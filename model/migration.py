"""One group id, both protocols: the classic group and the KIP-848 consumer group that may take
its place, and the rules for going from one to the other (online migration, KIP-848).

A group id names at most one group, of one type (``GroupMetadataManager.groups``). Each request is
answered by the rules of the group that exists, or by those that create one. This model is the
classic model (``ClassicGroupModel``) and the consumer model (``ConsumerGroupModel``) side by side,
at most one of them with a live group, and the crossing rules below, read at Apache Kafka 4.3.1
(``group-coordinator/src/main/java/org/apache/kafka/coordinator/group/GroupMetadataManager.java``,
``GMM`` below):

1. **A ConsumerGroupHeartbeat meets a classic group.** It is validated first
   (``GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid``: ``INVALID_REQUEST``,
   ``UNSUPPORTED_ASSIGNOR``). A join (epoch 0) finds the group with
   ``GMM.getOrMaybeCreateConsumerGroup(createIfNotExists=true)``: an Empty classic group (pending
   KIP-394 members or not) is deleted (``maybeDeleteEmptyClassicGroup``: its timers cancelled) and
   a new consumer group is made; its committed offsets stay, they are the group id's
   (``OffsetMetadataManager``). A classic group with members is upgraded online only if
   ``group.consumer.migration.policy`` allows it (``validateOnlineUpgrade``), else
   ``GROUP_ID_NOT_FOUND``. Any other epoch, a leave included, and ConsumerGroupDescribe, read the
   group with ``GMM.consumerGroup``: ``GROUP_ID_NOT_FOUND`` ("is not a consumer group").
2. **A JoinGroup meets a consumer group** (``GMM.classicGroupJoin``). An Empty consumer group is
   deleted (``maybeDeleteEmptyConsumerGroup``) and the join goes on as a join to a group that does
   not exist (``classicGroupJoinToClassicGroup``), offsets kept. A join with a member id meets
   no group then and is refused ``UNKNOWN_MEMBER_ID``; whether the deletion stays without a record
   written is kept open (the consumer group stays, or is gone). A consumer group with members
   takes classic members only if the policy is not ``disabled``
   (``throwIfClassicMemberCannotJoinConsumerGroup``), else ``INCONSISTENT_GROUP_PROTOCOL``, after
   the session-timeout check of ``GroupCoordinatorService.joinGroup`` (``INVALID_SESSION_TIMEOUT``).
3. **Other classic requests meet a consumer group.** SyncGroup (``classicGroupSync``): v5+ without
   protocol type and name ``INCONSISTENT_GROUP_PROTOCOL`` first (``KafkaApis``); an Empty group
   ``UNKNOWN_MEMBER_ID``; then, as Heartbeat (``classicGroupHeartbeatToConsumerGroup``), the member
   is looked up (``validateConsumerGroupMember``): by instance id if one is given (unknown:
   ``UNKNOWN_MEMBER_ID``; held by another member id: ``FENCED_INSTANCE_ID``), else by member id
   (unknown: ``UNKNOWN_MEMBER_ID``); a member of the consumer protocol is ``UNKNOWN_MEMBER_ID``
   too (``throwIfMemberDoesNotUseClassicProtocol``). LeaveGroup
   (``classicGroupLeaveToConsumerGroup``) answers each member: unknown ``UNKNOWN_MEMBER_ID``, an
   instance id held by another member id ``FENCED_INSTANCE_ID``, else the member, of either
   protocol, is removed as on a consumer-protocol leave (``consumerGroupFenceMembers``: the group
   epoch is bumped). DescribeGroups reads the group with ``GMM.classicGroup``: as for a group that
   does not exist (``Dead``; v6+ ``GROUP_ID_NOT_FOUND``). OffsetCommit and OffsetFetch are the
   consumer group's (``ConsumerGroup.validateOffsetCommit``/``validateOffsetFetch``).
4. **No group.** Every request goes to the classic rules, except ConsumerGroupHeartbeat and
   ConsumerGroupDescribe. An OffsetCommit with generation -1 there makes a classic group, Empty,
   with the offsets (``OffsetMetadataManager.validateOffsetCommit`` →
   ``getOrMaybeCreateClassicGroup``): rule 1 deletes it when a consumer member joins.

Only ``group.consumer.migration.policy=disabled`` is modelled so far. Under the other policies a
consumer member joining a classic group with members converts it (``convertToConsumerGroup``)
and classic members join a consumer group with members (``classicGroupJoinToConsumerGroup``;
with downgrade, ``convertToClassicGroup`` when the last consumer-protocol member leaves): not
modelled yet, so :class:`MigrationConfig` refuses those policies.

Pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from kgc.model.commands import (
    ConsumerGroupDescribe,
    ConsumerGroupHeartbeat,
    DescribeGroups,
    FindCoordinator,
    Heartbeat,
    HeartbeatResponse,
    JoinGroup,
    JoinGroupResponse,
    LeaveGroup,
    LeaveGroupResponse,
    MemberResult,
    OffsetCommit,
    OffsetFetch,
    Request,
    Response,
    SyncGroup,
    SyncGroupResponse,
)
from kgc.model.consumer_group import (
    ConsumerGroupConfig,
    ConsumerGroupModel,
    ConsumerGroupState,
    Sent,
    fence_member,
)
from kgc.model.errors import (
    FENCED_INSTANCE_ID,
    GROUP_ID_NOT_FOUND,
    INCONSISTENT_GROUP_PROTOCOL,
    INVALID_SESSION_TIMEOUT,
    NONE,
    UNKNOWN_MEMBER_ID,
)
from kgc.model.group import ClassicGroupModel
from kgc.model.known_bugs import BugWorld
from kgc.model.profiles import GroupConfig
from kgc.model.state import EMPTY, CommittedOffset, Deferred, GroupState, Outgoing, with_outbox
from kgc.model.timed import TimedModel, Timer

# ``ConsumerGroupMigrationPolicy``: the values Kafka accepts (case-insensitive)
POLICIES = ("bidirectional", "upgrade", "downgrade", "disabled")
MODELLED_POLICIES = ("disabled",)
CLASSIC = "classic"
CONSUMER = "consumer"
DEFERRED = ("mixed", "deferred")  # the held-back request's release (``TimedModel.invoke``)


class PolicyNotModelled(ValueError):
    """The broker converts groups with members online, which the model does not do yet."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MigrationConfig:
    """Both groups' settings, the broker's ``group.consumer.migration.policy`` and the reorder
    window (the models below keep none of their own: this model holds requests back itself)."""

    classic: GroupConfig = field(default_factory=GroupConfig)
    consumer: ConsumerGroupConfig = field(default_factory=ConsumerGroupConfig)
    migration_policy: str = "disabled"
    reorder_window_ms: float = 0.0

    def __post_init__(self) -> None:
        policy = self.migration_policy.lower()
        if policy not in POLICIES:
            # ``ConsumerGroupMigrationPolicy.parse``: anything else is ``disabled``; the broker's
            # ConfigDef refuses it first, so no running broker has one
            raise ValueError(f"unknown group.consumer.migration.policy {self.migration_policy!r}")
        if policy not in MODELLED_POLICIES:
            raise PolicyNotModelled(
                f"group.consumer.migration.policy={policy}: converting a group with members "
                "online is not modelled yet; kgc models the mixed protocols with the policy "
                "disabled"
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class MixedState:
    classic: GroupState = field(default_factory=GroupState)
    consumer: ConsumerGroupState = field(default_factory=ConsumerGroupState)
    deferred: Deferred | None = None
    now_ms: float = 0.0


def _classic_offsets(s: ConsumerGroupState) -> tuple[CommittedOffset, ...]:
    return tuple(
        CommittedOffset(topic=tp.topic, partition=tp.partition, offset=o, metadata=md)
        for tp, o, md in s.offsets
    )


def _consumer_offsets(s: GroupState) -> tuple[Any, ...]:
    from kgc.model.assignors import TopicPartition as TP

    return tuple(sorted((TP(o.topic, o.partition), o.offset, o.metadata) for o in s.offsets))


class MigratingGroupModel(TimedModel[MixedState]):
    """The reference model of one group id that clients of both protocols use."""

    def __init__(self, config: MigrationConfig | None = None) -> None:
        self.config = config or MigrationConfig()
        # the reorder window is this model's: each part processes requests in the order given
        self.classic = ClassicGroupModel(replace(self.config.classic, reorder_window_ms=0.0))
        self.consumer = ConsumerGroupModel(replace(self.config.consumer, reorder_window_ms=0.0))

    def __repr__(self) -> str:
        return f"MigratingGroupModel({self.config.classic.profile.name})"

    # ------------------------------------------------------------------ Model
    def initial(self) -> MixedState:
        return MixedState()

    def group_state(self, state: MixedState) -> str:
        if state.consumer.exists:
            return f"{CONSUMER}/{state.consumer.group_state}"
        if state.classic.exists:
            return f"{CLASSIC}/{state.classic.state}"
        return "Dead"

    def known_bug(self, state: MixedState) -> BugWorld | None:
        return state.classic.known_bug

    def outbox(self, state: MixedState) -> Mapping[int, tuple[Response, float]]:
        return {**self.classic.outbox(state.classic), **self.consumer.outbox(state.consumer)}

    def deliver(self, state: MixedState, request_id: int) -> MixedState:
        return replace(
            state,
            classic=self.classic.deliver(state.classic, request_id),
            consumer=self.consumer.deliver(state.consumer, request_id),
        )

    def fault(
        self, state: MixedState, *, action: str, node: int, at_ms: float
    ) -> Iterable[MixedState]:
        return [state]

    def vanished(self, state: MixedState) -> MixedState | None:
        classic = self.classic.vanished(state.classic)
        if classic is not None:
            return replace(state, classic=classic)
        consumer = self.consumer.vanished(state.consumer)
        if consumer is not None:
            return replace(state, consumer=consumer)
        return None

    def timers(self, state: MixedState) -> list[tuple[float, str, str]]:
        out = self.classic.timers(state.classic) + self.consumer.timers(state.consumer)
        if state.deferred is not None:
            out.append((state.deferred.at_ms + self.config.reorder_window_ms, "deferred", ""))
        return sorted(out)

    def next_timer(self, state: MixedState) -> Timer | None:
        candidates: list[Timer] = []
        t = self.classic.next_timer(state.classic)
        if t is not None:
            candidates.append((t[0], (CLASSIC, t[1]), t[2]))
        t = self.consumer.next_timer(state.consumer)
        if t is not None:
            candidates.append((t[0], (CONSUMER, t[1]), t[2]))
        if state.deferred is not None:
            candidates.append((state.deferred.at_ms + self.config.reorder_window_ms, DEFERRED, ""))
        # a held-back request is released before the coordinator's timers due with it
        return min(candidates, key=lambda c: (c[0], c[1] != DEFERRED), default=None)

    def tied(self, state: MixedState, timer: Timer) -> list[Timer]:
        deadline, (part, kind), key = timer
        if part != CLASSIC:
            return []
        return [
            (d, (CLASSIC, k), x)
            for d, k, x in self.classic.tied(state.classic, (deadline, kind, key))
        ]

    def fire(self, state: MixedState, timer: Timer) -> list[MixedState]:
        deadline, (part, kind), key = timer
        now = max(state.now_ms, deadline)
        if (part, kind) == DEFERRED:
            d = state.deferred
            assert d is not None
            return self.apply(replace(state, deferred=None), d.request_id, d.command, d.at_ms)
        if part == CLASSIC:
            return [
                replace(state, classic=c, now_ms=now)
                for c in self.classic.fire(state.classic, (deadline, kind, key))
            ]
        return [
            replace(state, consumer=c, now_ms=now)
            for c in self.consumer.fire(state.consumer, (deadline, kind, key))
        ]

    # ------------------------------------------------------------------ requests
    def apply(
        self, state: MixedState, request_id: int, command: Request, at_ms: float
    ) -> list[MixedState]:
        now = max(state.now_ms, at_ms)
        s = replace(
            state,
            now_ms=now,
            classic=replace(state.classic, now_ms=max(state.classic.now_ms, now)),
            consumer=replace(state.consumer, now_ms=max(state.consumer.now_ms, now)),
        )
        if isinstance(command, ConsumerGroupHeartbeat | ConsumerGroupDescribe):
            return self._consumer_request(s, request_id, command, at_ms)
        if s.consumer.exists and not isinstance(command, FindCoordinator):
            return self._classic_request_to_consumer_group(s, request_id, command, at_ms)
        return [
            replace(s, classic=c) for c in self.classic.apply(s.classic, request_id, command, at_ms)
        ]

    def _on_consumer(
        self,
        s: MixedState,
        consumer: ConsumerGroupState,
        request_id: int,
        command: Request,
        at_ms: float,
    ) -> list[MixedState]:
        return [
            replace(s, consumer=c)
            for c in self.consumer.apply(consumer, request_id, command, at_ms)
        ]

    def _consumer_request(
        self, s: MixedState, request_id: int, command: Request, at_ms: float
    ) -> list[MixedState]:
        """Rule 1 (and rule 4: a consumer request with no group is the consumer model's)."""
        c = command
        if not s.classic.exists or not isinstance(c, ConsumerGroupHeartbeat):
            # ConsumerGroupDescribe of a classic group: the consumer part has no group
            return self._on_consumer(s, s.consumer, request_id, c, at_ms)
        if c.member_epoch != 0 or self.consumer._invalid(c) is not None:
            # validation first, then ``GMM.consumerGroup``: the consumer part has no group
            return self._on_consumer(s, s.consumer, request_id, c, at_ms)
        if s.classic.state == EMPTY:
            # ``maybeDeleteEmptyClassicGroup``: the classic group goes (its timers with it), the
            # offsets stay with the group id; the member ids the classic part named stay named
            classic = GroupState(
                issued_ids=s.classic.issued_ids,
                unrevealed=s.classic.unrevealed,
                outbox=s.classic.outbox,
                now_ms=s.classic.now_ms,
            )
            consumer = replace(s.consumer, offsets=_consumer_offsets(s.classic))
            return self._on_consumer(replace(s, classic=classic), consumer, request_id, c, at_ms)
        # ``validateOnlineUpgrade`` with the upgrade disabled
        return [self._answer_consumer(s, request_id, self.consumer._error(GROUP_ID_NOT_FOUND))]

    def _answer_consumer(self, s: MixedState, request_id: int, response: Response) -> MixedState:
        sent = Sent(request_id=request_id, response=response, emitted_at_ms=s.now_ms)
        return replace(s, consumer=replace(s.consumer, outbox=s.consumer.outbox + (sent,)))

    def _answer_classic(self, s: MixedState, request_id: int, response: Response) -> MixedState:
        out = Outgoing(request_id=request_id, response=response, emitted_at_ms=s.now_ms)
        return replace(s, classic=with_outbox(s.classic, s.classic.outbox + (out,)))

    def _classic_request_to_consumer_group(
        self, s: MixedState, request_id: int, command: Request, at_ms: float
    ) -> list[MixedState]:
        """Rules 2 and 3."""
        if isinstance(command, OffsetCommit | OffsetFetch):
            return self._on_consumer(s, s.consumer, request_id, command, at_ms)
        if isinstance(command, DescribeGroups):
            # ``GMM.classicGroup``: as for no group; the classic part has none
            return [
                replace(s, classic=c)
                for c in self.classic.apply(s.classic, request_id, command, at_ms)
            ]
        if isinstance(command, JoinGroup):
            return self._join(s, request_id, command, at_ms)
        if isinstance(command, SyncGroup):
            v = command.version
            if v >= 5 and (command.protocol_type is None or command.protocol_name is None):
                error = INCONSISTENT_GROUP_PROTOCOL
            elif not s.consumer.members:
                error = UNKNOWN_MEMBER_ID
            else:
                instance = command.group_instance_id if v >= 3 else None
                error = self._member_error(s.consumer, command.member_id, instance)
            return [self._answer_classic(s, request_id, SyncGroupResponse(error=error))]
        if isinstance(command, Heartbeat):
            instance = command.group_instance_id if command.version >= 3 else None
            error = self._member_error(s.consumer, command.member_id, instance)
            return [self._answer_classic(s, request_id, HeartbeatResponse(error=error))]
        if isinstance(command, LeaveGroup):
            return [self._leave(s, request_id, command)]
        raise ValueError(f"{command.type} is not a request of the migrating group model")

    def _member_error(
        self, consumer: ConsumerGroupState, member_id: str, instance_id: str | None
    ) -> str:
        """``validateConsumerGroupMember`` then ``throwIfMemberDoesNotUseClassicProtocol``: every
        member here uses the consumer protocol, so the answer is an error whatever it finds."""
        if instance_id is not None:
            static = consumer.static_member(instance_id)
            if static is not None and static.member_id != member_id:
                return FENCED_INSTANCE_ID
        return UNKNOWN_MEMBER_ID

    def _leave(self, s: MixedState, request_id: int, command: LeaveGroup) -> MixedState:
        """``classicGroupLeaveToConsumerGroup`` (v3+; the suite sends no older LeaveGroup here)."""
        if command.version < 3:
            raise ValueError("LeaveGroup below v3 to a consumer group is not modelled")
        consumer = s.consumer
        results: list[MemberResult] = []
        leaving: list[str] = []
        for x in command.members:
            if x.group_instance_id is None:
                member = consumer.member(x.member_id)
                error = UNKNOWN_MEMBER_ID if member is None else NONE
            else:
                member = consumer.static_member(x.group_instance_id)
                if member is None:
                    error = UNKNOWN_MEMBER_ID
                elif x.member_id and member.member_id != x.member_id:
                    error = FENCED_INSTANCE_ID
                else:
                    error = NONE
            if error == NONE and member is not None:
                leaving.append(member.member_id)
            results.append(
                MemberResult(
                    member_id=x.member_id, group_instance_id=x.group_instance_id, error=error
                )
            )
        if leaving:
            # ``consumerGroupFenceMembers``: one epoch bump for all of them
            epoch = consumer.group_epoch
            for member_id in dict.fromkeys(leaving):
                consumer = fence_member(consumer, member_id)
            consumer = replace(consumer, group_epoch=epoch + 1)
        s = replace(s, consumer=consumer)
        return self._answer_classic(
            s, request_id, LeaveGroupResponse(error=NONE, members=tuple(results))
        )

    def _join(
        self, s: MixedState, request_id: int, command: JoinGroup, at_ms: float
    ) -> list[MixedState]:
        """Rule 2."""
        cfg = self.config.classic
        if (
            not cfg.group_min_session_timeout_ms
            <= command.session_timeout_ms
            <= (cfg.group_max_session_timeout_ms)
        ):
            # ``GroupCoordinatorService.joinGroup``, before the group is read
            error = JoinGroupResponse(error=INVALID_SESSION_TIMEOUT, member_id=command.member_id)
            return [self._answer_classic(s, request_id, error)]
        if s.consumer.members:
            # ``throwIfClassicMemberCannotJoinConsumerGroup`` (policy disabled)
            return [
                self._answer_classic(
                    s, request_id, JoinGroupResponse(error=INCONSISTENT_GROUP_PROTOCOL)
                )
            ]
        # ``maybeDeleteEmptyConsumerGroup``: the consumer group goes, the offsets stay
        consumer = ConsumerGroupState(
            outbox=s.consumer.outbox, now_ms=s.consumer.now_ms, deferred=s.consumer.deferred
        )
        classic = replace(s.classic, offsets=_classic_offsets(s.consumer))
        gone = replace(s, consumer=consumer, classic=classic)
        out = [
            replace(gone, classic=c)
            for c in self.classic.apply(gone.classic, request_id, command, at_ms)
        ]
        if command.member_id:
            # refused UNKNOWN_MEMBER_ID with no record written: the deletion may not stay
            out += [
                replace(s, classic=replace(c, offsets=()))
                for c in self.classic.apply(
                    replace(s.classic, offsets=()), request_id, command, at_ms
                )
            ]
        return out


def describe_config(config: MigrationConfig) -> dict[str, Any]:
    """The policy, for reports (the two parts' configs are in the manifest record)."""
    return {"migration_policy": config.migration_policy}
