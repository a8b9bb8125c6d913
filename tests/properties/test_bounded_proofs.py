"""Bounded proofs at a small bound (the full bound runs in ``kgc bench z3``)."""

from __future__ import annotations

from collections.abc import Mapping

from kgc.model.assignors import GroupAssignment, Subscription, range_assign
from kgc.properties.assignment_z3 import Verdict
from kgc.properties.bounded_proofs import (
    Bound,
    domain_size,
    enumerate_inputs,
    prove_assignor,
    prove_range_closed_form,
    prove_roundrobin_even,
)

SMALL = Bound(max_members=3, max_topics=2, max_partitions=2, max_total_partitions=3)
SMALL_STATEFUL = Bound(max_members=2, max_topics=1, max_partitions=2, max_total_partitions=2)


def test_symbolic_proofs_hold_for_all_sizes() -> None:
    for proof in (prove_range_closed_form(), prove_roundrobin_even()):
        assert proof.verdict is Verdict.PASS, (proof.name, proof.detail)


def test_enumeration_covers_the_whole_domain() -> None:
    # 1..2 members, topics {t0} or {t0, t1}, partitions 1..2 each with at most 3 in all:
    # counts (1), (2), (1,1), (1,2), (2,1); subsets per member 2 or 4.
    b = Bound(max_members=2, max_topics=2, max_partitions=2, max_total_partitions=3)
    stateless = list(enumerate_inputs(b, stateful=False))
    assert len(stateless) == 2 * (2 + 4) + 3 * (4 + 16) == domain_size(b, stateful=False)
    assert len({repr(c) for c in stateless}) == len(stateless)
    stateful = list(enumerate_inputs(b, stateful=True))
    assert len(stateful) == domain_size(b, stateful=True)


def test_stateless_assignors_proved_on_small_domain() -> None:
    for name in ("range", "roundrobin", "server-range"):
        report = prove_assignor(name, SMALL)
        assert report.verdict is Verdict.PASS, report.summary()
        assert report.inputs == domain_size(SMALL, stateful=False)


def test_stateful_assignors_proved_without_empty_subscriptions() -> None:
    bound = Bound(
        max_members=2, max_topics=2, max_partitions=2, max_total_partitions=3,
        empty_subscriptions=False,
    )  # fmt: skip
    for name in ("sticky", "cooperative-sticky", "uniform"):
        report = prove_assignor(name, bound)
        assert report.verdict is Verdict.PASS, report.summary()


def test_sticky_gives_partitions_to_a_member_with_an_empty_subscription() -> None:
    # A finding, also what Kafka does: AbstractStickyAssignor.allSubscriptionsEqual starts its
    # set of topics from the first member it sees; when that member subscribes to nothing the set
    # stays empty and is re-initialised from the next member, so {m0: [], m1: [t0]} counts as
    # "all equal" and the constrained builder gives m0 a partition of t0. (Checked against the
    # kafka-clients 4.3.1 jar: StickyAssignor.assign({t0: 2}, {m0: [], m1: [t0]}) ->
    # {m0=[t0-0], m1=[t0-1]}; HashMap order puts m0 first there too.)
    report = prove_assignor("sticky", SMALL_STATEFUL)
    assert report.verdict is Verdict.FAIL
    case, why = report.counterexamples[0]
    assert "m0 subscribes to {}" in case
    assert "m0 does not subscribe to t0" in why
    # The uniform (server) assignor does not do this.
    assert prove_assignor("uniform", SMALL_STATEFUL).verdict is Verdict.PASS


def test_a_broken_assignor_is_caught() -> None:
    # Quality: a "range" that also hands the first partition of each topic to the last member.
    def broken(counts: Mapping[str, int], subs: Mapping[str, Subscription]) -> GroupAssignment:
        result = dict(range_assign(counts, subs))
        last = max(subs)
        for topic in counts:
            if topic in subs[last].topics:
                first = next(tp for tp in sorted(sum(result.values(), ())) if tp.topic == topic)
                if first not in result[last]:
                    result[last] = (*result[last], first)
        return result

    report = prove_assignor("range", SMALL, function=broken)
    assert report.verdict is Verdict.FAIL
    assert "owned by 2 members at once" in report.counterexamples[0][1]
