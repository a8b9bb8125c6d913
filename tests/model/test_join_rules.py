"""JoinGroup rules (model/classic/join.py, model/classic/rebalance.py): one short timeline per
rule."""

from __future__ import annotations

import pytest
from kgc.model import KAFKA_3_9, KAFKA_4_X
from kgc.model.commands import JoinedMember, JoinGroupResponse, Protocol
from model_harness import RANGE, Sim, describe, heartbeat, join, leave, stable_group, sync

PROFILES = [KAFKA_4_X, KAFKA_3_9]


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_member_id_required_from_v4_then_rejoin(profile) -> None:
    # KIP-394: a v4+ dynamic member with no id gets MEMBER_ID_REQUIRED and its id (c1-1), and is
    # only a *pending* member until it rejoins with that id.
    sim = Sim(profile=profile)
    r1 = sim.send(join("c1", version=4), at=0)
    assert sim.take(r1) == JoinGroupResponse(error="MEMBER_ID_REQUIRED", member_id="c1-1")
    assert sim.members() == [] and [p.member_id for p in sim.only.pending_members] == ["c1-1"]
    r2 = sim.send(join("c1", "c1-1", version=4), at=5)
    sim.at(5)  # initial delay 0: the join phase completes
    resp = sim.take(r2)
    assert resp.error == "NONE" and resp.generation_id == 1 and resp.leader == "c1-1"


def test_v3_new_member_is_added_at_once() -> None:
    sim = Sim()
    r = sim.send(join("c1", version=3), at=0)
    assert sim.members() == ["c1-1"]  # no handshake before v4
    sim.at(0)
    assert sim.take(r).member_id == "c1-1"


@pytest.mark.parametrize(
    ("session", "ok"), [(499, False), (500, True), (1_800_000, True), (1_800_001, False)]
)
def test_invalid_session_timeout_bounds(session: int, ok: bool) -> None:
    # group.min.session.timeout.ms = 500, group.max.session.timeout.ms = 1800000; out of range is
    # refused before the group is created.
    sim = Sim()
    r = sim.send(join("c1", session=session, version=4), at=0)
    resp = sim.take(r)
    if ok:
        assert resp.error == "MEMBER_ID_REQUIRED"
    else:
        assert resp.error == "INVALID_SESSION_TIMEOUT"
        assert sim.take(sim.send(describe("c9"))).group_state == "Dead"  # not created


def test_unknown_member_id_joining_a_missing_group() -> None:
    sim = Sim()
    resp = sim.take(sim.send(join("c1", "c7-3"), at=0))
    assert resp == JoinGroupResponse(error="UNKNOWN_MEMBER_ID", member_id="c7-3")
    assert sim.only.exists is False


def test_inconsistent_group_protocol() -> None:
    sim = Sim()
    # An empty protocol type or no protocols cannot start a group (the failed join still
    # creates it).
    assert (
        sim.take(sim.send(join("c1", protocol_type=""), at=0)).error
        == "INCONSISTENT_GROUP_PROTOCOL"
    )
    assert sim.take(sim.send(join("c1", protocols=()))).error == "INCONSISTENT_GROUP_PROTOCOL"
    # (a read may not see it until an answer shows its record committed: describe.py rule 3)
    described = sim.send(describe("c9"))
    assert {r.group_state for r in sim.answers(described)} == {"Empty", "Dead"}
    sim.observe(described, next(r for r in sim.answers(described) if r.group_state == "Empty"))
    stable_group(sim, "c2", start=10)
    # Once members exist: the protocol type must match, and one protocol must be common to all.
    other = (Protocol(name="roundrobin"),)
    assert (
        sim.take(sim.send(join("c3", version=3, protocols=other))).error
        == "INCONSISTENT_GROUP_PROTOCOL"
    )
    assert (
        sim.take(sim.send(join("c3", version=3, protocol_type="connect"))).error
        == "INCONSISTENT_GROUP_PROTOCOL"
    )


def test_group_max_size_reached() -> None:
    # group.max.size = 1: a second new member is refused with an empty member id.
    sim = Sim(group_max_size=1)
    stable_group(sim, "c1")
    resp = sim.take(sim.send(join("c2", version=3)))
    assert resp == JoinGroupResponse(error="GROUP_MAX_SIZE_REACHED", member_id="")
    assert sim.members() == ["c1-1"] and sim.only.state == "Stable"


def test_generation_bumps_on_each_completed_join_phase_and_first_member_leads() -> None:
    sim = Sim()
    gen = stable_group(sim, "c1", "c2")
    assert gen == 1 and sim.only.leader == ("c1-1",)
    # The leader rejoining in Stable forces a rebalance; the follower rejoins too -> generation 2.
    r1 = sim.send(join("c1", "c1-1", version=3), at=100)
    r2 = sim.send(join("c2", "c2-1", version=3), at=110)
    a1, a2 = sim.take(r1), sim.take(r2)
    assert a1.generation_id == a2.generation_id == 2
    assert a1.leader == a2.leader == "c1-1"
    assert [m.member_id for m in a1.members] == ["c1-1", "c2-1"] and a2.members == ()


def test_leader_rechosen_among_rejoined_members_when_leader_leaves() -> None:
    # c1 leads; it leaves in Stable; c2 and c3 rejoin. Kafka picks the next leader by HashMap
    # order of random ids, so the model allows both and the first JoinGroup answer decides.
    sim = Sim()
    stable_group(sim, "c1", "c2", "c3")
    sim.take(sim.send(leave("c1", ("c1-1", None)), at=100))
    assert sim.only.state == "PreparingRebalance" and sim.only.leader == ("c2-1", "c3-1")
    r2 = sim.send(join("c2", "c2-1", version=3), at=110)
    r3 = sim.send(join("c3", "c3-1", version=3), at=120)
    assert len(sim.states) == 2
    assert {a.leader for a in sim.answers(r2)} == {"c2-1", "c3-1"}
    leader_view = next(a for a in sim.answers(r3) if a.leader == "c3-1")
    sim.observe(r3, leader_view)
    assert sim.only.leader == ("c3-1",) and sim.take(r2).leader == "c3-1"


def test_protocol_chosen_by_vote() -> None:
    # Common protocols {A, B}; votes: c1 -> B (its first), c2 -> B, c3 -> A: B wins 2-1.
    a, b = Protocol(name="A"), Protocol(name="B")
    sim = Sim()
    rids = [
        sim.send(join("c1", version=3, protocols=(b, a)), at=0),
        sim.send(join("c2", version=3, protocols=(b, a))),
        sim.send(join("c3", version=3, protocols=(a, b))),
    ]
    sim.at(1)
    assert {sim.take(r).protocol_name for r in rids} == {"B"}


def test_tied_protocol_vote_allows_either() -> None:
    a, b = Protocol(name="A"), Protocol(name="B")
    sim = Sim()
    r1 = sim.send(join("c1", version=3, protocols=(a, b)), at=0)
    sim.send(join("c2", version=3, protocols=(b, a)))
    sim.at(1)
    assert {x.protocol_name for x in sim.answers(r1)} == {"A", "B"}


def test_each_member_gets_its_own_assignment_missing_ones_empty() -> None:
    sim = Sim()
    rids = [sim.send(join(c, version=3)) for c in ("c1", "c2", "c3")]  # all at t=0
    sim.at(1)
    for r in rids:
        sim.take(r)
    s2 = sim.send(sync("c2", "c2-1", 1))
    s3 = sim.send(sync("c3", "c3-1", 1))
    assert sim.answer(s2) is None  # followers wait for the leader
    s1 = sim.send(sync("c1", "c1-1", 1, [("c1-1", "p0"), ("c2-1", "p1")]))  # c3 left out
    assert (sim.take(s1).assignment, sim.take(s2).assignment, sim.take(s3).assignment) == (
        "p0",
        "p1",
        "",
    )


def test_follower_rejoin_in_stable_with_same_metadata_gets_current_generation() -> None:
    sim = Sim()
    stable_group(sim, "c1", "c2")
    resp = sim.take(sim.send(join("c2", "c2-1", version=3), at=50))
    assert resp == JoinGroupResponse(
        error="NONE", generation_id=1, protocol_name="range", leader="c1-1", member_id="c2-1"
    )
    assert sim.only.state == "Stable"


def test_follower_rejoin_with_new_metadata_rebalances() -> None:
    sim = Sim()
    stable_group(sim, "c1", "c2")
    sim.send(
        join("c2", "c2-1", version=3, protocols=(Protocol(name="range", metadata="new"),)), at=50
    )
    assert sim.only.state == "PreparingRebalance"


def test_rejoin_in_completing_rebalance_same_metadata_answers_with_members_for_leader() -> None:
    sim = Sim()
    r1 = sim.send(join("c1", version=3), at=0)
    r2 = sim.send(join("c2", version=3))
    sim.at(1)
    sim.take(r1), sim.take(r2)
    assert sim.only.state == "CompletingRebalance"
    again = sim.take(sim.send(join("c1", "c1-1", version=3)))
    assert again.generation_id == 1 and [m.member_id for m in again.members] == ["c1-1", "c2-1"]
    assert sim.only.state == "CompletingRebalance"


def test_known_member_id_joining_an_empty_group_is_unknown() -> None:
    sim = Sim()
    stable_group(sim, "c1")
    sim.take(sim.send(leave("c1", ("c1-1", None)), at=10))
    assert sim.only.state == "Empty" and sim.only.generation_id == 2  # emptied: generation bumped
    assert sim.take(sim.send(join("c1", "c1-1"))).error == "UNKNOWN_MEMBER_ID"


def test_second_parked_join_for_same_member_orphans_the_first() -> None:
    # Both versions overwrite the parked callback: the first request is never answered.
    sim = Sim()
    stable_group(sim, "c1", "c2")
    first = sim.send(join("c1", "c1-1", version=3), at=10)
    second = sim.send(join("c9", "c1-1", version=3), at=11)  # another connection, same member id
    sim.take(sim.send(join("c2", "c2-1", version=3), at=12))
    assert sim.answer(first) is None
    assert sim.take(second).generation_id == 2


def test_pending_member_blocks_join_completion_until_it_rejoins_or_expires() -> None:
    sim = Sim()
    stable_group(sim, "c1")
    sim.take(sim.send(join("c2", version=4, session=2000), at=100))  # c2-1 pending
    rj = sim.send(join("c1", "c1-1", version=4), at=110)  # leader rejoins: rebalance
    assert sim.answer(rj) is None  # all members joined, but a pending member is outstanding
    sim.at(2099)
    assert sim.answer(rj) is None
    sim.at(2100)  # c2-1's session timeout: it is dropped and the join phase completes
    assert sim.take(rj).generation_id == 2 and sim.members() == ["c1-1"]


class TestStaticMembership:
    """KIP-345: group.instance.id (JoinGroup v5+)."""

    def test_static_rejoin_with_unknown_id_replaces_and_fences_old_id(self) -> None:
        sim = Sim()
        r1 = sim.send(join("c1", instance="i1"), at=0)  # static: no MEMBER_ID_REQUIRED
        r2 = sim.send(join("c2", instance="i2"))
        sim.at(1)
        sim.take(r1), sim.take(r2)
        s1 = sim.send(sync("c1", "c1-1", 1, [("c1-1", "x"), ("c2-1", "y")], instance="i1"))
        s2 = sim.send(sync("c2", "c2-1", 1, instance="i2"))
        sim.take(s1), sim.take(s2)
        # i2 restarts (new connection c3, no member id): new id c3-1, same instance, no rebalance.
        resp = sim.take(sim.send(join("c3", instance="i2"), at=50))
        assert resp == JoinGroupResponse(
            error="NONE", generation_id=1, protocol_name="range", leader="c1-1", member_id="c3-1"
        )
        assert sim.only.state == "Stable" and sim.members() == ["c1-1", "c3-1"]
        assert sim.only.member("c3-1").assignment == "y"  # the assignment moves with the instance
        # The old id is fenced; an unknown instance is UNKNOWN_MEMBER_ID.
        assert (
            sim.take(sim.send(heartbeat("c2", "c2-1", 1, instance="i2"))).error
            == "FENCED_INSTANCE_ID"
        )
        assert (
            sim.take(sim.send(heartbeat("c2", "c2-1", 1, instance="i9"))).error
            == "UNKNOWN_MEMBER_ID"
        )

    def test_static_leader_replaced_before_v9_is_told_the_old_leader_id(self) -> None:
        # Before JoinGroup v9 the answer names the previous leader id so the restarted leader does
        # not run a useless assignment; v9+ names the new id and lists the members (SkipAssignment).
        for version, leader, listed in ((5, "c1-1", ()), (9, "c3-1", ("c2-1", "c3-1"))):
            sim = Sim()
            r1 = sim.send(join("c1", instance="i1", version=version), at=0)
            r2 = sim.send(join("c2", instance="i2", version=version))
            sim.at(1)
            sim.take(r1), sim.take(r2)
            sim.take(sim.send(sync("c1", "c1-1", 1, instance="i1")))
            sim.take(sim.send(sync("c2", "c2-1", 1, instance="i2")))
            resp = sim.take(sim.send(join("c3", instance="i1", version=version), at=10))
            assert resp.leader == leader
            assert tuple(m.member_id for m in resp.members) == listed
            assert sim.only.leader == ("c3-1",)

    def test_static_replacement_fences_a_parked_join(self) -> None:
        sim = Sim()
        stable_static = sim.send(join("c1", instance="i1"), at=0)
        sim.send(join("c2", instance="i2"))
        sim.at(1)
        sim.take(stable_static)
        # c2-1's JoinGroup answer is still unread; the instance restarts and joins as c3.
        sim.send(join("c3", instance="i2"), at=5)
        # The generation-1 answer for c2-1 was emitted before; now a CompletingRebalance group
        # gets a new static join: it rebalances.
        assert sim.only.state == "PreparingRebalance"
        assert sim.only.member("c3-1") is not None and sim.only.member("c2-1") is None

    def test_static_member_not_rejoined_is_kept_at_join_completion(self) -> None:
        # Dynamic members that miss the join phase are removed; static ones stay (and owe a sync).
        sim = Sim()
        r1 = sim.send(join("c1", version=5), at=0)
        sim.take(r1)  # MEMBER_ID_REQUIRED
        a = sim.send(join("c1", "c1-1"), at=1)
        b = sim.send(join("c2", instance="i2", session=100_000))  # outlives the rebalance
        sim.at(2)
        sim.take(a), sim.take(b)
        sim.take(sim.send(sync("c1", "c1-1", 1)))
        sim.take(sim.send(sync("c2", "c2-1", 1, instance="i2")))
        rj = sim.send(join("c1", "c1-1"), at=100)  # leader rejoins; i2 never does
        sim.at(100 + 60_000)  # rebalance timeout
        resp = sim.take(rj)
        assert resp.generation_id == 2 and [m.member_id for m in resp.members] == ["c1-1", "c2-1"]
        assert sim.only.pending_sync == ("c1-1", "c2-1")


def test_leader_answer_lists_instance_ids_from_v5_only() -> None:
    sim = Sim()
    r = sim.send(join("c1", instance="i1", version=5), at=0)
    sim.at(1)
    assert sim.take(r).members == (
        JoinedMember(member_id="c1-1", group_instance_id="i1", metadata="m"),
    )
    assert RANGE[0].metadata == "m"
