"""Where Kafka 4.x (Java group coordinator) and 3.9 (Scala coordinator) differ: one timeline per
difference, run under both profiles. Each test names the source deciding it (model/profiles.py).
"""

from __future__ import annotations

import pytest
from kgc.model import KAFKA_3_9, KAFKA_4_X, PROFILES, profile_for_version
from kgc.model.commands import Protocol
from kgc.model.profiles import PROFILE_NAMES
from model_harness import Sim, commit, describe, join, leave, stable_group, sync


def test_profile_for_version() -> None:
    # one profile per release line, named after it; a release newer than the newest line is
    # judged by the newest line's rules; a line kgc has no profile for is refused
    assert profile_for_version("4.3.1") is KAFKA_4_X
    assert profile_for_version("4.3.0") is KAFKA_4_X
    assert profile_for_version("3.9.2") is KAFKA_3_9
    assert profile_for_version("4.0.0").name == "kafka-4.0"
    assert profile_for_version("3.8.1").name == "kafka-3.8"
    assert profile_for_version("1.0.0").name == "kafka-1.0"
    assert profile_for_version("9.1.0").name == PROFILE_NAMES[-1]
    assert PROFILES["kafka-4.x"] is KAFKA_4_X  # the name traces carried before
    with pytest.raises(ValueError, match="no model profile"):
        profile_for_version("2.2.2")


@pytest.mark.parametrize(("profile", "alive"), [(KAFKA_4_X, False), (KAFKA_3_9, True)])
def test_sync_in_stable_restarts_the_session_only_in_3_9(profile, alive) -> None:
    # 3.9 doSyncGroup (Stable) calls completeAndScheduleNextHeartbeatExpiration; 4.x
    # classicGroupSyncToClassicGroup (STABLE) does not. Probed on real brokers: a member whose only
    # activity was a Stable SyncGroup 0.7 s into a 1 s session was gone at 1.3 s on 4.3.1 and
    # still there on 3.9.2.
    sim = Sim(profile=profile)
    stable_group(sim, "c1", session=1_000)  # Stable at t=0, deadline 1 000
    sim.take(sim.send(sync("c1", "c1-1", 1), at=700))
    sim.at(1_300)
    assert (sim.members() == ["c1-1"]) is alive


@pytest.mark.parametrize(("profile", "extended"), [(KAFKA_4_X, True), (KAFKA_3_9, False)])
def test_initial_delay_extension_after_an_earlier_generation(profile, extended) -> None:
    # The group is Empty at generation 2. c1 joins (initial rebalance, delay 100), c2 joins during
    # the delay. 4.x marks newMemberAdded whenever the previous state was Empty and extends the
    # delay by another 100 ms; 3.9 only at generation 0, so it completes at t=1100.
    sim = Sim(profile=profile, group_initial_rebalance_delay_ms=100)
    r = sim.send(join("c9", version=3), at=0)
    sim.at(100)
    sim.take(r)
    sim.take(sim.send(leave("c9", ("c9-1", None))))
    assert (sim.only.state, sim.only.generation_id) == ("Empty", 2)
    r1 = sim.send(join("c1", version=3), at=1_000)
    sim.send(join("c2", version=3), at=1_050)
    sim.at(1_100)
    assert (sim.answer(r1) is None) is extended
    sim.at(1_200)
    assert sim.take(r1).generation_id == 3


@pytest.mark.parametrize(("profile", "early"), [(KAFKA_4_X, True), (KAFKA_3_9, False)])
def test_pending_member_expiry_during_initial_delay(profile, early) -> None:
    # Initial delay 3 s. c1 joins (v3, added); c2 gets MEMBER_ID_REQUIRED and never comes back.
    # At 500 ms c2's pending id expires: 4.x removePendingMemberAndUpdateClassicGroup completes the
    # join phase at once (everyone left has joined); 3.9 waits for the InitialDelayedJoin (3 s).
    sim = Sim(profile=profile, group_initial_rebalance_delay_ms=3_000)
    r1 = sim.send(join("c1", version=3), at=0)
    sim.take(sim.send(join("c2", version=4, session=500)))
    sim.at(500)
    assert (sim.answer(r1) is not None) is early
    sim.at(3_000)
    assert sim.take(r1).generation_id == 1


@pytest.mark.parametrize(("profile", "assignment"), [(KAFKA_4_X, "a-c1-1"), (KAFKA_3_9, "")])
def test_describe_outside_stable_shows_assignment_only_in_4x(profile, assignment) -> None:
    # 4.x ClassicGroupMember.describeNoMetadata keeps the assignment; 3.9 summaryNoMetadata drops
    # it. Probed: 4.3.1 listed the old assignment in PreparingRebalance, 3.9.2 an empty one.
    sim = Sim(profile=profile)
    stable_group(sim, "c1")
    sim.send(join("c2", version=3), at=10)
    d = sim.take(sim.send(describe("c3")))
    assert d.group_state == "PreparingRebalance" and d.protocol_data == ""
    assert [(m.member_id, m.assignment) for m in d.members] == [("c1-1", assignment), ("c2-1", "")]


def test_describe_v6_exists_only_in_4x() -> None:
    # DescribeGroups v6 (GROUP_ID_NOT_FOUND for a missing group) is not in 3.9's version range.
    sim = Sim(profile=KAFKA_3_9)
    with pytest.raises(ValueError, match="DescribeGroups v6 is not accepted by kafka-3.9"):
        sim.send(describe("c1", version=6))


def test_offset_commit_version_ranges() -> None:
    # 4.x removed OffsetCommit v0-1 (KIP-896); 3.9's v0 is ZooKeeper storage, outside the model.
    with pytest.raises(ValueError, match="v1 is not accepted by kafka-4.3"):
        Sim(profile=KAFKA_4_X).send(commit("c1", "", -1, version=1))
    assert Sim(profile=KAFKA_3_9).send(commit("c1", "", -1, version=1)) == 1
    sim = Sim(profile=KAFKA_3_9)
    # v9 to a missing group with a generation: 3.9 keeps ILLEGAL_GENERATION.
    assert (
        sim.take(sim.send(commit("c1", "c1-1", 3, version=9))).partitions[0].error
        == "ILLEGAL_GENERATION"
    )


@pytest.mark.parametrize(("profile", "completes"), [(KAFKA_4_X, False), (KAFKA_3_9, True)])
def test_group_max_size_rejection_rechecks_join_completion_only_in_3_9(profile, completes) -> None:
    # group.max.size = 2. c1, c2 Stable; c1 rejoins, then c3 joins (allowed: PreparingRebalance
    # counts waiting members, 1 < 2); c2 rejoining finds 2 waiting: refused and *removed*. Now
    # everyone left has joined: 3.9 handleJoinGroup re-checks the purgatory and completes; 4.x
    # only removes c2 and completes at the rebalance timeout.
    sim = Sim(profile=profile, group_max_size=2)
    stable_group(sim, "c1", "c2")
    r1 = sim.send(join("c1", "c1-1", version=3), at=10)  # the leader rejoins: PreparingRebalance
    r3 = sim.send(join("c3", version=3), at=20)  # 1 waiting < 2: accepted (3 members now)
    assert (
        sim.take(sim.send(join("c2", "c2-1", version=3), at=30)).error == "GROUP_MAX_SIZE_REACHED"
    )
    assert sim.members() == ["c1-1", "c3-1"]
    assert (sim.answer(r1) is not None) is completes
    sim.at(10 + 60_000)
    assert sim.take(r1).generation_id == sim.take(r3).generation_id == 2


@pytest.mark.parametrize(
    ("profile", "error"),
    [(KAFKA_4_X, "REBALANCE_IN_PROGRESS"), (KAFKA_3_9, "INCONSISTENT_GROUP_PROTOCOL")],
)
def test_sync_naming_a_protocol_before_any_is_selected(profile, error) -> None:
    # During the first join phase the group has no protocol. A v5 SyncGroup naming one: 3.9
    # validateSyncGroup compares with the missing name (inconsistent); 4.x ignores a null group
    # protocol and reaches the state check.
    sim = Sim(profile=profile, group_initial_rebalance_delay_ms=1_000)
    sim.send(join("c1", version=3), at=0)
    s = sync("c2", "c1-1", 0, version=5, protocol_type="consumer", protocol_name="range")
    assert sim.take(sim.send(s)).error == error


@pytest.mark.parametrize(("profile", "deadline"), [(KAFKA_4_X, 60_010), (KAFKA_3_9, 100_010)])
def test_multi_member_leave_rebalance_timeout(profile, deadline) -> None:
    # c1 and c2 (60 s rebalance timeouts) and c3 (100 s) are Stable; one LeaveGroup removes c2
    # and c3. 3.9 handleLeaveGroup rebalances right after removing c2, while c3 is still a member;
    # 4.x classicGroupLeaveToClassicGroup removes both, then rebalances once.
    sim = Sim(profile=profile)
    sim.at(0)
    rids = [
        sim.send(join("c1", version=3, rebalance=60_000)),
        sim.send(join("c2", version=3, rebalance=60_000)),
        sim.send(join("c3", version=3, rebalance=100_000)),
    ]
    sim.at(1)
    for r in rids:
        sim.take(r)
    for c in ("c1", "c2", "c3"):
        sim.send(sync(c, f"{c}-1", 1))
    assert sim.only.state == "Stable"
    sim.take(sim.send(leave("admin", ("c2-1", None), ("c3-1", None)), at=10))
    # 3.9: removing c2 starts the rebalance while c3 (100 s) is still there -> deadline 100 010;
    # 4.x: c2 and c3 are both gone when the rebalance starts -> c1's 60 s -> 60 010.
    assert sim.only.join_timer is not None and sim.only.join_timer.deadline_ms == deadline


def test_inconsistent_protocol_for_a_single_member_changing_protocols() -> None:
    # Both versions: supportsProtocols counts the joining member's *current* protocols, so even the
    # only member of a group cannot switch to a protocol nobody supports yet.
    for profile in (KAFKA_4_X, KAFKA_3_9):
        sim = Sim(profile=profile)
        stable_group(sim, "c1")
        r = sim.send(join("c1", "c1-1", version=3, protocols=(Protocol(name="sticky"),)))
        assert sim.take(r).error == "INCONSISTENT_GROUP_PROTOCOL"


def test_config_round_trips_through_json() -> None:
    import json

    from kgc.model.profiles import GroupConfig, config_from_json, config_to_json

    c = GroupConfig(
        profile=KAFKA_3_9, group_min_session_timeout_ms=500, topics=(("t", 3),), node_ids=(1,)
    )
    assert config_from_json(json.loads(json.dumps(config_to_json(c)))) == c
    with pytest.raises(ValueError, match="unknown profile"):
        config_from_json({"profile": "kafka-2.2"})
    with pytest.raises(ValueError, match="unknown field"):
        config_from_json({"group_min_session_ms": 1})
