"""The Z3 balance oracle on inputs whose optimum is worked out by hand."""

from __future__ import annotations

from kgc.model.assignors import Subscription
from kgc.properties.assignment_oracle import balance_gap, best_balance, compare_assignors


def test_sticky_javadoc_example_2_optimum_and_gaps() -> None:
    # C0 -> t0; C1 -> t0, t1; C2 -> t0, t1, t2 with 1, 2, 3 partitions. Only C2 can take t2's three
    # partitions, so no assignment has a max load below 3; C0 can hold at most t0's one partition,
    # so the spread is at least 3 - 1 = 2. Both bounds are reached (C0 1, C1 2, C2 3).
    subs = {
        "C0": Subscription(topics=("t0",)),
        "C1": Subscription(topics=("t0", "t1")),
        "C2": Subscription(topics=("t0", "t1", "t2")),
    }
    counts = {"t0": 1, "t1": 2, "t2": 3}
    best = best_balance(subs, counts)
    assert (best.status, best.best_max_load, best.best_spread) == ("optimal", 3, 2)
    gaps = compare_assignors(subs, counts)
    # RoundRobinAssignor javadoc: C0 [t0p0], C1 [t1p0], C2 [t1p1, t2p0, t2p1, t2p2] -> 4 and 3.
    assert (gaps["roundrobin"].max_load_gap, gaps["roundrobin"].spread_gap) == (1, 1)
    # StickyAssignor javadoc: C0 [t0p0], C1 [t1p0, t1p1], C2 [t2p0, t2p1, t2p2] -> optimal.
    assert (gaps["sticky"].max_load_gap, gaps["sticky"].spread_gap) == (0, 0)


def test_homogeneous_optimum_is_even_split() -> None:
    subs = {m: ["t"] for m in ("a", "b", "c")}
    best = best_balance(subs, {"t": 10})
    assert (best.best_max_load, best.best_spread) == (4, 1)
    best = best_balance(subs, {"t": 9})
    assert (best.best_max_load, best.best_spread) == (3, 0)


def test_member_without_partitions_counts_in_the_spread() -> None:
    # d subscribes to a topic that does not exist: its load is always 0.
    subs = {"a": ["t"], "b": ["t"], "d": ["missing"]}
    best = best_balance(subs, {"t": 4})
    assert (best.best_max_load, best.best_spread) == (2, 2)


def test_gap_of_a_lopsided_assignment() -> None:
    subs = {"a": ["t"], "b": ["t"]}
    gap = balance_gap("hand", subs, {"t": 4}, {"a": [("t", p) for p in range(4)], "b": []})
    assert (gap.max_load, gap.spread, gap.max_load_gap, gap.spread_gap) == (4, 4, 2, 4)


def test_wall_clock_bounded_oracle_gives_the_same_answer() -> None:
    from kgc.properties.assignment_oracle import best_balance_within

    subs = {"C0": ["t0"], "C1": ["t0", "t1"], "C2": ["t0", "t1", "t2"]}
    counts = {"t0": 1, "t1": 2, "t2": 3}
    assert best_balance_within(subs, counts, timeout_s=60) == best_balance(subs, counts)
