"""Controller epochs and fencing (kgc.model.controller): small hand-written histories.

Expected values come from Kafka's rules as cited in the module docstring (ReplicaManager's
``controllerEpoch < this.controllerEpoch`` check, ZooKeeper's epoch + 1 per election, KIP-595's
one vote per epoch), not from running the code under test.
"""

from __future__ import annotations

import pytest
from kgc.model.controller import (
    InvalidTransition,
    LivenessConfig,
    LivenessEvent,
    QuorumObservation,
    QuorumRules,
    ZkControllerRules,
    ZkReading,
    allowed_fenced,
    check_quorum_observations,
    check_zk_readings,
    quorum,
    receive_control_request,
    zk_cluster,
)
from kgc.model.errors import STALE_CONTROLLER_EPOCH

# ---------------------------------------------------------------------------- receiver fencing


def test_lower_epoch_is_stale_and_changes_nothing() -> None:
    r = receive_control_request(known_epoch=5, request_epoch=4)
    assert (r.error, r.controller_epoch) == (STALE_CONTROLLER_EPOCH, 5)


def test_equal_epoch_is_accepted() -> None:
    # the same controller sends many requests in its epoch
    r = receive_control_request(known_epoch=5, request_epoch=5)
    assert (r.error, r.controller_epoch) == ("NONE", 5)


def test_higher_epoch_is_adopted() -> None:
    r = receive_control_request(known_epoch=5, request_epoch=7)
    assert (r.error, r.controller_epoch) == ("NONE", 7)


# ------------------------------------------------------------------------- ZooKeeper controller


def test_first_election_writes_epoch_one() -> None:
    # /controller_epoch is created at 0 (InitialControllerEpoch) and the winner writes 0 + 1
    c = ZkControllerRules().elect(zk_cluster([1, 2, 3]), 2)
    assert (c.controller, c.controller_epoch, c.acting_epoch(2)) == (2, 1, 1)


def test_any_live_unpaused_broker_may_win_the_race() -> None:
    rules = ZkControllerRules()
    c = rules.pause(zk_cluster([1, 2, 3]), 3)
    assert sorted(x.controller for x in rules.elections(c) if x.controller is not None) == [1, 2]


def test_no_election_while_controller_znode_exists() -> None:
    rules = ZkControllerRules()
    c = rules.elect(zk_cluster([1, 2, 3]), 1)
    assert rules.elections(c) == []
    with pytest.raises(InvalidTransition):
        rules.elect(c, 2)


def test_zombie_controller_is_fenced_after_failover() -> None:
    # 1 leads epoch 1 and tells 3; 1 is paused past its session; 2 wins epoch 2 and tells 3;
    # 1 resumes and, before noticing its expiry, sends to 3 with epoch 1: rejected.
    rules = ZkControllerRules()
    c = rules.elect(zk_cluster([1, 2, 3]), 1)
    c, r = rules.send(c, 1, 3)
    assert r.error == "NONE"
    c = rules.expire_session(rules.pause(c, 1), 1)
    assert c.controller is None
    c = rules.elect(c, 2)
    assert c.controller_epoch == 2
    c, r = rules.send(c, 2, 3)
    assert (r.error, c.known_epoch(3)) == ("NONE", 2)
    c = rules.resume(c, 1)
    assert c.acting_epoch(1) == 1  # still believes it is controller: a zombie
    c, r = rules.send(c, 1, 3)
    assert (r.error, c.known_epoch(3)) == (STALE_CONTROLLER_EPOCH, 2)


def test_zombie_may_still_reach_a_broker_that_never_heard_of_the_new_epoch() -> None:
    # fencing is per receiver: broker 3 has not yet received anything from controller 2
    rules = ZkControllerRules()
    c = rules.elect(zk_cluster([1, 2, 3]), 1)
    c = rules.elect(rules.expire_session(rules.pause(c, 1), 1), 2)
    c, r = rules.send(rules.resume(c, 1), 1, 3)
    assert r.error == "NONE"


def test_zombie_resigns_when_it_notices_expiry() -> None:
    rules = ZkControllerRules()
    c = rules.elect(zk_cluster([1, 2, 3]), 1)
    c = rules.elect(rules.expire_session(rules.pause(c, 1), 1), 2)
    c = rules.notice_expiry(rules.resume(c, 1), 1)
    assert c.acting_epoch(1) is None
    with pytest.raises(InvalidTransition):
        rules.send(c, 1, 3)


def test_zk_readings_epoch_going_back_is_reported() -> None:
    readings = [
        ZkReading(at_ms=0, controller=1, controller_epoch=3),
        ZkReading(at_ms=10, controller=2, controller_epoch=2),
    ]
    assert [v.rule for v in check_zk_readings(readings)] == ["epoch-decreased"]


def test_zk_readings_two_controllers_in_one_epoch_is_reported() -> None:
    readings = [
        ZkReading(at_ms=0, controller=1, controller_epoch=3),
        ZkReading(at_ms=10, controller=None, controller_epoch=3),
        ZkReading(at_ms=20, controller=2, controller_epoch=3),
    ]
    assert [v.rule for v in check_zk_readings(readings)] == ["two-controllers-one-epoch"]


def test_zk_readings_of_a_clean_failover_pass() -> None:
    readings = [
        ZkReading(at_ms=0, controller=1, controller_epoch=1),
        ZkReading(at_ms=10, controller=None, controller_epoch=1),
        ZkReading(at_ms=20, controller=2, controller_epoch=2),
    ]
    assert check_zk_readings(readings) == []


# ---------------------------------------------------------------------------------- KRaft quorum


def _elect(rules: QuorumRules, q, node: int, voters: list[int]):  # type: ignore[no-untyped-def]
    q = rules.start_election(q, node)
    for v in voters:
        q = rules.request_vote(q, node, v)
    return rules.become_leader(q, node)


def test_majority_elects_one_leader() -> None:
    rules = QuorumRules()
    q = _elect(rules, quorum([1, 2, 3]), 1, [2])
    assert q.leaders() == {1: 1}
    assert q.elected == {(1, 1)}


def test_one_vote_per_epoch_prevents_a_second_leader() -> None:
    # 1 and 2 both run in epoch 1; 3 votes for 1 first; 2 cannot get a majority in epoch 1
    rules = QuorumRules()
    q = rules.start_election(rules.start_election(quorum([1, 2, 3]), 1), 2)
    q = rules.request_vote(q, 1, 3)
    q = rules.request_vote(q, 2, 3)
    q = rules.request_vote(q, 2, 1)
    q = rules.become_leader(q, 1)
    with pytest.raises(InvalidTransition):
        rules.become_leader(q, 2)


def test_resumed_old_leader_steps_down_on_higher_epoch() -> None:
    rules = QuorumRules()
    q = _elect(rules, quorum([1, 2, 3]), 1, [2, 3])
    q = rules.pause(q, 1)
    q = _elect(rules, q, 2, [3])
    assert q.leaders() == {1: 1, 2: 2}  # the paused node still believes it leads epoch 1
    q = rules.resume(q, 1)
    q = rules.observe_epoch(q, 1, 2, 2)
    assert q.leaders() == {2: 2}
    assert q.voter(1).epoch == 2 and q.voter(1).leader == 2


def test_lower_epoch_message_changes_nothing() -> None:
    rules = QuorumRules()
    q = _elect(rules, quorum([1, 2, 3]), 1, [2])
    q = rules.observe_epoch(q, 3, 1, 1)  # 3 follows 1 in epoch 1
    q = rules.start_election(q, 3)  # then times out: candidate in epoch 2
    assert q.voter(3).epoch == 2
    assert rules.observe_epoch(q, 3, 1, 1) == q


def test_candidate_learning_the_leader_of_its_epoch_follows_it() -> None:
    # QuorumState.transitionToFollower allows candidate -> follower in the same epoch
    rules = QuorumRules()
    q = _elect(rules, quorum([1, 2, 3]), 1, [2])
    q = rules.start_election(q, 3)  # 3 never heard of epoch 1: it runs in epoch 1 too
    q = rules.observe_epoch(q, 3, 1, 1)
    assert (q.voter(3).role, q.voter(3).leader) == ("follower", 1)


def test_paused_node_cannot_vote() -> None:
    rules = QuorumRules()
    q = rules.pause(rules.start_election(quorum([1, 2, 3]), 1), 2)
    with pytest.raises(InvalidTransition):
        rules.request_vote(q, 1, 2)


def test_quorum_observations_epoch_backwards() -> None:
    obs = [
        QuorumObservation(at_ms=0, node=1, epoch=4, leader=1),
        QuorumObservation(at_ms=5, node=1, epoch=3, leader=2),
    ]
    assert "epoch-decreased" in [v.rule for v in check_quorum_observations(obs)]


def test_quorum_observations_two_leaders_same_epoch() -> None:
    obs = [
        QuorumObservation(at_ms=0, node=1, epoch=4, leader=1),
        QuorumObservation(at_ms=5, node=2, epoch=4, leader=2),
    ]
    assert [v.rule for v in check_quorum_observations(obs)] == ["two-leaders-one-epoch"]


def test_quorum_observations_zombie_claim_in_old_epoch_is_fine() -> None:
    # the resumed old leader still claims epoch 4 while 2 leads epoch 5: different epochs
    obs = [
        QuorumObservation(at_ms=0, node=1, epoch=4, leader=1),
        QuorumObservation(at_ms=5, node=2, epoch=5, leader=2),
        QuorumObservation(at_ms=6, node=1, epoch=4, leader=1),
        QuorumObservation(at_ms=9, node=1, epoch=5, leader=2),
    ]
    assert check_quorum_observations(obs) == []


# ----------------------------------------------------------------------------- broker liveness

CFG = LivenessConfig(
    session_timeout_ms=3000, heartbeat_interval_ms=500, propagation_ms=500, unfence_ms=4000
)


def test_running_broker_is_unfenced() -> None:
    assert allowed_fenced([], 10_000, CFG) == {False}


def test_paused_broker_fenced_only_after_session_timeout() -> None:
    ev = [LivenessEvent(at_ms=1000, action="pause")]
    # last heartbeat >= 500; fencing cannot land before 500 + 3000 - early (50)
    assert allowed_fenced(ev, 3400, CFG) == {False}
    assert allowed_fenced(ev, 3500, CFG) == {False, True}
    # must be fenced by 1000 + 1.125 * 3000 + 500 = 4875
    assert allowed_fenced(ev, 4875, CFG) == {True}


def test_resumed_broker_unfenced_within_bound() -> None:
    ev = [LivenessEvent(at_ms=1000, action="pause"), LivenessEvent(at_ms=8000, action="resume")]
    assert allowed_fenced(ev, 7999, CFG) == {True}
    assert allowed_fenced(ev, 9000, CFG) == {False, True}
    assert allowed_fenced(ev, 12_000, CFG) == {False}


def test_short_pause_cannot_fence() -> None:
    # back after 1 s: it heartbeats again within 500 ms, long before the 3 s session lapses
    ev = [LivenessEvent(at_ms=1000, action="pause"), LivenessEvent(at_ms=2000, action="resume")]
    assert all(allowed_fenced(ev, t, CFG) == {False} for t in range(0, 10_000, 250))


def test_heartbeat_slack_widens_the_early_side() -> None:
    # heartbeats 500 ms apart plus up to 1 s of round trip: the last one may be 1.5 s old
    slow = LivenessConfig(
        session_timeout_ms=3000,
        heartbeat_interval_ms=500,
        heartbeat_slack_ms=1000,
        propagation_ms=500,
        unfence_ms=4000,
    )
    ev = [LivenessEvent(at_ms=1000, action="pause")]
    assert allowed_fenced(ev, 2400, slow) == {False}
    assert allowed_fenced(ev, 2500, slow) == {False, True}


def test_controller_failover_restarts_the_session_clock() -> None:
    ev = [
        LivenessEvent(at_ms=1000, action="pause"),
        LivenessEvent(at_ms=3000, action="controller"),
    ]
    # without the failover it must be fenced at 4875; the new controller counts from 3000
    assert allowed_fenced(ev, 5000, CFG) == {False, True}
    assert allowed_fenced(ev, 3000 + 3375 + 500, CFG) == {True}
