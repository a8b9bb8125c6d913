"""Partition assignors, as Kafka specifies them: who gets which partition for given subscriptions.

Role: in the classic protocol the *leader client* computes the assignment and the coordinator only
relays it (``SyncGroup``); under KIP-848 the *coordinator* computes a target assignment itself. This
module is the model's statement of both kinds of rule, so the properties layer can check any
observed assignment against what the assignor promises, and prove those promises for small inputs.

Client side (classic protocol), ``clients/src/main/java/org/apache/kafka/clients/consumer/``:

* ``range`` — ``RangeAssignor.java``: per topic, partitions in numeric order, subscribers sorted
  (static members by ``group.instance.id`` first, then by ``member.id``:
  ``AbstractPartitionAssignor.MemberInfo.compareTo``); the first ``n % k`` subscribers get one
  extra partition.
* ``roundrobin`` — ``RoundRobinAssignor.java``: all partitions sorted by topic then partition, dealt
  to the sorted members in a circle, skipping members not subscribed to the partition's topic.
* ``sticky`` — ``StickyAssignor.java`` over ``internals/AbstractStickyAssignor.java``: when all
  subscriptions are equal, the *constrained* builder (keep owned partitions up to the quota, then
  round-robin the rest); otherwise the *general* builder (keep owned partitions, assign the rest to
  the least loaded subscriber, then move partitions until balanced, tracking movements so a
  partition does not bounce between two members).
* ``cooperative-sticky`` — ``CooperativeStickyAssignor.java``: the sticky assignment, minus every
  partition that changes owner in this rebalance (the old owner must revoke it first; it is
  assigned in the follow-up rebalance).

Server side (KIP-848), ``group-coordinator/src/main/java/org/apache/kafka/coordinator/group/
assignor/``:

* ``uniform`` — ``UniformAssignor.java``: ``UniformHomogeneousAssignmentBuilder.java`` when all
  members subscribe to the same topics, else ``UniformHeterogeneousAssignmentBuilder.java``.
* ``server-range`` — ``RangeAssignor.java`` (Kafka calls it ``range``; renamed here only to keep
  one name space): contiguous per-topic ranges, co-partitioned when subscriptions are equal.

Sources read: Apache Kafka 4.1.1 (``confluentinc/kafka`` commit ``be816b82d2``, "Bump version to
4.1.1"). Rack-aware assignment is not modelled (no racks are given, which is Kafka's path when no
consumer sets ``client.rack``).

Determinism. Kafka iterates several ``HashMap``/``HashSet`` collections (members, topics, topic
ids, a set of moved partitions) whose order is unspecified. Where that order decides the result, the
model fixes one documented order: members and topics in ascending string order, partitions in
ascending number, and the smallest element where Kafka takes "any" element of a set. An observed
assignment from real Kafka may therefore differ from the model's in *which* member gets *which*
partition while satisfying every promise; the properties layer checks promises, not equality,
for the sticky and uniform assignors.

Inputs. ``partitions_per_topic`` is the cluster metadata (topic -> partition count); topics no
member subscribes to, and topics with no partitions, are ignored (``AbstractPartitionAssignor``
and the coordinator both drop them). ``Subscription.owned_partitions`` is, for the client
assignors, ``ConsumerProtocolSubscription.ownedPartitions`` (the sticky assignors also read the
generation) and, for the server assignors, the member's assignment in the current target
assignment (``GroupSpec.memberAssignment``). Every member of ``subscriptions`` appears in the
result, possibly with no partitions.

Pure: standard library only, no I/O, no clock, no randomness.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import NamedTuple, TypeAlias

__all__ = [
    "ASSIGNORS",
    "DEFAULT_GENERATION",
    "AssignorError",
    "AssignorSpec",
    "Balance",
    "GroupAssignment",
    "Subscription",
    "TopicPartition",
    "assign",
    "cooperative_sticky_assign",
    "is_homogeneous",
    "range_assign",
    "roundrobin_assign",
    "server_range_assign",
    "sorted_members",
    "sticky_assign",
    "sticky_assign_with_transfers",
    "uniform_assign",
]

DEFAULT_GENERATION = -1  # AbstractStickyAssignor.DEFAULT_GENERATION


class TopicPartition(NamedTuple):
    """Kafka's ``TopicPartition``. A named tuple (not a record) so it sorts by topic, then
    partition, exactly like Kafka's ``TopicPartitionComparator``, and hashes fast."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Subscription:
    """What one member tells the assignor (``ConsumerPartitionAssignor.Subscription``).

    ``generation_id`` is ``None`` when the member sent none (Kafka's ``Optional.empty()``).
    """

    topics: tuple[str, ...]
    owned_partitions: tuple[TopicPartition, ...] = ()
    generation_id: int | None = None
    group_instance_id: str | None = None


GroupAssignment: TypeAlias = dict[str, tuple[TopicPartition, ...]]


class AssignorError(Exception):
    """Where Kafka's assignor throws (``IllegalStateException``, ``PartitionAssignorException``)."""


class Balance(Enum):
    """The balance each assignor promises (checked by ``kgc.properties.assignment_z3``).

    * ``PER_TOPIC`` — per topic, the subscribers' shares differ by at most one and the larger
      shares go to the first subscribers in sorted order (range assignors).
    * ``EVEN_IF_HOMOGENEOUS`` — when all members subscribe to the same topics, members' loads differ
      by at most one; otherwise nothing (``RoundRobinAssignor`` javadoc).
    * ``AS_BALANCED_AS_POSSIBLE`` — loads differ by at most one, or no member with two or more
      partitions fewer than another could take one of that member's partitions (``StickyAssignor``
      javadoc; the uniform builders' "Balance" principle).
    """

    PER_TOPIC = "per-topic"
    EVEN_IF_HOMOGENEOUS = "even-if-homogeneous"
    AS_BALANCED_AS_POSSIBLE = "as-balanced-as-possible"


@dataclass(frozen=True, slots=True, kw_only=True)
class AssignorSpec:
    """One assignor and the promises Kafka documents for it.

    ``sticky``: with equal subscriptions, the new assignment keeps as many previously owned
    partitions with their owners as any balanced assignment could. ``cooperative``: partitions
    that change owner are left out for one generation (revocation before reassignment).
    """

    name: str
    kafka_name: str
    side: str  # "client" (classic protocol, leader computes) or "server" (KIP-848 coordinator)
    balance: Balance
    sticky: bool
    cooperative: bool
    function: Callable[[Mapping[str, int], Mapping[str, Subscription]], GroupAssignment]
    source: str


# ----------------------------------------------------------------------------------------- helpers


def _member_sort_key(member_id: str, subscription: Subscription) -> tuple[int, str]:
    # AbstractPartitionAssignor.MemberInfo.compareTo and the server RangeAssignor.sortMemberIds:
    # members with a group.instance.id first, ordered by it; then the others by member.id.
    if subscription.group_instance_id is not None:
        return (0, subscription.group_instance_id)
    return (1, member_id)


def sorted_members(subscriptions: Mapping[str, Subscription]) -> list[str]:
    """Members in Kafka's assignor order (static members by instance id first, then member id)."""
    return sorted(subscriptions, key=lambda m: _member_sort_key(m, subscriptions[m]))


def _subscribed_partition_counts(
    partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
) -> dict[str, int]:
    # AbstractPartitionAssignor.assign: subscribed topics that have metadata and partitions.
    subscribed = {t for s in subscriptions.values() for t in s.topics}
    return {
        t: partitions_per_topic[t] for t in sorted(subscribed) if partitions_per_topic.get(t, 0) > 0
    }


def is_homogeneous(subscriptions: Mapping[str, Subscription]) -> bool:
    """All members subscribe to the same topics (KIP-848 ``SubscriptionType.HOMOGENEOUS``)."""
    sets = {frozenset(s.topics) for s in subscriptions.values()}
    return len(sets) <= 1


def _freeze(assignment: Mapping[str, Iterable[TopicPartition]]) -> GroupAssignment:
    return {m: tuple(ps) for m, ps in sorted(assignment.items())}


# ------------------------------------------------------------------------------------------- range


def range_assign(
    partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
) -> GroupAssignment:
    """``RangeAssignor.assignPartitions`` (no racks): per topic, ranges in subscriber order."""
    counts = _subscribed_partition_counts(partitions_per_topic, subscriptions)
    consumers_per_topic: dict[str, list[str]] = {}
    for member in sorted_members(subscriptions):
        for topic in subscriptions[member].topics:
            consumers_per_topic.setdefault(topic, []).append(member)
    assignment: dict[str, list[TopicPartition]] = {m: [] for m in subscriptions}
    for topic, n in counts.items():
        consumers = list(dict.fromkeys(consumers_per_topic.get(topic, [])))
        if not consumers:
            continue
        per_consumer, extra = divmod(n, len(consumers))
        unassigned = [TopicPartition(topic, p) for p in range(n)]
        assigned_by: dict[str, int] = dict.fromkeys(consumers, 0)
        for consumer in consumers:  # RangeAssignor.assignRanges
            if not unassigned:
                break
            max_assignable = max(0, per_consumer + (1 if extra > 0 else 0) - assigned_by[consumer])
            take, unassigned = unassigned[:max_assignable], unassigned[max_assignable:]
            if not take:
                continue
            assignment[consumer].extend(take)
            assigned_by[consumer] += len(take)  # TopicAssignmentState.onAssigned
            if assigned_by[consumer] > per_consumer:
                extra -= 1
    return _freeze(assignment)


# -------------------------------------------------------------------------------------- roundrobin


def roundrobin_assign(
    partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
) -> GroupAssignment:
    """``RoundRobinAssignor.assign``: deal sorted partitions to sorted members in a circle."""
    members = sorted_members(subscriptions)
    assignment: dict[str, list[TopicPartition]] = {m: [] for m in subscriptions}
    if not members:
        return {}
    topics_of = {m: frozenset(subscriptions[m].topics) for m in members}
    position = 0  # CircularIterator over the sorted members
    for topic, n in _subscribed_partition_counts(partitions_per_topic, subscriptions).items():
        for p in range(n):
            while topic not in topics_of[members[position]]:
                position = (position + 1) % len(members)
            assignment[members[position]].append(TopicPartition(topic, p))
            position = (position + 1) % len(members)
    return _freeze(assignment)


# ------------------------------------------------------------------------------------------ sticky


def _member_generation(subscription: Subscription) -> int:
    return DEFAULT_GENERATION if subscription.generation_id is None else subscription.generation_id


def _all_subscriptions_equal(
    all_topics: frozenset[str],
    members: Sequence[str],
    subscriptions: Mapping[str, Subscription],
    consumer_to_owned: dict[str, list[TopicPartition]],
    multiple_previous_owners: set[TopicPartition],
) -> tuple[bool, int]:
    """``AbstractStickyAssignor.allSubscriptionsEqual``; also returns ``maxGeneration``.

    Fills each member's still-valid owned partitions, resolving double claims: the higher
    generation wins; two claims in the same generation invalidate the partition for both.
    """
    equal = True
    subscribed: set[str] = set()
    previous_owner: dict[TopicPartition, str] = {}
    max_generation = DEFAULT_GENERATION
    for consumer in members:
        subscription = subscriptions[consumer]
        topics = set(subscription.topics)
        if not subscribed:  # Kafka re-initialises while the set is still empty
            subscribed |= topics
        elif equal and not (len(topics) == len(subscribed) and subscribed >= topics):
            equal = False
        generation = _member_generation(subscription)
        max_generation = max(max_generation, generation)
        owned: list[TopicPartition] = []
        consumer_to_owned[consumer] = owned
        for tp in subscription.owned_partitions:
            if tp.topic not in all_topics:
                continue
            other = previous_owner.get(tp)
            if other is None:
                owned.append(tp)
                previous_owner[tp] = consumer
                continue
            other_generation = _member_generation(subscriptions[other])
            if generation == other_generation:
                multiple_previous_owners.add(tp)
                if tp in consumer_to_owned[other]:
                    consumer_to_owned[other].remove(tp)
                previous_owner[tp] = consumer
            elif generation > other_generation:
                owned.append(tp)
                if tp in consumer_to_owned[other]:
                    consumer_to_owned[other].remove(tp)
                previous_owner[tp] = consumer
    return equal, max_generation


class _Constrained:
    """``AbstractStickyAssignor.ConstrainedAssignmentBuilder`` (all subscriptions equal)."""

    def __init__(
        self,
        counts: Mapping[str, int],
        consumer_to_owned: Mapping[str, list[TopicPartition]],
        multiple_previous_owners: set[TopicPartition],
    ) -> None:
        self.counts = counts
        self.current = consumer_to_owned
        self.multiple = multiple_previous_owners
        self.maybe_revoked: dict[TopicPartition, str] = {}
        self.transferring: dict[TopicPartition, str] = {}
        self.under_min: list[str] = []
        self.exactly_min: deque[str] = deque()
        total = sum(counts.values())
        n = len(consumer_to_owned)
        self.min_quota = total // n
        self.max_quota = -(-total // n)
        self.expected_over_min = total % n
        self.current_over_min = 0
        self.assignment: dict[str, list[TopicPartition]] = {c: [] for c in consumer_to_owned}
        self.assigned: list[TopicPartition] = []

    def build(self) -> dict[str, list[TopicPartition]]:
        self._assign_owned()
        unassigned = self._unassigned()
        self.under_min.sort()
        self.exactly_min = deque(sorted(self.exactly_min))
        self._assign_round_robin(unassigned)
        self._verify_unfilled()
        return self.assignment

    def _assign_owned(self) -> None:
        for consumer in sorted(self.current):
            owned = sorted(self.current[consumer], key=lambda tp: (tp.partition, tp.topic))
            owned = [tp for tp in owned if tp not in self.multiple]
            mine = self.assignment[consumer]
            if len(owned) < self.min_quota:
                mine.extend(owned)
                self.assigned.extend(owned)
                self.under_min.append(consumer)
            elif len(owned) >= self.max_quota and self.current_over_min < self.expected_over_min:
                self.current_over_min += 1
                if self.current_over_min == self.expected_over_min:
                    self.exactly_min.clear()
                mine.extend(owned[: self.max_quota])
                self.assigned.extend(owned[: self.max_quota])
                for tp in owned[self.max_quota :]:
                    self.maybe_revoked[tp] = consumer
            else:
                mine.extend(owned[: self.min_quota])
                self.assigned.extend(owned[: self.min_quota])
                for tp in owned[self.min_quota :]:
                    self.maybe_revoked[tp] = consumer
                if self.current_over_min < self.expected_over_min:
                    self.exactly_min.append(consumer)

    def _unassigned(self) -> list[TopicPartition]:
        taken = set(self.assigned)
        return [
            TopicPartition(t, p)
            for t, n in sorted(self.counts.items())
            for p in range(n)
            if TopicPartition(t, p) not in taken
        ]

    def _assign_round_robin(self, unassigned: list[TopicPartition]) -> None:
        position = 0  # the LinkedList iterator over under_min
        for tp in unassigned:
            if position < len(self.under_min):
                consumer = self.under_min[position]
                position += 1
            elif not self.under_min and not self.exactly_min:
                raise AssignorError("No more unfilled consumers to be assigned.")
            elif not self.under_min:
                consumer = self.exactly_min.popleft()
            else:
                position = 0
                consumer = self.under_min[position]
                position += 1
            count = self._assign_new(tp, consumer)
            if count == self.min_quota:
                position -= 1  # unfilledConsumerIter.remove()
                del self.under_min[position]
                self.exactly_min.append(consumer)
            elif count == self.max_quota:
                self.current_over_min += 1

    def _assign_new(self, tp: TopicPartition, consumer: str) -> int:
        mine = self.assignment[consumer]
        mine.append(tp)
        revoked_from = self.maybe_revoked.get(tp)
        if (revoked_from is not None and revoked_from != consumer) or tp in self.multiple:
            self.transferring[tp] = consumer
        return len(mine)

    def _verify_unfilled(self) -> None:
        if not self.under_min:
            return
        if self.current_over_min != self.expected_over_min:
            raise AssignorError(
                "We haven't reached the expected number of members with more than the minQuota "
                "partitions, but no more partitions to be assigned"
            )
        for member in self.under_min:
            if len(self.assignment[member]) != self.min_quota:
                raise AssignorError(
                    f"Consumer: [{member}] doesn't reach minQuota partitions, and no more "
                    "partitions to be assigned"
                )


class _SortedMembers:
    """A ``TreeSet`` of members ordered by (current assignment size, member id)."""

    def __init__(self, sizes: Callable[[str], int]) -> None:
        self._size = sizes
        self._keys: list[tuple[int, str]] = []

    def add(self, member: str) -> None:
        key = (self._size(member), member)
        i = bisect.bisect_left(self._keys, key)
        if i == len(self._keys) or self._keys[i] != key:
            self._keys.insert(i, key)

    def remove(self, member: str) -> None:
        key = (self._size(member), member)
        i = bisect.bisect_left(self._keys, key)
        if i < len(self._keys) and self._keys[i] == key:
            del self._keys[i]

    def add_all(self, members: Iterable[str]) -> None:
        for m in members:
            self.add(m)

    def first(self) -> str:
        return self._keys[0][1]

    def last(self) -> str:
        return self._keys[-1][1]

    def members(self) -> list[str]:
        return [m for _, m in self._keys]

    def __bool__(self) -> bool:
        return bool(self._keys)


class _PartitionMovements:
    """``AbstractStickyAssignor.PartitionMovements`` (without the test-only cycle detection)."""

    def __init__(self) -> None:
        self.by_topic: dict[str, dict[tuple[str, str], set[TopicPartition]]] = {}
        self.movements: dict[TopicPartition, tuple[str, str]] = {}

    def _remove_record(self, tp: TopicPartition) -> tuple[str, str]:
        pair = self.movements.pop(tp)
        per_topic = self.by_topic[tp.topic]
        per_topic[pair].discard(tp)
        if not per_topic[pair]:
            del per_topic[pair]
        if not per_topic:
            del self.by_topic[tp.topic]
        return pair

    def _add_record(self, tp: TopicPartition, pair: tuple[str, str]) -> None:
        self.movements[tp] = pair
        self.by_topic.setdefault(tp.topic, {}).setdefault(pair, set()).add(tp)

    def move(self, tp: TopicPartition, old: str, new: str) -> None:
        if tp in self.movements:
            src, _dst = self._remove_record(tp)
            if src != new:
                self._add_record(tp, (src, new))
        else:
            self._add_record(tp, (old, new))

    def actual_partition_to_move(self, tp: TopicPartition, old: str, new: str) -> TopicPartition:
        if tp.topic not in self.by_topic:
            return tp
        if tp in self.movements:
            old = self.movements[tp][0]
        reverse = (new, old)
        per_topic = self.by_topic[tp.topic]
        if reverse not in per_topic:
            return tp
        return min(per_topic[reverse])  # Kafka: iterator().next() of a HashSet


class _General:
    """``AbstractStickyAssignor.GeneralAssignmentBuilder`` (subscriptions differ)."""

    def __init__(
        self,
        counts: Mapping[str, int],
        current: dict[str, list[TopicPartition]],
        subscriptions: Mapping[str, Subscription],
        members: Sequence[str],
        max_generation: int,
    ) -> None:
        self.counts = counts
        self.total = sum(counts.values())
        self.current = current
        self.subscriptions = subscriptions
        self.members = members
        self.max_generation = max_generation
        self.topic_consumers: dict[str, list[str]] = {t: [] for t in counts}
        self.consumer_topics: dict[str, list[str]] = {}
        for consumer in members:
            topics = [t for t in subscriptions[consumer].topics if t in counts]
            self.consumer_topics[consumer] = topics
            for t in topics:
                self.topic_consumers[t].append(consumer)
            self.current.setdefault(consumer, [])
        self.partition_consumer: dict[TopicPartition, str] = {
            tp: c for c in sorted(self.current) for tp in self.current[c]
        }
        sorted_topics = sorted(
            self.topic_consumers, key=lambda t: (len(self.topic_consumers[t]), t)
        )
        self.sorted_all_partitions = [
            TopicPartition(t, p) for t in sorted_topics for p in range(counts[t])
        ]
        self.sorted_current = _SortedMembers(lambda m: len(self.current[m]))
        self.revocation_required = False
        self.movements = _PartitionMovements()

    def build(self) -> dict[str, list[TopicPartition]]:
        prev: dict[TopicPartition, tuple[str, int]] = {}
        self._prepopulate(prev)
        assigned = self._assign_owned()
        unassigned = self._unassigned(assigned)
        self.sorted_current.add_all(self.current)
        self._balance(prev, unassigned)
        return self.current

    def _prepopulate(self, prev: dict[TopicPartition, tuple[str, int]]) -> None:
        for consumer in self.members:
            subscription = self.subscriptions[consumer]
            generation = subscription.generation_id
            if generation is not None and generation < self.max_generation:
                self._update_prev(prev, subscription.owned_partitions, consumer, generation)
            elif generation is None and self.max_generation > DEFAULT_GENERATION:
                self._update_prev(prev, subscription.owned_partitions, consumer, DEFAULT_GENERATION)

    @staticmethod
    def _update_prev(
        prev: dict[TopicPartition, tuple[str, int]],
        partitions: Iterable[TopicPartition],
        consumer: str,
        generation: int,
    ) -> None:
        for tp in partitions:
            if tp not in prev or generation > prev[tp][1]:
                prev[tp] = (consumer, generation)

    def _assign_owned(self) -> list[TopicPartition]:
        assigned: list[TopicPartition] = []
        for consumer in sorted(self.current):
            topics = set(self.subscriptions[consumer].topics)
            kept: list[TopicPartition] = []
            for tp in self.current[consumer]:
                if tp.topic not in self.topic_consumers:
                    self.partition_consumer.pop(tp, None)
                elif tp.topic not in topics:
                    self.revocation_required = True
                else:
                    kept.append(tp)
                    assigned.append(tp)
            self.current[consumer][:] = kept
        return assigned

    def _unassigned(self, assigned: list[TopicPartition]) -> list[TopicPartition]:
        if not assigned:
            return self.sorted_all_partitions  # the same list object, as in Kafka
        taken = set(assigned)
        return [tp for tp in self.sorted_all_partitions if tp not in taken]

    def _max_assignment_size(self, topics: Sequence[str]) -> int:
        if len(topics) == len(self.counts):
            return self.total
        return sum(self.counts[t] for t in topics)

    def _is_balanced(self) -> bool:
        lo = len(self.current[self.sorted_current.first()])
        hi = len(self.current[self.sorted_current.last()])
        if lo >= hi - 1:
            return True
        owner: dict[TopicPartition, str] = {}
        for consumer, partitions in self.current.items():
            for tp in partitions:
                owner[tp] = consumer
        for consumer in self.sorted_current.members():
            mine = self.current[consumer]
            count = len(mine)
            topics = self.consumer_topics[consumer]
            if count == self._max_assignment_size(topics):
                continue
            mine_set = set(mine)
            for topic in topics:
                for p in range(self.counts[topic]):
                    tp = TopicPartition(topic, p)
                    if tp not in mine_set:
                        other = owner.get(tp)
                        if other is None:
                            continue  # only a fixed consumer's partition; unreachable, see below
                        if count + 1 < len(self.current[other]):
                            return False
        return True

    def _balance_score(self, assignment: Mapping[str, list[TopicPartition]]) -> int:
        sizes = [len(v) for v in assignment.values()]
        return sum(abs(a - b) for i, a in enumerate(sizes) for b in sizes[i + 1 :])

    def _maybe_assign_partition(self, tp: TopicPartition) -> bool:
        for consumer in self.sorted_current.members():
            if tp.topic in self.consumer_topics[consumer]:
                self.sorted_current.remove(consumer)
                self.current[consumer].append(tp)
                self.partition_consumer[tp] = consumer
                self.sorted_current.add(consumer)
                return True
        return False

    def _can_topic_participate(self, topic: str) -> bool:
        return len(self.topic_consumers[topic]) >= 2

    def _can_consumer_participate(self, consumer: str) -> bool:
        partitions = self.current[consumer]
        if len(partitions) < self._max_assignment_size(self.consumer_topics[consumer]):
            return True
        return any(self._can_topic_participate(tp.topic) for tp in partitions)

    def _balance(
        self, prev: Mapping[TopicPartition, tuple[str, int]], unassigned: list[TopicPartition]
    ) -> None:
        initializing = not self.current[self.sorted_current.last()]
        for tp in unassigned:  # maybeAssign(..., rackInfo=null, removeAssigned=false)
            if not self.topic_consumers[tp.topic]:
                continue
            self._maybe_assign_partition(tp)
        fixed_partitions = {
            TopicPartition(t, p)
            for t in self.topic_consumers
            if not self._can_topic_participate(t)
            for p in range(self.counts[t])
        }
        self.sorted_all_partitions[:] = [
            tp for tp in self.sorted_all_partitions if tp not in fixed_partitions
        ]
        if unassigned is not self.sorted_all_partitions:
            unassigned[:] = [tp for tp in unassigned if tp not in fixed_partitions]
        fixed_assignments: dict[str, list[TopicPartition]] = {}
        for consumer in list(self.consumer_topics):
            if not self._can_consumer_participate(consumer):
                self.sorted_current.remove(consumer)
                fixed_assignments[consumer] = self.current.pop(consumer)
        pre_balance = {c: list(ps) for c, ps in self.current.items()}
        pre_balance_owners = dict(self.partition_consumer)
        if not self.revocation_required:
            self._perform_reassignments(list(unassigned), prev)
        performed = self._perform_reassignments(list(self.sorted_all_partitions), prev)
        if (
            not initializing
            and performed
            and self._balance_score(self.current) >= self._balance_score(pre_balance)
        ):
            self.current.clear()
            self.current.update({c: list(ps) for c, ps in pre_balance.items()})
            self.partition_consumer = pre_balance_owners
        for consumer, partitions in fixed_assignments.items():
            self.current[consumer] = partitions

    def _perform_reassignments(
        self, partitions: Sequence[TopicPartition], prev: Mapping[TopicPartition, tuple[str, int]]
    ) -> bool:
        performed = False
        modified = True
        while modified:
            modified = False
            for tp in partitions:
                if self._is_balanced():
                    break
                consumer = self.partition_consumer.get(tp)
                if consumer is None or consumer not in self.current:
                    raise AssignorError(f"Expected partition '{tp}' to be assigned to a consumer")
                if tp in prev:
                    prev_consumer = prev[tp][0]
                    if prev_consumer not in self.current:
                        # Kafka: currentAssignment.get(prevConsumer).size() -> NullPointerException
                        raise AssignorError(
                            f"previous owner {prev_consumer} of {tp} is not being reassigned"
                        )
                    if len(self.current[consumer]) > len(self.current[prev_consumer]) + 1:
                        self._reassign(tp, prev_consumer)
                        performed = modified = True
                        continue
                for other in self.topic_consumers[tp.topic]:
                    if other not in self.current:
                        raise AssignorError(f"consumer {other} is not being reassigned")
                    if len(self.current[consumer]) > len(self.current[other]) + 1:
                        self._reassign_to_least_loaded(tp)
                        performed = modified = True
                        break
        return performed

    def _reassign_to_least_loaded(self, tp: TopicPartition) -> None:
        for other in self.sorted_current.members():
            if tp.topic in self.consumer_topics[other]:
                self._reassign(tp, other)
                return
        raise AssignorError(f"no consumer for {tp}")

    def _reassign(self, tp: TopicPartition, new: str) -> None:
        consumer = self.partition_consumer[tp]
        moved = self.movements.actual_partition_to_move(tp, consumer, new)
        self._process_movement(moved, new)

    def _process_movement(self, tp: TopicPartition, new: str) -> None:
        old = self.partition_consumer[tp]
        self.sorted_current.remove(old)
        self.sorted_current.remove(new)
        self.movements.move(tp, old, new)
        self.current[old].remove(tp)
        self.current[new].append(tp)
        self.partition_consumer[tp] = new
        self.sorted_current.add(new)
        self.sorted_current.add(old)


def sticky_assign_with_transfers(
    partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
) -> tuple[GroupAssignment, dict[TopicPartition, str] | None]:
    """``AbstractStickyAssignor.assignPartitions``: the sticky assignment and, for the constrained
    builder, ``partitionsTransferringOwnership`` (``None`` after the general builder, as in Kafka,
    which makes the cooperative assignor compute it from the owned partitions)."""
    counts = _subscribed_partition_counts(partitions_per_topic, subscriptions)
    members = sorted(subscriptions)
    if not members:
        return {}, {}
    consumer_to_owned: dict[str, list[TopicPartition]] = {}
    multiple: set[TopicPartition] = set()
    equal, max_generation = _all_subscriptions_equal(
        frozenset(counts), members, subscriptions, consumer_to_owned, multiple
    )
    if equal:
        constrained = _Constrained(counts, consumer_to_owned, multiple)
        return _freeze(constrained.build()), constrained.transferring
    general = _General(counts, consumer_to_owned, subscriptions, members, max_generation)
    return _freeze(general.build()), None


def sticky_assign(
    partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
) -> GroupAssignment:
    """``StickyAssignor`` (eager): balanced, keeping owned partitions where balance allows."""
    return sticky_assign_with_transfers(partitions_per_topic, subscriptions)[0]


def cooperative_sticky_assign(
    partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
) -> GroupAssignment:
    """``CooperativeStickyAssignor.assignPartitions``: the sticky assignment without the partitions
    that change owner in this rebalance (``adjustAssignment``)."""
    assignment, transferring = sticky_assign_with_transfers(partitions_per_topic, subscriptions)
    if transferring is None:  # computePartitionsTransferringOwnership
        added: dict[TopicPartition, str] = {}
        revoked: set[TopicPartition] = set()
        for consumer, assigned in assignment.items():
            owned = subscriptions[consumer].owned_partitions
            owned_set = set(owned)
            assigned_set = set(assigned)
            for tp in assigned:
                if tp not in owned_set:
                    added[tp] = consumer
            revoked.update(tp for tp in owned if tp not in assigned_set)
        transferring = {tp: c for tp, c in added.items() if tp in revoked}
    adjusted = {m: list(ps) for m, ps in assignment.items()}
    for tp, consumer in transferring.items():
        if tp in adjusted[consumer]:
            adjusted[consumer].remove(tp)
    return _freeze(adjusted)


# ------------------------------------------------------------------------- server side: uniform


def _server_view(
    partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
) -> tuple[dict[str, int], dict[str, Subscription]]:
    """What the coordinator hands its assignor: each member's subscribed topics that exist (a topic
    id is resolved only for an existing topic) and their partition counts."""
    counts = {
        t: partitions_per_topic[t]
        for s in subscriptions.values()
        for t in s.topics
        if partitions_per_topic.get(t, 0) > 0
    }
    resolved = {
        m: dataclasses.replace(s, topics=tuple(t for t in dict.fromkeys(s.topics) if t in counts))
        for m, s in subscriptions.items()
    }
    return dict(sorted(counts.items())), resolved


def _uniform_homogeneous(
    counts: Mapping[str, int], subscriptions: Mapping[str, Subscription]
) -> GroupAssignment:
    """``UniformHomogeneousAssignmentBuilder.build``."""
    members = sorted(subscriptions)
    topics = sorted(set(subscriptions[members[0]].topics))
    if not topics:
        return {}
    assigned_now = {tp for s in subscriptions.values() for tp in s.owned_partitions}
    unassigned: list[TopicPartition] = []
    total = 0
    for t in topics:
        for p in range(counts[t]):
            if TopicPartition(t, p) not in assigned_now:
                unassigned.append(TopicPartition(t, p))
        total += counts[t]
    min_quota, remaining_extra = divmod(total, len(members))
    target: dict[str, list[TopicPartition]] = {}
    unfilled: list[tuple[str, int]] = []
    topic_set = set(topics)
    for index, member in enumerate(members):  # maybeRevokePartitions
        quota = min_quota
        has_extra = False
        if remaining_extra > 0:
            quota += 1
            has_extra = True
        kept: list[TopicPartition] = []
        old = _group_by_topic(subscriptions[member].owned_partitions)
        for topic, partitions in old.items():
            if topic not in topic_set:
                continue
            if len(partitions) <= quota:
                quota -= len(partitions)
                kept.extend(TopicPartition(topic, p) for p in partitions)
            else:
                for p in partitions:
                    if quota > 0:
                        quota -= 1
                        kept.append(TopicPartition(topic, p))
                    else:
                        unassigned.append(TopicPartition(topic, p))
        if quota > 0 and has_extra and len(members) - index > remaining_extra:
            quota -= 1
            has_extra = False
        if quota > 0:
            unfilled.append((member, quota))
        if has_extra:
            remaining_extra -= 1
        target[member] = kept
    next_index = 0  # assignRemainingPartitions
    for member, quota in unfilled:
        for _ in range(quota):
            if next_index >= len(unassigned):
                break
            target[member].append(unassigned[next_index])
            next_index += 1
    if next_index < len(unassigned):
        raise AssignorError("Partitions were left unassigned")
    return _freeze({m: sorted(ps) for m, ps in target.items()})


def _group_by_topic(partitions: Iterable[TopicPartition]) -> dict[str, list[int]]:
    grouped: dict[str, list[int]] = {}
    for tp in sorted(set(partitions)):
        grouped.setdefault(tp.topic, []).append(tp.partition)
    return grouped


class _Balancer:
    """``UniformHeterogeneousAssignmentBuilder.MemberAssignmentBalancer``."""

    def __init__(self, sizes: list[int]) -> None:
        self.sizes = sizes
        self.sorted: list[int] = []
        self.least_end = 0
        self.least_count = -1
        self.next_least = 0
        self.most_start = 0
        self.most_end = 0
        self.most_count = 1
        self.next_most = -1

    def initialize(self, members: Sequence[int]) -> int:
        if not members:
            raise AssignorError("Cannot balance an empty subscriber list.")
        self.sorted = sorted(members, key=lambda i: (self.sizes[i], i))
        self.least_end = 0
        self.least_count = self.sizes[self.sorted[0]] - 1
        self.next_least = 0
        self.most_start = len(self.sorted)
        self.most_end = len(self.sorted)
        self.most_count = self.sizes[self.sorted[-1]] + 1
        self.next_most = len(self.sorted) - 1
        return self.sizes[self.sorted[-1]] - self.sizes[self.sorted[0]]

    def next_least_loaded(self) -> int:
        if self.next_least >= self.least_end:
            self.least_count += 1
            while (
                self.least_end < len(self.sorted)
                and self.sizes[self.sorted[self.least_end]] == self.least_count
            ):
                self.least_end += 1
            self.next_least = 0
        member = self.sorted[self.next_least]
        self.next_least += 1
        return member

    def next_most_loaded(self) -> int:
        if self.next_most < self.most_start:
            if self.most_end <= self.most_start and self.most_start > 0:
                self.most_count = self.sizes[self.sorted[self.most_start - 1]]
            else:
                self.most_count -= 1
            while (
                self.most_start > 0
                and self.sizes[self.sorted[self.most_start - 1]] == self.most_count
            ):
                self.most_start -= 1
            self.next_most = self.most_end - 1
        if self.next_most < 0:
            return -1
        member = self.sorted[self.next_most]
        self.next_most -= 1
        return member

    def exclude_most_loaded(self) -> None:
        i = self.next_most + 1
        member = self.sorted[i]
        self.sorted[i] = self.sorted[self.most_end - 1]
        self.sorted[self.most_end - 1] = member
        self.most_end -= 1

    def is_balanced(self) -> bool:
        return self.most_count - self.least_count <= 1


_MAX_ITERATION_COUNT = 16  # UniformHeterogeneousAssignmentBuilder.MAX_ITERATION_COUNT


def _uniform_heterogeneous(
    counts: Mapping[str, int], subscriptions: Mapping[str, Subscription]
) -> GroupAssignment:
    """``UniformHeterogeneousAssignmentBuilder.build``."""
    members = sorted(subscriptions)
    index_of = {m: i for i, m in enumerate(members)}
    subscribers: dict[str, list[int]] = {}
    for i, m in enumerate(members):
        for t in dict.fromkeys(subscriptions[m].topics):
            subscribers.setdefault(t, []).append(i)
    if not subscribers:
        return {}
    sizes = [0] * len(members)
    owners: dict[str, list[int]] = {t: [-1] * counts[t] for t in subscribers}
    target: dict[str, set[TopicPartition]] = {}

    def topic_key(t: str) -> tuple[float, int, str]:
        return (-counts[t] / len(subscribers[t]), len(subscribers[t]), t)

    for m in members:  # maybeRevokePartitions
        i = index_of[m]
        topics = set(subscriptions[m].topics)
        kept: set[TopicPartition] = set()
        for topic, partitions in _group_by_topic(subscriptions[m].owned_partitions).items():
            if topic in topics:
                sizes[i] += len(partitions)
                for p in partitions:
                    owners[topic][p] = i
                kept.update(TopicPartition(topic, p) for p in partitions)
        target[m] = kept

    def assign_partition(topic: str, p: int, i: int) -> None:
        old = owners[topic][p]
        if old != -1:
            target[members[old]].discard(TopicPartition(topic, p))
            sizes[old] -= 1
        target[members[i]].add(TopicPartition(topic, p))
        owners[topic][p] = i
        sizes[i] += 1

    unassigned = {
        t: [p for p in range(counts[t]) if owners[t][p] == -1] for t in sorted(subscribers)
    }
    unassigned = {t: ps for t, ps in unassigned.items() if ps}
    balancer = _Balancer(sizes)
    for topic in sorted(unassigned, key=topic_key):  # assignRemainingPartitions
        balancer.initialize(subscribers[topic])
        for p in unassigned[topic]:
            assign_partition(topic, p, balancer.next_least_loaded())

    movable = sorted((t for t in subscribers if len(subscribers[t]) >= 2), key=topic_key)
    if movable:  # balance -> balanceTopics
        last_rebalanced = -1
        balancer = _Balancer(sizes)
        done = False
        for _ in range(_MAX_ITERATION_COUNT):
            for topic_index, topic in enumerate(movable):
                if topic_index == last_rebalanced:
                    done = True
                    break
                moved = _balance_topic(
                    topic,
                    counts[topic],
                    owners[topic],
                    subscribers[topic],
                    balancer,
                    assign_partition,
                )
                if moved > 0 or last_rebalanced == -1:
                    last_rebalanced = topic_index
            if done:
                break
    return _freeze({m: sorted(ps) for m, ps in target.items()})


def _balance_topic(
    topic: str,
    num_partitions: int,
    owners: list[int],
    topic_subscribers: Sequence[int],
    balancer: _Balancer,
    assign_partition: Callable[[str, int, int], None],
) -> int:
    """``UniformHeterogeneousAssignmentBuilder.balanceTopic``."""
    reassigned = 0
    if balancer.initialize(topic_subscribers) <= 1:
        return reassigned
    partitions = sorted(range(num_partitions), key=lambda p: (owners[p], p))
    start: dict[int, int] = {}
    end: dict[int, int] = {}
    for i, p in enumerate(partitions):
        start.setdefault(owners[p], i)
        end[owners[p]] = i + 1
    while not balancer.is_balanced():
        most = -1
        while True:
            most = balancer.next_most_loaded()
            if most == -1:
                break
            if most not in end or end[most] - start[most] <= 0:
                balancer.exclude_most_loaded()
                continue
            break
        if most == -1:
            break
        p = partitions[end[most] - 1]
        end[most] -= 1
        least = balancer.next_least_loaded()
        if balancer.is_balanced():
            break
        assign_partition(topic, p, least)
        reassigned += 1
    return reassigned


def uniform_assign(
    partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
) -> GroupAssignment:
    """KIP-848 ``UniformAssignor.assign`` (server side, the default ``uniform`` assignor)."""
    if not subscriptions:
        return {}
    homogeneous = is_homogeneous(subscriptions)  # SubscriptionType, from topic names
    counts, resolved = _server_view(partitions_per_topic, subscriptions)
    if homogeneous:
        result = _uniform_homogeneous(counts, resolved)
    else:
        result = _uniform_heterogeneous(counts, resolved)
    return {m: result.get(m, ()) for m in sorted(subscriptions)}


# ---------------------------------------------------------------------------- server side: range


def server_range_assign(
    partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
) -> GroupAssignment:
    """KIP-848 ``RangeAssignor.assign`` (server side): contiguous ranges per topic, subscribers in
    ``sortMemberIds`` order; co-partitioned when all members subscribe to the same topics."""
    if not subscriptions:
        return {}
    homogeneous = is_homogeneous(subscriptions)
    counts, subscriptions = _server_view(partitions_per_topic, subscriptions)
    members = sorted_members(subscriptions)
    if homogeneous:
        num_members = {t: len(members) for t in subscriptions[members[0]].topics}
    else:
        num_members = {}
        for m in members:
            for t in dict.fromkeys(subscriptions[m].topics):
                num_members[t] = num_members.get(t, 0) + 1
    next_range = dict.fromkeys(num_members, 0)
    extra = {t: counts[t] % k for t, k in num_members.items()}
    assignment: dict[str, list[TopicPartition]] = {m: [] for m in members}
    for m in members:  # addPartitionsToAssignment
        for t in sorted(set(subscriptions[m].topics)):
            start = next_range[t]
            quota = counts[t] // num_members[t]
            if extra[t] > 0:
                quota += 1
                extra[t] -= 1
            end = min(start + quota, counts[t])
            next_range[t] = end
            assignment[m].extend(TopicPartition(t, p) for p in range(start, end))
    return _freeze(assignment)


# -------------------------------------------------------------------------------------- registry


ASSIGNORS: dict[str, AssignorSpec] = {
    spec.name: spec
    for spec in (
        AssignorSpec(
            name="range",
            kafka_name="range",
            side="client",
            balance=Balance.PER_TOPIC,
            sticky=False,
            cooperative=False,
            function=range_assign,
            source="clients/src/main/java/org/apache/kafka/clients/consumer/RangeAssignor.java",
        ),
        AssignorSpec(
            name="roundrobin",
            kafka_name="roundrobin",
            side="client",
            balance=Balance.EVEN_IF_HOMOGENEOUS,
            sticky=False,
            cooperative=False,
            function=roundrobin_assign,
            source="clients/src/main/java/org/apache/kafka/clients/consumer/RoundRobinAssignor.java",
        ),
        AssignorSpec(
            name="sticky",
            kafka_name="sticky",
            side="client",
            balance=Balance.AS_BALANCED_AS_POSSIBLE,
            sticky=True,
            cooperative=False,
            function=sticky_assign,
            source="clients/src/main/java/org/apache/kafka/clients/consumer/StickyAssignor.java",
        ),
        AssignorSpec(
            name="cooperative-sticky",
            kafka_name="cooperative-sticky",
            side="client",
            balance=Balance.AS_BALANCED_AS_POSSIBLE,
            sticky=True,
            cooperative=True,
            function=cooperative_sticky_assign,
            source=(
                "clients/src/main/java/org/apache/kafka/clients/consumer/"
                "CooperativeStickyAssignor.java"
            ),
        ),
        AssignorSpec(
            name="uniform",
            kafka_name="uniform",
            side="server",
            balance=Balance.AS_BALANCED_AS_POSSIBLE,
            sticky=True,
            cooperative=False,
            function=uniform_assign,
            source=(
                "group-coordinator/src/main/java/org/apache/kafka/coordinator/group/assignor/"
                "UniformAssignor.java"
            ),
        ),
        AssignorSpec(
            name="server-range",
            kafka_name="range",
            side="server",
            balance=Balance.PER_TOPIC,
            sticky=False,
            cooperative=False,
            function=server_range_assign,
            source=(
                "group-coordinator/src/main/java/org/apache/kafka/coordinator/group/assignor/"
                "RangeAssignor.java"
            ),
        ),
    )
}


def assign(
    name: str, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
) -> GroupAssignment:
    """Run the assignor called ``name`` (a key of :data:`ASSIGNORS`)."""
    try:
        spec = ASSIGNORS[name]
    except KeyError:
        raise ValueError(
            f"unknown assignor {name!r}: choose one of {', '.join(sorted(ASSIGNORS))}"
        ) from None
    return spec.function(partitions_per_topic, subscriptions)
