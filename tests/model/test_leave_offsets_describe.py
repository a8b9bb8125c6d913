"""LeaveGroup, OffsetCommit/OffsetFetch and DescribeGroups rules (model/classic/leave.py,
offsets.py, describe.py)."""

from __future__ import annotations

from kgc.model.commands import (
    DescribedMember,
    DescribeGroupsResponse,
    FetchedOffset,
    FindCoordinatorResponse,
    LeaveGroupResponse,
    MemberResult,
    OffsetCommitResponse,
    PartitionError,
    Protocol,
)
from kgc.model.profiles import KAFKA_3_9
from model_harness import Sim, commit, describe, fetch, find, heartbeat, join, leave, stable_group

# ------------------------------------------------------------------------------------- leave


def test_leave_of_a_stranger_is_unknown_member_id_per_member() -> None:
    sim = Sim()
    stable_group(sim, "c1")
    resp = sim.take(sim.send(leave("c9", ("c9-1", None), ("c1-1", None))))
    assert resp == LeaveGroupResponse(
        error="NONE",
        members=(
            MemberResult(member_id="c9-1", error="UNKNOWN_MEMBER_ID"),
            MemberResult(member_id="c1-1", error="NONE"),
        ),
    )


def test_leave_before_v3_reports_the_members_error_at_top_level() -> None:
    sim = Sim()
    stable_group(sim, "c1")
    assert sim.take(sim.send(leave("c9", ("c9-1", None), version=2))) == LeaveGroupResponse(
        error="UNKNOWN_MEMBER_ID"
    )
    assert sim.take(sim.send(leave("c1", ("c1-1", None), version=0))) == LeaveGroupResponse(
        error="NONE"
    )


def test_leave_of_a_missing_group() -> None:
    sim = Sim()
    assert sim.take(sim.send(leave("c1", ("c1-1", "i1")))) == LeaveGroupResponse(
        error="NONE",
        members=(
            MemberResult(member_id="c1-1", group_instance_id="i1", error="UNKNOWN_MEMBER_ID"),
        ),
    )


def test_admin_removes_static_member_by_instance_id() -> None:
    sim = Sim()
    r = sim.send(join("c1", instance="i1"))
    sim.at(1)
    sim.take(r)
    resp = sim.take(sim.send(leave("admin", ("", "i1"), ("", "i9"))))
    assert [m.error for m in resp.members] == ["NONE", "UNKNOWN_MEMBER_ID"]
    assert sim.members() == [] and sim.only.state == "Empty"


def test_leave_with_wrong_member_for_instance_is_fenced() -> None:
    sim = Sim()
    r = sim.send(join("c1", instance="i1"))
    sim.at(1)
    sim.take(r)
    resp = sim.take(sim.send(leave("c2", ("c2-5", "i1"))))
    assert resp.members[0].error == "FENCED_INSTANCE_ID" and sim.members() == ["c1-1"]


def test_leaving_member_with_a_parked_join_gets_unknown_member_id() -> None:
    sim = Sim()
    stable_group(sim, "c1", "c2")
    # New metadata: a rebalance; c2's JoinGroup waits for c1.
    parked = sim.send(
        join("c2", "c2-1", version=3, protocols=(Protocol(name="range", metadata="z"),)), at=10
    )
    sim.take(sim.send(leave("c9", ("c2-1", None))))
    assert sim.take(parked).error == "UNKNOWN_MEMBER_ID"


def test_last_member_leaving_empties_the_group_with_a_new_generation() -> None:
    sim = Sim()
    stable_group(sim, "c1")
    sim.take(sim.send(leave("c1", ("c1-1", None))))
    s = sim.only
    assert (s.state, s.generation_id, s.protocol_name, s.leader, s.members) == (
        "Empty",
        2,
        None,
        (),
        (),
    )


# ------------------------------------------------------------------------------------ offsets


def test_simple_commit_creates_an_empty_group() -> None:
    # generation -1 and no member id to a group that does not exist: a simple group is created.
    sim = Sim()
    resp = sim.take(sim.send(commit("c1", "", -1, [("t", 0, 42)])))
    assert resp == OffsetCommitResponse(
        partitions=(PartitionError(topic="t", partition=0, error="NONE"),)
    )
    d = sim.take(sim.send(describe("c1")))
    assert (d.group_state, d.protocol_type) == ("Empty", "")
    got = sim.take(sim.send(fetch("c1", ("t", 0), ("t", 1))))
    assert got.partitions == (
        FetchedOffset(topic="t", partition=0, offset=42, leader_epoch=-1),
        FetchedOffset(topic="t", partition=1, offset=-1, leader_epoch=-1),
    )


def test_commit_with_stale_generation_is_never_accepted() -> None:
    sim = Sim()
    stable_group(sim, "c1")
    assert sim.take(sim.send(commit("c1", "c1-1", 0))).partitions[0].error == "ILLEGAL_GENERATION"
    assert sim.take(sim.send(fetch("c1", ("t", 0)))).partitions[0].offset == -1


def test_commit_by_non_member_or_simple_commit_to_active_group() -> None:
    sim = Sim()
    stable_group(sim, "c1")
    assert sim.take(sim.send(commit("c9", "c9-1", 1))).partitions[0].error == "UNKNOWN_MEMBER_ID"
    assert sim.take(sim.send(commit("c9", "", -1))).partitions[0].error == "UNKNOWN_MEMBER_ID"


def test_commit_in_completing_rebalance_vs_preparing_rebalance() -> None:
    sim = Sim()
    r1 = sim.send(join("c1", version=3))
    r2 = sim.send(join("c2", version=3))
    sim.at(1)
    sim.take(r1), sim.take(r2)
    # CompletingRebalance: the member has the new generation but no assignment yet.
    assert (
        sim.take(sim.send(commit("c1", "c1-1", 1))).partitions[0].error == "REBALANCE_IN_PROGRESS"
    )
    sim.send(join("c3", version=3))  # a new member: PreparingRebalance
    # PreparingRebalance: the previous generation may still commit (and it counts as liveness).
    assert (
        sim.take(sim.send(commit("c2", "c2-1", 1, [("t", 3, 7)]), at=500)).partitions[0].error
        == "NONE"
    )
    assert sim.deadline("c2-1") == 10_500


def test_commit_to_missing_group_with_generation() -> None:
    sim = Sim()  # 4.x profile
    assert (
        sim.take(sim.send(commit("c1", "c1-1", 3, version=8))).partitions[0].error
        == "ILLEGAL_GENERATION"
    )
    assert (
        sim.take(sim.send(commit("c1", "c1-1", 3, version=9))).partitions[0].error
        == "GROUP_ID_NOT_FOUND"
    )


def test_commit_metadata_too_large_only_fails_that_partition() -> None:
    sim = Sim(offset_metadata_max_bytes=3)
    big = sim.send(commit("c1", "", -1, [("t", 0, 1)], metadata="abcd"))
    ok = sim.send(commit("c1", "", -1, [("t", 1, 1)], metadata="abc"))
    assert sim.take(big).partitions[0].error == "OFFSET_METADATA_TOO_LARGE"
    assert sim.take(ok).partitions[0].error == "NONE"


def test_commit_to_unknown_partition() -> None:
    sim = Sim(topics=(("t", 2),))
    resp = sim.take(sim.send(commit("c1", "", -1, [("t", 1, 5), ("t", 2, 5), ("u", 0, 5)])))
    assert [(p.topic, p.partition, p.error) for p in resp.partitions] == [
        ("t", 1, "NONE"),
        ("t", 2, "UNKNOWN_TOPIC_OR_PARTITION"),
        ("u", 0, "UNKNOWN_TOPIC_OR_PARTITION"),
    ]


def test_fetch_all_committed_offsets() -> None:
    sim = Sim()
    sim.take(sim.send(commit("c1", "", -1, [("b", 1, 10), ("a", 0, 20)])))
    assert [(f.topic, f.offset) for f in sim.take(sim.send(fetch("c1"))).partitions] == [
        ("a", 20),
        ("b", 10),
    ]


def test_commit_restarts_member_session_in_stable() -> None:
    sim = Sim()
    stable_group(sim, "c1")
    sim.take(sim.send(commit("c1", "c1-1", 1), at=9_000))
    sim.at(15_000)  # would have expired at 10 000 without the commit
    assert sim.members() == ["c1-1"] and sim.deadline("c1-1") == 19_000


# ----------------------------------------------------------------------------------- describe


def test_describe_missing_group_is_dead() -> None:
    sim = Sim()
    assert sim.take(sim.send(describe("c1", version=5))) == DescribeGroupsResponse(
        error="NONE", group_state="Dead"
    )
    assert sim.take(sim.send(describe("c1", version=6))).error == "GROUP_ID_NOT_FOUND"


def test_a_new_group_may_be_missing_from_describe_until_an_answer_shows_it_committed() -> None:
    # describe.py rule 3 (4.x): the join's answers do not wait for the group's creation record
    sim = Sim()
    joined = sim.send(join("c1", version=3))
    sim.at(1)  # the initial delay (0) passes: generation 1, c1 leads
    sim.take(joined)
    assert sim.only.state == "CompletingRebalance"
    missing = DescribeGroupsResponse(error="GROUP_ID_NOT_FOUND", group_state="Dead")
    first = sim.send(describe("c2", version=6))
    assert {r.group_state for r in sim.answers(first)} == {"Dead", "CompletingRebalance"}
    sim.observe(first, missing)
    again = sim.send(describe("c2", version=6))
    assert len(sim.answers(again)) == 2  # still open: nothing showed the record committed
    sim.observe(again, missing)
    # a Heartbeat's answer waits for every write before it: from then on the group is seen
    assert sim.take(sim.send(heartbeat("c1", "c1-1", 1))).error == "NONE"
    seen = sim.send(describe("c2", version=6))
    assert {r.group_state for r in sim.answers(seen)} == {"CompletingRebalance"}


def test_a_group_once_described_stays_described() -> None:
    sim = Sim()
    joined = sim.send(join("c1", version=3))
    sim.at(1)
    sim.take(joined)
    first = sim.send(describe("c2", version=5))
    seen = next(r for r in sim.answers(first) if r.group_state == "CompletingRebalance")
    sim.observe(first, seen)
    assert len(sim.answers(sim.send(describe("c2", version=5)))) == 1


def test_answers_that_do_not_wait_for_the_write_leave_the_group_unconfirmed() -> None:
    # MEMBER_ID_REQUIRED and a second JoinGroup answer come through the join's future; an
    # OffsetFetch is a read
    sim = Sim()
    assert sim.take(sim.send(join("c1", version=4))).error == "MEMBER_ID_REQUIRED"
    assert sim.take(sim.send(fetch("c1"))).error == "NONE"
    joined = sim.send(join("c1", member_id="c1-1", version=4))
    sim.at(1)
    assert sim.take(joined).error == "NONE"
    assert len(sim.answers(sim.send(describe("c2", version=6)))) == 2


def test_in_3_9_a_new_group_is_described_at_once() -> None:
    sim = Sim(profile=KAFKA_3_9)
    joined = sim.send(join("c1", version=3))
    sim.at(1)
    sim.take(joined)
    assert {r.group_state for r in sim.answers(sim.send(describe("c2", version=5)))} == {
        "CompletingRebalance"
    }


def test_describe_stable_shows_protocol_and_assignments() -> None:
    sim = Sim()
    stable_group(sim, "c1", "c2")
    assert sim.take(sim.send(describe("c1"))) == DescribeGroupsResponse(
        error="NONE",
        group_state="Stable",
        protocol_type="consumer",
        protocol_data="range",
        members=(  # each with its JoinGroup's client id and host, and its metadata ("m")
            DescribedMember(
                member_id="c1-1",
                client_id="kgc-c1",
                client_host="/127.0.0.1",
                metadata="m",
                assignment="a-c1-1",
            ),
            DescribedMember(
                member_id="c2-1",
                client_id="kgc-c2",
                client_host="/127.0.0.1",
                metadata="m",
                assignment="a-c2-1",
            ),
        ),
    )


def test_describe_lists_members_not_pending_ones() -> None:
    sim = Sim()
    stable_group(sim, "c1")
    sim.take(sim.send(join("c2", version=4)))  # pending c2-1
    assert [m.member_id for m in sim.take(sim.send(describe("c9"))).members] == ["c1-1"]


def test_find_coordinator_with_a_leader_map() -> None:
    sim = Sim(
        offsets_topic_num_partitions=10, offsets_partition_leaders=(1, 1, 2, 7, 2, 1, 2, 1, 2, 1)
    )
    assert sim.take(sim.send(find("c1"))) == FindCoordinatorResponse(error="NONE", node_id=7)


def test_heartbeat_after_leave_is_unknown() -> None:
    sim = Sim()
    stable_group(sim, "c1", "c2")
    sim.take(sim.send(leave("c2", ("c2-1", None))))
    assert sim.take(sim.send(heartbeat("c2", "c2-1", 1))).error == "UNKNOWN_MEMBER_ID"
