"""The KIP-848 consumer group: group epoch, target assignment, member epochs and reconciliation.

Rules (Apache Kafka 4.3.1, ``group-coordinator/src/main/java/org/apache/kafka/coordinator/group/``;
KIP-848 "The Next Generation of the Consumer Rebalance Protocol"):

1. **Validation** (``GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid``),
   before the group is read; each failure answers ``INVALID_REQUEST``: an empty ``MemberId``
   (from v1, or with a positive epoch, or -1); epoch 0 without ``RebalanceTimeoutMs``, with
   ``TopicPartitions`` null or not empty, or with neither topic names nor a regex; -2 without
   ``InstanceId``; an epoch below -2. A ``ServerAssignor`` the broker does not offer answers
   ``UNSUPPORTED_ASSIGNOR``. An error answer carries only the error (``MemberId`` null, epoch 0).
2. **Heartbeat** (``GroupMetadataManager.consumerGroupHeartbeat``): epoch 0 creates the group and
   the member if missing; otherwise a missing group is ``GROUP_ID_NOT_FOUND`` and a missing member
   ``UNKNOWN_MEMBER_ID``; a new group starts at epoch 1 (``ModernGroup``). A group at
   ``group.consumer.max.size`` refuses a member it does not know (``GROUP_MAX_SIZE_REACHED``),
   from 4.4.0 unless its instance id is a member's (``full_group_spares_static``). An epoch
   above the member's, or below it unless it is the member's previous epoch and the owned
   partitions are a subset of its assigned ones, is ``FENCED_MEMBER_EPOCH``
   (``throwIfConsumerGroupMemberEpochIsInvalid``). A change of subscribed topic names bumps the
   group epoch; from 4.4.0 so does a change of the group's preferred server assignor
   (``assignor_change_bumps``).
3. **Target assignment** (``maybeUpdateTargetAssignment``; ``group.consumer.assignment.interval.ms``
   = 0, so it is computed at once): when the group epoch is ahead of the assignment epoch, the
   assignor runs over all members and the assignment epoch becomes the group epoch. The member's
   ``ServerAssignor`` (else the first of ``group.consumer.assignors``) picks the assignor.
4. **Reconciliation** (``modern/consumer/CurrentAssignmentBuilder``): a member keeps its assigned
   partitions that stay in its target; the others become *pending revocation* and, if the member
   still reports owning any, it stays at its epoch in ``UNREVOKED_PARTITIONS``; once they are
   gone it moves to the target epoch and gets the target partitions no other member still holds
   (``UNRELEASED_PARTITIONS`` while some are held, else ``STABLE``). A partition is therefore
   never handed over before its old owner gave it up (KIP-848's ``NoDoubleClientAssignment``).
5. **Leave** (``consumerGroupLeave``): epoch -1 removes the member and bumps the group epoch; the
   answer echoes the member id and -1. From 4.4.0, when no member is left the assignment epoch
   follows the group epoch (``empty_group_assignment_catches_up``). The target assignment is
   recomputed by the next heartbeat.
6. **Timers**: each heartbeat (re)starts the member's session timer,
   ``group.consumer.session.timeout.ms``; when it fires the member is removed as on leave
   (``scheduleConsumerGroupSessionTimeout``). Entering ``UNREVOKED_PARTITIONS`` starts the
   rebalance timer, the member's ``RebalanceTimeoutMs``; if the member is still at that epoch when
   it fires, it is removed (``scheduleConsumerGroupRebalanceTimeout``); leaving that state cancels
   it.
7. **The answer** (end of ``consumerGroupHeartbeat``): member id, member epoch, heartbeat interval;
   the assignment (assigned partitions, not those pending revocation) when the epoch was 0, the
   request was full (rebalance timeout, subscription and owned partitions all set) or the
   assigned partitions changed.
8. **Deletion**: an Empty group (no committed offsets: the suite commits none) may be deleted at
   any moment by the periodic cleanup (``GroupCoordinatorShard.cleanupGroupMetadata`` →
   ``maybeDeleteGroup``; every ``offsets.retention.check.interval.ms``, at a phase clients cannot
   know; seen on 4.3.1: a leave after every session expired answered ``GROUP_ID_NOT_FOUND``).
   A group made anew starts from its first epoch again.
9. **Describe** (``ConsumerGroup.asDescribedGroup``; state from ``maybeUpdateGroupState``):
   ``Empty`` with no members, ``Assigning`` while the group epoch is ahead of the assignment
   epoch, ``Reconciling`` while a member is not ``STABLE`` at the assignment epoch, else
   ``Stable``. A member's ``Assignment`` is its assigned plus pending-revocation partitions
   (assigned only before 4.3.0).
10. **Static membership** (``getOrMaybeSubscribeStaticConsumerGroupMember``,
   ``consumerGroupLeave``): a join with an ``InstanceId`` held by a member still in the group is
   ``UNRELEASED_INSTANCE_ID``, unless that member left with epoch -2: then the new member id takes
   its place (``replaceMember``: same assignment and target, epoch 0, no group-epoch bump). A
   heartbeat with an unknown instance is ``UNKNOWN_MEMBER_ID``, with another member's instance
   ``FENCED_INSTANCE_ID``. Epoch -2 keeps the member at epoch -2 with its partitions until it
   rejoins or its session runs out; -1 with an instance id removes it.

11. **Offsets with member epochs** (``OffsetMetadataManager.validateOffsetCommit`` /
   ``commitOffset`` / ``fetchOffsets``, ``ConsumerGroup.validateOffsetCommit`` /
   ``validateOffsetFetch``; partitions of unknown topics are ``UNKNOWN_TOPIC_OR_PARTITION`` first,
   ``KafkaApis.handleOffsetCommitRequest``): a commit to a missing group is
   ``GROUP_ID_NOT_FOUND`` (v9+) or ``ILLEGAL_GENERATION``; epoch -1 commits in a group with no
   members; otherwise an unknown member id is ``UNKNOWN_MEMBER_ID``, a consumer-protocol member
   below v9 ``UNSUPPORTED_VERSION``, an epoch above the member's ``STALE_MEMBER_EPOCH``, one
   below it ``STALE_MEMBER_EPOCH`` before 4.3.0 and, from 4.3.0 (KIP-1251,
   ``createAssignmentEpochValidator``), only for a partition the member does not hold or holds
   since a later epoch (a partition keeps the epoch it was assigned at; a static leave resets
   them to 0; a partition with oversized metadata is not checked). The error goes to every
   partition; with none, oversized metadata fails its own partition and the rest are stored.
   OffsetFetch as a member (v9+: id, epoch >= 0) needs the member and its exact epoch
   (``UNKNOWN_MEMBER_ID``, ``STALE_MEMBER_EPOCH``); without one, or for a missing group, it
   reads what is committed (-1 where nothing is).

Nondeterminism kept open: the ``uniform`` assignor iterates Java ``HashMap``/``Set.of`` collections
(members; partitions of an old assignment) whose order the model cannot know, so the model allows
every assignment that keeps the assignor's promises (``UniformHomogeneousAssignmentBuilder``): all
subscribed partitions assigned, member loads differing by at most one, each member keeping as
many of its previous target partitions as its new load allows, and as many kept in all as any
balanced assignment keeps. The server ``range`` assignor is deterministic (static members first
by instance id, then member ids: ``RangeAssignor.sortMemberIds``) and is run as ported in
``assignors.py``.

Members of the classic protocol in a consumer group (``Member.classic``: online migration), the
epoch -1 commit to a missing group that makes a classic "simple" group, and the conversions both
ways are ``model/consumer/migration.py``'s, which runs this model beside the classic one.

12. **Regular-expression subscriptions** (``GroupMetadataManager.maybeUpdateRegularExpressions``,
   ``handleRegularExpressionsResult``, ``modern/consumer/TopicRegexResolver``): a
   member's ``SubscribedTopicRegex`` (``""`` drops it) subscribes it to the topics the regex
   matches in full, once the group has *resolved* it; until then it matches nothing. A regex no
   member had yet must compile (RE2J) or the heartbeat is ``INVALID_REGULAR_EXPRESSION``, and it
   asks for a resolution. A heartbeat starts one, of every regex of the group, unless one is
   under way or the last started at most 10 s ago (``REGEX_BATCH_REFRESH_MIN_INTERVAL_MS``), when
   a regex is new or unresolved, or the last is older than
   ``group.consumer.regex.refresh.interval.ms``, or (kept open) another client made a topic. The
   resolution runs on the coordinator's executor and completes at a moment the client cannot
   know (kept open, up to ``regex_resolution_ms``); the group epoch is then bumped if a regex
   now matches other topics or the subscribed topics no longer match the group's metadata hash.
   A change of regex does not bump the epoch unless the new regex is already resolved or the
   member dropped its regex (``REGEX_UPDATED_AND_RESOLVED``), but the member's assignment is
   made consistent with its new subscription at once. A resolved regex with no subscriber left
   is deleted. A subscription with a regex is *heterogeneous* to the ``uniform`` assignor unless
   every member has that one regex and no topic names (``ConsumerGroup.subscriptionType``):
   each topic is balanced over its subscribers, keeping as much of the previous target as a
   balanced assignment can (``UniformHeterogeneousAssignmentBuilder``, the same in 4.0-4.4).
   Regexes are matched against the run's topics: the suite draws none that could match
   another's. Before 4.2.0 a subscription change waits for the next target
   (``subscription_change_reconciles``); before 4.3.0 a new group is bumped off epoch 0 by any
   heartbeat (``epoch_zero_group_bumps``); 4.0 bumps nothing for a dropped regex and never
   refreshes by age (``regex_drop_bumps``, ``regex_refresh_interval_ms``).

Pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any

from kgc.model.assignors import Subscription, server_range_assign
from kgc.model.assignors import TopicPartition as TP
from kgc.model.commands import (
    ConsumerGroupDescribe,
    ConsumerGroupDescribeResponse,
    ConsumerGroupHeartbeat,
    ConsumerGroupHeartbeatResponse,
    ConsumerMember,
    FetchedOffset,
    NotModelled,
    OffsetCommit,
    OffsetCommitResponse,
    OffsetFetch,
    OffsetFetchResponse,
    PartitionError,
    Protocol,
    Request,
    Response,
    TopicPartition,
)
from kgc.model.errors import (
    FENCED_INSTANCE_ID,
    FENCED_MEMBER_EPOCH,
    GROUP_ID_NOT_FOUND,
    GROUP_MAX_SIZE_REACHED,
    ILLEGAL_GENERATION,
    INVALID_REGULAR_EXPRESSION,
    INVALID_REQUEST,
    NONE,
    OFFSET_METADATA_TOO_LARGE,
    STALE_MEMBER_EPOCH,
    UNKNOWN_MEMBER_ID,
    UNKNOWN_TOPIC_OR_PARTITION,
    UNRELEASED_INSTANCE_ID,
    UNSUPPORTED_ASSIGNOR,
    UNSUPPORTED_VERSION,
)
from kgc.model.timed import Deferred, OutboxModel, Timer

LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2
# MemberState (modern/MemberState.java)
STABLE = "STABLE"
UNREVOKED_PARTITIONS = "UNREVOKED_PARTITIONS"
UNRELEASED_PARTITIONS = "UNRELEASED_PARTITIONS"
# timer kinds, in the order they fire at one deadline
SESSION = "session"
REBALANCE = "rebalance"
CLASSIC_JOIN = "classic-join"
CLASSIC_SYNC = "classic-sync"
RESOLVE = "resolve-regexes"  # the latest a scheduled resolution of regular expressions completes
# ``GroupMetadataManager.REGEX_BATCH_REFRESH_MIN_INTERVAL_MS``: no resolution starts sooner after
# the last one
REGEX_REFRESH_MIN_INTERVAL_MS = 10_000
# maybeUpdateRegularExpressions' outcome (``UpdateRegularExpressionStatus``)
NO_CHANGE, REGEX_UPDATED, REGEX_UPDATED_AND_RESOLVED = "no-change", "updated", "resolved"


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumerGroupConfig:
    """The broker settings the consumer group reads, and the topics that exist."""

    group_id: str = "kgc-group"
    topics: tuple[tuple[str, int], ...] = (("kgc-suite", 3),)  # (name, partitions)
    session_timeout_ms: int = 45000  # group.consumer.session.timeout.ms
    heartbeat_interval_ms: int = 5000  # group.consumer.heartbeat.interval.ms
    max_size: int = 2**31 - 1  # group.consumer.max.size
    assignors: tuple[str, ...] = ("uniform", "range")  # group.consumer.assignors; first = default
    max_version: int = 1  # ConsumerGroupHeartbeat/ConsumerGroupDescribe versions: 0..max_version
    # a new group's epoch before its first bump: 1 from 4.3.0 (``ModernGroup``'s constructor sets
    # it), 0 in 4.0-4.2 (``engine/registry.py`` picks it by release)
    initial_group_epoch: int = 1
    # epoch 0 from a member the group knows is a rejoin (KIP-848's fenced-member recovery) from
    # 4.2.0; 4.0 and 4.1 check it like any lower epoch (``throwIfConsumerGroupMemberEpochIsInvalid``
    # in the 4.0.2 and 4.1.2 jars has no early return for 0; found by the suite on 4.0.2)
    epoch_zero_rejoins: bool = True
    # an Empty group with no committed offsets is deleted by the coordinator's periodic cleanup
    # (``GroupCoordinatorShard.cleanupGroupMetadata`` every ``offsets.retention.check.interval.ms``,
    # 10 minutes by default, at a phase a client cannot know): at any moment it may be gone
    empty_group_may_vanish: bool = True
    # ``offsets.retention.check.interval.ms``: the cleanup's period (``GroupConfig``)
    cleanup_interval_ms: int = 600_000
    # ConsumerGroupDescribe's member Assignment includes partitions pending revocation from 4.3.0
    # (``ConsumerGroupMember.asConsumerGroupDescribeMember``; only assigned ones in the 4.0.2,
    # 4.1.2 and 4.2.1 jars; found by the suite on 4.0.2)
    describe_includes_pending_revocation: bool = True
    # an OffsetCommit with an epoch older than the member's is checked per partition against the
    # epoch each partition was assigned at from 4.3.0 (KIP-1251,
    # ``ConsumerGroup.createAssignmentEpochValidator``); 4.0-4.2 want the member's epoch exactly
    # (``validateMemberEpoch`` in the 4.0.2, 4.1.2 and 4.2.1 sources)
    commit_partition_epochs: bool = True
    offset_metadata_max_bytes: int = 4096  # offset.metadata.max.bytes
    reorder_window_ms: float = 0.0  # see ClassicGroupModel
    # regular-expression subscriptions (rule 12); off: a regex sent to the model is refused
    regex_subscriptions: bool = True
    # group.consumer.regex.refresh.interval.ms: a resolution older than this is redone (from
    # 4.1.0; None: no such rule, as in 4.0)
    regex_refresh_interval_ms: int | None = 600_000
    # dropping a regex bumps the group epoch (from 4.1.0; not in the 4.0.2 jar's
    # ``maybeUpdateRegularExpressions``)
    regex_drop_bumps: bool = True
    # a subscription change reconciles the member's assignment with it at once, before any new
    # target (``maybeReconcile``'s ``hasSubscriptionChanged``, from 4.2.0; the 4.0.2 and 4.1.2
    # jars have no such argument)
    subscription_change_reconciles: bool = True
    # a heartbeat to a group at epoch 0 bumps it (``bumpGroupEpoch = group.groupEpoch() == 0``
    # in the 4.0.2, 4.1.2 and 4.2.1 jars, whose new groups start at 0): a join that changes no
    # subscription still moves a new group off epoch 0
    epoch_zero_group_bumps: bool = False
    # a full group lets in a request whose instance id a member of it holds (its static member's
    # own checks answer it: ``throwIfConsumerGroupIsFull``'s ``hasStaticMember`` in the 4.4.0
    # jar's bytecode; 4.3.1 and before count only member ids; found by the suite on 4.4.0:
    # UNRELEASED_INSTANCE_ID where 4.3.1 says GROUP_MAX_SIZE_REACHED)
    full_group_spares_static: bool = True
    # fencing the last members sets the assignment epoch to the new group epoch (a target
    # assignment metadata record when every member goes: ``consumerGroupFenceMembers`` in the
    # 4.4.0 jar's bytecode; 4.3.1 leaves it behind; found by the suite on 4.4.0: an Empty group
    # described at epoch 3 with assignment epoch 3)
    empty_group_assignment_catches_up: bool = True
    # a heartbeat that changes the group's preferred server assignor bumps the group epoch
    # (``hasPreferredServerAssignorChanged`` in ``consumerGroupHeartbeat`` of the 4.4.0 jar's
    # bytecode; found by the suite on 4.4.0: the first member naming ``range`` rejoining an Empty
    # group answered one epoch more than 4.3.1's rules give)
    assignor_change_bumps: bool = True
    # the latest a scheduled resolution completes, after the heartbeat that scheduled it was
    # sent: it runs on the coordinator's executor, and its result is written as a record
    regex_resolution_ms: float = 2000.0
    # how far the broker's clock may be past a request's send time when it handles it: a
    # comparison with an interval this close to its end may go either way
    clock_slack_ms: float = 500.0
    # topics may be made on the broker by others at any moment (``lastMetadataImageWithNewTopics``):
    # a heartbeat may then start a resolution nothing in the group asked for
    topics_may_appear: bool = True

    def partitions(self) -> dict[str, int]:
        return dict(self.topics)


@dataclass(frozen=True, slots=True, kw_only=True)
class ClassicMeta:
    """What a member of the classic protocol in a consumer group keeps of its JoinGroup
    (``ConsumerGroupMemberMetadataValue.ClassicMemberMetadata``,
    ``model/consumer/migration.py``)."""

    session_timeout_ms: int
    protocols: tuple[Protocol, ...]  # (name, metadata), in the member's order
    # the client id of its latest JoinGroup (``classicGroupJoinToConsumerGroup``:
    # ``setClientId(context.clientId())``), which a downgrade keeps
    # (``ClassicGroup.fromConsumerGroup``)
    client_id: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Member:
    member_id: str
    instance_id: str | None = None
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: str = STABLE
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: tuple[str, ...] = ()
    subscribed_topic_regex: str | None = None  # never "": Kafka treats it as none (``isNotEmpty``)
    server_assignor: str | None = None
    assigned: frozenset[TP] = frozenset()
    pending_revocation: frozenset[TP] = frozenset()
    # the epoch each assigned or pending partition was given to the member at (KIP-1251,
    # ``ConsumerGroupMember.assignmentEpoch``): the target epoch when newly assigned, kept while
    # the member holds it, 0 after a static leave; sorted
    epochs: tuple[tuple[TP, int], ...] = ()
    # set for a member of the classic protocol (``ConsumerGroupMember.useClassicProtocol``): only
    # a group that took classic members has one (``model/consumer/migration.py``)
    classic: ClassicMeta | None = None
    _hash: int = field(default=0, init=False, compare=False, repr=False)

    def __hash__(self) -> int:  # shared between states, hashed once (the value ``eq`` would give)
        h = self._hash
        if h == 0:
            h = hash(_member_key(self))
            object.__setattr__(self, "_hash", h)
        return h

    def assignment_epoch(self, tp: TP) -> int | None:
        for t, e in self.epochs:
            if t == tp:
                return e
        return None

    def reconciled_to(self, epoch: int) -> bool:
        """``ModernGroupMember.isReconciledTo``."""
        return self.state == STABLE and self.member_epoch == epoch


@dataclass(frozen=True, slots=True, kw_only=True)
class Sent:
    request_id: int
    response: Response
    emitted_at_ms: float


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumerGroupState:
    exists: bool = False
    group_epoch: int = 0
    assignment_epoch: int = 0
    members: tuple[Member, ...] = ()  # sorted by member id
    target: tuple[tuple[str, frozenset[TP]], ...] = ()  # member id -> target partitions, sorted
    session_deadlines: tuple[tuple[str, float], ...] = ()  # member id -> deadline, sorted by id
    rebalance_timers: tuple[tuple[str, int, float], ...] = ()  # (member id, epoch, deadline)
    # a classic member's join and sync timeouts (``scheduleConsumerGroupJoinTimeoutIfAbsent``,
    # ``scheduleConsumerGroupSyncTimeout``): (member id, CLASSIC_JOIN or CLASSIC_SYNC, deadline)
    classic_timers: tuple[tuple[str, str, float], ...] = ()
    offsets: tuple[tuple[TP, int, str], ...] = ()  # committed (partition, offset, metadata), sorted
    # rule 12: regex -> the topics it matched when last resolved, sorted; the regexes of the
    # resolution under way and when the heartbeat that scheduled it was sent; when the last one
    # that wrote anything was scheduled (``lastResolvedRegularExpressionRefreshTimeMs``)
    resolved: tuple[tuple[str, frozenset[str]], ...] = ()
    resolving: tuple[str, ...] | None = None
    resolving_since: float = 0.0
    refreshed_at: float = 0.0
    # the subscribed topics the group's metadata hash was last computed over (a group epoch
    # record carries it: ``ModernGroup.computeMetadataHash``); empty for a new group (hash 0)
    hashed_topics: frozenset[str] = frozenset()
    outbox: tuple[Sent, ...] = ()
    now_ms: float = 0.0
    deferred: Deferred | None = None  # held back by the reorder window (``model/timed.py``)
    # when the cleanup last deleted the group, at the earliest (``ConsumerGroupModel.vanished``)
    cleaned_at_ms: float | None = None
    _hash: int = field(default=0, init=False, compare=False, repr=False)
    # the timers that depend on this state alone (sessions, rebalances, a classic member's join
    # and sync), sorted: computed once (``ConsumerGroupModel.timers``); None = not yet
    _own_timers: tuple[tuple[float, str, str], ...] | None = field(
        default=None, init=False, compare=False, repr=False
    )

    def __hash__(self) -> int:  # hashed once: every checker step puts states in sets
        h = self._hash
        if h == 0:
            h = hash(_state_key(self))
            object.__setattr__(self, "_hash", h)
        return h

    def member(self, member_id: str) -> Member | None:
        for m in self.members:
            if m.member_id == member_id:
                return m
        return None

    def static_member(self, instance_id: str) -> Member | None:
        for m in self.members:
            if m.instance_id == instance_id:
                return m
        return None

    def target_of(self, member_id: str) -> frozenset[TP]:
        return dict(self.target).get(member_id, frozenset())

    def topics_of(self, member: Member) -> frozenset[str]:
        """The member's subscription: its topic names and what its regex resolved to (nothing
        while unresolved: ``TargetAssignmentBuilder``, ``CurrentAssignmentBuilder``)."""
        names = frozenset(member.subscribed_topic_names)
        if member.subscribed_topic_regex is None:
            return names
        return names | dict(self.resolved).get(member.subscribed_topic_regex, frozenset())

    def subscribed_topics(self) -> frozenset[str]:
        """``ConsumerGroup.subscribedTopicNames``' keys: every member's subscription."""
        out: frozenset[str] = frozenset()
        for m in self.members:
            out |= self.topics_of(m)
        return out

    def regex_counts(self) -> dict[str, int]:
        """``ConsumerGroup.subscribedRegularExpressions``: regex -> members subscribed to it."""
        counts: dict[str, int] = {}
        for m in self.members:
            if m.subscribed_topic_regex is not None:
                counts[m.subscribed_topic_regex] = counts.get(m.subscribed_topic_regex, 0) + 1
        return counts

    @property
    def group_state(self) -> str:
        """``ConsumerGroup.maybeUpdateGroupState`` (Kafka's names)."""
        if not self.exists:
            return "Dead"
        if not self.members:
            return "Empty"
        if self.group_epoch > self.assignment_epoch:
            return "Assigning"
        if any(not m.reconciled_to(self.assignment_epoch) for m in self.members):
            return "Reconciling"
        return "Stable"


# the fields ``eq`` compares, in its order: the cached hashes are the ones ``eq``'s fields give
_member_key = attrgetter(*(f.name for f in fields(Member) if f.compare))
_state_key = attrgetter(*(f.name for f in fields(ConsumerGroupState) if f.compare))
_MEMBER_FIELDS = tuple(f.name for f in fields(Member) if f.init)
_MEMBER_FIELD_SET = frozenset(_MEMBER_FIELDS)
_STATE_FIELDS = tuple(f.name for f in fields(ConsumerGroupState) if f.init)
_STATE_FIELD_SET = frozenset(_STATE_FIELDS)
_TIMER_FIELDS = frozenset({"session_deadlines", "rebalance_timers", "classic_timers"})


def _evolve(state: ConsumerGroupState, **changes: Any) -> ConsumerGroupState:
    """``dataclasses.replace`` for :class:`ConsumerGroupState`, about twice as fast (a heartbeat
    makes several); unknown field names are an error, as with ``replace``. The cached timers carry
    over when no timer changes."""
    if not changes.keys() <= _STATE_FIELD_SET:
        raise TypeError(
            f"ConsumerGroupState has no field(s) {sorted(changes.keys() - _STATE_FIELD_SET)}"
        )
    new = object.__new__(ConsumerGroupState)
    for name in _STATE_FIELDS:
        object.__setattr__(new, name, changes[name] if name in changes else getattr(state, name))
    object.__setattr__(new, "_hash", 0)
    timers = state._own_timers if _TIMER_FIELDS.isdisjoint(changes) else None
    object.__setattr__(new, "_own_timers", timers)
    return new


def _evolve_member(member: Member, **changes: Any) -> Member:
    """``dataclasses.replace`` for :class:`Member`, faster (as :func:`_evolve`)."""
    if not changes.keys() <= _MEMBER_FIELD_SET:
        raise TypeError(f"Member has no field(s) {sorted(changes.keys() - _MEMBER_FIELD_SET)}")
    new = object.__new__(Member)
    for name in _MEMBER_FIELDS:
        object.__setattr__(new, name, changes[name] if name in changes else getattr(member, name))
    object.__setattr__(new, "_hash", 0)
    return new


# ------------------------------------------------------------------------------ assignments


def _wire(tps: Iterable[TP]) -> tuple[TopicPartition, ...]:
    return tuple(TopicPartition(topic=t, partition=p) for t, p in sorted(tps))


def _owned(command: ConsumerGroupHeartbeat) -> frozenset[TP] | None:
    if command.topic_partitions is None:
        return None
    return frozenset(TP(tp.topic, tp.partition) for tp in command.topic_partitions)


def uniform_targets(
    partitions: Mapping[str, int],
    subscriptions: Mapping[str, tuple[str, ...]],
    previous: Mapping[str, frozenset[TP]],
) -> list[dict[str, frozenset[TP]]]:
    """Every target assignment the ``uniform`` assignor may produce (see the module docstring):
    homogeneous subscriptions only (``UniformHomogeneousAssignmentBuilder``)."""
    members = sorted(subscriptions)
    if not members:
        return [{}]
    topics = {frozenset(subscriptions[m]) for m in members}
    if len(topics) != 1:
        raise NotModelled(
            "members with different subscriptions (the uniform assignor's heterogeneous "
            "builder) are not modelled yet"
        )
    (subscribed,) = topics
    all_tps = sorted(TP(t, p) for t in subscribed for p in range(partitions.get(t, 0)))
    if not all_tps:
        return [{m: frozenset() for m in members}]
    kept = tuple(frozenset(tp for tp in previous.get(m, ()) if tp in all_tps) for m in members)
    return [dict(t) for t in _uniform_choices(tuple(members), tuple(all_tps), kept)]


@functools.lru_cache(maxsize=1024)
def _uniform_choices(
    members: tuple[str, ...], all_tps: tuple[TP, ...], kept: tuple[frozenset[TP], ...]
) -> tuple[dict[str, frozenset[TP]], ...]:
    """:func:`uniform_targets` once the subscription is known: the balanced assignments of
    ``all_tps`` to ``members`` in which each member keeps as many of its previous partitions
    (``kept``, by position) as its load allows, then the most sticky of those. Memoised: a group
    meets the same few inputs again and again (read-only results: the caller copies them)."""
    kept_old = dict(zip(members, kept, strict=True))
    out: list[dict[str, frozenset[TP]]] = []
    for owners, loads in _balanced_owners(len(members), len(all_tps)):
        result: dict[str, set[TP]] = {m: set() for m in members}
        for tp, i in zip(all_tps, owners, strict=True):
            result[members[i]].add(tp)
        if all(
            len(result[m] & kept_old[m]) == min(len(kept_old[m]), loads[i])
            for i, m in enumerate(members)
        ):
            out.append({m: frozenset(v) for m, v in result.items()})
    # the extra partitions go first to members that held more (``maybeRevokePartitions`` gives
    # an extra quota up unless the member is among the last that must take one): the total kept
    # is the most any balanced assignment keeps
    return tuple(_most_kept(out, kept_old))


@functools.lru_cache(maxsize=64)
def _balanced_owners(
    members: int, partitions: int
) -> tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]:
    """Every owner (a member's index) of each of ``partitions`` partitions such that the members'
    loads differ by one at most, in ``itertools.product`` order, with the loads: what
    :func:`uniform_targets` chooses among, the same for every group of that size."""
    out = []
    for owners in itertools.product(range(members), repeat=partitions):
        loads = [0] * members
        for i in owners:
            loads[i] += 1
        if max(loads) - min(loads) <= 1:
            out.append((owners, tuple(loads)))
    return tuple(out)


def _most_kept(
    targets: list[dict[str, frozenset[TP]]], kept_old: Mapping[str, frozenset[TP]]
) -> list[dict[str, frozenset[TP]]]:
    """The ``targets`` that keep the most of the previous partitions (``kept_old``), summed over
    the members: both of the ``uniform`` assignor's builders are that sticky."""
    kept = [sum(len(t[m] & old) for m, old in kept_old.items()) for t in targets]
    return [t for t, k in zip(targets, kept, strict=True) if k == max(kept)]


def heterogeneous_targets(
    partitions: Mapping[str, int],
    subscriptions: Mapping[str, tuple[str, ...]],
    previous: Mapping[str, frozenset[TP]] | None = None,
) -> list[dict[str, frozenset[TP]]]:
    """Every target the ``uniform`` assignor's heterogeneous builder may produce for members
    subscribed to one topic or none (``UniformHeterogeneousAssignmentBuilder``).

    ``build``: ``maybeRevokePartitions`` keeps each member's previous target of the topics it
    still subscribes to; ``assignRemainingPartitions`` gives the partitions nobody kept to the
    least loaded subscribers, one at a time; ``balanceTopic`` then moves partitions from the most
    loaded subscribers to the least loaded until their counts differ by at most one. With one
    topic that keeps as many previous partitions as any balanced assignment can: the answers
    are every balanced assignment that keeps that many. Which ones depends on the order of
    ``GroupSpec.memberIds()`` (a hash map's), so the set is kept open over it."""
    members = sorted(subscriptions)
    topics = {t for m in members for t in subscriptions[m]}
    if len(topics) > 1:
        raise NotModelled(
            "members with different subscriptions over several topics (the uniform assignor's "
            "heterogeneous builder) are not modelled yet"
        )
    empty = {m: frozenset[TP]() for m in members}
    if not topics:
        return [empty]
    (topic,) = topics
    subscribers = [m for m in members if topic in subscriptions[m]]
    tps = [TP(topic, p) for p in range(partitions.get(topic, 0))]
    kept_old = {
        m: frozenset(tp for tp in (previous or {}).get(m, ()) if tp in tps) for m in subscribers
    }
    out: list[dict[str, frozenset[TP]]] = []
    for owners in itertools.product(subscribers, repeat=len(tps)):
        loads = [owners.count(m) for m in subscribers]
        if max(loads) - min(loads) > 1:
            continue
        result = dict(empty)
        for m in subscribers:
            result[m] = frozenset(tp for tp, o in zip(tps, owners, strict=True) if o == m)
        out.append(result)
    return _most_kept(out, kept_old) or [empty]


def range_targets(
    partitions: Mapping[str, int],
    subscriptions: Mapping[str, tuple[str, ...]],
    instance_ids: Mapping[str, str | None] | None = None,
) -> list[dict[str, frozenset[TP]]]:
    """The server ``range`` assignor: members in ``sortMemberIds`` order, static members first by
    instance id (``RangeAssignor.sortMemberIds``)."""
    ids = instance_ids or {}
    subs = {
        m: Subscription(topics=tuple(t), group_instance_id=ids.get(m))
        for m, t in subscriptions.items()
    }
    result = server_range_assign(partitions, subs)
    return [{m: frozenset(TP(tp.topic, tp.partition) for tp in result.get(m, ())) for m in subs}]


# -------------------------------------------------------------------------------- the model


class ConsumerGroupModel(OutboxModel[ConsumerGroupState]):
    """The reference model of one KIP-848 consumer group (``group.protocol=consumer``)."""

    def __init__(self, config: ConsumerGroupConfig | None = None) -> None:
        self.config = config or ConsumerGroupConfig()

    def __repr__(self) -> str:
        return f"ConsumerGroupModel({self.config.assignors[0]})"

    # ------------------------------------------------------------------ Model
    def initial(self) -> ConsumerGroupState:
        return ConsumerGroupState()

    def with_outbox(self, state: ConsumerGroupState, outbox: tuple[Any, ...]) -> ConsumerGroupState:
        return _evolve(state, outbox=outbox)

    def vanished(self, state: ConsumerGroupState, until_ms: float) -> ConsumerGroupState | None:
        s = state
        if not (self.config.empty_group_may_vanish and s.exists and not s.members):
            return None
        if s.offsets:
            return None
        last = s.cleaned_at_ms
        if last is not None and until_ms < last + self.config.cleanup_interval_ms:
            return None  # one cleanup per interval (``GroupConfig.cleanup_interval_ms``)
        return _evolve(deleted_group(s), cleaned_at_ms=s.now_ms)

    def timers(self, state: ConsumerGroupState) -> list[tuple[float, str, str]]:
        own = list(_own_timers(state))
        configured = self._configured_timers(state)
        return sorted(own + configured) if configured else own

    def _configured_timers(self, state: ConsumerGroupState) -> list[tuple[float, str, str]]:
        """The timers whose deadline the config sets: a regex resolution's latest end, the
        held-back request's release."""
        out = []
        if state.resolving is not None:
            out.append((state.resolving_since + self.config.regex_resolution_ms, RESOLVE, ""))
        if state.deferred is not None:
            out.append((state.deferred.at_ms + self.config.reorder_window_ms, "deferred", ""))
        return out

    def next_timer(self, state: ConsumerGroupState) -> Timer | None:
        own = _own_timers(state)
        configured = self._configured_timers(state)
        if not configured:
            return own[0] if own else None
        return min(configured + list(own[:1]))

    def fire(self, state: ConsumerGroupState, timer: Timer) -> list[ConsumerGroupState]:
        deadline, kind, key = timer
        s = _evolve(state, now_ms=max(state.now_ms, deadline))
        if kind == "deferred":
            d = s.deferred
            assert d is not None
            return self.apply(_evolve(s, deferred=None), d.request_id, d.command, d.at_ms)
        if kind == SESSION:
            # the timer goes whether or not the member is still there: one left over from an
            # earlier group of this id (``model/consumer/migration.py``, downgrade) fences nobody
            # else
            s = _evolve(s, session_deadlines=tuple(x for x in s.session_deadlines if x[0] != key))
            return [self._remove(s, key)]
        if kind == RESOLVE:
            return [self._resolution_done(s)]
        if kind in (CLASSIC_JOIN, CLASSIC_SYNC):  # ``consumerGroupFenceMemberOperation``
            s = _evolve(
                s,
                classic_timers=tuple(x for x in s.classic_timers if (x[0], x[1]) != (key, kind)),
            )
            return [self._remove(s, key)]
        member_id, _, epoch = key.rpartition("@")
        s = _evolve(s, rebalance_timers=tuple(r for r in s.rebalance_timers if r[0] != member_id))
        m = s.member(member_id)
        if m is not None and m.member_epoch == int(epoch):
            return [self._remove(s, member_id)]
        return [s]

    # ------------------------------------------------------------------ steps
    def apply(
        self, state: ConsumerGroupState, request_id: int, command: Request, at_ms: float
    ) -> list[ConsumerGroupState]:
        s = _evolve(state, now_ms=max(state.now_ms, at_ms))
        # the offsets APIs from their oldest versions 4.x accepts (KIP-896: OffsetCommit v2,
        # OffsetFetch v1), the KIP-848 ones up to the line's newest
        low, high = (2, 10) if isinstance(command, OffsetCommit) else (0, 0)
        if isinstance(command, OffsetFetch):
            low, high = 1, 10
        if not isinstance(command, OffsetCommit | OffsetFetch):
            high = self.config.max_version
        if not low <= command.version <= high:
            raise NotModelled(
                f"{command.type} v{command.version} is not modelled "
                f"(v{low}-{high}); generate versions in that range"
            )
        if isinstance(command, ConsumerGroupHeartbeat):
            outcomes = self._heartbeat(s, command)
        elif isinstance(command, ConsumerGroupDescribe):
            outcomes = [(s, r) for r in self._describe(s, command.version)]
        elif isinstance(command, OffsetCommit):
            outcomes = [self._offset_commit(s, command)]
        elif isinstance(command, OffsetFetch):
            outcomes = [(s, self._offset_fetch(s, command))]
        else:
            raise NotModelled(f"{command.type} is not a request of the consumer group model")
        return [
            _evolve(
                s2,
                outbox=s2.outbox
                + (Sent(request_id=request_id, response=r, emitted_at_ms=s2.now_ms),),
            )
            for s2, r in outcomes
        ]

    def _describe(
        self, s: ConsumerGroupState, version: int = 0
    ) -> list[ConsumerGroupDescribeResponse]:
        if not s.exists:
            return [ConsumerGroupDescribeResponse(error=GROUP_ID_NOT_FOUND)]
        return [self._described(s, assignor, version) for assignor in self._preferred_assignors(s)]

    def _described(
        self, s: ConsumerGroupState, assignor: str, version: int = 0
    ) -> ConsumerGroupDescribeResponse:
        """``ConsumerGroup.asDescribedGroup``; v1 names each member's protocol (``MemberType``,
        KIP-1099: 0 classic, 1 consumer; ``ConsumerGroupMember.asConsumerGroupDescribeMember``)."""
        return ConsumerGroupDescribeResponse(
            error=NONE,
            group_state=s.group_state,
            group_epoch=s.group_epoch,
            assignment_epoch=s.assignment_epoch,
            assignor_name=assignor,
            members=tuple(
                ConsumerMember(
                    member_id=m.member_id,
                    instance_id=m.instance_id,
                    member_epoch=m.member_epoch,
                    subscribed_topic_names=tuple(sorted(m.subscribed_topic_names)),
                    subscribed_topic_regex=m.subscribed_topic_regex,
                    member_type=-1 if version < 1 else 0 if m.classic is not None else 1,
                    assignment=_wire(
                        m.assigned | m.pending_revocation
                        if self.config.describe_includes_pending_revocation
                        else m.assigned
                    ),
                    target_assignment=_wire(s.target_of(m.member_id)),
                )
                for m in s.members
            ),
        )

    def _preferred_assignors(self, s: ConsumerGroupState) -> list[str]:
        """``ConsumerGroup.computePreferredServerAssignor``: the assignor most members name, else
        the broker's default (the first of ``group.consumer.assignors``). Kafka breaks a tie by
        ``HashMap`` order, so every tied name is possible."""
        counts: dict[str, int] = {}
        for m in s.members:
            if m.server_assignor is not None:
                counts[m.server_assignor] = counts.get(m.server_assignor, 0) + 1
        if not counts:
            return [self.config.assignors[0]]
        top = max(counts.values())
        return sorted(a for a, n in counts.items() if n == top)

    def _error(self, error: str) -> ConsumerGroupHeartbeatResponse:
        return ConsumerGroupHeartbeatResponse(error=error)

    def _invalid(self, c: ConsumerGroupHeartbeat) -> str | None:
        """Rule 1; the error name, or None for a valid request."""
        if c.subscribed_topic_regex is not None and c.version < 1:
            raise NotModelled("SubscribedTopicRegex is a ConsumerGroupHeartbeat v1 field")
        if c.instance_id == "":
            return INVALID_REQUEST
        if c.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH and c.instance_id is None:
            return INVALID_REQUEST
        if (c.version >= 1 or c.member_epoch > 0 or c.member_epoch == -1) and not c.member_id:
            return INVALID_REQUEST
        if not c.member_id:
            raise NotModelled("v0 with an empty MemberId (the broker picks an id) is not modelled")
        if c.member_epoch == 0:
            if c.rebalance_timeout_ms == -1:
                return INVALID_REQUEST
            if c.topic_partitions is None or c.topic_partitions:
                return INVALID_REQUEST
            if c.subscribed_topic_names is None and c.subscribed_topic_regex is None:
                return INVALID_REQUEST
        elif c.member_epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            return INVALID_REQUEST
        if c.server_assignor is not None and c.server_assignor not in self.config.assignors:
            return UNSUPPORTED_ASSIGNOR
        return None

    def _heartbeat(
        self, s: ConsumerGroupState, c: ConsumerGroupHeartbeat
    ) -> list[tuple[ConsumerGroupState, Response]]:
        invalid = self._invalid(c)
        if invalid is not None:
            return [(s, self._error(invalid))]
        if c.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
            return [self._leave(s, c)]
        joining = c.member_epoch == 0
        if not s.exists and not joining:
            return [(s, self._error(GROUP_ID_NOT_FOUND))]
        if refused_as_full(s, c.member_id, c.instance_id, self.config):
            return [(s, self._error(GROUP_MAX_SIZE_REACHED))]
        owned = _owned(c)
        if c.instance_id is None:
            old = s.member(c.member_id)
            if old is None:
                if not joining:
                    return [(s, self._error(UNKNOWN_MEMBER_ID))]
                old = Member(member_id=c.member_id)
            if not member_epoch_valid(old, c.member_epoch, owned, self.config.epoch_zero_rejoins):
                return [(s, self._error(FENCED_MEMBER_EPOCH))]
        else:  # getOrMaybeSubscribeStaticConsumerGroupMember
            static = s.static_member(c.instance_id)
            if joining and static is None:
                old = s.member(c.member_id) or Member(member_id=c.member_id)
            elif joining:
                assert static is not None
                if static.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                    return [(s, self._error(UNRELEASED_INSTANCE_ID))]
                # replaceMember: the same member under the new id, epoch 0, its target kept
                old = _evolve_member(
                    static, member_id=c.member_id, member_epoch=0, previous_member_epoch=0
                )
                target = s.target_of(static.member_id)
                s = _drop_member(s, static.member_id)
                s = _evolve(s, target=tuple(sorted(s.target + ((c.member_id, target),))))
                s = _put_member(s, old)
            else:
                if static is None:
                    return [(s, self._error(UNKNOWN_MEMBER_ID))]
                if static.member_id != c.member_id:
                    return [(s, self._error(FENCED_INSTANCE_ID))]
                old = static
                if not member_epoch_valid(
                    old, c.member_epoch, owned, self.config.epoch_zero_rejoins
                ):
                    return [(s, self._error(FENCED_MEMBER_EPOCH))]
        updated = old
        if c.instance_id is not None:
            updated = _evolve_member(updated, instance_id=c.instance_id)
        if c.rebalance_timeout_ms != -1:
            updated = _evolve_member(updated, rebalance_timeout_ms=c.rebalance_timeout_ms)
        if c.server_assignor is not None:
            updated = _evolve_member(updated, server_assignor=c.server_assignor)
        if c.subscribed_topic_names is not None:
            updated = _evolve_member(
                updated, subscribed_topic_names=tuple(c.subscribed_topic_names)
            )
        if c.subscribed_topic_regex is not None:
            if not self.config.regex_subscriptions:
                raise NotModelled(
                    "regular-expression subscriptions are not modelled for this release "
                    "(regex_subscriptions: off)"
                )
            updated = _evolve_member(
                updated, subscribed_topic_regex=c.subscribed_topic_regex or None
            )
        names_changed = set(updated.subscribed_topic_names) != set(old.subscribed_topic_names)
        status = self._regex_status(s, old, updated)
        if status == INVALID_REGULAR_EXPRESSION:
            return [(s, self._error(INVALID_REGULAR_EXPRESSION))]
        schedules = self._refresh_choices(s, old, updated, status)
        assignor_before = set(self._preferred_assignors(s))
        creating = not s.exists
        if creating:
            s = _evolve(
                s,
                exists=True,
                group_epoch=self.config.initial_group_epoch,
                hashed_topics=frozenset(),
            )
        s = _put_member(s, updated)
        s = _drop_unsubscribed_regexes(s)  # the old regex's tombstone, if it was the last one
        subscription_changed = self.config.subscription_change_reconciles and (
            names_changed or status != NO_CHANGE
        )
        # ``updateSubscriptionMetadata``: on a bump, or on a new group's first heartbeat (its
        # metadata refresh deadline is 0), a changed metadata hash bumps too
        bump = names_changed or status == REGEX_UPDATED_AND_RESOLVED
        bump |= self.config.epoch_zero_group_bumps and s.group_epoch == 0
        bumps = [bump]
        if not bump and self.config.assignor_change_bumps:
            # ``hasPreferredServerAssignorChanged`` (4.4.0): a tie between assignors is broken by
            # ``HashMap`` order, so with one on either side both answers are kept
            assignor_after = set(self._preferred_assignors(s))
            if len(assignor_before) == 1 and len(assignor_after) == 1:
                bumps = [assignor_before != assignor_after]
            else:
                bumps = [False, True]
        outcomes = []
        for bump in bumps:
            s_bumped = _bump_if(s, bump) if bump or creating else s
            for schedule in schedules:
                if schedule:
                    regexes = tuple(sorted(s_bumped.regex_counts()))
                    outcomes.append(
                        _evolve(s_bumped, resolving=regexes, resolving_since=s_bumped.now_ms)
                    )
                else:
                    outcomes.append(s_bumped)
        out: list[tuple[ConsumerGroupState, Response]] = []
        for s1 in (t for s0 in outcomes for t in self._maybe_update_target(s0)):
            target_epoch = s1.assignment_epoch
            target = s1.target_of(c.member_id)
            before = s1.member(c.member_id)
            assert before is not None
            after = self._reconcile(s1, before, target_epoch, target, subscription_changed, owned)
            # one copy of the state for the member, its rebalance timer and its session
            changes: dict[str, Any] = {
                "session_deadlines": _sessions_with(
                    s1, c.member_id, s1.now_ms + self.config.session_timeout_ms
                )
            }
            if after != before:
                changes["members"] = _members_with(s1, after)
                timers = tuple(r for r in s1.rebalance_timers if r[0] != after.member_id)
                if after.state == UNREVOKED_PARTITIONS:
                    deadline = s1.now_ms + after.rebalance_timeout_ms
                    timers = tuple(
                        sorted(timers + ((after.member_id, after.member_epoch, deadline),))
                    )
                changes["rebalance_timers"] = timers
            s2 = _evolve(s1, **changes)
            full = (
                c.rebalance_timeout_ms != -1
                and (c.subscribed_topic_names is not None or c.subscribed_topic_regex is not None)
                and c.topic_partitions is not None
            )
            assignment = None
            if joining or full or after.assigned != old.assigned:
                assignment = _wire(after.assigned)
            answer = ConsumerGroupHeartbeatResponse(
                error=NONE,
                member_id=c.member_id,
                member_epoch=after.member_epoch,
                heartbeat_interval_ms=self.config.heartbeat_interval_ms,
                assignment=assignment,
            )
            out.append((s2, answer))
        return out

    # ------------------------------------------------------------------ regexes (rule 12)
    def _regex_status(self, s: ConsumerGroupState, old: Member, updated: Member) -> str:
        """``maybeUpdateRegularExpressions``, its first half: how the member's regex changed, or
        ``INVALID_REGULAR_EXPRESSION`` for a regex no member had yet that does not compile."""
        before, after = old.subscribed_topic_regex, updated.subscribed_topic_regex
        if before == after:
            return NO_CHANGE
        if after is None:  # the regex dropped
            return REGEX_UPDATED_AND_RESOLVED if self.config.regex_drop_bumps else REGEX_UPDATED
        if s.regex_counts().get(after, 0) == 0:
            return REGEX_UPDATED if regex_compiles(after) else INVALID_REGULAR_EXPRESSION
        return REGEX_UPDATED_AND_RESOLVED if after in dict(s.resolved) else REGEX_UPDATED

    def _refresh_choices(
        self, s: ConsumerGroupState, old: Member, updated: Member, status: str
    ) -> list[bool]:
        """``maybeUpdateRegularExpressions``, its second half: whether this heartbeat starts a
        resolution of every regex of the group; both where the clock or another client's new
        topics cannot tell."""
        counts = s.regex_counts()
        new = updated.subscribed_topic_regex
        require = status == REGEX_UPDATED and new is not None and not counts.get(new)
        if not require and not counts:
            return [False]
        if s.resolving is not None:  # one under way (``executor.isScheduled``)
            return [False]
        if old.subscribed_topic_regex is not None:
            counts[old.subscribed_topic_regex] -= 1
            if not counts[old.subscribed_topic_regex]:
                del counts[old.subscribed_topic_regex]
        if updated.subscribed_topic_regex is not None:
            counts[updated.subscribed_topic_regex] = (
                counts.get(updated.subscribed_topic_regex, 0) + 1
            )
        choices: set[bool] = set()
        for cooled in self._past(s, REGEX_REFRESH_MIN_INTERVAL_MS):
            if not cooled or not counts:
                choices.add(False)
                continue
            unresolved = require or len(counts) != len(s.resolved)
            interval = self.config.regex_refresh_interval_ms
            for stale in [False] if interval is None else self._past(s, interval):
                if unresolved or stale:
                    choices.add(True)
                else:
                    choices.add(False)
                    if self.config.topics_may_appear:
                        choices.add(True)
        return sorted(choices)

    def _past(self, s: ConsumerGroupState, interval: float) -> list[bool]:
        """Whether the broker's clock is past the last resolution's start plus ``interval``
        (``currentTimeMs > lastRefreshTimeMs + interval``; always, with none resolved:
        ``Long.MIN_VALUE``). The start is known between the scheduling heartbeat's send time
        and ``regex_resolution_ms`` later, the broker's clock up to ``clock_slack_ms`` past a
        request's send time: near the end both answers are kept."""
        if not s.resolved:
            return [True]
        if s.now_ms <= s.refreshed_at + interval - self.config.clock_slack_ms:
            return [False]
        if s.now_ms > s.refreshed_at + interval + self.config.regex_resolution_ms:
            return [True]
        return [False, True]

    def _resolution_done(self, s: ConsumerGroupState) -> ConsumerGroupState:
        """``handleRegularExpressionsResult``: each regex of the batch that still has a
        subscriber gets the run's topics it matches (in full: ``Pattern.matcher(...).matches``);
        the group epoch is bumped when one of them changed, or the subscribed topics no longer
        match the metadata hash."""
        assert s.resolving is not None
        counts = s.regex_counts()
        resolved = dict(s.resolved)
        changed = False
        wrote = False
        for regex in s.resolving:
            if not counts.get(regex):
                continue
            topics = frozenset(t for t, _ in self.config.topics if regex_matches(regex, t))
            changed |= resolved.get(regex, frozenset()) != topics
            resolved[regex] = topics
            wrote = True
        s = _evolve(
            s,
            resolving=None,
            resolved=tuple(sorted(resolved.items())),
            refreshed_at=s.resolving_since if wrote else s.refreshed_at,
        )
        return _bump_if(s, changed)

    def background(self, state: ConsumerGroupState) -> list[ConsumerGroupState]:
        """A resolution under way may complete at any moment before its ``RESOLVE`` deadline."""
        if state.resolving is None or not state.exists:
            return []
        return [self._resolution_done(state)]

    def _leave(
        self, s: ConsumerGroupState, c: ConsumerGroupHeartbeat
    ) -> tuple[ConsumerGroupState, Response]:
        """Rule 5, ``consumerGroupLeave``: -1 removes the member (by instance id if given); -2 is
        a static member's temporary leave: it stays, at epoch -2, with its assigned partitions
        and without those pending revocation (``consumerGroupStaticMemberGroupLeave``), until it
        rejoins under a new id or its session runs out."""
        if not s.exists:
            return s, self._error(GROUP_ID_NOT_FOUND)
        if c.instance_id is None:
            if s.member(c.member_id) is None:
                return s, self._error(UNKNOWN_MEMBER_ID)
            answer = ConsumerGroupHeartbeatResponse(
                error=NONE, member_id=c.member_id, member_epoch=c.member_epoch
            )
            return self._remove(s, c.member_id), answer
        static = s.static_member(c.instance_id)
        if static is None:
            return s, self._error(UNKNOWN_MEMBER_ID)
        if static.member_id != c.member_id:
            return s, self._error(FENCED_INSTANCE_ID)
        if c.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            # ``consumerGroupStaticMemberGroupLeave``: assignment epochs reset to 0 (4.3.0+; the
            # epochs exist only there), pending revocations dropped
            left = _evolve_member(
                static,
                member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH,
                pending_revocation=frozenset(),
                epochs=tuple((tp, 0) for tp in sorted(static.assigned)),
            )
            answer = ConsumerGroupHeartbeatResponse(
                error=NONE, member_id=static.member_id, member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH
            )
            return _put_member(s, left), answer
        answer = ConsumerGroupHeartbeatResponse(
            error=NONE, member_id=c.member_id, member_epoch=c.member_epoch
        )
        return self._remove(s, static.member_id), answer

    def _maybe_update_target(self, s: ConsumerGroupState) -> list[ConsumerGroupState]:
        """Rule 3: every target the assignor may compute when the group epoch moved ahead."""
        if s.assignment_epoch >= s.group_epoch:
            return [s]
        subscriptions = {m.member_id: tuple(sorted(s.topics_of(m))) for m in s.members}
        partitions = self.config.partitions()
        # the homogeneous builder only without regexes (``ConsumerGroup.subscriptionType``
        # calls a group with one regex for all homogeneous too: the heterogeneous rule below
        # allows all its homogeneous builder's answers)
        homogeneous = len(set(subscriptions.values())) <= 1 and not s.regex_counts()
        targets: list[dict[str, frozenset[TP]]] = []
        for assignor in self._preferred_assignors(s):
            if assignor == "range":
                instance_ids = {m.member_id: m.instance_id for m in s.members}
                targets += range_targets(partitions, subscriptions, instance_ids)
            elif homogeneous:
                targets += uniform_targets(partitions, subscriptions, dict(s.target))
            else:
                targets += heterogeneous_targets(partitions, subscriptions, dict(s.target))
        return [
            _evolve(
                s,
                assignment_epoch=s.group_epoch,
                target=tuple(sorted((m, t) for m, t in target.items())),
            )
            for target in targets
        ]

    def _reconcile(
        self,
        s: ConsumerGroupState,
        member: Member,
        target_epoch: int,
        target: frozenset[TP],
        subscription_changed: bool,
        owned: frozenset[TP] | None,
    ) -> Member:
        """Rule 4: ``GroupMetadataManager.maybeReconcile`` + ``CurrentAssignmentBuilder.build``."""
        if not subscription_changed and member.reconciled_to(target_epoch):
            return member
        subscribed = s.topics_of(member)

        def owns_any(revoking: frozenset[TP]) -> bool:
            return owned is None or bool(owned & revoking)

        def next_assignment() -> Member:  # computeNextAssignment
            want = frozenset(tp for tp in target if tp.topic in subscribed)
            keep = member.assigned & want
            revoke = member.assigned - keep
            pending = want - keep
            unreleased = frozenset(
                tp
                for tp in pending
                if held_by_others(s, member.member_id, tp) and tp not in member.pending_revocation
            )
            pending -= unreleased
            if revoke and owns_any(revoke):
                return _with_epoch(member, member.member_epoch, UNREVOKED_PARTITIONS, keep, revoke)
            state = UNRELEASED_PARTITIONS if unreleased else STABLE
            return _with_epoch(member, target_epoch, state, keep | pending, frozenset())

        def update_current() -> Member:  # updateCurrentAssignment
            if not subscribed and not member.pending_revocation:
                assigned: frozenset[TP] = frozenset()
                revoking = member.assigned
            else:
                assigned = frozenset(tp for tp in member.assigned if tp.topic in subscribed)
                revoking = member.pending_revocation | (member.assigned - assigned)
            if assigned == member.assigned:
                return member
            if revoking and owns_any(revoking):
                return _with_epoch(
                    member, member.member_epoch, UNREVOKED_PARTITIONS, assigned, revoking
                )
            return _with_epoch(
                member, member.member_epoch, member.state, assigned, member.pending_revocation
            )

        if member.state == STABLE:
            if member.member_epoch != target_epoch:
                return next_assignment()
            if subscription_changed:
                return update_current()
            return member
        if member.state == UNREVOKED_PARTITIONS:
            if owns_any(member.pending_revocation):
                return update_current() if subscription_changed else member
            return next_assignment()
        return next_assignment()  # UNRELEASED_PARTITIONS

    def _remove(self, s: ConsumerGroupState, member_id: str) -> ConsumerGroupState:
        return fence_member(
            s, member_id, empty_catches_up=self.config.empty_group_assignment_catches_up
        )

    # ------------------------------------------------------------------ offsets (rule 11)
    def _commit_error(self, s: ConsumerGroupState, c: OffsetCommit) -> str | None:
        """``OffsetMetadataManager.validateOffsetCommit`` + ``ConsumerGroup.validateOffsetCommit``:
        the error for the whole request, or None (per-partition checks follow)."""
        if not s.exists:
            if c.generation_id < 0:
                raise NotModelled(
                    "an OffsetCommit with epoch < 0 to a missing group creates a classic "
                    "'simple' group: not modelled by the consumer group model"
                )
            return GROUP_ID_NOT_FOUND if c.version >= 9 else ILLEGAL_GENERATION
        if c.generation_id < 0 and not s.members:
            return None
        member = s.member(c.member_id)
        if member is None:
            return UNKNOWN_MEMBER_ID
        if c.version < 9 and member.classic is None:
            return UNSUPPORTED_VERSION
        return None

    def _offset_commit(
        self, s: ConsumerGroupState, c: OffsetCommit
    ) -> tuple[ConsumerGroupState, Response]:
        """Rule 11: commits fenced by member epochs."""
        if any(o.leader_epoch != -1 for o in c.offsets):
            raise NotModelled("a commit's leader epoch is not modelled for a consumer group")
        partitions = self.config.partitions()
        results: list[PartitionError] = []
        valid = []
        for o in c.offsets:
            if 0 <= o.partition < partitions.get(o.topic, 0):
                valid.append(o)
            else:
                results.append(
                    PartitionError(
                        topic=o.topic, partition=o.partition, error=UNKNOWN_TOPIC_OR_PARTITION
                    )
                )
        error = self._commit_error(s, c) if valid else None
        member = s.member(c.member_id)
        if error is None and valid and member is not None and s.members:
            # per partition, oversized metadata is answered before the epoch check
            # (``OffsetMetadataManager.commitOffset``): only the others are checked
            limit = self.config.offset_metadata_max_bytes
            tps = [TP(o.topic, o.partition) for o in valid if len(o.metadata) <= limit]
            error = stale_commit(member, c.generation_id, tps, self.config.commit_partition_epochs)
            if error == STALE_MEMBER_EPOCH and member.classic is not None:
                error = ILLEGAL_GENERATION  # a classic member hears of generations
        if error is not None:
            results += [
                PartitionError(topic=o.topic, partition=o.partition, error=error) for o in valid
            ]
        else:
            stored = {tp: (off, meta) for tp, off, meta in s.offsets}
            for o in valid:
                if len(o.metadata) > self.config.offset_metadata_max_bytes:
                    e = OFFSET_METADATA_TOO_LARGE
                else:
                    stored[TP(o.topic, o.partition)] = (o.offset, o.metadata)
                    e = NONE
                results.append(PartitionError(topic=o.topic, partition=o.partition, error=e))
            s = _evolve(s, offsets=tuple(sorted((tp, off, m) for tp, (off, m) in stored.items())))
        results.sort(key=lambda r: (r.topic, r.partition))
        return s, OffsetCommitResponse(partitions=tuple(results))

    def _offset_fetch(self, s: ConsumerGroupState, c: OffsetFetch) -> OffsetFetchResponse:
        """Rule 11, ``OffsetMetadataManager.fetchOffsets`` + ``ConsumerGroup.validateOffsetFetch``:
        with no member (id null, epoch < 0) anyone reads; otherwise the member must exist and name
        its current epoch. A missing group reads as nothing committed."""
        if s.exists and (c.member_id is not None or c.member_epoch >= 0):
            member = None if c.member_id is None else s.member(c.member_id)
            if member is None:
                return OffsetFetchResponse(error=UNKNOWN_MEMBER_ID)
            if member.member_epoch != c.member_epoch:
                return OffsetFetchResponse(error=STALE_MEMBER_EPOCH)
        stored = {tp: (off, meta) for tp, off, meta in s.offsets}
        # v5+ answers each partition's committed leader epoch: none here (rule 11's commits
        # carry none, ``_offset_commit``), so -1 (``OffsetMetadataManager.fetchOffsets``)
        epoch = -1 if c.version >= 5 else None
        asked = (
            [TP(tp.topic, tp.partition) for tp in c.partitions] if c.partitions else sorted(stored)
        )
        out = []
        for tp in asked:
            off, meta = stored.get(tp, (-1, ""))
            out.append(
                FetchedOffset(
                    topic=tp.topic,
                    partition=tp.partition,
                    offset=off,
                    leader_epoch=epoch,
                    metadata=meta,
                )
            )
        out.sort(key=lambda f: (f.topic, f.partition))
        return OffsetFetchResponse(error=NONE, partitions=tuple(out))


def refused_as_full(
    s: ConsumerGroupState, member_id: str, instance_id: str | None, config: ConsumerGroupConfig
) -> bool:
    """``throwIfConsumerGroupIsFull``: a group at ``group.consumer.max.size`` refuses a member id
    it does not have, from 4.4.0 unless the instance id is a member's
    (``full_group_spares_static``)."""
    if len(s.members) < config.max_size or s.member(member_id) is not None:
        return False
    known = instance_id is not None and s.static_member(instance_id) is not None
    return not (known and config.full_group_spares_static)


def member_epoch_valid(
    member: Member, epoch: int, owned: frozenset[TP] | None, zero_rejoins: bool = True
) -> bool:
    """Rule 2, ``throwIfConsumerGroupMemberEpochIsInvalid``: 0 (re)joins (from 4.2; before, 0 is
    checked like any lower epoch); a greater epoch is fenced; a smaller one only passes as the
    member's previous epoch with owned partitions that are a subset of its assigned ones (the
    answer with the bump may have been lost)."""
    if epoch == 0 and zero_rejoins:
        return True
    if epoch > member.member_epoch:
        return False
    if epoch < member.member_epoch:
        return (
            epoch == member.previous_member_epoch
            and owned is not None
            and owned <= (member.assigned)
        )
    return True


def stale_commit(
    member: Member, epoch: int, tps: Iterable[TP], partition_epochs: bool
) -> str | None:
    """Rule 11, the epoch checks of ``ConsumerGroup.validateOffsetCommit``: the member's epoch
    commits anything; a newer one is stale; an older one is stale before 4.3.0
    (``partition_epochs`` false), and from 4.3.0 only for a partition the member does not hold
    (assigned or pending revocation) or holds since a later epoch
    (``createAssignmentEpochValidator``)."""
    if epoch == member.member_epoch:
        return None
    if epoch > member.member_epoch or not partition_epochs:
        return STALE_MEMBER_EPOCH
    for tp in tps:
        since = member.assignment_epoch(tp)
        if since is None or epoch < since:
            return STALE_MEMBER_EPOCH
    return None


def held_by_others(s: ConsumerGroupState, member_id: str, tp: TP) -> bool:
    """Rule 4, ``currentPartitionEpoch(tp) != -1``: another member still holds ``tp`` (assigned
    or pending revocation)."""
    return any(
        tp in m.assigned or tp in m.pending_revocation
        for m in s.members
        if m.member_id != member_id
    )


def fence_member(
    s: ConsumerGroupState, member_id: str, *, empty_catches_up: bool = False
) -> ConsumerGroupState:
    """Rules 5 and 6, ``consumerGroupFenceMembers``: remove the member and its timers, bump the
    group epoch; with ``empty_catches_up`` (4.4.0), the assignment epoch follows it when no
    member is left."""
    if s.member(member_id) is None:
        return s
    s = _evolve(
        s,
        members=tuple(m for m in s.members if m.member_id != member_id),
        target=tuple((m, t) for m, t in s.target if m != member_id),
        group_epoch=s.group_epoch + 1,
        session_deadlines=tuple(x for x in s.session_deadlines if x[0] != member_id),
        rebalance_timers=tuple(r for r in s.rebalance_timers if r[0] != member_id),
        classic_timers=tuple(x for x in s.classic_timers if x[0] != member_id),
    )
    # ``maybeDeleteResolvedRegularExpressions``; the epoch record carries the new metadata hash
    s = _drop_unsubscribed_regexes(s)
    s = _evolve(s, hashed_topics=s.subscribed_topics())
    if empty_catches_up and not s.members:
        s = _evolve(s, assignment_epoch=s.group_epoch, target=())
    return s


def _drop_unsubscribed_regexes(s: ConsumerGroupState) -> ConsumerGroupState:
    """A resolved regex no member is subscribed to any more is deleted (its tombstone)."""
    counts = s.regex_counts()
    kept = tuple((r, t) for r, t in s.resolved if counts.get(r))
    return s if kept == s.resolved else _evolve(s, resolved=kept)


def _bump_if(s: ConsumerGroupState, bump: bool) -> ConsumerGroupState:
    """``updateSubscriptionMetadata`` / ``handleRegularExpressionsResult``: the group epoch is
    bumped when asked to, or when the subscribed topics differ from those of the metadata hash;
    the epoch record carries the new hash."""
    topics = s.subscribed_topics()
    if not bump and topics == s.hashed_topics:
        return s
    return _evolve(s, group_epoch=s.group_epoch + 1, hashed_topics=topics)


def regex_matches(regex: str, topic: str) -> bool:
    """``TopicRegexResolver.resolveRegularExpressions``: the regex matches the whole name; one
    that does not compile matches nothing (logged and ignored)."""
    try:
        return re.fullmatch(regex, topic) is not None
    except re.error:
        return False


def regex_compiles(regex: str) -> bool:
    """``Utils.throwIfRegularExpressionIsInvalid`` (Google's RE2J ``Pattern``), judged by
    Python's ``re``: the two agree on the forms the suite sends (literal names, ``.``, ``.*``,
    an unclosed ``[``), not on every regex (RE2J has no backreferences, for one)."""
    try:
        re.compile(regex)
    except re.error:
        return False
    return True


def _with_epoch(
    member: Member, epoch: int, state: str, assigned: frozenset[TP], pending: frozenset[TP]
) -> Member:
    """``ConsumerGroupMember.Builder.updateMemberEpoch`` + state and partitions. A partition the
    member held keeps its assignment epoch; a new one gets ``epoch``, the target epoch
    (``CurrentAssignmentBuilder.computeNextAssignment``)."""
    old = dict(member.epochs)
    kept = {tp: old[tp] if tp in member.assigned else epoch for tp in assigned}
    kept.update((tp, old.get(tp, epoch)) for tp in pending)
    return _evolve_member(
        member,
        previous_member_epoch=member.member_epoch,
        member_epoch=epoch,
        state=state,
        assigned=assigned,
        pending_revocation=pending,
        epochs=tuple(sorted(kept.items())),
    )


def deleted_group(s: ConsumerGroupState) -> ConsumerGroupState:
    """The group once gone (``maybeDeleteGroup``, or replaced by a classic group in
    ``model/consumer/migration.py``): what is in flight to clients stays, and so do timers of
    members no longer in it. Kafka cancels none of them (``Group.cancelTimers`` does nothing for a
    consumer group, and a downgrade calls nothing else), and each fences its member id in whatever
    consumer group has that id when it fires (``consumerGroupFenceMemberOperation``): a later
    upgrade brings the member back, and the old timer with it (seen on 4.3.1: a classic member
    that joined a consumer group, was downgraded with it and upgraded again, was fenced by the
    sync timeout of its first join). An Empty group of this model alone has none."""
    return ConsumerGroupState(
        outbox=s.outbox,
        now_ms=s.now_ms,
        deferred=s.deferred,
        session_deadlines=s.session_deadlines,
        rebalance_timers=s.rebalance_timers,
        classic_timers=s.classic_timers,
    )


def _drop_member(s: ConsumerGroupState, member_id: str) -> ConsumerGroupState:
    """Remove a member, its target and timers, with no epoch bump (``replaceMember``)."""
    return _evolve(
        s,
        members=tuple(m for m in s.members if m.member_id != member_id),
        target=tuple((m, t) for m, t in s.target if m != member_id),
        session_deadlines=tuple(x for x in s.session_deadlines if x[0] != member_id),
        rebalance_timers=tuple(r for r in s.rebalance_timers if r[0] != member_id),
        classic_timers=tuple(x for x in s.classic_timers if x[0] != member_id),
    )


def _own_timers(state: ConsumerGroupState) -> tuple[tuple[float, str, str], ...]:
    """The state's session, rebalance and classic join and sync timers, sorted; computed once per
    state (:func:`_evolve` carries them over while no timer changes)."""
    cached = state._own_timers
    if cached is None:
        out = [(t, SESSION, m) for m, t in state.session_deadlines]
        out += [(t, REBALANCE, f"{m}@{e}") for m, e, t in state.rebalance_timers]
        out += [(t, kind, m) for m, kind, t in state.classic_timers]
        cached = tuple(sorted(out))
        object.__setattr__(state, "_own_timers", cached)  # a cache, not state
    return cached


def _put_member(s: ConsumerGroupState, member: Member) -> ConsumerGroupState:
    if member in s.members:
        return s  # already there as it is (a heartbeat that changes nothing of the member)
    return _evolve(s, members=_members_with(s, member))


def _members_with(s: ConsumerGroupState, member: Member) -> tuple[Member, ...]:
    """The group's members with ``member`` in place of the one of its id, sorted by id."""
    others = [m for m in s.members if m.member_id != member.member_id]
    return tuple(sorted(others + [member], key=lambda m: m.member_id))


def _sessions_with(
    s: ConsumerGroupState, member_id: str, deadline: float
) -> tuple[tuple[str, float], ...]:
    """The session deadlines with the member's set to ``deadline``, sorted."""
    others = [x for x in s.session_deadlines if x[0] != member_id]
    return tuple(sorted(others + [(member_id, deadline)]))


def describe_config(config: ConsumerGroupConfig) -> dict[str, Any]:
    """The config as a JSON object (for a trace manifest)."""
    return {
        "topics": [list(t) for t in config.topics],
        "session_timeout_ms": config.session_timeout_ms,
        "heartbeat_interval_ms": config.heartbeat_interval_ms,
        "max_size": config.max_size,
        "assignors": list(config.assignors),
        "max_version": config.max_version,
        "reorder_window_ms": config.reorder_window_ms,
    }
