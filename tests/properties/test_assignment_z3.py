"""Z3 assignment invariants: each test is one small hand-written generation with a comment saying
what goes wrong, and what the check must say about it."""

from __future__ import annotations

import pytest
import z3
from kgc.model.assignors import ASSIGNORS, Subscription
from kgc.properties import assignment_z3
from kgc.properties.assignment_codec import (
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from kgc.properties.assignment_z3 import (
    CheckRequest,
    Generation,
    Verdict,
    check_generation,
    check_many,
    check_ownership_timeline,
    max_retention,
)

SUBS = {"c1-1": ["orders"], "c2-1": ["orders"], "c3-1": ["orders"]}
COUNTS = {"orders": 6}


def test_leader_giving_one_partition_to_two_members_is_caught() -> None:
    # A buggy leader hands orders-2 to both c1-1 and c2-1 (and nobody gets orders-5).
    # Assignments travel as opaque SyncGroup strings, as in the differential suite.
    assignment = {
        "c1-1": encode_assignment({"orders": [0, 1, 2]}),
        "c2-1": encode_assignment({"orders": [2, 3]}),
        "c3-1": encode_assignment({"orders": [4]}),
    }
    subs = {m: encode_subscription(t) for m, t in SUBS.items()}
    result = check_generation(subs, assignment, partitions_per_topic=COUNTS, generation_id=7)
    assert result.verdict is Verdict.FAIL
    double = [v for v in result.violations if "orders-2" in v.partitions]
    assert len(double) == 1
    assert double[0].invariant == "exactly-one-owner"
    assert set(double[0].members) == {"c1-1", "c2-1"}
    assert "orders-2" in double[0].message
    assert "c1-1" in double[0].message and "c2-1" in double[0].message
    assert "generation 7" in double[0].message
    assert any("orders-5" in v.partitions and "no owner" in v.message for v in result.violations)


def test_cooperative_handoff_that_skips_the_revocation_generation_is_caught() -> None:
    # Generation 4: c1-1 owns orders-0..2, c2-1 owns orders-3..5. c3-1 joins; in generation 5 the
    # leader moves orders-2 straight to c3-1 while c1-1 (still a member) has not revoked it.
    previous = {"c1-1": {"orders": [0, 1, 2]}, "c2-1": {"orders": [3, 4, 5]}}
    current = {"c1-1": {"orders": [0, 1]}, "c2-1": {"orders": [3, 4]}, "c3-1": {"orders": [2, 5]}}
    result = check_generation(
        SUBS,
        current,
        previous,
        partitions_per_topic=COUNTS,
        generation_id=5,
        protocol="cooperative",
    )
    assert result.verdict is Verdict.FAIL
    handoffs = {
        v.partitions[0]: v for v in result.violations if v.invariant == "cooperative-handoff"
    }
    assert set(handoffs) == {"orders-2", "orders-5"}
    v = handoffs["orders-2"]
    assert v.members == ("c1-1", "c3-1")
    assert "generation 5" in v.message and "generation 4" in v.message
    assert "revocation generation was skipped" in v.message


def test_cooperative_handoff_done_right_passes() -> None:
    # Same story, done right: generation 5 leaves orders-2 and orders-5 unowned (being revoked),
    # generation 6 gives them to c3-1.
    gen4 = {"c1-1": {"orders": [0, 1, 2]}, "c2-1": {"orders": [3, 4, 5]}}
    gen5 = {"c1-1": {"orders": [0, 1]}, "c2-1": {"orders": [3, 4]}, "c3-1": {}}
    gen6 = {"c1-1": {"orders": [0, 1]}, "c2-1": {"orders": [3, 4]}, "c3-1": {"orders": [2, 5]}}
    kwargs = {"partitions_per_topic": COUNTS, "assignor": "cooperative-sticky"}
    r5 = check_generation(SUBS, gen5, gen4, generation_id=5, **kwargs)
    assert r5.verdict is Verdict.PASS, r5.summary()
    assert "cooperative-handoff" in r5.checked
    assert any(name == "balance" for name, _ in r5.skipped)  # not promised mid-hand-off
    r6 = check_generation(SUBS, gen6, gen5, generation_id=6, **kwargs)
    assert r6.verdict is Verdict.PASS, r6.summary()
    assert "stickiness" in r6.checked


def test_unowned_partition_is_only_allowed_while_its_owner_revokes_it() -> None:
    # Eager protocol: nothing may be left unowned.
    current = {"c1-1": {"orders": [0, 1]}, "c2-1": {"orders": [3, 4]}, "c3-1": {}}
    result = check_generation(SUBS, current, partitions_per_topic=COUNTS)
    assert result.verdict is Verdict.FAIL
    assert {v.partitions[0] for v in result.violations} == {"orders-2", "orders-5"}


def test_partition_of_an_unsubscribed_topic_is_caught() -> None:
    # c2-1 subscribes only to payments but is given orders-3.
    subs = {"c1-1": ["orders"], "c2-1": ["payments"]}
    assignment = {"c1-1": {"orders": [0, 1, 2]}, "c2-1": {"orders": [3], "payments": [0]}}
    result = check_generation(subs, assignment, partitions_per_topic={"orders": 4, "payments": 1})
    assert result.verdict is Verdict.FAIL
    (v,) = [v for v in result.violations if v.invariant == "subscribed-owner"]
    assert v.members == ("c2-1",) and v.partitions == ("orders-3",)
    assert "does not subscribe to orders" in v.message


def test_range_promise_checked_per_topic() -> None:
    # Range must give c1-1 (first in member order) orders-0..1, c2-1 orders-2..3, c3-1 orders-4..5.
    # This leader swapped c1-1's and c3-1's ranges: every partition has one owner, but range's
    # promise is broken.
    assignment = {
        "c1-1": {"orders": [4, 5]},
        "c2-1": {"orders": [2, 3]},
        "c3-1": {"orders": [0, 1]},
    }
    result = check_generation(SUBS, assignment, partitions_per_topic=COUNTS, assignor="range")
    assert result.verdict is Verdict.FAIL
    assert {v.invariant for v in result.violations} == {"balance"}
    assert any("c1-1" in v.message and "orders-[0..2)" in v.message for v in result.violations)


def test_uneven_loads_with_equal_subscriptions_are_caught_for_roundrobin() -> None:
    assignment = {
        "c1-1": {"orders": [0, 1, 2, 3]},
        "c2-1": {"orders": [4]},
        "c3-1": {"orders": [5]},
    }
    result = check_generation(SUBS, assignment, partitions_per_topic=COUNTS, assignor="roundrobin")
    assert result.verdict is Verdict.FAIL
    (v,) = result.violations
    assert v.invariant == "balance" and v.members[0] == "c1-1"
    assert "owns 4 partitions" in v.message


def test_roundrobin_promises_nothing_when_subscriptions_differ() -> None:
    # RoundRobinAssignor javadoc: with different subscriptions the result may be unbalanced.
    subs = {"C0": ["t0"], "C1": ["t0", "t1"], "C2": ["t0", "t1", "t2"]}
    assignment = {"C0": {"t0": [0]}, "C1": {"t1": [0]}, "C2": {"t1": [1], "t2": [0, 1, 2]}}
    counts = {"t0": 1, "t1": 2, "t2": 3}
    result = check_generation(subs, assignment, partitions_per_topic=counts, assignor="roundrobin")
    assert result.verdict is Verdict.PASS
    assert ("balance", "roundrobin promises no balance when subscriptions differ") in result.skipped
    # ... but the sticky assignor promises "as balanced as possible", which this is not: C2 has
    # 4 partitions, C1 (subscribed to t1 too) has 1.
    sticky = check_generation(subs, assignment, partitions_per_topic=counts, assignor="sticky")
    assert sticky.verdict is Verdict.FAIL
    (v,) = sticky.violations
    assert v.members == ("C2", "C1") and v.partitions == ("t1-1",)


def test_stickiness_violation_names_the_partition_that_moved_needlessly() -> None:
    # Generation 8: c1-1 owned orders-0,1; c2-1 orders-2,3; c3-1 orders-4,5. Nothing changed, yet
    # the leader swapped orders-1 and orders-2 between c1-1 and c2-1.
    previous = {"c1-1": {"orders": [0, 1]}, "c2-1": {"orders": [2, 3]}, "c3-1": {"orders": [4, 5]}}
    current = {"c1-1": {"orders": [0, 2]}, "c2-1": {"orders": [1, 3]}, "c3-1": {"orders": [4, 5]}}
    result = check_generation(
        SUBS, current, previous, partitions_per_topic=COUNTS, generation_id=9, assignor="sticky"
    )
    assert result.verdict is Verdict.FAIL
    assert all(v.invariant == "stickiness" for v in result.violations)
    assert any(
        v.partitions == ("orders-1",) and v.members == ("c1-1", "c2-1") for v in result.violations
    )


def test_max_retention_closed_form() -> None:
    # 7 partitions, 3 members: quotas 2, 2, 3 (one extra). a owned 5, b owned 2, c none:
    # a keeps 3 (it takes the extra), b keeps 2 -> 5 of 7 can stay.
    assert max_retention(7, ["a", "b", "c"], {"a": set(range(5)), "b": {5, 6}}) == 5
    # No extra partition: a keeps 2 of its 3.
    assert max_retention(6, ["a", "b", "c"], {"a": {0, 1, 2}}) == 2


def test_unknown_is_never_reported_as_a_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    # Pretend Z3 times out: the verdict must be UNKNOWN, and not ok.
    monkeypatch.setattr(z3.Solver, "check", lambda self, *a: z3.unknown)
    monkeypatch.setattr(z3.Solver, "reason_unknown", lambda self: "timeout")
    result = check_generation(
        SUBS,
        {"c1-1": {"orders": [0, 1]}, "c2-1": {"orders": [2, 3]}, "c3-1": {"orders": [4, 5]}},
        partitions_per_topic=COUNTS,
    )
    assert result.verdict is Verdict.UNKNOWN
    assert not result.ok
    assert "timeout" in result.reason


def test_check_many_agrees_with_check_generation() -> None:
    good = {"c1-1": {"orders": [0, 1]}, "c2-1": {"orders": [2, 3]}, "c3-1": {"orders": [4, 5]}}
    bad = {"c1-1": {"orders": [0, 1, 2]}, "c2-1": {"orders": [2, 3]}, "c3-1": {"orders": [4, 5]}}
    requests = [
        CheckRequest(
            subscriptions=SUBS, assignment=a, partitions_per_topic=COUNTS, assignor="range"
        )
        for a in (good, bad, good, bad)
    ]
    verdicts = [r.verdict for r in check_many(requests)]
    assert verdicts == [Verdict.PASS, Verdict.FAIL, Verdict.PASS, Verdict.FAIL]
    single = check_generation(SUBS, bad, partitions_per_topic=COUNTS, assignor="range")
    assert check_many(requests)[1].summary() == single.summary()


def test_model_assignors_pass_their_own_promises_on_a_larger_group() -> None:
    counts = {"a": 30, "b": 17, "c": 5}
    subs = {
        f"m{i:02d}": Subscription(topics=("a", "b", "c") if i % 3 else ("a", "c"))
        for i in range(12)
    }
    for name, spec in ASSIGNORS.items():
        result = check_generation(
            subs, spec.function(counts, subs), partitions_per_topic=counts, assignor=name
        )
        assert result.verdict is Verdict.PASS, f"{name}: {result.summary()}"


def test_ownership_timeline_overlap_is_caught() -> None:
    # c1 revokes orders-0 at t=10.4, but c2 started owning it at t=10.1: 300 ms of double ownership.
    intervals = [
        ("c1", ("orders", 0), 5.0, 10.4),
        ("c2", ("orders", 0), 10.1, 20.0),
        ("c1", ("orders", 1), 5.0, 20.0),
    ]
    result = check_ownership_timeline(intervals)
    assert result.verdict is Verdict.FAIL
    (v,) = result.violations
    assert v.partitions == ("orders-0",) and set(v.members) == {"c1", "c2"}
    assert "300 ms" in v.message
    touching = [("c1", ("orders", 0), 5.0, 10.1), ("c2", ("orders", 0), 10.1, 20.0)]
    assert check_ownership_timeline(touching).verdict is Verdict.PASS


def test_codec_round_trip_and_errors() -> None:
    text = encode_assignment({"b": [2, 0], "a": [1]})
    assert text == '{"a":[1],"b":[0,2]}'
    assert decode_assignment(text) == {"a": (1,), "b": (0, 2)}
    assert decode_assignment("") == {}
    sub = decode_subscription(
        encode_subscription(["t1", "t0"], owned_partitions={"t0": [3]}, generation_id=4)
    )
    assert sub.topics == ("t0", "t1") and sub.generation_id == 4
    assert [str(tp) for tp in sub.owned_partitions] == ["t0-3"]
    with pytest.raises(ValueError, match="encode_assignment"):
        decode_assignment("not json")
    with pytest.raises(ValueError, match="partition numbers >= 0"):
        decode_assignment('{"t": [-1]}')


def test_previous_generation_record_is_accepted() -> None:
    prev = Generation(
        generation_id=3,
        subscriptions={},
        assignment=assignment_z3.normalize_assignment({"c1-1": {"orders": [0, 1, 2, 3, 4, 5]}}),
    )
    current = {"c1-1": {"orders": [0, 1, 2]}, "c2-1": {"orders": [3, 4, 5]}}
    subs = {"c1-1": ["orders"], "c2-1": ["orders"]}
    result = check_generation(subs, current, prev, partitions_per_topic=COUNTS, generation_id=4,
                              protocol="cooperative")  # fmt: skip
    assert result.verdict is Verdict.FAIL
    assert "generation 3" in result.violations[0].message
