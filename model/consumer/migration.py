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
   (``OffsetMetadataManager``). Any other epoch, a leave included, and ConsumerGroupDescribe, read
   the group with ``GMM.consumerGroup``: ``GROUP_ID_NOT_FOUND`` ("is not a consumer group").
2. **Upgrade** (``validateOnlineUpgrade``, ``convertToConsumerGroup``,
   ``ConsumerGroup.fromClassicGroup``). A join to a classic group with members is refused
   ``GROUP_ID_NOT_FOUND`` unless the policy allows upgrades (``bidirectional``, ``upgrade``), the
   group's protocol type is ``consumer`` and it has at most ``group.consumer.max.size`` members.
   Then every parked JoinGroup and SyncGroup is answered ``REBALANCE_IN_PROGRESS``
   (``completeAllJoinFutures``/``completeAllSyncFutures``) and the group becomes a consumer group
   whose group and assignment epochs are the generation; each member keeps the partitions of its
   last assignment as its target and assignment, at the generation, ``STABLE``, with its
   subscription from its metadata, and is a *classic member* (its session timeout and protocols
   kept; ``ClassicMeta``). An assignment or a subscription that does not parse fails the
   conversion (``GROUP_ID_NOT_FOUND``); a group that never chose a protocol fails it too
   (``protocolName().get()``: ``UNKNOWN_SERVER_ERROR``), and so does a member that rejoined
   without the group's protocol (``ClassicGroupMember.metadata``: ``UNKNOWN_SERVER_ERROR``). The
   join then goes on as any join to the consumer group; if it is refused
   (``GROUP_MAX_SIZE_REACHED``) nothing is written and the group stays classic, its parked
   requests already answered.
3. **A classic request meets a consumer group.** An Empty consumer group is deleted by a JoinGroup
   (``GMM.classicGroupJoin`` → ``maybeDeleteEmptyConsumerGroup``), which goes on as a join to a
   group that does not exist (``classicGroupJoinToClassicGroup``), offsets kept; a join with a
   member id then meets no group and is refused ``UNKNOWN_MEMBER_ID``, and whether the deletion
   stays without a record written is kept open (the consumer group stays, or is gone). A group
   with members, under the policy ``disabled``, refuses classic members
   (``throwIfClassicMemberCannotJoinConsumerGroup``: ``INCONSISTENT_GROUP_PROTOCOL``, after the
   session-timeout check of ``GroupCoordinatorService.joinGroup``). Under any other policy a
   classic member is a member of the consumer group (``classicGroupJoinToConsumerGroup``):

   * JoinGroup: ``GROUP_MAX_SIZE_REACHED`` for a new member of a full group; the protocol type must
     be ``consumer`` and one of its protocols supported by every classic member
     (``supportsClassicProtocols``), else ``INCONSISTENT_GROUP_PROTOCOL``; KIP-394's
     ``MEMBER_ID_REQUIRED`` for a dynamic member without an id (a new id is not remembered: any id
     joins); a static member with an unknown id takes the place of the member with its instance id
     (``replaceMember``), with a known id must be that member (``UNKNOWN_MEMBER_ID``,
     ``FENCED_INSTANCE_ID``). Then its first protocol's metadata is read
     (``deserializeSubscription``): one that does not parse is ``UNKNOWN_SERVER_ERROR`` (an
     ``IllegalStateException``, or the reader's own exception: no ``ApiException``), nothing
     written. Its subscription comes from its metadata (a change bumps the group
     epoch), the target is brought up to date and the member reconciled with the partitions its
     metadata says it owns (none in a v0 ``ConsumerProtocolSubscription``: its revocations are done
     at once). The answer comes at once: the member's epoch as the generation, its first
     protocol's name, no leader, no member list. Its session timer restarts with the request's
     session timeout, its join timer is cancelled and a sync timer (its rebalance timeout) armed.
   * SyncGroup (``classicGroupSyncToConsumerGroup``): the member (below), the generation (its
     epoch, else ``ILLEGAL_GENERATION``), the protocol type and name if given
     (``INCONSISTENT_GROUP_PROTOCOL``), then ``REBALANCE_IN_PROGRESS`` if the assignment epoch is
     ahead of its epoch and it is not revoking (``throwIfRebalanceInProgress``, which arms its join
     timer if absent); else its assigned partitions (a ``ConsumerProtocolAssignment``), its sync
     timer cancelled, its session restarted.
   * Heartbeat (``classicGroupHeartbeatToConsumerGroup``): the member, the generation, its session
     restarted; ``REBALANCE_IN_PROGRESS`` (join timer armed if absent) while its epoch is behind
     the assignment epoch, it is revoking, or it waits for partitions no one holds any more.
   * The member is looked up by ``validateConsumerGroupMember``: by instance id if one is given
     (unknown: ``UNKNOWN_MEMBER_ID``; held by another member id: ``FENCED_INSTANCE_ID``), else by
     member id (``UNKNOWN_MEMBER_ID``); a member of the consumer protocol is ``UNKNOWN_MEMBER_ID``
     to these requests (``throwIfMemberDoesNotUseClassicProtocol``). SyncGroup v5+ without
     protocol type and name is ``INCONSISTENT_GROUP_PROTOCOL`` before anything (``KafkaApis``), and
     an Empty group's SyncGroup ``UNKNOWN_MEMBER_ID``.
   * LeaveGroup (``classicGroupLeaveToConsumerGroup``) answers each member: unknown
     ``UNKNOWN_MEMBER_ID``, an instance id held by another member id ``FENCED_INSTANCE_ID``, else
     the member, of either protocol, is removed (``consumerGroupFenceMembers``: one epoch bump).
     Below v3 it names one member id (``LeaveGroupRequest.normalizedData``) and the answer
     carries that member's error at the top level (``LeaveGroupResponse``, ``version <= 2``).
   * OffsetCommit follows ``ConsumerGroup.validateOffsetCommit``: a classic member commits with
     any version, and where a consumer-protocol member hears ``STALE_MEMBER_EPOCH`` it hears
     ``ILLEGAL_GENERATION``. DescribeGroups reads the group with ``GMM.classicGroup``: as for a
     group that does not exist (``Dead``; v6+ ``GROUP_ID_NOT_FOUND``).
   * A classic member's session timer, join timer and sync timer each fence it when they fire
     (``consumerGroupFenceMemberOperation``); it has no revocation timer (``maybeReconcile``
     arms that for consumer-protocol members only).
4. **Downgrade** (``consumerGroupFenceMembers`` → ``validateOnlineDowngradeWithFencedMembers``,
   ``convertToClassicGroup``, ``ClassicGroup.fromConsumerGroup``). When members are fenced (a
   leave, a classic LeaveGroup, any timer) and every member left uses the classic protocol, there
   is at least one, the policy allows downgrades (``bidirectional``, ``downgrade``) and they are at
   most ``group.max.size``, the group becomes a classic group: Stable at the group epoch (before
   the fencing, which writes no bump then), protocol type ``consumer``, any member the leader (the
   first of a ``HashMap``), the protocol voted as a classic group votes, each member's target as
   its assignment; every member's heartbeat is rescheduled, and it rebalances
   (``prepareRebalance``): the members must rejoin within the rebalance timeout.
5. **No group.** Every request goes to the classic rules, except ConsumerGroupHeartbeat and
   ConsumerGroupDescribe. An OffsetCommit with generation -1 there makes a classic group, Empty,
   with the offsets (``OffsetMetadataManager.validateOffsetCommit`` →
   ``getOrMaybeCreateClassicGroup``): rule 1 deletes it when a consumer member joins.

Not modelled: a static member of the classic protocol replacing one in a consumer group whose
other members are all classic (``validateOnlineDowngradeWithReplacedMember``: the suite's
consumers are dynamic, so such a group has downgraded already). ConsumerGroupDescribe v1 names
each member's protocol (``MemberType``: 0 classic, 1 consumer).

Pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from kgc.model.assignors import TopicPartition as TP
from kgc.model.classic.empty_group import names_empty_group
from kgc.model.classic.group import ClassicGroupModel
from kgc.model.classic.group import deleted_group as deleted_classic_group
from kgc.model.classic.rebalance import (
    complete_join_future,
    complete_sync_future,
    prepare_rebalance,
    reschedule_heartbeat,
    select_protocol,
)
from kgc.model.classic.state import EMPTY, CommittedOffset, GroupState, Outgoing, with_outbox
from kgc.model.classic.state import STABLE as CLASSIC_STABLE
from kgc.model.classic.state import Member as ClassicMember
from kgc.model.classic.subscription import read_subscription
from kgc.model.classic.txn import Txn, as_answered, explore
from kgc.model.commands import (
    NO_MEMBER_ID,
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
    MemberIdentity,
    MemberResult,
    NotModelled,
    OffsetCommit,
    OffsetFetch,
    Request,
    Response,
    SyncGroup,
    SyncGroupResponse,
    client_id_of,
    member_name,
)
from kgc.model.consumer.group import (
    CLASSIC_JOIN,
    CLASSIC_SYNC,
    REBALANCE,
    SESSION,
    STABLE,
    UNRELEASED_PARTITIONS,
    UNREVOKED_PARTITIONS,
    ClassicMeta,
    ConsumerGroupConfig,
    ConsumerGroupModel,
    ConsumerGroupState,
    Member,
    Sent,
    _put_member,
    deleted_group,
    fence_member,
    held_by_others,
    refused_as_full,
)
from kgc.model.errors import (
    FENCED_INSTANCE_ID,
    GROUP_ID_NOT_FOUND,
    GROUP_MAX_SIZE_REACHED,
    ILLEGAL_GENERATION,
    INCONSISTENT_GROUP_PROTOCOL,
    INVALID_SESSION_TIMEOUT,
    MEMBER_ID_REQUIRED,
    NONE,
    REBALANCE_IN_PROGRESS,
    UNKNOWN_MEMBER_ID,
    UNKNOWN_SERVER_ERROR,
)
from kgc.model.known_bugs import BugWorld
from kgc.model.profiles import GroupConfig
from kgc.model.timed import Deferred, TimedModel, Timer

# ``ConsumerGroupMigrationPolicy``: the values Kafka accepts (case-insensitive)
POLICIES = ("bidirectional", "upgrade", "downgrade", "disabled")
CLASSIC = "classic"
CONSUMER = "consumer"
DEFERRED = ("mixed", "deferred")  # the held-back request's release (``TimedModel.invoke``)


@dataclass(frozen=True, slots=True, kw_only=True)
class MigrationConfig:
    """Both groups' settings, the broker's ``group.consumer.migration.policy`` and the reorder
    window (the models below keep none of their own: this model holds requests back itself)."""

    classic: GroupConfig = field(default_factory=GroupConfig)
    consumer: ConsumerGroupConfig = field(default_factory=ConsumerGroupConfig)
    migration_policy: str = "bidirectional"
    reorder_window_ms: float = 0.0

    def __post_init__(self) -> None:
        policy = self.migration_policy.lower()
        if policy not in POLICIES:
            # ``ConsumerGroupMigrationPolicy.parse``: anything else is ``disabled``; the broker's
            # ConfigDef refuses it first, so no running broker has one
            raise ValueError(f"unknown group.consumer.migration.policy {self.migration_policy!r}")
        object.__setattr__(self, "migration_policy", policy)

    @property
    def upgrade(self) -> bool:
        return self.migration_policy in ("bidirectional", "upgrade")

    @property
    def downgrade(self) -> bool:
        return self.migration_policy in ("bidirectional", "downgrade")


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


def _consumer_offsets(s: GroupState) -> tuple[tuple[TP, int, str], ...]:
    return tuple(sorted((TP(o.topic, o.partition), o.offset, o.metadata) for o in s.offsets))


def _assignment_text(tps: frozenset[TP]) -> str:
    """A member's partitions as the wire shows a ConsumerProtocolAssignment
    (``conformance/wire/encoding.py``: canonical JSON, partitions ascending)."""
    by_topic: dict[str, list[int]] = {}
    for tp in sorted(tps):
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return json.dumps(by_topic, sort_keys=True)


def _parsed_assignment(text: str, topics: Mapping[str, int]) -> frozenset[TP] | None:
    """``ConsumerProtocol.deserializeConsumerProtocolAssignment``: None if it does not parse.
    An empty assignment (a member that never synced) is ``EMPTY_ASSIGNMENT``: nothing."""
    if text == "":
        return frozenset()
    if not text.startswith("{"):
        return None
    obj = json.loads(text)
    return frozenset(TP(t, p) for t, ps in obj.items() for p in ps if 0 <= p < topics.get(t, 0))


def _unreadable(metadata: str) -> bool:
    """Whether a consumer group cannot read ``metadata`` as a ``ConsumerProtocolSubscription``
    (``GroupMetadataManager.deserializeSubscription``): any failure of any reader counts."""
    return isinstance(read_subscription(metadata, "checked", wrapped=True), str)


def _parsed_topics(metadata: str) -> tuple[str, ...] | None:
    if not metadata.startswith("{"):
        return None
    return tuple(json.loads(metadata)["topics"])


def _issue(classic: GroupState, client: str) -> tuple[GroupState, str]:
    """A new member id for ``client`` (``Uuid.randomUuid`` in a consumer group): its next
    symbolic name, shown to it in the same answer."""
    counts = dict(classic.issued_ids)
    n = counts.get(client, 0) + 1
    counts[client] = n
    return replace(classic, issued_ids=tuple(sorted(counts.items()))), member_name(client, n)


def _with_timer(
    s: ConsumerGroupState, member_id: str, kind: str, deadline: float, *, if_absent: bool = False
) -> ConsumerGroupState:
    timers = s.classic_timers
    if if_absent and any((m, k) == (member_id, kind) for m, k, _ in timers):
        return s
    others = tuple(x for x in timers if (x[0], x[1]) != (member_id, kind))
    return replace(s, classic_timers=tuple(sorted(others + ((member_id, kind, deadline),))))


def _without_timer(s: ConsumerGroupState, member_id: str, kind: str) -> ConsumerGroupState:
    return replace(
        s, classic_timers=tuple(x for x in s.classic_timers if (x[0], x[1]) != (member_id, kind))
    )


def _session(s: ConsumerGroupState, member_id: str, deadline: float) -> ConsumerGroupState:
    others = [x for x in s.session_deadlines if x[0] != member_id]
    return replace(s, session_deadlines=tuple(sorted(others + [(member_id, deadline)])))


def _waiting_on_unreleased(s: ConsumerGroupState, m: Member) -> bool:
    """``ConsumerGroup.waitingOnUnreleasedPartition``: a partition of the member's target that
    it has not been given is still held by another member."""
    return any(held_by_others(s, m.member_id, tp) for tp in s.target_of(m.member_id) - m.assigned)


class MigratingGroupModel(TimedModel[MixedState]):
    """The reference model of one group id that clients of both protocols use."""

    def __init__(self, config: MigrationConfig | None = None) -> None:
        self.config = config or MigrationConfig()
        # the reorder window is this model's: each part processes requests in the order given
        self.classic = ClassicGroupModel(replace(self.config.classic, reorder_window_ms=0.0))
        self.consumer = ConsumerGroupModel(replace(self.config.consumer, reorder_window_ms=0.0))

    def __repr__(self) -> str:
        return (
            f"MigratingGroupModel({self.config.classic.profile.name}, "
            f"{self.config.migration_policy})"
        )

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

    def with_known_bug(self, state: MixedState, world: BugWorld) -> MixedState:
        return replace(state, classic=replace(state.classic, known_bug=world))

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

    def vanished(self, state: MixedState, until_ms: float) -> MixedState | None:
        classic = self.classic.vanished(state.classic, until_ms)
        if classic is not None:
            return replace(state, classic=classic)
        consumer = self.consumer.vanished(state.consumer, until_ms)
        if consumer is not None:
            return replace(state, consumer=consumer)
        return None

    def background(self, state: MixedState) -> list[MixedState]:
        return [replace(state, consumer=c) for c in self.consumer.background(state.consumer)]

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
        out: list[MixedState] = []
        for c in self.consumer.fire(state.consumer, (deadline, kind, key)):
            after = replace(state, consumer=c, now_ms=now)
            out += self._maybe_downgrade(state, after, (deadline, kind, key))
        return out

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
            out = self._consumer_request(s, request_id, command, at_ms)
        elif (
            s.consumer.exists
            and not isinstance(command, FindCoordinator)
            and not names_empty_group(command)  # refused before any group (``empty_group.py``)
        ):
            out = self._classic_request_to_consumer_group(s, request_id, command, at_ms)
        else:
            return [
                replace(s, classic=c)
                for c in self.classic.apply(s.classic, request_id, command, at_ms)
            ]
        return [d for after in out for d in self._maybe_downgrade(s, after)]

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

    def _answer_consumer(self, s: MixedState, request_id: int, response: Response) -> MixedState:
        sent = Sent(request_id=request_id, response=response, emitted_at_ms=s.now_ms)
        return replace(s, consumer=replace(s.consumer, outbox=s.consumer.outbox + (sent,)))

    def _answer_classic(self, s: MixedState, request_id: int, response: Response) -> MixedState:
        response = as_answered(self.config.classic.profile, response)
        out = Outgoing(request_id=request_id, response=response, emitted_at_ms=s.now_ms)
        return replace(s, classic=with_outbox(s.classic, s.classic.outbox + (out,)))

    # ---------------------------------------------------------- rule 1: a consumer request
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
            consumer = replace(s.consumer, offsets=_consumer_offsets(s.classic))
            gone = replace(s, classic=deleted_classic_group(s.classic))
            return self._on_consumer(gone, consumer, request_id, c, at_ms)
        refused = self._answer_consumer(s, request_id, self.consumer._error(GROUP_ID_NOT_FOUND))
        cfg = self.config
        if (
            not cfg.upgrade  # ``validateOnlineUpgrade``
            or s.classic.protocol_type != "consumer"
            or len(s.classic.members) > cfg.consumer.max_size
        ):
            return [refused]
        out: list[MixedState] = []
        for classic in self._parked_answered(s.classic):
            converted = self._upgraded(replace(s, classic=classic))
            if isinstance(converted, frozenset):  # the conversion failed: the group stays classic
                for name in sorted(converted):
                    error = self.consumer._error(name)
                    out.append(
                        self._answer_consumer(replace(s, classic=classic), request_id, error)
                    )
                continue
            for after in self._on_consumer(converted, converted.consumer, request_id, c, at_ms):
                answer = self.consumer.outbox(after.consumer)[request_id][0]
                if answer.error == NONE:
                    out.append(after)
                else:  # refused after the conversion (GROUP_MAX_SIZE_REACHED): nothing written
                    out.append(
                        self._answer_consumer(replace(s, classic=classic), request_id, answer)
                    )
        return out

    def _parked_answered(self, classic: GroupState) -> list[GroupState]:
        """``convertToConsumerGroup``'s first step: every parked JoinGroup and SyncGroup is
        answered ``REBALANCE_IN_PROGRESS`` (``completeAllJoinFutures``, ``completeAllSyncFutures``),
        whether the conversion then succeeds or not."""

        def step(tx: Txn) -> None:
            for mid in sorted(tx.members):
                complete_join_future(
                    tx, mid, JoinGroupResponse(error=REBALANCE_IN_PROGRESS, member_id=mid)
                )
                complete_sync_future(tx, mid, SyncGroupResponse(error=REBALANCE_IN_PROGRESS))

        return explore(self.classic.config, classic, step)

    def _upgraded(self, s: MixedState) -> MixedState | frozenset[str]:
        """``ConsumerGroup.fromClassicGroup``: every member Stable at the generation, with the
        partitions of its last assignment as its target; the group and assignment epochs are the
        generation. If a member's assignment or subscription does not parse (a SchemaException:
        ``GROUP_ID_NOT_FOUND``) or it no longer supports the group's protocol (it rejoined with
        other protocols: ``ClassicGroupMember.metadata`` throws, ``UNKNOWN_SERVER_ERROR``), the
        conversion fails with the first such member's error, in an order (a ``HashMap``'s) the
        model cannot know: the set of the errors it may be."""
        g = s.classic
        gen = g.generation_id
        if g.protocol_name is None:
            # ``classicGroup.protocolName().get()`` on a group that never chose one
            return frozenset({UNKNOWN_SERVER_ERROR})
        topics = self.config.consumer.partitions()
        members: list[Member] = []
        target: list[tuple[str, frozenset[TP]]] = []
        sessions: list[tuple[str, float]] = []
        errors: set[str] = set()
        for m in g.members:
            assigned = _parsed_assignment(m.assignment, topics)
            if assigned is None:
                errors.add(GROUP_ID_NOT_FOUND)  # "Cannot upgrade classic group ... malformed"
                continue
            if g.protocol_name not in {p.name for p in m.protocols}:
                errors.add(UNKNOWN_SERVER_ERROR)
                continue
            subscribed = _parsed_topics(m.metadata(g.protocol_name))
            if subscribed is None:
                errors.add(GROUP_ID_NOT_FOUND)
                continue
            members.append(
                Member(
                    member_id=m.member_id,
                    instance_id=m.group_instance_id,
                    member_epoch=gen,
                    previous_member_epoch=gen,
                    state=STABLE,
                    rebalance_timeout_ms=m.rebalance_timeout_ms,
                    subscribed_topic_names=subscribed,
                    assigned=assigned,
                    epochs=tuple((tp, gen) for tp in sorted(assigned)),
                    classic=ClassicMeta(
                        session_timeout_ms=m.session_timeout_ms,
                        protocols=m.protocols,
                        client_id=m.client_id,
                    ),
                )
            )
            target.append((m.member_id, assigned))
            sessions.append((m.member_id, s.now_ms + m.session_timeout_ms))
        if errors:
            return frozenset(errors)
        consumer = replace(
            s.consumer,
            exists=True,
            group_epoch=gen,
            assignment_epoch=gen,
            members=tuple(sorted(members, key=lambda m: m.member_id)),
            target=tuple(sorted(target)),
            # each member's session timer is (re)scheduled; timers of an earlier consumer group
            # of this id stay (``_no_consumer_group``)
            session_deadlines=tuple(
                sorted(
                    [x for x in s.consumer.session_deadlines if x[0] not in dict(sessions)]
                    + sessions
                )
            ),
            offsets=_consumer_offsets(g),
        )
        return replace(s, classic=deleted_classic_group(g), consumer=consumer)

    # ------------------------------------------------- rules 2-3: a classic request
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
            return [self._sync(s, request_id, command)]
        if isinstance(command, Heartbeat):
            return [self._heartbeat(s, request_id, command)]
        if isinstance(command, LeaveGroup):
            return [self._leave(s, request_id, command)]
        raise NotModelled(f"{command.type} is not a request of the migrating group model")

    def _classic_member(
        self, consumer: ConsumerGroupState, member_id: str, instance_id: str | None
    ) -> Member | str:
        """``validateConsumerGroupMember`` then ``throwIfMemberDoesNotUseClassicProtocol``: the
        member, or the error name."""
        if instance_id is not None:
            member = consumer.static_member(instance_id)
            if member is None:
                return UNKNOWN_MEMBER_ID
            if member.member_id != member_id:
                return FENCED_INSTANCE_ID
        else:
            member = consumer.member(member_id)
            if member is None:
                return UNKNOWN_MEMBER_ID
        return UNKNOWN_MEMBER_ID if member.classic is None else member

    def _rejoin_needed(self, s: MixedState, member: Member) -> MixedState:
        """``scheduleConsumerGroupJoinTimeoutIfAbsent``: the member must rejoin in time."""
        deadline = s.now_ms + member.rebalance_timeout_ms
        consumer = _with_timer(s.consumer, member.member_id, CLASSIC_JOIN, deadline, if_absent=True)
        return replace(s, consumer=consumer)

    def _heartbeat(self, s: MixedState, request_id: int, command: Heartbeat) -> MixedState:
        """``classicGroupHeartbeatToConsumerGroup``."""
        instance = command.group_instance_id if command.version >= 3 else None
        member = self._classic_member(s.consumer, command.member_id, instance)
        if isinstance(member, str):
            return self._answer_classic(s, request_id, HeartbeatResponse(error=member))
        if command.generation_id != member.member_epoch:
            return self._answer_classic(s, request_id, HeartbeatResponse(error=ILLEGAL_GENERATION))
        assert member.classic is not None
        deadline = s.now_ms + member.classic.session_timeout_ms
        s = replace(s, consumer=_session(s.consumer, member.member_id, deadline))
        c = s.consumer
        if (
            member.member_epoch < c.assignment_epoch
            or member.state == UNREVOKED_PARTITIONS
            or (member.state == UNRELEASED_PARTITIONS and not _waiting_on_unreleased(c, member))
        ):
            s = self._rejoin_needed(s, member)
            return self._answer_classic(
                s, request_id, HeartbeatResponse(error=REBALANCE_IN_PROGRESS)
            )
        return self._answer_classic(s, request_id, HeartbeatResponse(error=NONE))

    def _sync(self, s: MixedState, request_id: int, command: SyncGroup) -> MixedState:
        """``classicGroupSync`` to a consumer group, ``classicGroupSyncToConsumerGroup``."""
        v = command.version
        ptype = command.protocol_type if v >= 5 else None
        pname = command.protocol_name if v >= 5 else None
        if v >= 5 and (ptype is None or pname is None):  # KafkaApis, before anything
            return self._answer_classic(
                s, request_id, SyncGroupResponse(error=INCONSISTENT_GROUP_PROTOCOL)
            )
        if not s.consumer.members:
            return self._answer_classic(s, request_id, SyncGroupResponse(error=UNKNOWN_MEMBER_ID))
        instance = command.group_instance_id if v >= 3 else None
        member = self._classic_member(s.consumer, command.member_id, instance)
        if isinstance(member, str):
            return self._answer_classic(s, request_id, SyncGroupResponse(error=member))
        assert member.classic is not None
        error = None
        if command.generation_id != member.member_epoch:
            error = ILLEGAL_GENERATION
        elif (ptype is not None and ptype != "consumer") or (
            pname is not None and pname != member.classic.protocols[0].name
        ):
            error = INCONSISTENT_GROUP_PROTOCOL  # ``throwIfClassicProtocolUnmatched``
        elif (
            s.consumer.assignment_epoch > member.member_epoch
            and member.state != UNREVOKED_PARTITIONS
        ):
            s = self._rejoin_needed(s, member)  # ``throwIfRebalanceInProgress``
            error = REBALANCE_IN_PROGRESS
        if error is not None:
            return self._answer_classic(s, request_id, SyncGroupResponse(error=error))
        consumer = _without_timer(s.consumer, member.member_id, CLASSIC_SYNC)
        consumer = _session(
            consumer, member.member_id, s.now_ms + member.classic.session_timeout_ms
        )
        # v5+: the request's own protocol type and name (``classicGroupSyncToConsumerGroup``)
        answer = SyncGroupResponse(
            error=NONE,
            protocol_type=ptype,
            protocol_name=pname,
            assignment=_assignment_text(member.assigned),
        )
        return self._answer_classic(replace(s, consumer=consumer), request_id, answer)

    def _leave(self, s: MixedState, request_id: int, command: LeaveGroup) -> MixedState:
        """``classicGroupLeaveToConsumerGroup``. Before v3 the request names one member id and
        the answer carries that member's error alone (``LeaveGroupRequest.normalizedData``,
        ``LeaveGroupResponse``'s constructor for ``version <= 2``)."""
        single = command.version < 3
        identities = command.members
        if single:
            first = command.members[0].member_id if command.members else ""
            identities = (MemberIdentity(member_id=first),)
        consumer = s.consumer
        results: list[MemberResult] = []
        leaving: list[str] = []
        for x in identities:
            member: Member | None
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
            if self.consumer.config.empty_group_assignment_catches_up and not consumer.members:
                consumer = replace(consumer, assignment_epoch=epoch + 1, target=())
        s = replace(s, consumer=consumer)
        if single:
            return self._answer_classic(s, request_id, LeaveGroupResponse(error=results[0].error))
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
            if self.config.migration_policy == "disabled":
                # ``throwIfClassicMemberCannotJoinConsumerGroup``
                error = JoinGroupResponse(error=INCONSISTENT_GROUP_PROTOCOL)
                return [self._answer_classic(s, request_id, error)]
            return self._join_consumer_group(s, request_id, command)
        # ``maybeDeleteEmptyConsumerGroup``: the consumer group goes, the offsets stay
        classic = replace(s.classic, offsets=_classic_offsets(s.consumer))
        gone = replace(s, consumer=deleted_group(s.consumer), classic=classic)
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

    def _join_consumer_group(
        self, s: MixedState, request_id: int, command: JoinGroup
    ) -> list[MixedState]:
        """``classicGroupJoinToConsumerGroup``: a classic member joins a consumer group with
        members, and is answered at once with its member epoch as the generation."""
        v = command.version
        instance = command.group_instance_id if v >= 5 else None
        unknown = command.member_id == NO_MEMBER_ID
        # a new id is named only once an answer shows it (an error answer carries none)
        named, member_id = (
            _issue(s.classic, command.client) if unknown else (s.classic, command.member_id)
        )
        refused, s = s, replace(s, classic=named)
        c = s.consumer
        if refused_as_full(c, member_id, instance, self.config.consumer):
            error = JoinGroupResponse(error=GROUP_MAX_SIZE_REACHED)
            return [self._answer_classic(refused, request_id, error)]
        names = [p.name for p in command.protocols]
        classic_members = [m for m in c.members if m.classic is not None]
        supported = command.protocol_type == "consumer" and any(
            all(name in {p.name for p in m.classic.protocols} for m in classic_members if m.classic)
            for name in names
        )
        if not supported:  # ``throwIfClassicProtocolIsNotSupported``
            error = JoinGroupResponse(error=INCONSISTENT_GROUP_PROTOCOL)
            return [self._answer_classic(refused, request_id, error)]
        if v >= 4 and unknown and instance is None:  # ``JoinGroupRequest.requiresKnownMemberId``
            answer = JoinGroupResponse(error=MEMBER_ID_REQUIRED, member_id=member_id)
            return [self._answer_classic(s, request_id, answer)]
        if instance is None:
            old = c.member(member_id) or Member(member_id=member_id)
        else:
            static = c.static_member(instance)
            if not unknown:
                if static is None:
                    error = JoinGroupResponse(error=UNKNOWN_MEMBER_ID)
                    return [self._answer_classic(s, request_id, error)]
                if static.member_id != member_id:
                    error = JoinGroupResponse(error=FENCED_INSTANCE_ID)
                    return [self._answer_classic(s, request_id, error)]
                old = static
            elif static is None:
                old = Member(member_id=member_id)
            else:  # ``replaceMember``: the same member under the new id, epoch 0
                old = replace(static, member_id=member_id, member_epoch=0, previous_member_epoch=0)
                kept = c.target_of(static.member_id)
                c = fence_member(c, static.member_id)
                c = replace(
                    c,
                    group_epoch=c.group_epoch - 1,  # a replacement, not a removal: no bump
                    target=tuple(sorted(c.target + ((member_id, kept),))),
                )
        if command.protocols and _unreadable(command.protocols[0].metadata):
            # ``deserializeSubscription`` reads the first protocol's metadata: a SchemaException
            # becomes an IllegalStateException, any other failure escapes as it is; neither is an
            # ApiException, so the join is answered UNKNOWN_SERVER_ERROR and nothing is written
            # (seen on 4.3.1: ``kgc check --protocol migration --seed 33``)
            error = JoinGroupResponse(error=UNKNOWN_SERVER_ERROR)
            return [self._answer_classic(refused, request_id, error)]
        subscribed = _parsed_topics(command.protocols[0].metadata) if command.protocols else None
        updated = replace(
            old,
            instance_id=instance if instance is not None else old.instance_id,
            rebalance_timeout_ms=command.rebalance_timeout_ms,
            subscribed_topic_names=subscribed or (),
            classic=ClassicMeta(
                session_timeout_ms=command.session_timeout_ms,
                protocols=command.protocols,
                client_id=client_id_of(command.client),
            ),
        )
        changed = set(updated.subscribed_topic_names) != set(old.subscribed_topic_names)
        c = _put_member(c, updated)
        if changed:
            c = replace(c, group_epoch=c.group_epoch + 1)
        out: list[MixedState] = []
        for c1 in self.consumer._maybe_update_target(c):
            before = c1.member(member_id)
            assert before is not None
            after = self.consumer._reconcile(
                c1, before, c1.assignment_epoch, c1.target_of(member_id), changed, frozenset()
            )
            c2 = _put_member(c1, after)
            c2 = _without_timer(c2, member_id, CLASSIC_JOIN)
            c2 = _session(c2, member_id, s.now_ms + command.session_timeout_ms)
            c2 = _with_timer(c2, member_id, CLASSIC_SYNC, s.now_ms + command.rebalance_timeout_ms)
            answer = JoinGroupResponse(
                error=NONE,
                generation_id=after.member_epoch,
                # v7+: ``ConsumerProtocol.PROTOCOL_TYPE`` (``classicGroupJoinToConsumerGroup``)
                protocol_type="consumer" if command.version >= 7 else None,
                protocol_name=command.protocols[0].name,
                member_id=member_id,
            )
            out.append(self._answer_classic(replace(s, consumer=c2), request_id, answer))
        return out

    # ------------------------------------------------------------------ downgrade
    def _maybe_downgrade(
        self, before: MixedState, after: MixedState, fired: Timer | None = None
    ) -> list[MixedState]:
        """``consumerGroupFenceMembers`` → ``validateOnlineDowngradeWithFencedMembers``: when
        members were fenced and every one left uses the classic protocol, the group becomes a
        classic group again (``convertToClassicGroup``) and rebalances; the fencing writes no
        epoch bump then."""
        was, now = before.consumer, after.consumer
        if not (self.config.downgrade and was.exists and now.exists and now.members):
            return [after]
        left = {m.member_id for m in was.members} - {m.member_id for m in now.members}
        if not left or any(m.classic is None for m in now.members):
            return [after]
        if len(now.members) > self.config.classic.group_max_size:
            return [after]
        # no member is removed (no ``removeMember``): the leaving members' timers stay too, but
        # for the one that just fired
        gone = (fired[1], fired[2]) if fired is not None else None
        kept = replace(
            now,
            session_deadlines=tuple(x for x in was.session_deadlines if (SESSION, x[0]) != gone),
            rebalance_timers=tuple(
                x for x in was.rebalance_timers if (REBALANCE, f"{x[0]}@{x[1]}") != gone
            ),
            classic_timers=tuple(x for x in was.classic_timers if (x[1], x[0]) != gone),
        )
        return self._downgraded(replace(after, consumer=kept), was.group_epoch)

    def _downgraded(self, s: MixedState, generation: int) -> list[MixedState]:
        """``ClassicGroup.fromConsumerGroup`` then ``prepareRebalance``: Stable at the group
        epoch, protocol type ``consumer``, any member the leader (the first of a ``HashMap``),
        the protocol voted as a classic group votes, each member's target as its assignment;
        every member's heartbeat rescheduled, then a rebalance."""
        c = s.consumer
        members = tuple(
            ClassicMember(
                member_id=m.member_id,
                group_instance_id=m.instance_id,
                session_timeout_ms=m.classic.session_timeout_ms,
                rebalance_timeout_ms=m.rebalance_timeout_ms,
                protocol_type="consumer",
                protocols=m.classic.protocols,
                assignment=_assignment_text(c.target_of(m.member_id)),
                client_id=m.classic.client_id,
            )
            for m in c.members
            if m.classic is not None
        )
        base = replace(
            s.classic,
            now_ms=max(s.now_ms, s.consumer.now_ms, s.classic.now_ms),
            exists=True,
            state=CLASSIC_STABLE,
            generation_id=generation,
            protocol_type="consumer",
            members=members,
            leader=tuple(m.member_id for m in members),
            offsets=_classic_offsets(c),
        )

        def step(tx: Txn) -> None:
            tx.leader = (tx.choose(sorted(tx.members)),)
            tx.protocol_name = select_protocol(tx)
            for mid in sorted(tx.members):
                reschedule_heartbeat(tx, mid)
            prepare_rebalance(tx)

        consumer = deleted_group(c)
        return [
            replace(s, classic=g, consumer=consumer)
            for g in explore(self.classic.config, base, step)
        ]


def describe_config(config: MigrationConfig) -> dict[str, Any]:
    """The policy, for reports (the two parts' configs are in the manifest record)."""
    return {"migration_policy": config.migration_policy}
