"""The KIP-848 consumer-protocol state machine: the same engine, checker and traces as the classic
machine, with ConsumerGroupHeartbeat and ConsumerGroupDescribe commands.

Each client behaves as a consumer with ``group.protocol=consumer`` does
(``clients/.../consumer/internals/ConsumerMembershipManager`` / ``AbstractMembershipManager``),
and what it knows and sends is its :class:`~kgc.model.client_view.ConsumerView`: it picks its own
member id (KIP-1082), joins with epoch 0 and a full request, heartbeats with the epoch it was last
given, and reconciles at once: it gives up the partitions missing from an assignment it receives
and reports the new owned set in its next heartbeat. On ``FENCED_MEMBER_EPOCH`` or
``UNKNOWN_MEMBER_ID`` it drops its partitions and rejoins with epoch 0 and the same id. A
consumer may move between the topic by name and a regex over topic names (``subscribe``: one
matching the topic exactly, one with a wildcard, one matching nothing, one that does not
compile), sent at v1, where ``SubscribedTopicRegex`` exists. Rules also send what a broken or
confused client would: a wrong epoch, a stale owned set, an unknown member, an invalid first
heartbeat, an assignor the broker lacks.

Invariants on the target's own answers, no model involved:

* KIP-848's ``NoDoubleClientAssignment``: no partition is owned by two members at the same moment.
  A member owns a partition from the answer that assigns it until the answer that takes it away,
  its leave, or the end of its lease: the send time of its last successful heartbeat plus
  ``group.consumer.session.timeout.ms``, or, while it has not acknowledged a revocation, the send
  time of the heartbeat that brought the revocation plus its rebalance timeout (the coordinator
  fences it then: ``scheduleConsumerGroupRebalanceTimeout``). Send times make both ends no later
  than the coordinator's own deadlines. Z3 checks the intervals
  (``assignment_z3.check_ownership_timeline``) when the example ends.
* A member's epoch never goes backwards while it stays in the group (a rejoin may meet a group
  made anew: an Empty group can be deleted at any time), and no described assignment epoch is
  ahead of its group epoch.
* Every target assignment a ConsumerGroupDescribe shows (once the assignment epoch has caught up
  with the group epoch) keeps its assignor's promises, checked with Z3
  (``assignment_z3.check_generation``): every partition of the subscribed topics has exactly one
  owner among its subscribers, loads are balanced, and for ``uniform`` the owners of the target
  one epoch before keep as much as balance allows. A group with a member subscribed by regex is
  left to the model: the answer does not say what the regex resolved to.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import Bundle, initialize, precondition, rule
from kgc.engine.coverage import consumer_universe
from kgc.model.assignors import Subscription
from kgc.model.client_view import (
    COMMIT_EPOCHS,
    FETCH_AS,
    OWNED_REPORTS,
    ConsumerView,
    consumer_version,
    left_group,
)
from kgc.model.commands import (
    ConsumerGroupDescribeResponse,
    ConsumerGroupHeartbeat,
    ConsumerGroupHeartbeatResponse,
    OffsetCommit,
    OffsetCommitResponse,
    Response,
    TopicPartition,
    TopicPartitionOffset,
)
from kgc.model.errors import NONE
from kgc.properties.machine import (
    AIM_STEPS,
    MAX_CLIENTS,
    TOPIC_PARTITIONS,
    VERSION_INDEX,
    Aimed,
    Cell,
    EngineMachine,
    InvariantError,
    SuiteContext,
)

REBALANCE_TIMEOUTS_MS = (1000, 2000)
ASSIGNORS = (None, "uniform", "range")  # None: the broker's default
DEADLINE_KINDS = ("any", "session", "rebalance")
COMMIT_PARTITIONS = ("owned", "all", "unowned")
COMMIT_METADATA = ("", "kgc", "too-large")
# a subscription a consumer may move to (``subscribe``): the topic by name, or a regex (KIP-848,
# resolved by the coordinator) that matches it exactly, matches it with a wildcard, matches no
# topic, or does not compile; each is built on the run's own topic name, which no other topic
# on the broker shares
SUBSCRIPTIONS = ("names", "exact", "wild", "none", "broken")
CONSUMER_UNIVERSE = frozenset(consumer_universe())  # the cells ``aim`` steers to
# what the rule ``invalid`` sends, by name (a correct consumer sends none of them)
INVALID_REQUESTS = (
    "stranger",
    "no-subscription",
    "owned-on-join",
    "no-timeout",
    "bad-assignor",
    "empty-id",
    "other-instance",
)


@dataclass(slots=True)
class Lease:
    """How long the machine holds one consumer to own what it was given (module docstring): what
    it sees of the member, beside what the consumer knows (its
    :class:`~kgc.model.client_view.ConsumerView`)."""

    sent_ms: float = 0.0  # when its last heartbeat was sent
    alive_until_ms: float = float("-inf")  # send time of the last answered NONE + session
    revoking: frozenset[tuple[str, int]] = frozenset()  # revoked, not yet acknowledged
    revoke_deadline_ms: float = float("inf")  # fenced then unless acknowledged before
    in_group_since_ms: float = float("inf")  # start of its current unbroken stretch in the group

    @property
    def end_ms(self) -> float:
        return min(self.alive_until_ms, self.revoke_deadline_ms)

    def end(self) -> None:
        """The member is out of the group: no lease, nothing being revoked."""
        self.alive_until_ms = float("-inf")
        self.revoking, self.revoke_deadline_ms = frozenset(), float("inf")
        self.in_group_since_ms = float("inf")


class ConsumerGroupMachine(EngineMachine):
    """The consumer protocol's rules. Subclassed by :func:`consumer_machine_for`."""

    clients = Bundle("consumer_clients")

    def __init__(self) -> None:
        super().__init__()
        self.views: dict[str, ConsumerView] = {}
        self.leases: dict[str, Lease] = {}  # by client, as the views
        self.assignor: str | None = None
        self.max_epoch: dict[str, int] = {}  # member id -> highest epoch answered
        self.intervals: list[tuple[str, tuple[str, int], float, float]] = []
        self._open: dict[tuple[str, tuple[str, int]], float] = {}  # (member, tp) -> since
        # (assignment epoch, target, when described) of the last target checked
        self.last_target: tuple[int, dict[str, list[tuple[str, int]]], float] | None = None
        self.committed = False  # an offset was committed: the group can no longer be deleted
        self.next_offset = 0

    def _version(self, api: str, vi: int) -> int | None:
        """The ``vi``-th exercised version of ``api``; None if the target speaks none of them."""
        return consumer_version(api, vi, self.context.versions)

    # ------------------------------------------------------------------ learning
    def _learn(self, request: Any, response: Response) -> None:
        if isinstance(response, OffsetCommitResponse):
            self.committed |= any(p.error == NONE for p in response.partitions)
            return
        if isinstance(response, ConsumerGroupDescribeResponse) and response.error == NONE:
            self._learn_described(response)
            return
        v = self.views.get(request.client)
        if v is None or not isinstance(response, ConsumerGroupHeartbeatResponse):
            return
        if not isinstance(request, ConsumerGroupHeartbeat) or request.member_id != v.member_id:
            return  # an answer about another (bogus) identity: nothing this consumer keeps
        now = self.target.now_ms()
        self._expire(now)
        lease = self.leases[request.client]
        if left_group(request, response):
            self._own(v.member_id, (), min(now, lease.end_ms))
            v.learn(request, response)
            lease.end()
            return
        if response.error != NONE:
            return
        # a rejoin (epoch 0) may meet a group made anew after the old one was deleted
        last = 0 if request.member_epoch == 0 else self.max_epoch.get(v.member_id, 0)
        if response.member_epoch < last:
            self.failed_check = "epoch-backwards"
            raise InvariantError(
                f"member {v.member_id}'s epoch went backwards: {response.member_epoch} after "
                f"{last}\n" + self.report()
            )
        self.max_epoch[v.member_id] = response.member_epoch
        if lease.end_ms < now or lease.in_group_since_ms == float("inf"):
            lease.in_group_since_ms = now  # a new stretch: the group may have been made anew
        lease.alive_until_ms = lease.sent_ms + self._session_ms()
        reported = request.topic_partitions
        if reported is not None and not {(t.topic, t.partition) for t in reported} & lease.revoking:
            lease.revoking, lease.revoke_deadline_ms = frozenset(), float("inf")  # acknowledged
        if response.assignment is not None:
            kept = {(tp.topic, tp.partition) for tp in response.assignment}
            revoked = {(tp.topic, tp.partition) for tp in v.owned} - kept
            if revoked:
                if not lease.revoking:
                    lease.revoke_deadline_ms = lease.sent_ms + v.rebalance_timeout_ms
                lease.revoking = lease.revoking | revoked
        v.learn(request, response)
        if response.assignment is not None:
            self._own(v.member_id, v.owned, now)

    def _learn_described(self, r: ConsumerGroupDescribeResponse) -> None:
        if r.assignment_epoch > r.group_epoch:
            self.failed_check = "epoch-backwards"
            raise InvariantError(
                f"the assignment epoch {r.assignment_epoch} is ahead of the group epoch "
                f"{r.group_epoch}\n" + self.report()
            )
        if r.assignment_epoch != r.group_epoch or not r.members:
            return
        if any(m.subscribed_topic_regex for m in r.members):
            # what a regex resolved to is not in the answer: the model checks these targets
            return
        from kgc.properties.assignment_z3 import check_generation

        target = {
            m.member_id: [(tp.topic, tp.partition) for tp in m.target_assignment] for m in r.members
        }
        previous = None
        now = self.target.now_ms()
        if self.last_target is not None and self.last_target[0] == r.assignment_epoch - 1:
            # the target one epoch before, if it is this group's: an Empty group may have been
            # deleted and made anew in between (its epochs restart), unless a member stayed in
            # the group all along
            epoch, before, at = self.last_target
            if any(
                v.member_id in before
                and v.member_id in target
                and self.leases[name].in_group_since_ms <= at
                and self.leases[name].end_ms >= now
                for name, v in self.views.items()
            ):
                previous = before
        if self.last_target is None or self.last_target[0] != r.assignment_epoch:
            self.last_target = (r.assignment_epoch, target, now)
            result = check_generation(
                {
                    m.member_id: Subscription(
                        topics=m.subscribed_topic_names, group_instance_id=m.instance_id
                    )
                    for m in r.members
                },
                target,
                previous,
                partitions_per_topic={self.topic: TOPIC_PARTITIONS},
                generation_id=r.assignment_epoch,
                assignor="server-range" if r.assignor_name == "range" else r.assignor_name,
                check_handoff=False,
            )
            self.context.assignment_checks += 1
            if str(result.verdict) not in ("PASS", "Verdict.PASS") and self.failed_check is None:
                self.failed_check = "assignment"
                self.failure_message = f"target at epoch {r.assignment_epoch}: {result}\n" + (
                    self.report()
                )

    def _session_ms(self) -> float:
        config = getattr(self.engine.model, "config", None)
        return float(getattr(config, "session_timeout_ms", 45000))

    def _own(self, member: str, owned: tuple[TopicPartition, ...], at: float) -> None:
        """Ownership intervals: close what ``member`` no longer owns, open what it now owns."""
        now_owned = {(tp.topic, tp.partition) for tp in owned}
        for key, since in list(self._open.items()):
            if key[0] == member and key[1] not in now_owned:
                del self._open[key]
                self.intervals.append((member, key[1], since, max(since, at)))
        for tp in now_owned:
            self._open.setdefault((member, tp), at)

    def _expire(self, now: float) -> None:
        """A member whose session ended owns nothing from then on, whatever it believes."""
        for name, v in self.views.items():
            end_ms = self.leases[name].end_ms
            if v.member_epoch > 0 and end_ms < now:
                self._own(v.member_id, (), end_ms)

    def _check_ownership(self) -> None:
        """``NoDoubleClientAssignment`` over the members' own answers, by Z3."""
        from kgc.properties.assignment_z3 import check_ownership_timeline

        now = self.target.now_ms()
        self._expire(now)
        for name, v in self.views.items():
            if v.member_id:
                self._own(v.member_id, (), min(now, self.leases[name].end_ms))
        self.context.assignment_checks += 1
        result = check_ownership_timeline(
            [(m, tp, a / 1000.0, b / 1000.0) for m, tp, a, b in self.intervals]
        )
        if str(result.verdict) not in ("PASS", "Verdict.PASS") and self.failed_check is None:
            self.failed_check = "double-assignment"
            self.failure_message = f"{result}\n" + self.report()

    def teardown(self) -> None:
        if self.failed_check is None:
            self._check_ownership()
        super().teardown()

    # ------------------------------------------------------------------ commands
    def _heartbeat(
        self,
        client: str,
        vi: int,
        *,
        epoch: int | None = None,
        owned: str = "acked",
        member_id: str | None = None,
        **overrides: Any,
    ) -> None:
        if not self._idle(client):
            return
        command = self._heartbeat_command(
            self.views[client], vi, epoch=epoch, owned=owned, member_id=member_id, **overrides
        )
        if command is None:
            return
        if member_id is None:
            self.leases[client].sent_ms = self.target.now_ms()
        self._run(command)

    def _heartbeat_command(
        self,
        v: ConsumerView,
        vi: int,
        *,
        epoch: int | None = None,
        owned: str = "acked",
        member_id: str | None = None,
        **overrides: Any,
    ) -> ConsumerGroupHeartbeat | None:
        """The heartbeat ``v`` sends (``ConsumerView.heartbeat``); building it may give the
        consumer a member id and record what it reports: on a copy, nothing changes."""
        return v.heartbeat(
            index=vi,
            negotiated=self.context.versions,
            epoch=epoch,
            owned=owned,
            member_id=member_id,
            changes=overrides,
        )

    # ------------------------------------------------------------------ rules
    def _add_client(self, rebalance: int, static: bool = False) -> str:
        name = f"c{len(self.views) + 1}"
        self.views[name] = ConsumerView(
            client=name,
            rebalance_timeout_ms=rebalance,
            topics=(self.topic,),
            instance_id=f"{name}-instance" if static else None,
            server_assignor=self.assignor,
        )
        self.leases[name] = Lease()
        return name

    @initialize(assignor=st.sampled_from(ASSIGNORS))
    def choose_assignor(self, assignor: str | None) -> None:
        """One ``group.remote.assignor`` for every consumer of this example (Kafka breaks a tie
        between two assignors by ``HashMap`` order; the model allows both, the search need not
        aim there)."""
        self.assignor = assignor
        for v in self.views.values():  # consumers made before this rule ran
            v.server_assignor = assignor

    client_settings = {
        "rebalance": st.sampled_from(REBALANCE_TIMEOUTS_MS),
        "static": st.booleans(),
    }

    @initialize(target=clients, **client_settings)
    def first_client(self, rebalance: int, static: bool) -> str:
        return self._add_client(rebalance, static)

    @initialize(target=clients, **client_settings)
    def second_client(self, rebalance: int, static: bool) -> str:
        return self._add_client(rebalance, static)

    @rule(target=clients, **client_settings)
    @precondition(lambda self: len(self.views) < MAX_CLIENTS)
    def new_client(self, rebalance: int, static: bool) -> str:
        return self._add_client(rebalance, static)

    @rule(client=clients, vi=VERSION_INDEX)
    def restart(self, client: str, vi: int) -> None:
        """The consumer process restarts: a new member id, epoch 0. A static member takes its
        old place if it left with -2 (``UNRELEASED_INSTANCE_ID`` if it did not); a dynamic one
        is a new member, the old one lingers until its session runs out."""
        if not self._idle(client):
            return
        v, lease = self.views[client], self.leases[client]
        if v.member_id:
            self._own(v.member_id, (), min(self.target.now_ms(), lease.end_ms))
        v.restart()
        lease.revoking, lease.revoke_deadline_ms = frozenset(), float("inf")
        self._heartbeat(client, vi, epoch=0)

    @rule(client=clients, vi=VERSION_INDEX)
    def static_leave(self, client: str, vi: int) -> None:
        """Epoch -2: a static member leaves for a while, keeping its place (and partitions)."""
        v = self.views[client]
        if not v.member_id or v.instance_id is None:
            return
        self._heartbeat(client, vi, epoch=-2, owned="null")

    @rule(client=clients, vi=VERSION_INDEX, owned=st.sampled_from(OWNED_REPORTS))
    def heartbeat(self, client: str, vi: int, owned: str) -> None:
        """What a consumer sends next: a join (epoch 0, full request) when it is not in the
        group, else a heartbeat at its epoch reporting what it owns (``acked``: after
        reconciling the last assignment; ``stale``: what it reported before; ``null``: nothing
        changed, as a heartbeat that omits the field)."""
        self._heartbeat(client, vi, owned=owned)

    @rule(
        plan=st.tuples(
            st.lists(clients, min_size=2, max_size=MAX_CLIENTS, unique=True),
            VERSION_INDEX,
            st.integers(min_value=1, max_value=4),
        )
    )
    def converge(self, plan: tuple[list[str], int, int]) -> None:
        """A macro: the listed consumers heartbeat in turn, ``rounds`` times, each acking what it
        was given — the group moves towards its target assignment, through revocations."""
        members, vi, rounds = plan
        for _ in range(rounds):
            for client in members:
                self._heartbeat(client, vi, owned="acked")

    @rule(client=clients, vi=VERSION_INDEX)
    def rejoin(self, client: str, vi: int) -> None:
        """Epoch 0 with the member's current id: KIP-848's recovery after a lost answer."""
        self._heartbeat(client, vi, epoch=0)

    @rule(client=clients, vi=VERSION_INDEX, delta=st.sampled_from((1, -1, 5)))
    def wrong_epoch(self, client: str, vi: int, delta: int) -> None:
        """A heartbeat at an epoch the member does not have (ahead, or a previous one)."""
        v = self.views[client]
        if v.member_epoch <= 0 or v.member_epoch + delta <= 0:
            return
        self._heartbeat(client, vi, epoch=v.member_epoch + delta, owned="acked")

    @rule(client=clients, vi=VERSION_INDEX)
    def leave(self, client: str, vi: int) -> None:
        v = self.views[client]
        if not v.member_id:
            return
        self._heartbeat(client, vi, epoch=-1, owned="null")

    @rule(
        client=clients,
        vi=VERSION_INDEX,
        what=st.sampled_from(INVALID_REQUESTS),
    )
    def invalid(self, client: str, vi: int, what: str) -> None:
        """Requests a correct consumer never sends, each refused by a rule of its own."""
        fields = self._invalid_fields(client, what)
        if fields is not None:
            self._heartbeat(client, vi, **fields)

    def _invalid_fields(self, client: str, what: str) -> dict[str, Any] | None:
        """The heartbeat fields of :meth:`invalid`'s ``what`` (None: nothing to send)."""
        if what == "stranger":
            stranger = self.views[client].stranger_id()
            return {"epoch": 3, "member_id": stranger, "owned": "null"}
        if what == "no-subscription":
            return {"epoch": 0, "subscribed_topic_names": None, "subscribed_topic_regex": None}
        if what == "owned-on-join":
            tp = TopicPartition(topic=self.topic, partition=0)
            return {"epoch": 0, "topic_partitions": (tp,)}
        if what == "no-timeout":
            return {"epoch": 0, "rebalance_timeout_ms": -1}
        if what == "other-instance":  # another client's instance id: FENCED_INSTANCE_ID
            others = [
                w.instance_id
                for w in self.views.values()
                if w.instance_id and w is not self.views[client]
            ]
            if others and self.views[client].member_epoch > 0:
                return {"owned": "acked", "instance_id": others[0]}
            return None
        if what == "bad-assignor":
            return {"epoch": 0, "server_assignor": "kgc-no-such-assignor"}
        # v1: the member id is the client's to choose (v0 lets the broker pick one)
        return {"epoch": 0, "member_id": "", "version": 1}

    def _regexes_modelled(self) -> bool:
        config = getattr(self.engine.model, "config", None)
        return bool(getattr(config, "regex_subscriptions", False))

    def regex_for(self, how: str) -> str:
        """The regex ``how`` names (``SUBSCRIPTIONS``), built on the run's topic."""
        return {
            "exact": self.topic,
            "wild": f"{self.topic}.*",
            "none": f"{self.topic}-none.*",
            "broken": f"{self.topic}[",
        }[how]

    @rule(client=clients, vi=VERSION_INDEX, how=st.sampled_from(SUBSCRIPTIONS))
    def subscribe(self, client: str, vi: int, how: str) -> None:
        """The consumer changes its subscription (``subscribe(SubscriptionPattern)`` or a topic
        list) and says so in its next heartbeat: a regex, or ``""`` to drop one for topic
        names. A regex that does not compile is refused (``INVALID_REGULAR_EXPRESSION``) and
        changes nothing. Where the model has no regex rules for the broker's release, the
        consumer keeps its topic."""
        v = self.views[client]
        if not self._regexes_modelled() or not self._idle(client):
            return
        regex = None if how == "names" else self.regex_for(how)
        if regex == v.regex:
            return
        if how != "broken":
            v.regex = regex
        if v.member_epoch == 0:  # not in the group: its next join subscribes so
            if how == "broken":
                self._heartbeat(client, vi, epoch=0, subscribed_topic_regex=regex)
            return
        fields: dict[str, Any]
        if regex is None:
            fields = {"subscribed_topic_names": v.topics, "subscribed_topic_regex": ""}
        else:
            fields = {"subscribed_topic_names": (), "subscribed_topic_regex": regex}
        self._heartbeat(client, vi, owned="acked", **fields)

    @rule(client=clients, vi=VERSION_INDEX)
    def describe(self, client: str, vi: int) -> None:
        version = self._version("ConsumerGroupDescribe", vi)
        if self._idle(client) and version is not None:
            self._run(self.views[client].describe(version=version))

    def _partitions(self, v: ConsumerView, which: str) -> tuple[TopicPartition, ...]:
        every = tuple(
            TopicPartition(topic=self.topic, partition=p) for p in range(TOPIC_PARTITIONS)
        )
        if which == "all":
            return every
        owned = v.owned if which == "owned" else tuple(tp for tp in every if tp not in v.owned)
        return owned or every[:1]

    @rule(
        client=clients,
        vi=VERSION_INDEX,
        epoch=st.sampled_from(COMMIT_EPOCHS),
        which=st.sampled_from(COMMIT_PARTITIONS),
        metadata=st.sampled_from(COMMIT_METADATA),
    )
    def commit(self, client: str, vi: int, epoch: str, which: str, metadata: str) -> None:
        """OffsetCommit as a consumer-protocol member sends it (v9+: its member id and epoch),
        or with an epoch it does not hold: the previous one (a commit racing a reconciliation),
        one ahead, 0, or -1 (as an admin, allowed only once the group holds offsets: to a group
        that does not exist, -1 would make a classic one)."""
        if not self._idle(client):
            return
        command = self._commit_command(client, vi, epoch, which, metadata)
        if command is not None:
            self.next_offset += len(command.offsets)
            self._run(command)

    def _commit_command(
        self, client: str, vi: int, epoch: str, which: str, metadata: str
    ) -> OffsetCommit | None:
        """:meth:`commit`'s request, its offsets numbered on from the last one sent."""
        v = self.views[client]
        version = self._version("OffsetCommit", vi)
        if not v.member_id or version is None:
            return None
        if v.commit_epoch(epoch) < 0 and not self.committed:
            return None
        meta = "x" * (self._metadata_limit() + 1) if metadata == "too-large" else metadata
        offsets = tuple(
            TopicPartitionOffset(
                topic=tp.topic, partition=tp.partition, offset=self.next_offset + n, metadata=meta
            )
            for n, tp in enumerate(self._partitions(v, which), start=1)
        )
        return v.offset_commit(version=version, offsets=offsets, epoch=epoch)

    def _metadata_limit(self) -> int:
        config = getattr(self.engine.model, "config", None)
        return int(getattr(config, "offset_metadata_max_bytes", 4096))

    @rule(client=clients, vi=VERSION_INDEX, who=st.sampled_from(FETCH_AS))
    def fetch(self, client: str, vi: int, who: str) -> None:
        """OffsetFetch of every partition: as an admin (no member), or (v9+) as the member at
        its epoch, at an epoch it no longer holds, or under an id the group never saw."""
        v = self.views[client]
        version = self._version("OffsetFetch", vi)
        if version is None or not self._idle(client):
            return
        self._run(v.offset_fetch(version=version, partitions=self._partitions(v, "all"), who=who))

    # ------------------------------------------------------------------ steering
    def aim_universe(self) -> frozenset[Cell]:
        return CONSUMER_UNIVERSE

    @rule(
        plan=st.tuples(
            VERSION_INDEX, st.integers(min_value=0, max_value=7), st.sampled_from(AIM_STEPS)
        )
    )
    def aim(self, plan: tuple[int, int, int]) -> None:
        """Coverage-guided, as the classic machine's ``aim``: of the requests the rules above
        could send now (:meth:`_candidates`), send the one the model predicts reaches a
        consumer-group cell (state × request × error) not reached yet, and again, up to the
        drawn number of requests while each does."""
        vi, pick, steps = plan
        for _ in range(steps):
            if self.failed_check is not None:
                break
            if not self._aim(self._candidates(vi), pick):
                break

    def _candidates(self, vi: int) -> list[tuple[Aimed, Callable[[], object]]]:
        """What the rules above could send now, with their guards, each with the rule's own
        way of sending it. A heartbeat is built on a copy of the consumer's view (building one
        may give it a member id; only sending may)."""
        out: list[tuple[Aimed, Callable[[], object]]] = []
        for c, v in self.views.items():
            if not self._idle(c):
                continue

            def beat(c: str = c, v: ConsumerView = v, **fields: Any) -> None:
                command = self._heartbeat_command(copy.copy(v), vi, **fields)
                if command is not None:
                    out.append((command, lambda: self._heartbeat(c, vi, **fields)))

            for owned in OWNED_REPORTS:
                beat(owned=owned)
            beat(epoch=0)  # rejoin
            if v.member_id:
                beat(epoch=-1, owned="null")  # leave
                if v.instance_id is not None:
                    beat(epoch=-2, owned="null")  # static leave
            for delta in (1, -1, 5):
                if v.member_epoch > 0 and v.member_epoch + delta > 0:
                    beat(epoch=v.member_epoch + delta, owned="acked")
            for what in INVALID_REQUESTS:
                fields = self._invalid_fields(c, what)
                if fields is not None:
                    beat(**fields)
            if self._regexes_modelled() and v.regex != self.regex_for("broken"):
                # a regex that does not compile: refused, nothing changes (``subscribe``)
                regex = self.regex_for("broken")
                fields = (
                    {"epoch": 0, "subscribed_topic_regex": regex}
                    if v.member_epoch == 0
                    else {"subscribed_topic_names": (), "subscribed_topic_regex": regex}
                )
                command = self._heartbeat_command(copy.copy(v), vi, **fields)
                if command is not None:
                    out.append((command, lambda c=c: self.subscribe(c, vi, "broken")))
            restarted = copy.copy(v)
            restarted.restart()
            command = self._heartbeat_command(restarted, vi, epoch=0)
            if command is not None:
                out.append((command, lambda c=c: self.restart(c, vi)))
            version = self._version("ConsumerGroupDescribe", vi)
            if version is not None:
                out.append((v.describe(version=version), lambda c=c: self.describe(c, vi)))
            for epoch in COMMIT_EPOCHS:
                for metadata in ("", "too-large"):
                    commit = self._commit_command(c, vi, epoch, "owned", metadata)
                    if commit is not None:
                        out.append(
                            (
                                commit,
                                lambda c=c, e=epoch, m=metadata: self.commit(c, vi, e, "owned", m),
                            )
                        )
            for who in FETCH_AS:
                fetch_version = self._version("OffsetFetch", vi)
                if fetch_version is not None:
                    partitions = self._partitions(v, "all")
                    out.append(
                        (
                            v.offset_fetch(version=fetch_version, partitions=partitions, who=who),
                            lambda c=c, w=who: self.fetch(c, vi, w),
                        )
                    )
        return out

    @rule(
        kind=st.sampled_from(DEADLINE_KINDS),
        which=st.integers(min_value=0, max_value=3),
        side=st.sampled_from(("after", "before")),
    )
    def tick_to_deadline(self, kind: str, which: int, side: str) -> None:
        """Let time run to just before or after a deadline the model has pending: a member's
        session, or its rebalance (revocation) timeout."""
        self._tick_to(kind=kind, which=which, side=side)


def consumer_machine_for(context: SuiteContext) -> type[ConsumerGroupMachine]:
    """A concrete consumer-protocol machine bound to ``context``."""
    return type("ConsumerGroupMachineUnderTest", (ConsumerGroupMachine,), {"context": context})
