"""librdkafka's mock cluster's switches (``conformance/brokers/implementations.py``
``SWITCHES["librdkafka-mock"]``): each one off changes what the model allows in one place, and
Kafka's rules (each on) are unchanged. One short timeline per switch, under both rule families."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kgc.model import KAFKA_3_9, KAFKA_4_X
from kgc.model.profiles import Profile
from model_harness import Sim, commit, fetch, heartbeat, join, leave, sync

PROFILES = [KAFKA_4_X, KAFKA_3_9]


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
@pytest.mark.parametrize("at_0", [True, False])
def test_a_new_groups_first_generation(profile: Profile, at_0: bool) -> None:
    # Kafka makes a group at generation 0 and its first join phase completes generation 1; the
    # mock makes it at 1 and answers generation 2.
    sim = Sim(profile=replace(profile, new_group_at_generation_0=at_0))
    r = sim.send(join("c1", version=3), at=0)
    sim.at(0)
    assert sim.take(r).generation_id == (1 if at_0 else 2)


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
@pytest.mark.parametrize("at_0", [True, False])
@pytest.mark.parametrize("extended", [True, False])
def test_a_second_member_during_the_initial_delay(
    profile: Profile, at_0: bool, extended: bool
) -> None:
    # A 3 s initial delay, a 10 s rebalance timeout, c2 joining 1 s after c1: Kafka extends the
    # delay by 3 s (answered at 6 s, whatever generation the group was made at); one fixed delay
    # answers at 3 s.
    switched = replace(profile, new_group_at_generation_0=at_0, initial_delay_extended=extended)
    sim = Sim(profile=switched, group_initial_rebalance_delay_ms=3000)
    r1 = sim.send(join("c1", version=3, rebalance=10_000), at=0)
    r2 = sim.send(join("c2", version=3, rebalance=10_000), at=1000)
    sim.at(3000)
    if extended:
        assert sim.answer(r1) is None
    else:
        assert sim.take(r1).error == "NONE"
    sim.at(6000)
    assert sim.take(r2).error == "NONE"


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
@pytest.mark.parametrize("committed", [True, False])
def test_fetched_leader_epoch(profile: Profile, committed: bool) -> None:
    # A simple commit with no leader epoch (-1), then OffsetFetch v6 of it and of a partition with
    # nothing committed: Kafka answers -1 for both; the mock answers the partitions' epoch, 0.
    sim = Sim(profile=replace(profile, fetch_answers_committed_leader_epoch=committed))
    sim.take(sim.send(commit("c1", "", -1, (("t", 0, 5),), version=7), at=0))
    got = sim.take(sim.send(fetch("c1", ("t", 0), ("t", 1), version=6), at=10))
    assert [(p.offset, p.leader_epoch) for p in got.partitions] == (
        [(5, -1), (-1, -1)] if committed else [(5, 0), (-1, 0)]
    )
    old = sim.take(sim.send(fetch("c1", ("t", 0), version=4), at=20))  # no epoch before v5
    assert old.partitions[0].leader_epoch is None


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
@pytest.mark.parametrize("handshake", [True, False])
def test_a_new_dynamic_member_v5(profile: Profile, handshake: bool) -> None:
    # KIP-394: Kafka answers MEMBER_ID_REQUIRED with the new id; the mock adds the member at once.
    sim = Sim(profile=replace(profile, member_id_required_handshake=handshake))
    r = sim.send(join("c1", version=5), at=0)
    sim.at(0)
    got = sim.take(r)
    assert got.error == ("MEMBER_ID_REQUIRED" if handshake else "NONE")
    assert got.member_id == "c1-1" and (handshake or got.leader == "c1-1")


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
@pytest.mark.parametrize("membership", [True, False])
@pytest.mark.parametrize("fetching", [True, False])
def test_a_group_that_does_not_exist(profile: Profile, membership: bool, fetching: bool) -> None:
    # Heartbeat and LeaveGroup naming a group nobody made: Kafka answers UNKNOWN_MEMBER_ID, the
    # mock and kfake GROUP_ID_NOT_FOUND (``unknown_group_not_found``); OffsetFetch of it: Kafka
    # and the mock answer the partition with nothing committed, kfake GROUP_ID_NOT_FOUND
    # (``fetch_unknown_group_not_found``). The two switches are independent.
    switched = replace(
        profile, unknown_group_not_found=membership, fetch_unknown_group_not_found=fetching
    )
    sim = Sim(profile=switched)
    missing = "GROUP_ID_NOT_FOUND" if membership else "UNKNOWN_MEMBER_ID"
    assert sim.take(sim.send(heartbeat("c1", "stranger", 1, version=3), at=0)).error == missing
    assert sim.take(sim.send(leave("c1", ("stranger", None), version=0), at=10)).error == missing
    got = sim.take(sim.send(fetch("c1", ("t", 0), version=6), at=20))
    if fetching:
        assert got.error == "GROUP_ID_NOT_FOUND" and not got.partitions
    else:
        assert got.error == "NONE" and [p.offset for p in got.partitions] == [-1]


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
@pytest.mark.parametrize("makes", [True, False])
def test_a_commit_to_a_group_that_does_not_exist(profile: Profile, makes: bool) -> None:
    # A commit at generation 5 to a missing group: Kafka refuses it ILLEGAL_GENERATION; a simple
    # commit then makes an Empty group, whose SyncGroup is UNKNOWN_MEMBER_ID. The mock stores
    # both and makes no group: the SyncGroup finds none (GROUP_ID_NOT_FOUND, its other switch).
    switched = replace(profile, commit_makes_group=makes, unknown_group_not_found=not makes)
    sim = Sim(profile=switched)
    first = sim.take(sim.send(commit("c1", "m", 5, (("t", 0, 7),), version=7), at=0))
    assert [p.error for p in first.partitions] == ["NONE" if not makes else "ILLEGAL_GENERATION"]
    sim.take(sim.send(commit("c1", "", -1, (("t", 1, 3),), version=7), at=10))
    got = sim.take(sim.send(fetch("c1", ("t", 0), ("t", 1), version=6), at=20))
    assert [p.offset for p in got.partitions] == ([-1, 3] if makes else [7, 3])
    answer = sim.take(sim.send(sync("c1", "m", 0, version=3), at=30))
    assert answer.error == ("UNKNOWN_MEMBER_ID" if makes else "GROUP_ID_NOT_FOUND")


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
@pytest.mark.parametrize("simple", [True, False])
def test_a_simple_commit_to_a_group_that_exists(profile: Profile, simple: bool) -> None:
    # c1 joins, syncs and commits as a member (both ways), then leaves; a simple commit
    # (generation -1, no member id) to the Empty group it leaves: Kafka stores it; the mock looks
    # for a member first, finds none, and refuses it UNKNOWN_MEMBER_ID, as it refuses the member
    # it just was (both ways: no member, no commit).
    sim = Sim(profile=replace(profile, simple_commit_to_existing_group=simple))
    r = sim.send(join("c1", version=3), at=0)
    sim.at(0)
    joined = sim.take(r)
    member, generation = joined.member_id, joined.generation_id
    sim.take(sim.send(sync("c1", member, generation, ((member, "a"),)), at=10))
    own = sim.take(sim.send(commit("c1", member, generation, (("t", 0, 4),)), at=20))
    assert [p.error for p in own.partitions] == ["NONE"]
    assert sim.take(sim.send(leave("c1", (member, None)), at=30)).error == "NONE"
    assert sim.only.state == "Empty"
    simple_commit = sim.take(sim.send(commit("c1", "", -1, (("t", 0, 9),)), at=40))
    assert [p.error for p in simple_commit.partitions] == [
        "NONE" if simple else "UNKNOWN_MEMBER_ID"
    ]
    gone = sim.take(sim.send(commit("c1", member, generation, (("t", 0, 11),)), at=50))
    assert [p.error for p in gone.partitions] == ["UNKNOWN_MEMBER_ID"]
    got = sim.take(sim.send(fetch("c1", ("t", 0), version=6), at=60))
    assert [p.offset for p in got.partitions] == [9 if simple else 4]


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
@pytest.mark.parametrize("fenced", [True, False])
def test_a_static_instance_named_with_another_member_id(profile: Profile, fenced: bool) -> None:
    # c2 joins as instance c2-instance (generation 1, or the mock's 2); a Heartbeat and a
    # SyncGroup naming that instance with member id "stranger": Kafka fences them
    # (FENCED_INSTANCE_ID); the mock looks the member id up alone (UNKNOWN_MEMBER_ID). Its own
    # member id with that instance passes either way. A JoinGroup still checks the instance.
    sim = Sim(profile=replace(profile, instance_id_fenced=fenced))
    r = sim.send(join("c2", version=5, instance="c2-instance"), at=0)
    sim.at(1)
    joined = sim.take(r)
    member, generation = joined.member_id, joined.generation_id
    error = "FENCED_INSTANCE_ID" if fenced else "UNKNOWN_MEMBER_ID"
    hb = heartbeat("c2", "stranger", generation, version=3, instance="c2-instance")
    assert sim.take(sim.send(hb, at=10)).error == error
    stale = sync("c2", "stranger", generation, version=3, instance="c2-instance")
    assert sim.take(sim.send(stale, at=20)).error == error
    own = sim.send(sync("c2", member, generation, ((member, "a"),), instance="c2-instance"), at=30)
    assert sim.take(own).error == "NONE"
