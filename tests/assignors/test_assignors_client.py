"""Client-side assignors against the examples Kafka documents (javadoc of RangeAssignor,
RoundRobinAssignor, StickyAssignor; KIP-429 for cooperative-sticky), expectations worked out by
hand from those texts, not from the model."""

from __future__ import annotations

import pytest
from kgc.model.assignors import (
    AssignorError,
    Subscription,
    TopicPartition,
    cooperative_sticky_assign,
    range_assign,
    roundrobin_assign,
    sticky_assign,
)


def tps(*names: str) -> tuple[TopicPartition, ...]:
    """``tps("t0p0", "t1p2")`` in Kafka's javadoc notation -> sorted TopicPartitions."""
    out = []
    for name in names:
        topic, _, p = name.rpartition("p")
        out.append(TopicPartition(topic, int(p)))
    return tuple(sorted(out))


def as_sets(
    assignment: dict[str, tuple[TopicPartition, ...]],
) -> dict[str, tuple[TopicPartition, ...]]:
    return {m: tuple(sorted(v)) for m, v in assignment.items()}


TWO_TOPICS_3 = {"t0": 3, "t1": 3}


def test_range_javadoc_example() -> None:
    # RangeAssignor javadoc: C0, C1; t0 and t1 with 3 partitions each.
    subs = {c: Subscription(topics=("t0", "t1")) for c in ("C0", "C1")}
    assert as_sets(range_assign(TWO_TOPICS_3, subs)) == {
        "C0": tps("t0p0", "t0p1", "t1p0", "t1p1"),
        "C1": tps("t0p2", "t1p2"),
    }


def test_range_static_members_ordered_by_instance_id() -> None:
    # RangeAssignor javadoc: after a rolling bounce C0 -> C3 and C1 -> C2; with instance ids
    # I0 (was C0) and I1 the assignment stays I0: [t0p0, t0p1, t1p0, t1p1], I1: [t0p2, t1p2]
    # although member id C2 sorts before C3.
    subs = {
        "C3": Subscription(topics=("t0", "t1"), group_instance_id="I0"),
        "C2": Subscription(topics=("t0", "t1"), group_instance_id="I1"),
    }
    assert as_sets(range_assign(TWO_TOPICS_3, subs)) == {
        "C3": tps("t0p0", "t0p1", "t1p0", "t1p1"),
        "C2": tps("t0p2", "t1p2"),
    }


def test_range_is_per_topic_so_only_subscribers_share_a_topic() -> None:
    # "The range assignor works on a per-topic basis": t1's 3 partitions are split over its two
    # subscribers C1, C2 (2 + 1); t0's 2 over all three (1 + 1 + 0).
    subs = {
        "C0": Subscription(topics=("t0",)),
        "C1": Subscription(topics=("t0", "t1")),
        "C2": Subscription(topics=("t0", "t1")),
    }
    assert as_sets(range_assign({"t0": 2, "t1": 3}, subs)) == {
        "C0": tps("t0p0"),
        "C1": tps("t0p1", "t1p0", "t1p1"),
        "C2": tps("t1p2"),
    }


def test_roundrobin_javadoc_example_identical_subscriptions() -> None:
    subs = {c: Subscription(topics=("t0", "t1")) for c in ("C0", "C1")}
    assert as_sets(roundrobin_assign(TWO_TOPICS_3, subs)) == {
        "C0": tps("t0p0", "t0p2", "t1p1"),
        "C1": tps("t0p1", "t1p0", "t1p2"),
    }


def test_roundrobin_javadoc_example_different_subscriptions() -> None:
    # C0 -> t0; C1 -> t0, t1; C2 -> t0, t1, t2; topics with 1, 2 and 3 partitions.
    subs = {
        "C0": Subscription(topics=("t0",)),
        "C1": Subscription(topics=("t0", "t1")),
        "C2": Subscription(topics=("t0", "t1", "t2")),
    }
    assert as_sets(roundrobin_assign({"t0": 1, "t1": 2, "t2": 3}, subs)) == {
        "C0": tps("t0p0"),
        "C1": tps("t1p0"),
        "C2": tps("t1p1", "t2p0", "t2p1", "t2p2"),
    }


def test_roundrobin_javadoc_rolling_bounce_reshuffles_dynamic_members() -> None:
    # Three members, t0 and t1 with 3 partitions: C0 [t0p0, t1p0], C1 [t0p1, t1p1], ...
    subs = {c: Subscription(topics=("t0", "t1")) for c in ("C0", "C1", "C2")}
    assert as_sets(roundrobin_assign(TWO_TOPICS_3, subs))["C0"] == tps("t0p0", "t1p0")
    # ... after a bounce C0 -> C5, C1 -> C3, C2 -> C4 the order is by new member id:
    # C3 (was C1) [t0p0, t1p0], C4 (was C2) [t0p1, t1p1], C5 (was C0) [t0p2, t1p2].
    bounced = {c: Subscription(topics=("t0", "t1")) for c in ("C5", "C3", "C4")}
    assert as_sets(roundrobin_assign(TWO_TOPICS_3, bounced)) == {
        "C3": tps("t0p0", "t1p0"),
        "C4": tps("t0p1", "t1p1"),
        "C5": tps("t0p2", "t1p2"),
    }


FOUR_TOPICS_2 = {"t0": 2, "t1": 2, "t2": 2, "t3": 2}


def test_sticky_javadoc_example_1_first_assignment() -> None:
    # StickyAssignor javadoc, example 1: three consumers, four topics of 2 partitions.
    subs = {c: Subscription(topics=tuple(FOUR_TOPICS_2)) for c in ("C0", "C1", "C2")}
    assert as_sets(sticky_assign(FOUR_TOPICS_2, subs)) == {
        "C0": tps("t0p0", "t1p1", "t3p0"),
        "C1": tps("t0p1", "t2p0", "t3p1"),
        "C2": tps("t1p0", "t2p1"),
    }


def test_sticky_javadoc_example_1_after_c1_leaves_keeps_every_owned_partition() -> None:
    # "C1 is removed ... the sticky assignor would result in [4 and 4 partitions] preserving all
    # the previous assignments". (The javadoc's exact lists predate the constrained builder, so the
    # documented properties are checked: each survivor keeps all it owned, loads are 4 and 4.)
    owned = {"C0": tps("t0p0", "t1p1", "t3p0"), "C2": tps("t1p0", "t2p1")}
    subs = {
        c: Subscription(topics=tuple(FOUR_TOPICS_2), owned_partitions=owned[c], generation_id=1)
        for c in ("C0", "C2")
    }
    result = sticky_assign(FOUR_TOPICS_2, subs)
    assert set(owned["C0"]) <= set(result["C0"])
    assert set(owned["C2"]) <= set(result["C2"])
    assert sorted(len(v) for v in result.values()) == [4, 4]
    assert sorted(result["C0"] + result["C2"]) == sorted(
        TopicPartition(t, p) for t in FOUR_TOPICS_2 for p in range(2)
    )


EXAMPLE_2_COUNTS = {"t0": 1, "t1": 2, "t2": 3}


def test_sticky_javadoc_example_2_different_subscriptions() -> None:
    subs = {
        "C0": Subscription(topics=("t0",)),
        "C1": Subscription(topics=("t0", "t1")),
        "C2": Subscription(topics=("t0", "t1", "t2")),
    }
    assert as_sets(sticky_assign(EXAMPLE_2_COUNTS, subs)) == {
        "C0": tps("t0p0"),
        "C1": tps("t1p0", "t1p1"),
        "C2": tps("t2p0", "t2p1", "t2p2"),
    }


def test_sticky_javadoc_example_2_after_c0_leaves() -> None:
    # "Sticky (preserves 5 partition assignments): C1 [t1p0, t1p1, t0p0], C2 [t2p0, t2p1, t2p2]"
    subs = {
        "C1": Subscription(
            topics=("t0", "t1"), owned_partitions=tps("t1p0", "t1p1"), generation_id=1
        ),
        "C2": Subscription(
            topics=("t0", "t1", "t2"), owned_partitions=tps("t2p0", "t2p1", "t2p2"), generation_id=1
        ),
    }
    assert as_sets(sticky_assign(EXAMPLE_2_COUNTS, subs)) == {
        "C1": tps("t0p0", "t1p0", "t1p1"),
        "C2": tps("t2p0", "t2p1", "t2p2"),
    }


def test_sticky_same_generation_double_claim_is_given_up_by_both() -> None:
    # AbstractStickyAssignor.allSubscriptionsEqual: two members claiming one partition in the same
    # generation lose it; it is reassigned as if unowned. C0 and C1 both claim t0p0 (generation 3);
    # with 2 partitions and 2 members each gets one, and C1 keeps its undisputed t0p1.
    subs = {
        "C0": Subscription(topics=("t0",), owned_partitions=tps("t0p0"), generation_id=3),
        "C1": Subscription(topics=("t0",), owned_partitions=tps("t0p0", "t0p1"), generation_id=3),
    }
    result = as_sets(sticky_assign({"t0": 2}, subs))
    assert result == {"C0": tps("t0p0"), "C1": tps("t0p1")}


def test_sticky_higher_generation_wins_a_double_claim() -> None:
    # C0 claims t0p0 from generation 2, C1 from generation 5: C1 keeps it.
    subs = {
        "C0": Subscription(topics=("t0",), owned_partitions=tps("t0p0"), generation_id=2),
        "C1": Subscription(topics=("t0",), owned_partitions=tps("t0p0"), generation_id=5),
    }
    assert as_sets(sticky_assign({"t0": 2}, subs)) == {"C0": tps("t0p1"), "C1": tps("t0p0")}


def test_cooperative_sticky_revokes_before_reassigning() -> None:
    # KIP-429: C0 owns all of t0 (3 partitions) when C1 joins. The sticky target gives C1 one
    # partition; cooperative-sticky leaves it out this generation (C0 must revoke it first) ...
    subs = {
        "C0": Subscription(topics=("t0",), owned_partitions=tps("t0p0", "t0p1", "t0p2"),
                           generation_id=1),
        "C1": Subscription(topics=("t0",)),
    }  # fmt: skip
    first = as_sets(cooperative_sticky_assign({"t0": 3}, subs))
    assert first == {"C0": tps("t0p0", "t0p1"), "C1": ()}
    # ... and the follow-up rebalance, with C0 owning only what it kept, gives it to C1.
    follow = {
        "C0": Subscription(topics=("t0",), owned_partitions=first["C0"], generation_id=2),
        "C1": Subscription(topics=("t0",), owned_partitions=(), generation_id=2),
    }
    assert as_sets(cooperative_sticky_assign({"t0": 3}, follow)) == {
        "C0": tps("t0p0", "t0p1"),
        "C1": tps("t0p2"),
    }


def test_cooperative_sticky_unowned_partitions_are_assigned_at_once() -> None:
    # Partitions nobody owned (a new group) move to no one's detriment: no revocation round.
    subs = {c: Subscription(topics=("t0",)) for c in ("C0", "C1")}
    assert as_sets(cooperative_sticky_assign({"t0": 4}, subs)) == {
        "C0": tps("t0p0", "t0p2"),
        "C1": tps("t0p1", "t0p3"),
    }


def test_member_order_does_not_depend_on_dict_order() -> None:
    subs = {c: Subscription(topics=("t0", "t1")) for c in ("C1", "C0", "C2")}
    reordered = dict(reversed(list(subs.items())))
    for fn in (range_assign, roundrobin_assign, sticky_assign, cooperative_sticky_assign):
        assert fn(TWO_TOPICS_3, subs) == fn(TWO_TOPICS_3, reordered)


def test_sticky_general_builder_fails_where_kafka_throws() -> None:
    # Found by the Kafka cross-check (test_assignors_vs_kafka.py); Kafka 4.3.1's StickyAssignor
    # throws NullPointerException at AbstractStickyAssignor.java:1412 on this input. C0 owned t0-0
    # in generation 1 and now subscribes to nothing; C1 claims t0-0 from generation 2. C0 is
    # t0-0's "previous owner" (prevAssignment), but having nothing to take it is dropped from the
    # reassignment (canConsumerParticipateInReassignment), and performReassignments looks up its
    # size.
    subs = {
        "C0": Subscription(topics=(), owned_partitions=tps("t0p0"), generation_id=1),
        "C1": Subscription(topics=("t0", "t1"), owned_partitions=tps("t0p0"), generation_id=2),
        "C2": Subscription(topics=("t0",)),
    }
    with pytest.raises(AssignorError, match="previous owner C0 of t0-0"):
        sticky_assign({"t0": 1, "t1": 1}, subs)
