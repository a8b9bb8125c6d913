"""``Profile.timers_unordered_within_ms`` (kfake's, ``conformance/brokers/implementations.py``):
timers due less than the window apart fire in either order; 0, Kafka's value, keeps deadline
order. The timeline is the race kfake showed: a member whose JoinGroup is parked has its session
timer due just before the join phase's timer, and a member whose parked request does not keep it
alive (``parked_request_keeps_member_alive`` off, kfake's) is removed unanswered when its session
timer runs first."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kgc.engine.registry import with_switches
from kgc.model import KAFKA_4_X
from model_harness import Sim, heartbeat, join, sync

KFAKE_LIKE = replace(KAFKA_4_X, parked_request_keeps_member_alive=False)


def _race(window: int, gap_ms: int) -> tuple[Sim, int]:
    """c1 and c2 in a Stable group; c1's session timer due ``gap_ms`` before the join phase's
    timer, which c1's parked rejoin started; c2 never rejoins. Time stops at both deadlines."""
    profile = replace(KFAKE_LIKE, timers_unordered_within_ms=window)
    sim = Sim(profile=profile, group_initial_rebalance_delay_ms=50)
    r1 = sim.send(join("c1", version=3, session=1000, rebalance=1000), at=0)
    r2 = sim.send(join("c2", version=3, session=1000, rebalance=1000), at=0)
    sim.at(200)  # the initial delay, extended once for c2
    leader = sim.take(r1)
    sim.take(r2)
    assert leader.leader == "c1-1"
    s1 = sim.send(sync("c1", "c1-1", leader.generation_id, [("c1-1", "a"), ("c2-1", "b")]), at=210)
    s2 = sim.send(sync("c2", "c2-1", leader.generation_id), at=210)
    sim.take(s1), sim.take(s2)
    sim.take(sim.send(heartbeat("c1", "c1-1", leader.generation_id), at=300))  # due at 1300
    rejoin = sim.send(join("c1", "c1-1", version=3, session=1000, rebalance=1000), at=300 + gap_ms)
    assert sim.answer(rejoin) is None  # the leader's rejoin starts the join phase
    busy = sim.take(sim.send(heartbeat("c2", "c2-1", leader.generation_id), at=340))  # due 1340
    assert busy.error == "REBALANCE_IN_PROGRESS"  # c2 never rejoins
    sim.at(1300 + gap_ms)
    return sim, rejoin


@pytest.mark.parametrize("gap_ms", [0, 5, 9])
def test_a_join_timer_due_within_the_window_may_run_before_the_session_timer(gap_ms: int) -> None:
    sim, rejoin = _race(window=10, gap_ms=gap_ms)
    answers = sim.answers(rejoin)
    answered = [a for a in answers if a is not None]
    # deadline order: c1 expires first, unanswered; the join timer first: c1 is answered alone
    assert None in answers and len(answered) == 1
    assert answered[0].error == "NONE" and answered[0].leader == "c1-1"
    assert [m.member_id for m in answered[0].members] == ["c1-1"]


@pytest.mark.parametrize(("window", "gap_ms"), [(0, 5), (10, 10), (10, 30)])
def test_deadline_order_outside_the_window(window: int, gap_ms: int) -> None:
    sim, rejoin = _race(window=window, gap_ms=gap_ms)
    assert sim.answers(rejoin) == {None}  # c1's session timer first: removed unanswered


def test_a_manifest_gives_the_window_as_a_whole_number() -> None:
    assert with_switches(KAFKA_4_X, {"timers_unordered_within_ms": 10}).timers_unordered_within_ms
    for bad in ("10", True, 1.5):
        with pytest.raises(ValueError, match="timers_unordered_within_ms': expected a whole"):
            with_switches(KAFKA_4_X, {"timers_unordered_within_ms": bad})
    with pytest.raises(ValueError, match="parked_request_keeps_member_alive': expected true"):
        with_switches(KAFKA_4_X, {"parked_request_keeps_member_alive": 0})
