"""librdkafka's mock cluster's switches (``conformance/brokers/implementations.py``
``SWITCHES["librdkafka-mock"]``): each one off changes what the model allows in one place, and
Kafka's rules (each on) are unchanged. One short timeline per switch, under both rule families."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kgc.model import KAFKA_3_9, KAFKA_4_X
from kgc.model.profiles import Profile
from model_harness import Sim, commit, fetch, join

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
