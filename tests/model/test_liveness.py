"""Heartbeats, session expiry, delayed operations (model/classic/heartbeat.py,
model/classic/rebalance.py)."""

from __future__ import annotations

import pytest
from kgc.model import KAFKA_3_9, KAFKA_4_X
from kgc.model.commands import JoinedMember, JoinGroupResponse
from model_harness import Sim, heartbeat, join, stable_group, sync

PROFILES = [KAFKA_4_X, KAFKA_3_9]


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_three_members_10s_20s_40s_who_is_alive_and_why(profile) -> None:
    """A (c1, 10 s session), B (c2, 20 s), C (c3, 40 s); 60 s rebalance timeouts; initial delay
    100 ms. Syncs and joins land before, between and after the members' deadlines."""
    sim = Sim(profile=profile, group_initial_rebalance_delay_ms=100)
    ra = sim.send(join("c1", version=3, session=10_000), at=0)
    rb = sim.send(join("c2", version=3, session=20_000), at=10)
    rc = sim.send(join("c3", version=3, session=40_000), at=20)
    # t=100: the initial delay ends, but B and C joined during it: wait another 100 ms.
    sim.at(150)
    assert sim.only.state == "PreparingRebalance" and sim.answer(ra) is None
    # t=200: generation 1; every session timer restarts from here.
    sim.at(200)
    a, b, c = sim.take(ra), sim.take(rb), sim.take(rc)
    assert (a.generation_id, a.leader, b.leader, c.leader) == (1, "c1-1", "c1-1", "c1-1")
    assert [sim.deadline(m) for m in ("c1-1", "c2-1", "c3-1")] == [10_200, 20_200, 40_200]
    # t=300: the followers' SyncGroups are parked; t=400 the leader's arrives: all answered, and
    # each answer restarts that member's timer.
    sb = sim.send(sync("c2", "c2-1", 1), at=300)
    sc = sim.send(sync("c3", "c3-1", 1))
    sa = sim.send(sync("c1", "c1-1", 1, [("c1-1", "p0"), ("c2-1", "p1"), ("c3-1", "p2")]), at=400)
    assert [sim.take(r).assignment for r in (sa, sb, sc)] == ["p0", "p1", "p2"]
    assert [sim.deadline(m) for m in ("c1-1", "c2-1", "c3-1")] == [10_400, 20_400, 40_400]
    # t=9000, before A's deadline: A heartbeats, deadline now 19 000.
    assert sim.take(sim.send(heartbeat("c1", "c1-1", 1), at=9_000)).error == "NONE"
    sim.at(18_999)
    assert sim.members() == ["c1-1", "c2-1", "c3-1"]  # everyone within their session
    # t=19 000: A missed its deadline -> removed; the group rebalances.
    sim.at(19_000)
    assert sim.members() == ["c2-1", "c3-1"] and sim.only.state == "PreparingRebalance"
    # t=19 500: B heartbeats (REBALANCE_IN_PROGRESS restarts its timer: 39 500), then rejoins.
    assert (
        sim.take(sim.send(heartbeat("c2", "c2-1", 1), at=19_500)).error == "REBALANCE_IN_PROGRESS"
    )
    assert sim.deadline("c2-1") == 39_500
    rb2 = sim.send(join("c2", "c2-1", version=3, session=20_000), at=19_600)
    # t=39 500: B's deadline passes while its JoinGroup is parked: it counts as alive.
    sim.at(39_600)
    assert sim.members() == ["c2-1", "c3-1"] and sim.deadline("c2-1") is None
    assert sim.answer(rb2) is None  # C has not rejoined
    # t=40 400: C never heartbeated nor rejoined -> removed; everyone left has joined: gen 2.
    sim.at(40_399)
    assert "c3-1" in sim.members()
    sim.at(40_400)
    assert sim.take(rb2) == JoinGroupResponse(
        error="NONE",
        generation_id=2,
        protocol_name="range",
        leader="c2-1",
        member_id="c2-1",
        members=(JoinedMember(member_id="c2-1", metadata="m"),),
    )
    assert sim.members() == ["c2-1"] and sim.deadline("c2-1") == 60_400
    # t=41 000: B (now leader) syncs: Stable, timer restarted by the answer.
    assert (
        sim.take(sim.send(sync("c2", "c2-1", 2, [("c2-1", "all")]), at=41_000)).assignment == "all"
    )
    assert sim.deadline("c2-1") == 61_000
    sim.at(60_999)
    assert sim.members() == ["c2-1"]
    # t=61 000: B goes silent past its deadline: removed, the empty group ends generation 3.
    sim.at(61_000)
    assert sim.members() == [] and (sim.only.state, sim.only.generation_id) == ("Empty", 3)


def test_heartbeat_errors_in_precedence_order() -> None:
    sim = Sim()
    assert (
        sim.take(sim.send(heartbeat("c1", "c1-1", 1), at=0)).error == "UNKNOWN_MEMBER_ID"
    )  # no group
    r1 = sim.send(join("c1", instance="i1"))
    sim.at(1)
    sim.take(r1)
    # FENCED_INSTANCE_ID comes before ILLEGAL_GENERATION; a stranger before the generation check.
    assert (
        sim.take(sim.send(heartbeat("c2", "c2-9", 7, instance="i1"))).error == "FENCED_INSTANCE_ID"
    )
    assert sim.take(sim.send(heartbeat("c2", "c2-9", 7))).error == "UNKNOWN_MEMBER_ID"
    assert (
        sim.take(sim.send(heartbeat("c1", "c1-1", 7, instance="i1"))).error == "ILLEGAL_GENERATION"
    )
    # CompletingRebalance: heartbeats are normal (NONE) and restart the timer.
    assert sim.take(sim.send(heartbeat("c1", "c1-1", 1, instance="i1"), at=50)).error == "NONE"
    assert sim.deadline("c1-1") == 10_050


def test_heartbeat_before_v3_ignores_instance_id() -> None:
    # group_instance_id does not exist on the wire before Heartbeat v3.
    sim = Sim()
    stable_group(sim, "c1")
    assert sim.take(sim.send(heartbeat("c1", "c1-1", 1, instance="zz", version=2))).error == "NONE"


def test_new_member_join_times_out_after_five_minutes_and_its_id_is_reused() -> None:
    # A new member's JoinGroup is parked at most 5 minutes (it cannot heartbeat while muted).
    # c1 (400 s session) never rejoins; c2's 1000 s rebalance timeout keeps the phase open.
    sim = Sim()
    stable_group(sim, "c1", session=400_000)
    r2 = sim.send(join("c2", version=3, rebalance=1_000_000), at=1_000)
    assert sim.only.state == "PreparingRebalance"
    sim.at(300_999)
    assert sim.answer(r2) is None
    sim.at(301_000)
    assert sim.take(r2) == JoinGroupResponse(error="UNKNOWN_MEMBER_ID", member_id="")
    assert sim.members() == ["c1-1"]
    # c2 never saw "c2-1", so the conformance layer never named it: c2's next id is c2-1 again.
    r3 = sim.send(join("c2", version=4))
    assert sim.take(r3).member_id == "c2-1"


def test_member_awaiting_sync_survives_its_deadline() -> None:
    # The leader does not sync for longer than a follower's session: the parked follower stays.
    sim = Sim()
    r1 = sim.send(join("c1", version=3, session=30_000))
    r2 = sim.send(join("c2", version=3, session=1_000))
    sim.at(1)
    sim.take(r1), sim.take(r2)
    parked = sim.send(sync("c2", "c2-1", 1), at=100)
    sim.at(5_000)  # c2's deadline (1 000) passed while parked
    assert sim.members() == ["c1-1", "c2-1"] and sim.deadline("c2-1") is None
    sim.take(sim.send(sync("c1", "c1-1", 1, [("c2-1", "x")])))
    assert sim.take(parked).assignment == "x" and sim.deadline("c2-1") == 6_000


def test_member_not_parked_expires_at_its_deadline_in_completing_rebalance() -> None:
    sim = Sim()
    r1 = sim.send(join("c1", version=3, session=30_000))
    r2 = sim.send(join("c2", version=3, session=1_000))
    sim.at(1)
    sim.take(r1), sim.take(r2)  # join phase completed at t=0: c2's deadline is 1 000
    sim.at(999)
    assert sim.members() == ["c1-1", "c2-1"]
    sim.at(1_000)
    assert sim.members() == ["c1-1"] and sim.only.state == "PreparingRebalance"
