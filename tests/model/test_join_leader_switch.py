"""``Profile.join_leader_elected_once`` (kfake's switch in
``conformance/brokers/implementations.py`` ``SWITCHES["kfake"]``): on, a group has one leader from
its first member on (Kafka's ``ClassicGroup.add``/``remove``/``maybeElectNewJoinedLeader``); off, a
leader is named only when a join phase completes, and a completion that finds the named one gone
answers every member as the leader. One short timeline per case, under both rule families, each
switch value."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
from kgc.model import KAFKA_3_9, KAFKA_4_X
from kgc.model.commands import JoinGroupResponse
from kgc.model.profiles import Profile
from model_harness import Sim, join, leave, sync

PROFILES = [KAFKA_4_X, KAFKA_3_9]


def each_rule_and_switch(test: Callable[..., None]) -> Callable[..., None]:
    """Run ``test`` under both rule families, with the switch on and off."""
    test = pytest.mark.parametrize("elected_once", [True, False])(test)
    return pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)(test)


def _sim(profile: Profile, elected_once: bool) -> Sim:
    return Sim(profile=replace(profile, join_leader_elected_once=elected_once))


def _led_by_c1(sim: Sim) -> int:
    """c1 leads generation 1 alone; c2 and c3 join and c1 rejoins: generation 2 of all three,
    Stable, c1's assignment stored. Returns the generation."""
    r1 = sim.send(join("c1", version=3), at=0)
    sim.at(1)
    first = sim.take(r1)
    assert isinstance(first, JoinGroupResponse) and first.leader == "c1-1"
    sim.take(sim.send(sync("c1", "c1-1", first.generation_id, [("c1-1", "a")]), at=2))
    rids = [sim.send(join(c, version=3), at=10) for c in ("c2", "c3")]
    rids.append(sim.send(join("c1", "c1-1", version=3), at=11))
    sim.at(12)
    answers = [sim.take(r) for r in rids]
    # the named leader rejoined: it stays, and only it is answered with the member list
    assert {a.leader for a in answers} == {"c1-1"}  # type: ignore[union-attr]
    assert [len(a.members) for a in answers] == [0, 0, 3]  # type: ignore[union-attr]
    gen = answers[0].generation_id  # type: ignore[union-attr]
    syncs = [sim.send(sync(c, f"{c}-1", gen), at=13) for c in ("c2", "c3")]
    ids = ("c1-1", "c2-1", "c3-1")
    syncs.append(sim.send(sync("c1", "c1-1", gen, [(m, f"a-{m}") for m in ids]), at=14))
    for r in syncs:
        sim.take(r)
    assert sim.only.state == "Stable"
    return gen


@each_rule_and_switch
def test_a_leader_that_left_is_replaced_by_one_member_or_by_every_member(
    profile: Profile, elected_once: bool
) -> None:
    sim = _sim(profile, elected_once)
    gen = _led_by_c1(sim)
    sim.take(sim.send(leave("c1", ("c1-1", None)), at=100))
    assert sim.only.state == "PreparingRebalance"
    r2 = sim.send(join("c2", "c2-1", version=3), at=110)
    r3 = sim.send(join("c3", "c3-1", version=3), at=120)
    answers2, answers3 = sim.answers(r2), sim.answers(r3)
    if elected_once:
        # one leader, either rejoined member; only it gets the list
        assert {a.leader for a in answers2} == {"c2-1", "c3-1"}  # type: ignore[union-attr]
        for a in answers2 | answers3:
            assert isinstance(a, JoinGroupResponse)
            assert bool(a.members) == (a.leader == a.member_id)
        return
    # every member is told it leads, each with the whole member list, in every state
    for answers, mid in ((answers2, "c2-1"), (answers3, "c3-1")):
        assert len(answers) == 1
        (a,) = answers
        assert isinstance(a, JoinGroupResponse) and a.generation_id == gen + 1
        assert a.leader == mid
        assert [m.member_id for m in a.members] == ["c2-1", "c3-1"]
    # and the group's leader is either: the one whose SyncGroup is taken as the leader's
    assert {s.leader for s in sim.states} == {("c2-1",), ("c3-1",)}
    sim.take(r2)
    sim.take(r3)
    s3 = sim.send(sync("c3", "c3-1", gen + 1, [("c2-1", "x"), ("c3-1", "y")]), at=130)
    # c3 leads in one state (answered at once, its assignment stored), not in the other (parked)
    assert {getattr(a, "assignment", None) for a in sim.answers(s3)} == {"y", None}


@each_rule_and_switch
def test_a_new_groups_first_members(profile: Profile, elected_once: bool) -> None:
    # three joins in one first join phase: Kafka's first member leads from its join on; with
    # none named yet, each is told it leads
    sim = _sim(profile, elected_once)
    sim.at(0)
    rids = [sim.send(join(c, version=3)) for c in ("c1", "c2", "c3")]  # all at 0
    sim.at(1)
    answers = [sim.answer(r) for r in rids]
    leaders = [a.leader for a in answers]  # type: ignore[union-attr]
    listed = [len(a.members) for a in answers]  # type: ignore[union-attr]
    if elected_once:
        assert leaders == ["c1-1"] * 3 and listed == [3, 0, 0]
    else:
        assert leaders == ["c1-1", "c2-1", "c3-1"] and listed == [3, 3, 3]


@each_rule_and_switch
def test_a_leader_that_rejoins_stays_the_only_one(profile: Profile, elected_once: bool) -> None:
    # the named leader among the rejoined members: both rules keep it (``_led_by_c1`` asserts)
    sim = _sim(profile, elected_once)
    _led_by_c1(sim)
    assert sim.only.leader == ("c1-1",)


@each_rule_and_switch
def test_a_static_leader_replaced_in_a_rebalance(profile: Profile, elected_once: bool) -> None:
    # static c1 leads generation 1 and has not synced; c2 joins, so the group rebalances; c1
    # rejoins with an empty member id and is replaced as c1-2, which completes the join phase.
    # Kafka moves the lead to c1-2 in every state; kfake only when it answers at once (Stable)
    sim = _sim(profile, elected_once)
    r0 = sim.send(join("c1", version=5, instance="i1"), at=0)
    first = sim.at(1).take(r0)
    assert first.leader == "c1-1"  # type: ignore[union-attr]
    r2 = sim.send(join("c2", version=3), at=10)
    r1 = sim.send(join("c1", version=5, instance="i1"), at=20)
    sim.at(21)
    a1, a2 = sim.answer(r1), sim.answer(r2)
    assert isinstance(a1, JoinGroupResponse) and isinstance(a2, JoinGroupResponse)
    assert a1.member_id == "c1-2" and a1.generation_id == first.generation_id + 1  # type: ignore[union-attr]
    if elected_once:
        assert (a1.leader, a2.leader) == ("c1-2", "c1-2")
        assert (len(a1.members), len(a2.members)) == (2, 0)
    else:
        assert (a1.leader, a2.leader) == ("c1-2", "c2-1")
        assert (len(a1.members), len(a2.members)) == (2, 2)


@each_rule_and_switch
def test_a_static_leader_replaced_in_a_stable_group_keeps_the_lead(
    profile: Profile, elected_once: bool
) -> None:
    # answered at once with the current generation (v9: KIP-814's skip): the lead moves to the
    # new id under both rules, so the next rebalance finds it
    sim = _sim(profile, elected_once)
    r0 = sim.send(join("c1", version=9, instance="i1"), at=0)
    first = sim.at(1).take(r0)
    gen = first.generation_id  # type: ignore[union-attr]
    sim.take(sim.send(sync("c1", "c1-1", gen, [("c1-1", "a")], version=3, instance="i1"), at=2))
    assert sim.only.state == "Stable"
    again = sim.take(sim.send(join("c1", version=9, instance="i1"), at=10))
    assert isinstance(again, JoinGroupResponse) and again.member_id == "c1-2"
    assert again.leader == "c1-2" and again.skip_assignment
    assert sim.only.leader == ("c1-2",)
