"""The KIP-932 share group: membership, group and member epochs, target assignment, initialization.

Rules (Apache Kafka 4.3.1, ``group-coordinator/src/main/java/org/apache/kafka/coordinator/group/``
unless named otherwise; KIP-932 "Queues for Kafka"; gathered with line numbers in
``docs/share-groups.md``):

1. **Validation** (``KafkaApis.handleShareGroupHeartbeat`` and ``isMemberIdValid``, then
   ``GroupCoordinatorService.throwIfShareGroupHeartbeatRequestIsInvalid`` with
   ``Utils.throwIfEmptyString``), before the group is read; each failure answers
   ``INVALID_REQUEST``: a ``MemberId`` that is empty or longer than 36 characters (UTF-16 units,
   Java's ``String.length``); a ``MemberId`` or ``GroupId`` blank after Java's ``trim`` (every
   character <= U+0020), a ``RackId`` that is not null but blank; epoch 0 with
   ``SubscribedTopicNames`` null or empty; an epoch below -1 (``blank_member_id_accepted``, an
   implementation switch: a blank ``MemberId`` passes; ``heartbeat_unvalidated``, another:
   none of this is checked). An error answer carries only the
   error (``MemberId`` null, epoch 0, interval 0, no assignment), writes nothing and restarts no
   timer.
2. **Group and member** (``GroupMetadataManager.shareGroupHeartbeat``,
   ``getOrMaybeCreateShareGroup``, ``throwIfShareGroupIsFull``,
   ``ShareGroup.getOrMaybeCreateMember``, ``throwIfShareGroupMemberEpochIsInvalid``): epoch 0
   creates the group and the member if missing; otherwise a missing group is
   ``GROUP_ID_NOT_FOUND`` (``heartbeat_makes_group``, an implementation switch: any heartbeat
   makes it, Empty at the line's first epoch). A group with ``group.share.max.size`` members
   refuses an id it does not have, *before* the member is looked up (so an unknown id at epoch > 0
   in a full group is ``GROUP_MAX_SIZE_REACHED``); then an unknown id at epoch != 0 is
   ``UNKNOWN_MEMBER_ID``. Epoch 0
   always passes; an epoch above the member's, or below it but not its previous epoch, is
   ``FENCED_MEMBER_EPOCH`` (the member stays). The previous epoch passes with no other check (the
   answer with the bump may have been lost; ``previous_epoch_heartbeat_changes_nothing``, an
   implementation switch: and the heartbeat's subscription and rack are not read). These
   errors carry only their code, as rule 1's (implementation switches:
   ``group_answers_carry_interval``, the group's interval; ``error_answers_echo_epoch``, the
   request's epoch).
3. **Epochs** (``ModernGroup``'s constructor, ``TargetAssignmentMetadata.INITIAL``,
   ``hasMemberSubscriptionChanged``, ``initializedAssignmentPending``): a new group starts at
   group epoch 1 and assignment epoch 1 (4.2: 0 and 0, ``initial_group_epoch``); a new member at
   epoch 0, previous epoch -1. The group epoch is bumped by one when the member's subscribed topic
   *set* changed (a new member always; ``rejoin_bumps_epoch``, an implementation switch: and a
   known member's epoch 0), or, when the assignment is current (assignment epoch >=
   group epoch, read before this heartbeat; 4.2 asks whatever the assignment epoch,
   ``initialized_pending_while_behind``), when some subscribed topic's initialized partitions
   differ from the union of every member's target partitions of it
   (``initializedAssignmentPending``). A rack or client id change bumps nothing
   (``recalculation_moves_every_member``, an implementation switch: every bump computes the
   target at once and moves every member to it, rules 4 and 6; a new member starts at the group
   epoch and always bumps). The metadata hash
   adds no bump here: the topics are made before the run and never change
   (``docs/share-groups.md`` §6).
4. **Target assignment** (``maybeUpdateTargetAssignment``, ``TargetAssignmentBuilder``,
   ``GroupSpecImpl.isPartitionAssignable``): when the group epoch is ahead of the assignment epoch
   the assignor runs over every member at once (``group.share.assignment.interval.ms`` = 0, the
   only interval modelled; 4.2 has no such setting and always runs it then,
   ``has_assignment_interval``) and the assignment epoch becomes the group epoch. Only
   *initialized* partitions are assignable. Otherwise the last target is kept.
5. **The ``simple`` assignor** (``assignor/SimpleAssignor``, ``SimpleHomogeneousAssignmentBuilder``
   when every member names the same topics (``ModernGroup.subscriptionType``), else
   ``SimpleHeterogeneousAssignmentBuilder``): ported step by step (:func:`simple_targets`). What
   Kafka leaves to hash order is kept open: the members' order (``GroupSpec.memberIds()``, a
   ``HashMap`` of member ids, sets each member's index and so its quota), and in the homogeneous
   builder the order of a member's partitions when it is over its quota (which it gives up) and of
   the partitions handed out last (both ``HashMap``/``HashSet`` of ``TopicIdPartition``, hashed on
   the random topic id; taken as independent, though both follow one topic id's hash: a slight
   over-approximation). Sets and maps of small ``Integer`` keys iterate in ascending order, as
   Java's ``HashMap`` does for keys below its table size, so the heterogeneous builder is exact
   once the member order is chosen. The model allows exactly the targets the builders compute
   for some such order: an exact port was feasible (M! member orders, 6 for the suite's 3
   members; with a sharing of 1 the partitions are chosen per member, one choice per distinct
   result), and it keeps what a promise-based rule would lose: stickiness as far as the
   builders go, the quota of each member index, and the quirks (Kafka does not add a member to a
   partition's holders while it hands partitions out, so with more members than partitions one
   member may be handed the same partition twice and the partition stays shared by fewer than
   ceil(M/P) members). ``assignor_ranges_in_join_order``, an implementation switch: another
   assignor, contiguous ranges per topic in the members' join order (:func:`ranges_in_join_order`);
   ``assignor_sticky_in_id_order``, another: a sticky one in member-id order
   (:func:`sticky_in_id_order`).
6. **Reconciliation** (``maybeReconcile``, ``modern/share/ShareGroupAssignmentBuilder.build``): no
   revocation phase. When the target epoch differs from the member's epoch, the member jumps to
   it: epoch := target epoch, previous epoch := its old epoch, assigned := its target filtered to
   its subscribed topics. A bump with the target epoch equal to the member's (only with an
   assignment interval) re-filters. Assignments are maps topic -> partitions as Kafka keeps them:
   a topic whose partitions were all taken away stays as a key with no partitions.
7. **The answer** (end of ``shareGroupHeartbeat``): member id, member epoch, the heartbeat
   interval; the assignment when the request's epoch was 0, or ``SubscribedTopicNames`` was
   non-null, or the assigned map changed (``ShareGroupMember.hasAssignedPartitionsChanged``;
   ``assignment_sent_on_epoch_change``, an implementation switch: or the member's epoch moved;
   ``assignment_in_every_answer``, another: always, when the member holds any topic, even with
   no partition of it). The member's session timer is (re)started,
   ``group.share.session.timeout.ms``. A known member that sends epoch 0 keeps its epoch and gets
   its whole assignment.
8. **Initialization** (``maybeCreateInitializeShareGroupStateRequest``,
   ``subscribedTopicsChangeMap``, ``GroupCoordinatorService.shareGroupHeartbeat``'s zero-delay
   timer task, ``initializeShareGroupState``): every successful heartbeat marks the group's
   subscribed topics that exist and are neither initialized nor initializing as *initializing*,
   and asks the share coordinator to initialize them, after the answer. They become
   *initialized* at a moment the client cannot know: the model lets each initializing topic
   complete at any moment (:meth:`ShareGroupModel.background`), and, when
   ``initialization_ms`` is a number, forces it that long after it started. An initialization
   bumps nothing by itself: the next heartbeat that finds the assignment current bumps the epoch
   (rule 3) and a new target takes the partitions in. A persister failure (never in an answer;
   retried by a later heartbeat after ``group.share.initialize.retry.interval.ms``) is covered
   when ``initialization_ms`` is None, not with a bound. Implementations without a share
   coordinator (``initialized_at_subscription``, an implementation switch) initialize a topic in
   the heartbeat that subscribes the group to it, before its target is computed.
9. **Leave and session expiry** (``shareGroupLeave``, ``shareGroupFenceMember``,
   ``scheduleShareGroupSessionTimeout``, ``shareGroupFenceMemberOperation``): epoch -1 to a
   missing group is ``GROUP_ID_NOT_FOUND`` (``heartbeat_makes_group``, an implementation switch:
   every heartbeat first makes the group, Empty), from an unknown member ``UNKNOWN_MEMBER_ID`` (no
   size or epoch check; ``unknown_member_leave_answered``, another: a leave's answer, nothing
   changed); otherwise the member, its target and its timer go, the group epoch is bumped,
   and no new target is computed (another member's next heartbeat does). The answer echoes the
   member id (``leave_answer_names_no_member``, an implementation switch: null) and epoch -1,
   interval 0 (``group_answers_carry_interval``, an implementation switch: the group's, as in its
   errors of rule 2), no assignment. The session timer fences the
   same way, ``group.share.session.timeout.ms`` after the member's last successful heartbeat, and
   does nothing if the member is gone. Implementation switches: ``fence_computes_target`` (the
   remaining members' target computed at once), ``recalculation_moves_every_member`` (so
   computed, and every member moved to it; the last member's going bumps nothing),
   ``last_member_gone_deletes_group`` (a group left without members deleted, as by rule 12).
   From 4.4.0 fencing the last member also sets the assignment epoch to the new group epoch
   (``empty_group_assignment_catches_up``: a
   target-assignment metadata record in the 4.4.0 jar's ``shareGroupFenceMember``); 4.3.1 leaves
   it behind.
10. **ShareGroupDescribe** (``GroupMetadataManager.shareGroupDescribe``,
    ``ShareGroup.asDescribedGroup``, ``ShareGroupMember.asShareGroupDescribeMember``): a missing
    group is ``GROUP_ID_NOT_FOUND``; else state ``Empty`` (no members) or ``Stable``
    (``ShareGroup.maybeUpdateGroupState``), the group and assignment epochs, assignor ``simple``,
    and each member's rack, epoch, client id, subscribed topics and assigned partitions
    (``describe_shows_target_assignment``, an implementation switch: its target instead).
11. **ListGroups** (``GroupMetadataManager.listGroups``, ``ShareGroup.isInStates``,
    ``ModernGroup.asListedGroup``, ``Group.GroupType.parse``): the group is listed with protocol
    type ``share``, its state from v4 and type ``share`` from v5; a states filter (trimmed, any
    case) must name its state, a types filter (any case) ``share``. Every version lists it.
12. **DeleteGroups** (``GroupCoordinatorService.deleteGroups``: the share step
    ``GroupCoordinatorShard.sharePartitionDeleteRequests``, then ``deleteGroups``): a missing
    group is ``GROUP_ID_NOT_FOUND``, one with members ``NON_EMPTY_GROUP``; an Empty one is deleted
    with its share state (initialized and initializing topics go), and a later join makes a new
    group at the line's first epoch (``initial_group_epoch``) whose topics must initialize
    again. A persister error on the share state's deletion is not modelled
    (``docs/share-groups.md`` §6 item 6).
13. **Share groups never expire** (``ShareGroup.shouldExpire`` is false; the periodic cleanup,
    ``GroupCoordinatorShard.cleanupGroupMetadata``, deletes only groups that should): an Empty
    share group stays until DeleteGroups.

Kept open: when an initialization completes (rule 8), and the assignor's hash orders (rule 5).
Release lines (``profiles.share_line_rules``): 4.2, 4.3 and 4.4. 4.4 is told apart by
``empty_group_assignment_catches_up``; 4.2 (read in the 4.2.2 jars' bytecode,
``docs/share-groups.md`` §8) by ``initial_group_epoch``, ``initialized_pending_while_behind`` and
``has_assignment_interval``.

Pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from operator import attrgetter
from typing import Any, TypeAlias, TypeVar

from kgc.model.commands import (
    DeleteGroups,
    DeleteGroupsResponse,
    ListedGroup,
    ListGroups,
    ListGroupsResponse,
    NotModelled,
    Request,
    Response,
    ShareGroupDescribe,
    ShareGroupDescribeResponse,
    ShareGroupHeartbeat,
    ShareGroupHeartbeatResponse,
    ShareMember,
    TopicPartition,
    client_id_of,
)
from kgc.model.errors import (
    FENCED_MEMBER_EPOCH,
    GROUP_ID_NOT_FOUND,
    GROUP_MAX_SIZE_REACHED,
    INVALID_REQUEST,
    NON_EMPTY_GROUP,
    NONE,
    UNKNOWN_MEMBER_ID,
)
from kgc.model.timed import Deferred, OutboxModel, Timer

LEAVE_GROUP_MEMBER_EPOCH = -1  # ``ShareGroupHeartbeatRequest.LEAVE_GROUP_MEMBER_EPOCH``
SHARE_VERSION = 1  # ShareGroupHeartbeat and ShareGroupDescribe: v1 only (v0 was 4.0's preview)
MAX_MEMBER_ID_LENGTH = 36  # ``KafkaApis.isMemberIdValid``: a human-readable UUID
SIMPLE = "simple"  # ``SimpleAssignor.name``, the only share assignor (``group.share.assignors``)
PROTOCOL_TYPE = "share"  # ``ShareGroup.PROTOCOL_TYPE``
GROUP_TYPE = "share"  # ``Group.GroupType.SHARE``
EMPTY, STABLE, DEAD = "Empty", "Stable", "Dead"  # ``ShareGroup.ShareGroupState``
STATES_SINCE = 4  # ListGroupsResponse's ``GroupState``
TYPES_SINCE = 5  # ListGroupsResponse's ``GroupType``
# timer kinds
SESSION = "session"
INITIALIZE = "initialize"  # the latest an initialization under way completes (rule 8)
DEFERRED = "deferred"

# A member's assigned or target partitions as Kafka keeps them (``Map<Uuid, Set<Integer>>``): topic
# -> partitions, sorted by topic; a topic may map to no partition (rule 6).
Assignment: TypeAlias = tuple[tuple[str, frozenset[int]], ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ShareGroupConfig:
    """The broker settings a share group reads, the topics that exist, and the release line."""

    group_id: str = "kgc-group"
    topics: tuple[tuple[str, int], ...] = (("kgc-suite", 3),)  # (name, partitions), made first
    session_timeout_ms: int = 45000  # group.share.session.timeout.ms
    heartbeat_interval_ms: int = 5000  # group.share.heartbeat.interval.ms
    max_size: int = 200  # group.share.max.size
    # group.share.assignment.interval.ms: only 0 is modelled (rule 4; Kafka's default, 1000,
    # defers targets by wall clock: ``docs/share-groups.md`` §6 item 3)
    assignment_interval_ms: int = 0
    # rule 4: whether the line has ``group.share.assignment.interval.ms`` at all. 4.2 has not: its
    # ``shareGroupHeartbeat`` calls ``updateTargetAssignment`` whenever the group epoch is ahead of
    # the assignment epoch, with no time check (4.2.2 bytecode; 4.3's
    # ``maybeUpdateTargetAssignment`` asks ``canComputeNextTargetAssignment`` first), so it
    # behaves as an interval of 0 and another interval cannot be its
    has_assignment_interval: bool = True
    # rule 3: a new group's group and assignment epochs. 4.3: 1 (``ModernGroup``'s constructor sets
    # ``groupEpoch`` to 1, ``TargetAssignmentMetadata.INITIAL`` has epoch 1); 4.2: 0 (the 4.2.2
    # constructor leaves both ``TimelineInteger``s, ``groupEpoch`` and ``targetAssignmentEpoch``,
    # at 0), so a new group's first member is answered epoch 1, not 2
    initial_group_epoch: int = 1
    # rule 3: ``initializedAssignmentPending`` is asked even while the assignment epoch is behind
    # the group epoch (after a leave or an expiry). 4.2.2's ``shareGroupHeartbeat`` (bytecode)
    # computes ``hasMemberSubscriptionChanged(...) || initializedAssignmentPending(group)``; 4.3
    # asks only ``if (group.assignmentEpoch() >= groupEpoch)``. The departed member's target is
    # gone, so its partitions are pending and the next heartbeat bumps the epoch once more
    initialized_pending_while_behind: bool = False
    # rule 8: the latest an initialization completes after the heartbeat that started it; None:
    # it may complete at any moment and is never forced (a persister failure and its retry
    # included). A bound must stay below ``group.share.initialize.retry.interval.ms`` (30 s).
    initialization_ms: float | None = None
    # rule 9: fencing the last member sets the assignment epoch to the new group epoch (from
    # 4.4.0, ``shareGroupFenceMember``'s bytecode; 4.3.1 leaves it behind)
    empty_group_assignment_catches_up: bool = True
    # rule 8, an implementation switch (``profiles.SHARE_IMPLEMENTATION_SWITCHES``): a subscribed
    # topic that exists is initialized in the heartbeat that subscribes the group to it, before
    # that heartbeat's target is computed, so a new member is assigned its partitions at once.
    # Kafka (False) initializes through the share coordinator after the answer
    initialized_at_subscription: bool = False
    # rule 10, an implementation switch: ShareGroupDescribe lists each member's target (filtered
    # to its subscription, as its next heartbeat reconciles to it), not its assigned partitions.
    # Kafka (False) describes what the member was last answered with
    # (``ShareGroupMember.asShareGroupDescribeMember``: ``assignedPartitions``)
    describe_shows_target_assignment: bool = False
    # rules 2 and 9, an implementation switch: the leave answer and the errors of a group that
    # exists (UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH, GROUP_MAX_SIZE_REACHED) carry
    # ``group.share.heartbeat.interval.ms``. Kafka (False) leaves it 0 in both: an error answer
    # carries only the error, and ``shareGroupLeave`` sets no interval
    group_answers_carry_interval: bool = False
    # rule 9, an implementation switch: a leave or a session expiry that leaves members computes
    # their new target at once (the assignment epoch follows the group epoch). Kafka (False)
    # leaves that to the next heartbeat (rule 4)
    fence_computes_target: bool = False
    # rules 9 and 13, an implementation switch: a group whose last member leaves or expires is
    # deleted with its share state, as DeleteGroups does (rule 12). Kafka (False) keeps it Empty
    last_member_gone_deletes_group: bool = False
    # rule 7, an implementation switch: the answer carries the assignment also when the member's
    # epoch moved with its assigned partitions unchanged. Kafka (False) sends it only when they
    # changed (``hasAssignedPartitionsChanged``), to a join, or to a full request
    assignment_sent_on_epoch_change: bool = False
    # rule 1, an implementation switch: a ``MemberId`` of blanks (not empty) is not refused.
    # Kafka (False) refuses it INVALID_REQUEST (``Utils.throwIfEmptyString`` trims it)
    blank_member_id_accepted: bool = False
    # rule 9, an implementation switch: the leave answer's ``MemberId`` is null. Kafka (False)
    # echoes the leaving member's id (``shareGroupLeave``: ``setMemberId(memberId)``)
    leave_answer_names_no_member: bool = False
    # rules 2 and 9, an implementation switch: the errors of a group that exists carry the
    # request's ``MemberEpoch``. Kafka (False) answers 0: an error answer carries only its code
    # (``GroupCoordinatorService.shareGroupHeartbeat``'s ``handleOperationException``)
    error_answers_echo_epoch: bool = False
    # rule 7, an implementation switch: every successful heartbeat's answer carries the member's
    # assignment, changed or not. Kafka (False) sends it to a join, a full request or a change
    assignment_in_every_answer: bool = False
    # rules 2 and 9, an implementation switch: any ShareGroupHeartbeat makes the group it names
    # (Empty, at the line's first epoch) before its epoch is looked at, so a heartbeat or a leave
    # to a missing group is answered as to an Empty one. Kafka (False): only epoch 0 makes one;
    # the others are GROUP_ID_NOT_FOUND
    heartbeat_makes_group: bool = False
    # rule 9, an implementation switch: a leave from a member the group lacks is answered as a
    # leave (NONE, epoch -1) and changes nothing. Kafka (False) answers UNKNOWN_MEMBER_ID
    unknown_member_leave_answered: bool = False
    # rule 3, an implementation switch: a known member's epoch-0 heartbeat bumps the group epoch
    # as a new member's does. Kafka (False) bumps only on a changed subscribed topic set (the
    # member keeps its epoch and gets its whole assignment, rule 7)
    rejoin_bumps_epoch: bool = False
    # rules 3, 6 and 9, an implementation switch: the group epoch moves only with a
    # recalculation, which computes the target at once and moves every member to it (epoch :=
    # the group epoch, previous epoch := its old one; a new member starts at the group epoch, so
    # a new member's previous epoch is the group's before its join). A leave or a session expiry
    # recalculates for the members left; that of the last member, nothing (no bump). Kafka
    # (False): a member's epoch moves only in its own heartbeat (rule 6), and every leave bumps
    # the group epoch (rule 9)
    recalculation_moves_every_member: bool = False
    # rule 5, an implementation switch: the assignor hands each topic's partitions out in
    # contiguous ranges to the members subscribed to it, in the order they joined, keeping
    # nothing from the last target: the i-th of M subscribers of a topic of P partitions gets
    # ``ceil(i·P/M)`` up to ``ceil((i+1)·P/M)`` (:func:`ranges_in_join_order`). Kafka (False): the
    # ``simple`` assignor
    assignor_ranges_in_join_order: bool = False
    # rule 5, an implementation switch: another assignor, sticky in member-id order
    # (:func:`sticky_in_id_order`): what each member held and still subscribes to is kept, cut to
    # a quota computed over the members sorted by id, and the lowest partitions short of their
    # sharing go round-robin to the members under quota. Kafka (False): the ``simple`` assignor
    assignor_sticky_in_id_order: bool = False
    # rule 1, an implementation switch: nothing in a ShareGroupHeartbeat is validated (an empty,
    # blank or over-long member id, epoch 0 without topics, an epoch below -1, a blank rack): it
    # goes on to rule 2 as it is (an epoch below -1 is then a heartbeat at an epoch the member
    # does not have). Kafka (False) refuses each with INVALID_REQUEST
    heartbeat_unvalidated: bool = False
    # rule 2, an implementation switch: a heartbeat at the member's previous epoch only renews its
    # session and is answered with its current epoch: its subscription (and rack) are not read.
    # Kafka (False) handles it as any other heartbeat once the epoch passed
    previous_epoch_heartbeat_changes_nothing: bool = False
    reorder_window_ms: float = 0.0  # see ``model/timed.py``

    def __post_init__(self) -> None:
        if not self.has_assignment_interval and self.assignment_interval_ms != 0:
            raise ValueError(
                f"assignment_interval_ms={self.assignment_interval_ms} on a line without "
                "group.share.assignment.interval.ms (before 4.3 a share group's target is "
                "computed in the heartbeat that needs it): leave it at 0"
            )
        if self.assignment_interval_ms != 0:
            raise ValueError(
                f"group.share.assignment.interval.ms={self.assignment_interval_ms}: only 0 is "
                "modelled (targets deferred by the coordinator's wall clock are not); set "
                "group.share.assignment.interval.ms=0 on the broker"
            )
        if self.assignor_ranges_in_join_order and self.assignor_sticky_in_id_order:
            raise ValueError(
                "one assignor at a time: assignor_ranges_in_join_order or "
                "assignor_sticky_in_id_order"
            )
        if self.initialization_ms is not None and self.initialization_ms < 0:
            raise ValueError(f"initialization_ms={self.initialization_ms}: expected >= 0 or None")

    def partitions(self) -> dict[str, int]:
        return dict(self.topics)


@dataclass(frozen=True, slots=True, kw_only=True)
class Member:
    """A share group member (``modern/share/ShareGroupMember``); its state is always ``STABLE``."""

    member_id: str
    member_epoch: int = 0
    previous_member_epoch: int = -1
    rack_id: str | None = None
    client_id: str = ""
    subscribed_topic_names: frozenset[str] = frozenset()
    assigned: Assignment = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Sent:
    request_id: int
    response: Response
    emitted_at_ms: float


@dataclass(frozen=True, slots=True, kw_only=True)
class ShareGroupState:
    exists: bool = False
    group_epoch: int = 0
    assignment_epoch: int = 0
    members: tuple[Member, ...] = ()  # sorted by member id
    # the members' ids in the order they joined: kept only for ``assignor_ranges_in_join_order``
    # (else empty, so states that differ only in it are one)
    joined: tuple[str, ...] = ()
    target: tuple[tuple[str, Assignment], ...] = ()  # member id -> target, sorted
    # rule 8: topics whose partitions are initialized for the group, and those under way with
    # when the heartbeat that started them was handled (sorted)
    initialized: frozenset[str] = frozenset()
    initializing: tuple[tuple[str, float], ...] = ()
    session_deadlines: tuple[tuple[str, float], ...] = ()  # member id -> deadline, sorted
    outbox: tuple[Sent, ...] = ()
    now_ms: float = 0.0
    deferred: Deferred | None = None  # held back by the reorder window (``model/timed.py``)
    _hash: int = field(default=0, init=False, compare=False, repr=False)

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

    def target_of(self, member_id: str) -> Assignment:
        return dict(self.target).get(member_id, ())

    def subscribed_topic_names(self) -> frozenset[str]:
        """``ModernGroup.subscribedTopicNames``' keys: every member's topic names."""
        out: frozenset[str] = frozenset()
        for m in self.members:
            out |= m.subscribed_topic_names
        return out

    @property
    def group_state(self) -> str:
        """``ShareGroup.maybeUpdateGroupState``; ``Dead`` for a group that does not exist."""
        if not self.exists:
            return DEAD
        return STABLE if self.members else EMPTY


_state_key = attrgetter(*(f.name for f in fields(ShareGroupState) if f.compare))


# ------------------------------------------------------------------------------ assignments


def _flat(assignment: Assignment) -> tuple[TopicPartition, ...]:
    """The partitions of an assignment, sorted by (topic, partition), as the wire records them."""
    return tuple(TopicPartition(topic=t, partition=p) for t, ps in assignment for p in sorted(ps))


def _frozen(mapping: Mapping[str, Iterable[int]]) -> Assignment:
    return tuple(sorted((t, frozenset(ps)) for t, ps in mapping.items()))


def _filtered(
    assignment: Assignment, names: frozenset[str], existing: Mapping[str, int]
) -> Assignment:
    """``ShareGroupAssignmentBuilder.filterAssignedPartitions``: the topics of ``assignment`` the
    member subscribes to (a ``TopicIds`` view: names that exist)."""
    return tuple((t, ps) for t, ps in assignment if t in names and t in existing)


class _Choices:
    """One run of a builder along a path of choices: where Kafka's order is not known, the run
    asks :meth:`pick` for one of ``n`` options; :func:`_every_run` replays the runs until every
    path was taken."""

    def __init__(self, path: list[int]) -> None:
        self.path = path
        self.widths: list[int] = []

    def pick(self, n: int) -> int:
        depth = len(self.widths)
        if depth == len(self.path):
            self.path.append(0)
        self.widths.append(n)
        return self.path[depth]


R = TypeVar("R")


def _every_run(run: Callable[[_Choices], R]) -> list[R]:
    """``run`` along every path of choices (depth first, an odometer over the choice points)."""
    out: list[R] = []
    path: list[int] = []
    while True:
        choices = _Choices(path)
        out.append(run(choices))
        widths = choices.widths
        del path[len(widths) :]
        while path and path[-1] + 1 >= widths[len(path) - 1]:
            path.pop()
        if not path:
            return out
        path[-1] += 1


def _order(choices: _Choices, items: Iterable[str]) -> list[str]:
    """Any order of ``items`` (a permutation, one choice at a time)."""
    left = sorted(items)
    out = []
    while left:
        out.append(left.pop(choices.pick(len(left))))
    return out


class _Iterator:
    """A Java ``HashSet<Integer>`` iterator over member indices (ascending: small ``Integer``
    keys), with ``remove`` of the last element returned; nothing else changes the set while it
    runs."""

    def __init__(self, members: set[int]) -> None:
        self.members = members
        self.items = sorted(members)
        self.at = 0

    def has_next(self) -> bool:
        return self.at < len(self.items)

    def next(self) -> int:
        if self.at >= len(self.items):
            # Java's ``NoSuchElementException``: the builder's capacity equals its demand, so
            # this cannot happen; if it does, the coordinator would fail the heartbeat
            raise NotModelled("the simple assignor ran out of unfilled members (not modelled)")
        self.at += 1
        return self.items[self.at - 1]

    def remove(self) -> None:
        self.members.discard(self.items[self.at - 1])


def _copy(assignment: Mapping[str, set[int]]) -> dict[str, set[int]]:
    """``AssignorHelpers.deepCopyAssignment``."""
    return {t: set(ps) for t, ps in assignment.items()}


def _quotas(members: int, partitions: int) -> tuple[int, list[int]]:
    """``desiredSharing`` and ``desiredAssignmentCount`` of both builders: each partition shared by
    ceil(members / partitions) members, and member ``i``'s quota from the member's index in the
    same double arithmetic as Java (IEEE doubles: Python floats compute the same)."""
    sharing = 0 if partitions == 0 else (members + partitions - 1) // partitions
    precise = float(sharing * partitions) / float(members)
    counts = [
        math.ceil(precise * float(i + 1)) - math.ceil(precise * float(i)) for i in range(members)
    ]
    return sharing, counts


Subscriptions: TypeAlias = tuple[tuple[str, frozenset[str]], ...]
Targets: TypeAlias = tuple[tuple[str, Assignment], ...]


def ranges_in_join_order(
    joined: tuple[str, ...],
    subscriptions: Subscriptions,
    topics: tuple[tuple[str, int], ...],
    initialized: frozenset[str],
) -> Targets:
    """``assignor_ranges_in_join_order``'s one target: for each initialized topic, its subscribers
    in ``joined`` order, the i-th of M given the partitions from ``ceil(i·P/M)`` up to
    ``ceil((i+1)·P/M)``, computed in doubles as the implementation does (``precise = P / M``).
    Every subscriber of a topic holds it as a key, with no partition if M > P."""
    subscribed = dict(subscriptions)
    out: dict[str, dict[str, frozenset[int]]] = {m: {} for m in joined if m in subscribed}
    for topic, count in topics:
        if topic not in initialized:
            continue
        members = [m for m in joined if topic in subscribed.get(m, frozenset())]
        if not members:
            continue
        precise = count / len(members)
        start = 0
        for i, m in enumerate(members):
            n = math.ceil(precise * (i + 1)) - math.ceil(precise * i)
            out[m][topic] = frozenset(range(start, min(start + n, count)))
            start += n
    return tuple(sorted((m, _frozen(a)) for m, a in out.items()))


@functools.lru_cache(maxsize=4096)
def sticky_in_id_order(
    subscriptions: Subscriptions,
    topics: tuple[tuple[str, int], ...],
    initialized: frozenset[str],
    previous: Targets,
) -> Targets:
    """``assignor_sticky_in_id_order``'s one target, step by step as the implementation computes
    it (members sorted by id; each member's partitions of a topic as a list, ascending when a
    computation starts):

    1. each member keeps the partitions of its last target whose topic it still subscribes to
       and that exist;
    2. per assignable topic (initialized, with partitions) with ``S`` subscribers and ``P``
       partitions: the sharing ``D = ceil(S/P)``; the i-th subscriber's quota is
       ``ceil((i+1)·D·P/S)`` less the quotas before it;
       a. a member over its quota keeps its lowest ``quota`` partitions;
       b. a partition held by more than ``D`` members loses the excess, taken first from the
          members most over their quota (then by id);
       c. the members under quota, in id order, are handed partitions in ascending order
          round-robin, each partition until ``D`` members hold it, never twice to one member; a
          member leaves the round at its quota.

    A member holds a topic as a key only with some partition of it."""
    subscribed = {m: names for m, names in subscriptions}
    members = sorted(subscribed)
    count = dict(topics)
    held: dict[str, dict[str, list[int]]] = {m: {} for m in members}
    last = dict(previous)
    for m in members:  # 1.
        for topic, parts in last.get(m, ()):
            if topic in subscribed[m] and topic in count:
                kept = sorted(p for p in parts if p < count[topic])
                if kept:
                    held[m][topic] = kept
    for topic in sorted({t for names in subscribed.values() for t in names}):
        n = count.get(topic, 0)
        if topic not in initialized or n == 0:
            continue
        subs = [m for m in members if topic in subscribed[m]]
        sharing = (len(subs) + n - 1) // n
        slots = sharing * n
        quota: dict[str, int] = {}
        total = 0
        for i, m in enumerate(subs):
            upto = ((i + 1) * slots + len(subs) - 1) // len(subs)
            quota[m] = upto - total
            total = upto
        holders: dict[int, set[str]] = {}
        for m in subs:
            for p in held[m].get(topic, []):
                holders.setdefault(p, set()).add(m)
        have = {m: len(held[m].get(topic, [])) for m in subs}
        for m in subs:  # a.
            mine = held[m].get(topic, [])
            if len(mine) <= quota[m]:
                continue
            for p in mine[quota[m] :]:
                holders[p].discard(m)
            if quota[m] > 0:
                held[m][topic] = mine[: quota[m]]
            else:
                del held[m][topic]
            have[m] = quota[m]
        for p in range(n):  # b.
            excess = len(holders.get(p, ())) - sharing
            if excess <= 0:
                continue
            order = sorted(holders[p], key=lambda m: (-(have[m] - quota[m]), m))
            for m in order[:excess]:
                holders[p].discard(m)
                held[m][topic] = [q for q in held[m][topic] if q != p]
                if not held[m][topic]:
                    del held[m][topic]
                have[m] -= 1
        under = [m for m in subs if have[m] < quota[m]]  # c.
        at = 0
        for p in range(n):
            if not under:
                break
            owners = holders.setdefault(p, set())
            while len(owners) < sharing and under:
                start, found = at, False
                while True:
                    m = under[at % len(under)]
                    after = (at + 1) % len(under)
                    if m not in owners:
                        owners.add(m)
                        held[m].setdefault(topic, []).append(p)
                        have[m] += 1
                        if have[m] >= quota[m]:
                            i = at % len(under)
                            del under[i]
                            if under:
                                at = i % len(under)
                        else:
                            at = after
                        found = True
                        break
                    at = after
                    if at == start:
                        break
                if not found:
                    break
        for m in subs:
            if topic in held[m]:
                held[m][topic] = sorted(held[m][topic])
    return tuple(sorted((m, _frozen(a)) for m, a in held.items()))


@functools.lru_cache(maxsize=4096)
def simple_targets(
    subscriptions: Subscriptions,
    topics: tuple[tuple[str, int], ...],
    initialized: frozenset[str],
    previous: Targets,
) -> frozenset[Targets]:
    """Every target the ``simple`` assignor may compute (rule 5): ``subscriptions`` member id ->
    subscribed topic names (sorted by id), ``topics`` the topics that exist and their partition
    counts, ``initialized`` the topics whose partitions are assignable, ``previous`` each member's
    last target. ``SimpleAssignor.assign`` picks the homogeneous builder when every member names
    the same topics (``ModernGroup.subscriptionType``, by name: a name that does not exist counts),
    else the heterogeneous one. Memoised: a group meets the same few inputs again and again."""
    if not subscriptions:
        return frozenset({()})
    existing = dict(topics)
    old = dict(previous)
    names = {m: s for m, s in subscriptions}
    homogeneous = len(set(names.values())) == 1
    build = _homogeneous if homogeneous else _heterogeneous

    def run(choices: _Choices) -> Targets:
        order = _order(choices, names)
        result = build(choices, order, names, existing, initialized, old)
        return tuple(sorted(result.items()))

    return frozenset(_every_run(run))


def _old_maps(order: list[str], old: Mapping[str, Assignment]) -> dict[int, dict[str, set[int]]]:
    """``oldGroupAssignment``: each member's last target by index (``Assignment.EMPTY`` if none)."""
    return {i: {t: set(ps) for t, ps in old.get(m, ())} for i, m in enumerate(order)}


def _result(
    order: list[str], old: Mapping[int, dict[str, set[int]]], new: Mapping[int, dict[str, set[int]]]
) -> dict[str, Assignment]:
    """``build``'s last step: the new assignment of a member the builder changed, else its old."""
    return {m: _frozen(new[i] if i in new else old[i]) for i, m in enumerate(order)}


def _homogeneous(
    choices: _Choices,
    order: list[str],
    names: Mapping[str, frozenset[str]],
    existing: Mapping[str, int],
    initialized: frozenset[str],
    previous: Mapping[str, Assignment],
) -> dict[str, Assignment]:
    """``SimpleHomogeneousAssignmentBuilder``, members numbered in ``order``."""
    first = names[order[0]]
    if not first:  # ``subscribedTopicIds.isEmpty()`` (names): ``Map.of()``, every member EMPTY
        return {m: () for m in order}
    subscribed = {t for t in first if t in existing}  # ``TopicIds``: names that exist
    targets = [(t, p) for t in sorted(subscribed) if t in initialized for p in range(existing[t])]
    sharing, desired = _quotas(len(order), len(targets))
    old = _old_maps(order, previous)
    new: dict[int, dict[str, set[int]]] = {}
    by_partition: dict[tuple[str, int], set[int]] = {}
    by_member: dict[int, set[tuple[str, int]]] = {}
    unfilled: set[int] = set()
    overfilled: set[int] = set()
    # revokeUnassignablePartitions (the order of members and topics changes nothing)
    for i in range(len(order)):
        count = 0
        copy: dict[str, set[int]] | None = None
        for topic, parts in old[i].items():
            if topic in subscribed:
                for p in parts:
                    count += 1
                    by_partition.setdefault((topic, p), set()).add(i)
                    by_member.setdefault(i, set()).add((topic, p))
                    if count >= desired[i] and copy is None:
                        copy = _copy(old[i])
            else:
                if copy is None:
                    copy = _copy(old[i])
                del copy[topic]
        if copy is not None:
            new[i] = copy
        if count < desired[i]:
            unfilled.add(i)
        elif count > desired[i]:
            overfilled.add(i)
    # revokeOverfilledMembers: a member over its quota gives up the first partitions of its
    # ``HashSet<TopicIdPartition>``, an order not known: any of them
    for i in sorted(overfilled):
        held = by_member[i]
        if len(held) > desired[i]:
            options = list(itertools.combinations(sorted(held), len(held) - desired[i]))
            for tp in options[choices.pick(len(options))]:
                new[i][tp[0]].discard(tp[1])
                by_partition[tp].discard(i)
                held.discard(tp)
    # revokeOversharedPartitions (each partition alone; its members in ascending index order)
    for tp, assigned in by_partition.items():
        count = len(assigned)
        if count > sharing:
            for i in sorted(assigned):
                held_of_topic = new.setdefault(i, _copy(old[i])).get(tp[0])
                if held_of_topic is not None and tp[1] in held_of_topic:
                    held_of_topic.discard(tp[1])
                    count -= 1
                    assigned.discard(i)
                    by_member[i].discard(tp)
                    unfilled.add(i)
                if count <= sharing:
                    break
    for tp in targets:
        by_partition.setdefault(tp, set())
    # assignRemainingPartitions: the partitions in ``HashMap`` order (not known: any), those at
    # their sharing skipped
    if unfilled:
        needy = sorted(tp for tp, assigned in by_partition.items() if len(assigned) < sharing)
        handed = _hand_out_any_order(
            choices, needy, by_partition, sharing, desired, unfilled, by_member
        )
        for tp, i in handed:
            new.setdefault(i, _copy(old[i])).setdefault(tp[0], set()).add(tp[1])
    return _result(order, old, new)


TP: TypeAlias = tuple[str, int]
_PLACE = "\x00place"  # a topic name no topic has: the places of :func:`_hand_out_any_order`


def _hand_out_any_order(
    choices: _Choices,
    needy: list[TP],
    holders: Mapping[TP, set[int]],
    sharing: int,
    desired: list[int],
    unfilled: set[int],
    held: Mapping[int, set[TP]],
) -> list[tuple[TP, int]]:
    """The homogeneous ``assignRemainingPartitions`` with ``needy`` handed out in any order.

    With a sharing of 1 no needy partition has a holder, so the check ``i not in holders`` always
    passes and who gets the k-th partition handed out does not depend on which partition it is:
    the loop runs once over places, and each member's places are filled with any partitions left
    (one choice per distinct result, not one per order). Otherwise (more members than partitions,
    so few partitions) every order is tried."""
    if sharing != 1:
        order = list(needy)
        ordered = [order.pop(choices.pick(len(order))) for _ in range(len(needy))]
        return _hand_out(ordered, holders, sharing, desired, unfilled, _copy_held(held))
    places = [(_PLACE, k) for k in range(len(needy))]
    handed = _hand_out(places, {p: set() for p in places}, 1, desired, unfilled, _copy_held(held))
    left = list(needy)
    out: list[tuple[TP, int]] = []
    for i in dict.fromkeys(i for _, i in handed):
        options = list(itertools.combinations(left, sum(1 for _, j in handed if j == i)))
        for tp in options[choices.pick(len(options))]:
            left.remove(tp)
            out.append((tp, i))
    return out


def _copy_held(held: Mapping[int, set[TP]]) -> dict[int, set[TP]]:
    return {i: set(tps) for i, tps in held.items()}


def _hand_out(
    partitions: list[TP],
    holders: Mapping[TP, set[int]],
    sharing: int,
    desired: list[int],
    unfilled: set[int],
    held: dict[int, set[TP]],
) -> list[tuple[TP, int]]:
    """``SimpleHomogeneousAssignmentBuilder.assignRemainingPartitions``'s loop over ``partitions``
    in this order: which member index gets each, in hand-out order. The unfilled members are
    gone through in ascending index order, over and over while a pass hands something out; a
    member leaves them once it holds its quota (``held``: what each member holds, updated).
    Kafka does not add a member to a partition's holders here, so with a sharing above 1 one
    member may be handed one partition twice (its set keeps one)."""
    out: list[tuple[TP, int]] = []
    members = _Iterator(unfilled)
    assigned_this_pass = False
    for tp in partitions:
        have = holders[tp]
        to_make = sharing - len(have)
        while to_make > 0:
            if not members.has_next():
                if not assigned_this_pass:
                    break
                members = _Iterator(unfilled)
                assigned_this_pass = False
            i = members.next()
            if i not in have:
                out.append((tp, i))
                held.setdefault(i, set()).add(tp)
                to_make -= 1
                assigned_this_pass = True
                if len(held[i]) >= desired[i]:
                    members.remove()
        if not unfilled:
            break
    return out


def _heterogeneous(
    choices: _Choices,
    order: list[str],
    names: Mapping[str, frozenset[str]],
    existing: Mapping[str, int],
    initialized: frozenset[str],
    previous: Mapping[str, Assignment],
) -> dict[str, Assignment]:
    """``SimpleHeterogeneousAssignmentBuilder``, members numbered in ``order``: each subscribed
    topic balanced over its subscribers on its own (``TopicAssignmentPartialBuilder``), topics in
    any order (each touches only its own key of the members' maps)."""
    subscribed = sorted({t for m in order for t in names[m] if t in existing})
    if not subscribed:
        return {m: () for m in order}
    old = _old_maps(order, previous)
    new: dict[int, dict[str, set[int]]] = {}
    for topic in subscribed:
        subscribers = [i for i, m in enumerate(order) if topic in names[m]]
        targets = list(range(existing[topic])) if topic in initialized else []
        _heterogeneous_topic(topic, len(order), subscribers, targets, old, new)
    return _result(order, old, new)


def _heterogeneous_topic(
    topic: str,
    members: int,
    subscribers: list[int],
    targets: list[int],
    old: Mapping[int, dict[str, set[int]]],
    new: dict[int, dict[str, set[int]]],
) -> None:
    """``TopicAssignmentPartialBuilder.build`` for ``topic``; its partitions and members are
    ``Integer`` keys, iterated in ascending order."""
    sharing, counts = _quotas(len(subscribers), len(targets))
    desired = [0] * members
    for j, i in enumerate(subscribers):
        desired[i] = counts[j]
    by_partition: dict[int, set[int]] = {}
    by_member: dict[int, set[int]] = {}
    # revokeUnassignablePartitions: every old partition of the topic counts, also a member's that
    # no longer subscribes to it (its quota is 0: the next step takes them all)
    for i in range(members):
        parts = old[i].get(topic)
        if old[i] and parts is not None:
            for p in parts:
                by_partition.setdefault(p, set()).add(i)
                by_member.setdefault(i, set()).add(p)
    # revokeOverfilledMembers: the lowest partitions go first
    for i in sorted(by_member):
        held = by_member[i]
        for p in sorted(held):
            if len(held) <= desired[i]:
                break
            by_partition[p].discard(i)
            held.discard(p)
            new.setdefault(i, _copy(old[i]))[topic].discard(p)
    # revokeOversharedPartitions
    for p in sorted(by_partition):
        assigned = by_partition[p]
        count = len(assigned)
        if count > sharing:
            for i in sorted(assigned):
                parts = new.setdefault(i, _copy(old[i])).get(topic)
                if parts is not None and p in parts:
                    parts.discard(p)
                    count -= 1
                    assigned.discard(i)
                    by_member[i].discard(p)
                if count <= sharing:
                    break
    for p in targets:
        by_partition.setdefault(p, set())
    # assignRemainingPartitions
    unfilled = {i for i in subscribers if len(by_member.get(i, ())) < desired[i]}
    iterator = _Iterator(unfilled)
    assigned_this_pass = False
    for p in sorted(by_partition):
        holders = by_partition[p]
        to_make = sharing - len(holders)
        while to_make > 0:
            if not iterator.has_next():
                if not assigned_this_pass:
                    break
                iterator = _Iterator(unfilled)
                assigned_this_pass = False
            i = iterator.next()
            if i not in holders:
                new.setdefault(i, _copy(old[i])).setdefault(topic, set()).add(p)
                by_member.setdefault(i, set()).add(p)
                to_make -= 1
                assigned_this_pass = True
                if len(by_member[i]) >= desired[i]:
                    iterator.remove()
        if not unfilled:
            break


# ------------------------------------------------------------------------------ validation


def java_length(text: str) -> int:
    """Java's ``String.length``: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def java_trim(text: str) -> str:
    """Java's ``String.trim``: strips every character <= U+0020 at either end."""
    start, end = 0, len(text)
    while start < end and ord(text[start]) <= 0x20:
        start += 1
    while end > start and ord(text[end - 1]) <= 0x20:
        end -= 1
    return text[start:end]


def java_blank(text: str) -> bool:
    """``value.trim().isEmpty()``."""
    return not java_trim(text)


def invalid(
    c: ShareGroupHeartbeat, group_id: str, *, blank_member_id_accepted: bool = False
) -> bool:
    """Rule 1: whether the request is refused with ``INVALID_REQUEST`` before the group is read
    (``blank_member_id_accepted``: a member id of blanks passes)."""
    if not c.member_id or java_length(c.member_id) > MAX_MEMBER_ID_LENGTH:
        return True  # ``KafkaApis.isMemberIdValid``
    if java_blank(c.member_id) and not blank_member_id_accepted:
        return True
    if java_blank(group_id):
        return True
    if c.rack_id is not None and java_blank(c.rack_id):
        return True
    if c.member_epoch == 0:
        return not c.subscribed_topic_names
    return c.member_epoch < LEAVE_GROUP_MEMBER_EPOCH


def member_epoch_valid(member: Member, epoch: int) -> bool:
    """Rule 2, ``throwIfShareGroupMemberEpochIsInvalid``."""
    if epoch == 0 or epoch == member.member_epoch:
        return True
    if epoch > member.member_epoch:
        return False
    return epoch == member.previous_member_epoch


def initialized_assignment_pending(s: ShareGroupState, existing: Mapping[str, int]) -> bool:
    """Rule 3, ``initializedAssignmentPending``: a subscribed, initialized topic whose partitions
    are not exactly those every member's target holds of it."""
    if not s.members or not s.initialized:
        return False
    subscribed = s.subscribed_topic_names()
    if not subscribed:
        return False
    held: dict[str, set[int]] = {}
    for _, target in s.target:
        for topic, parts in target:
            held.setdefault(topic, set()).update(parts)
    for topic in sorted(s.initialized):
        if topic in subscribed and held.get(topic) != set(range(existing.get(topic, 0))):
            return True
    return False


def fence_member(s: ShareGroupState, member_id: str, *, empty_catches_up: bool) -> ShareGroupState:
    """Rule 9, ``shareGroupFenceMember``: the member, its target and its session timer go and the
    group epoch is bumped; with ``empty_catches_up`` (4.4.0) the assignment epoch follows it when
    the member was the last."""
    if s.member(member_id) is None:
        return s
    members = tuple(m for m in s.members if m.member_id != member_id)
    epoch = s.group_epoch + 1
    return replace(
        s,
        members=members,
        joined=tuple(m for m in s.joined if m != member_id),
        target=tuple((m, t) for m, t in s.target if m != member_id),
        session_deadlines=tuple(x for x in s.session_deadlines if x[0] != member_id),
        group_epoch=epoch,
        assignment_epoch=epoch if empty_catches_up and not members else s.assignment_epoch,
    )


def deleted_group(s: ShareGroupState) -> ShareGroupState:
    """Rule 12: the group and its share state gone; what is in flight to clients stays."""
    return ShareGroupState(outbox=s.outbox, now_ms=s.now_ms, deferred=s.deferred)


def _with_member(s: ShareGroupState, member: Member) -> tuple[Member, ...]:
    """The group's members with ``member`` in place of the one of its id, sorted by id."""
    others = [m for m in s.members if m.member_id != member.member_id]
    return tuple(sorted([*others, member], key=lambda m: m.member_id))


# -------------------------------------------------------------------------------- the model


class ShareGroupModel(OutboxModel[ShareGroupState]):
    """The reference model of one KIP-932 share group."""

    def __init__(self, config: ShareGroupConfig | None = None) -> None:
        self.config = config or ShareGroupConfig()

    def __repr__(self) -> str:
        return "ShareGroupModel(simple)"

    # ------------------------------------------------------------------ Model
    def initial(self) -> ShareGroupState:
        return ShareGroupState()

    def timers(self, state: ShareGroupState) -> list[tuple[float, str, str]]:
        out = [(t, SESSION, m) for m, t in state.session_deadlines]
        bound = self.config.initialization_ms
        if bound is not None:
            out += [(since + bound, INITIALIZE, topic) for topic, since in state.initializing]
        if state.deferred is not None:
            out.append((state.deferred.at_ms + self.config.reorder_window_ms, DEFERRED, ""))
        return sorted(out)

    def next_timer(self, state: ShareGroupState) -> Timer | None:
        pending = self.timers(state)
        return pending[0] if pending else None

    def fire(self, state: ShareGroupState, timer: Timer) -> list[ShareGroupState]:
        deadline, kind, key = timer
        s = replace(state, now_ms=max(state.now_ms, deadline))
        if kind == DEFERRED:
            d = s.deferred
            assert d is not None
            return self.apply(replace(s, deferred=None), d.request_id, d.command, d.at_ms)
        if kind == INITIALIZE:
            return [_initialized(s, frozenset({key}))]
        # SESSION: ``shareGroupFenceMemberOperation`` fences the member if it is still there
        s = replace(s, session_deadlines=tuple(x for x in s.session_deadlines if x[0] != key))
        return self._fence(s, key)

    def background(self, state: ShareGroupState) -> list[ShareGroupState]:
        """Rule 8: initializations under way may complete at any moment, each on its own (the
        persister answers per topic), so any non-empty set of them by the next event."""
        topics = [t for t, _ in state.initializing]
        out = []
        for n in range(1, len(topics) + 1):
            for done in itertools.combinations(topics, n):
                out.append(_initialized(state, frozenset(done)))
        return out

    # ------------------------------------------------------------------ steps
    def apply(
        self, state: ShareGroupState, request_id: int, command: Request, at_ms: float
    ) -> list[ShareGroupState]:
        s = replace(state, now_ms=max(state.now_ms, at_ms))
        outcomes: list[tuple[ShareGroupState, Response]]
        share_request = isinstance(command, ShareGroupHeartbeat | ShareGroupDescribe)
        if share_request and command.version != SHARE_VERSION:
            raise NotModelled(
                f"{command.type} v{command.version} is not modelled (v{SHARE_VERSION} only: "
                "4.1+ brokers speak no other)"
            )
        if isinstance(command, ShareGroupHeartbeat):
            outcomes = self._heartbeat(s, command)
        elif isinstance(command, ShareGroupDescribe):
            outcomes = [(s, self._describe(s))]
        elif isinstance(command, ListGroups):
            outcomes = [(s, self._list_groups(s, command))]
        elif isinstance(command, DeleteGroups):
            outcomes = [self._delete_groups(s)]
        else:
            raise NotModelled(
                f"{command.type} is not a request of the share group model (ShareGroupHeartbeat, "
                "ShareGroupDescribe, ListGroups, DeleteGroups)"
            )
        return [
            replace(
                s2,
                outbox=(
                    *s2.outbox,
                    Sent(request_id=request_id, response=r, emitted_at_ms=s2.now_ms),
                ),
            )
            for s2, r in outcomes
        ]

    def _heartbeat(
        self, s: ShareGroupState, c: ShareGroupHeartbeat
    ) -> list[tuple[ShareGroupState, Response]]:
        """Rules 1-8."""
        blank_accepted = self.config.blank_member_id_accepted
        unchecked = self.config.heartbeat_unvalidated
        if not unchecked and invalid(
            c, self.config.group_id, blank_member_id_accepted=blank_accepted
        ):
            return [(s, ShareGroupHeartbeatResponse(error=INVALID_REQUEST))]
        if not s.exists and self.config.heartbeat_makes_group:
            first = self.config.initial_group_epoch
            s = replace(s, exists=True, group_epoch=first, assignment_epoch=first)
        if c.member_epoch == LEAVE_GROUP_MEMBER_EPOCH:
            return self._leave(s, c)
        joining = c.member_epoch == 0
        if not s.exists and not joining:
            return [(s, ShareGroupHeartbeatResponse(error=GROUP_ID_NOT_FOUND))]
        old = s.member(c.member_id)
        if len(s.members) >= self.config.max_size and old is None:
            return [(s, self._group_error(GROUP_MAX_SIZE_REACHED, c))]
        new = old is None
        if old is None:
            if not joining:
                return [(s, self._group_error(UNKNOWN_MEMBER_ID, c))]
            old = Member(member_id=c.member_id)
        if not member_epoch_valid(old, c.member_epoch):
            return [(s, self._group_error(FENCED_MEMBER_EPOCH, c))]
        if not s.exists:  # rule 3: a new group (its records are written with this heartbeat)
            first = self.config.initial_group_epoch
            s = replace(s, exists=True, group_epoch=first, assignment_epoch=first)
        if new and self.config.recalculation_moves_every_member:
            old = replace(old, member_epoch=s.group_epoch)
        if new and self.config.assignor_ranges_in_join_order:
            s = replace(s, joined=(*s.joined, c.member_id))
        existing = self.config.partitions()
        updated = replace(
            old,
            rack_id=old.rack_id if c.rack_id is None else c.rack_id,
            subscribed_topic_names=(
                old.subscribed_topic_names
                if c.subscribed_topic_names is None
                else frozenset(c.subscribed_topic_names)
            ),
            client_id=client_id_of(c.client),
        )
        if (
            self.config.previous_epoch_heartbeat_changes_nothing
            and not joining
            and c.member_epoch != old.member_epoch  # valid, so the member's previous epoch
        ):
            updated = old
        if self.config.initialized_at_subscription:
            s = _initialized_at_once(s, updated, existing)
        bump = updated.subscribed_topic_names != old.subscribed_topic_names
        bump |= joining and self.config.rejoin_bumps_epoch
        bump |= new and self.config.recalculation_moves_every_member  # any new member recalculates
        if self.config.initialized_pending_while_behind or s.assignment_epoch >= s.group_epoch:
            bump |= initialized_assignment_pending(s, existing)
        s = replace(
            s, members=_with_member(s, updated), group_epoch=s.group_epoch + (1 if bump else 0)
        )
        out: list[tuple[ShareGroupState, Response]] = []
        for s1 in self._maybe_update_target(s):
            if bump and self.config.recalculation_moves_every_member:
                s1 = self._moved(s1)
                after = s1.member(c.member_id) or updated
            else:
                after = self._reconcile(updated, s1, bump)
            s2 = replace(
                s1,
                members=_with_member(s1, after) if after != updated else s1.members,
                session_deadlines=_sessions_with(
                    s1, c.member_id, s1.now_ms + self.config.session_timeout_ms
                ),
            )
            s2 = self._start_initialization(s2)
            full = joining or c.subscribed_topic_names is not None
            if self.config.assignment_sent_on_epoch_change:
                full |= after.member_epoch != old.member_epoch
            sent = full or after.assigned != old.assigned
            if self.config.assignment_in_every_answer:  # if the member holds any topic
                sent = bool(after.assigned)
            answer = ShareGroupHeartbeatResponse(
                error=NONE,
                member_id=c.member_id,
                member_epoch=after.member_epoch,
                heartbeat_interval_ms=self.config.heartbeat_interval_ms,
                assignment=_flat(after.assigned) if sent else None,
            )
            out.append((s2, answer))
        return out

    def _maybe_update_target(self, s: ShareGroupState) -> list[ShareGroupState]:
        """Rule 4: every target the assignor may compute when the group epoch moved ahead."""
        if s.assignment_epoch >= s.group_epoch:
            return [s]
        subscriptions = tuple((m.member_id, m.subscribed_topic_names) for m in s.members)
        topics, initialized = self.config.topics, s.initialized
        if self.config.assignor_ranges_in_join_order:  # one target: the implementation's
            targets = [ranges_in_join_order(s.joined, subscriptions, topics, initialized)]
        elif self.config.assignor_sticky_in_id_order:
            targets = [sticky_in_id_order(subscriptions, topics, initialized, s.target)]
        else:
            targets = sorted(
                simple_targets(subscriptions, topics, initialized, s.target), key=_target_key
            )
        return [replace(s, assignment_epoch=s.group_epoch, target=t) for t in targets]

    def _moved(self, s: ShareGroupState) -> ShareGroupState:
        """``recalculation_moves_every_member``: every member jumps to the new target at once
        (epoch := the assignment epoch, previous epoch := its own, assigned := its target)."""
        epoch, existing = s.assignment_epoch, self.config.partitions()
        members = tuple(
            replace(
                m,
                member_epoch=epoch,
                previous_member_epoch=m.member_epoch,
                assigned=_filtered(s.target_of(m.member_id), m.subscribed_topic_names, existing),
            )
            for m in s.members
        )
        return replace(s, members=members)

    def _reconcile(self, member: Member, s: ShareGroupState, bump: bool) -> Member:
        """Rule 6: ``maybeReconcile`` and ``ShareGroupAssignmentBuilder.build``."""
        epoch = s.assignment_epoch
        if not bump and member.member_epoch == epoch:  # ``isReconciledTo`` (always STABLE)
            return member
        assigned = _filtered(
            s.target_of(member.member_id), member.subscribed_topic_names, self.config.partitions()
        )
        if epoch != member.member_epoch:
            return replace(
                member,
                member_epoch=epoch,
                previous_member_epoch=member.member_epoch,
                assigned=assigned,
            )
        return replace(member, assigned=assigned)

    def _start_initialization(self, s: ShareGroupState) -> ShareGroupState:
        """Rule 8, ``subscribedTopicsChangeMap``: the group's subscribed topics that exist and are
        neither initialized nor under way start initializing now."""
        existing = self.config.partitions()
        busy = s.initialized | {t for t, _ in s.initializing}
        new = sorted(t for t in s.subscribed_topic_names() if t in existing and t not in busy)
        if not new:
            return s
        return replace(
            s, initializing=tuple(sorted([*s.initializing, *((t, s.now_ms) for t in new)]))
        )

    def _leave(
        self, s: ShareGroupState, c: ShareGroupHeartbeat
    ) -> list[tuple[ShareGroupState, Response]]:
        """Rule 9, ``shareGroupLeave``."""
        if not s.exists:
            return [(s, ShareGroupHeartbeatResponse(error=GROUP_ID_NOT_FOUND))]
        if s.member(c.member_id) is None and not self.config.unknown_member_leave_answered:
            return [(s, self._group_error(UNKNOWN_MEMBER_ID, c))]
        answer = ShareGroupHeartbeatResponse(
            error=NONE,
            member_id=None if self.config.leave_answer_names_no_member else c.member_id,
            member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
            heartbeat_interval_ms=self._group_interval(),
        )
        if s.member(c.member_id) is None:  # ``unknown_member_leave_answered``: nothing changes
            return [(s, answer)]
        return [(s2, answer) for s2 in self._fence(s, c.member_id)]

    def _group_interval(self) -> int:
        """The interval a leave answer or a group's error carries: none (0) in Kafka
        (``group_answers_carry_interval``: the group's)."""
        interval: int = self.config.heartbeat_interval_ms
        return interval if self.config.group_answers_carry_interval else 0

    def _group_error(self, error: str, c: ShareGroupHeartbeat) -> ShareGroupHeartbeatResponse:
        """Rule 2's errors of a group that exists (rule 1: they carry only the error;
        ``group_answers_carry_interval``: and the group's interval; ``error_answers_echo_epoch``:
        and the request's epoch)."""
        return ShareGroupHeartbeatResponse(
            error=error,
            member_epoch=c.member_epoch if self.config.error_answers_echo_epoch else 0,
            heartbeat_interval_ms=self._group_interval(),
        )

    def _fence(self, s: ShareGroupState, member_id: str) -> list[ShareGroupState]:
        """Rule 9: the member fenced (``fence_computes_target``: and the others' target
        computed; ``last_member_gone_deletes_group``: the group deleted if it was the last)."""
        before = s
        s = fence_member(
            s, member_id, empty_catches_up=self.config.empty_group_assignment_catches_up
        )
        if not s.members and self.config.last_member_gone_deletes_group:
            return [deleted_group(s)]
        if self.config.recalculation_moves_every_member and s is not before:
            if not s.members:  # nothing to recalculate: the epochs stay
                return [
                    replace(
                        s, group_epoch=before.group_epoch, assignment_epoch=before.assignment_epoch
                    )
                ]
            return [self._moved(s1) for s1 in self._maybe_update_target(s)]
        if s.members and self.config.fence_computes_target:
            return self._maybe_update_target(s)
        return [s]

    def _describe(self, s: ShareGroupState) -> ShareGroupDescribeResponse:
        """Rule 10."""
        if not s.exists:
            return ShareGroupDescribeResponse(error=GROUP_ID_NOT_FOUND)
        return ShareGroupDescribeResponse(
            error=NONE,
            group_state=s.group_state,
            group_epoch=s.group_epoch,
            assignment_epoch=s.assignment_epoch,
            assignor_name=SIMPLE,
            members=tuple(
                ShareMember(
                    member_id=m.member_id,
                    rack_id=m.rack_id,
                    member_epoch=m.member_epoch,
                    client_id=m.client_id,
                    subscribed_topic_names=tuple(sorted(m.subscribed_topic_names)),
                    assignment=_flat(self._described_assignment(s, m)),
                )
                for m in s.members
            ),
        )

    def _described_assignment(self, s: ShareGroupState, m: Member) -> Assignment:
        """Rule 10: the member's assigned partitions (``describe_shows_target_assignment``:
        its target, as far as it subscribes)."""
        if not self.config.describe_shows_target_assignment:
            return m.assigned
        existing = self.config.partitions()
        return _filtered(s.target_of(m.member_id), m.subscribed_topic_names, existing)

    def _list_groups(self, s: ShareGroupState, c: ListGroups) -> ListGroupsResponse:
        """Rule 11."""
        state = s.group_state
        states = {java_trim(f.lower()) for f in c.states_filter}
        wanted = (
            s.exists
            and (not c.states_filter or state.lower() in states)
            and (not c.types_filter or GROUP_TYPE in {t.lower() for t in c.types_filter})
        )
        if not wanted:
            return ListGroupsResponse(error=NONE)
        listed = ListedGroup(
            protocol_type=PROTOCOL_TYPE,
            group_state=state if c.version >= STATES_SINCE else "",
            group_type=GROUP_TYPE if c.version >= TYPES_SINCE else "",
        )
        return ListGroupsResponse(error=NONE, groups=(listed,))

    def _delete_groups(self, s: ShareGroupState) -> tuple[ShareGroupState, Response]:
        """Rule 12."""
        if not s.exists:
            return s, DeleteGroupsResponse(error=GROUP_ID_NOT_FOUND)
        if s.members:
            return s, DeleteGroupsResponse(error=NON_EMPTY_GROUP)
        return deleted_group(s), DeleteGroupsResponse(error=NONE)


def _target_key(target: Targets) -> tuple[tuple[str, tuple[tuple[str, tuple[int, ...]], ...]], ...]:
    """A total order of targets (frozensets compare by inclusion), so successors come out in the
    same order on every run."""
    return tuple((m, tuple((t, tuple(sorted(ps))) for t, ps in a)) for m, a in target)


def _initialized(s: ShareGroupState, topics: frozenset[str]) -> ShareGroupState:
    """Rule 8, ``initializeShareGroupState``: ``topics`` under way are initialized now."""
    return replace(
        s,
        initialized=s.initialized | topics,
        initializing=tuple(x for x in s.initializing if x[0] not in topics),
    )


def _initialized_at_once(
    s: ShareGroupState, member: Member, existing: Mapping[str, int]
) -> ShareGroupState:
    """Rule 8 with ``initialized_at_subscription``: the topics ``member`` subscribes to that
    exist are initialized now, before the heartbeat computes its target."""
    topics = frozenset(t for t in member.subscribed_topic_names if t in existing)
    if topics <= s.initialized:
        return s
    return _initialized(s, topics)


def _sessions_with(
    s: ShareGroupState, member_id: str, deadline: float
) -> tuple[tuple[str, float], ...]:
    """The session deadlines with the member's set to ``deadline``, sorted."""
    others = [x for x in s.session_deadlines if x[0] != member_id]
    return tuple(sorted([*others, (member_id, deadline)]))


def describe_config(config: ShareGroupConfig) -> dict[str, Any]:
    """The config as a JSON object (for a trace manifest)."""
    return {
        "topics": [list(t) for t in config.topics],
        "session_timeout_ms": config.session_timeout_ms,
        "heartbeat_interval_ms": config.heartbeat_interval_ms,
        "max_size": config.max_size,
        "assignment_interval_ms": config.assignment_interval_ms,
        "has_assignment_interval": config.has_assignment_interval,
        "initial_group_epoch": config.initial_group_epoch,
        "initialized_pending_while_behind": config.initialized_pending_while_behind,
        "initialization_ms": config.initialization_ms,
        "empty_group_assignment_catches_up": config.empty_group_assignment_catches_up,
        "initialized_at_subscription": config.initialized_at_subscription,
        "describe_shows_target_assignment": config.describe_shows_target_assignment,
        "group_answers_carry_interval": config.group_answers_carry_interval,
        "fence_computes_target": config.fence_computes_target,
        "last_member_gone_deletes_group": config.last_member_gone_deletes_group,
        "assignment_sent_on_epoch_change": config.assignment_sent_on_epoch_change,
        "blank_member_id_accepted": config.blank_member_id_accepted,
        "leave_answer_names_no_member": config.leave_answer_names_no_member,
        "error_answers_echo_epoch": config.error_answers_echo_epoch,
        "assignment_in_every_answer": config.assignment_in_every_answer,
        "heartbeat_makes_group": config.heartbeat_makes_group,
        "unknown_member_leave_answered": config.unknown_member_leave_answered,
        "rejoin_bumps_epoch": config.rejoin_bumps_epoch,
        "recalculation_moves_every_member": config.recalculation_moves_every_member,
        "assignor_ranges_in_join_order": config.assignor_ranges_in_join_order,
        "assignor_sticky_in_id_order": config.assignor_sticky_in_id_order,
        "heartbeat_unvalidated": config.heartbeat_unvalidated,
        "previous_epoch_heartbeat_changes_nothing": config.previous_epoch_heartbeat_changes_nothing,
        "reorder_window_ms": config.reorder_window_ms,
    }
