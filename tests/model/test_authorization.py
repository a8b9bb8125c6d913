"""Authorization in the classic model (``model/classic/authorization.py``): what the broker refuses
a principal an operator denied one operation, before the group sees the request.

Expectations are ``KafkaApis``'s (4.3.1; 3.9.2 the same), as the rules cite it; the brokers show
them in ``tests/broker/test_secured_broker.py``, where the search denies and allows operations on a
secured 4.3.1 broker and reaches every authorization cell with no divergence.
"""

from __future__ import annotations

import dataclasses

import pytest
from kgc.model import KAFKA_3_9, KAFKA_4_X
from kgc.model.classic.authorization import AclChange, acl_change
from kgc.model.commands import (
    DeleteGroups,
    DeleteGroupsResponse,
    DescribeGroupsResponse,
    FetchedOffset,
    FindCoordinatorResponse,
    HeartbeatResponse,
    JoinGroupResponse,
    LeaveGroupResponse,
    ListGroups,
    OffsetCommitResponse,
    OffsetDelete,
    OffsetDeleteResponse,
    OffsetFetchResponse,
    PartitionError,
    SyncGroup,
    SyncGroupResponse,
    TopicPartition,
)
from model_harness import (
    Sim,
    commit,
    describe,
    fetch,
    find,
    heartbeat,
    join,
    leave,
    stable_group,
    sync,
)

GAF, TAF = "GROUP_AUTHORIZATION_FAILED", "TOPIC_AUTHORIZATION_FAILED"
TOPICS = (("t", 3),)


def _acl(sim: Sim, action: str) -> None:
    sim.states = [
        s for st in sim.states for s in sim.model.fault(st, action=action, node=0, at_ms=sim.t)
    ]


def test_actions_parse_and_apply() -> None:
    change = acl_change("acl-deny:group:READ")
    assert change == AclChange(deny=True, resource="group", operation="READ")
    assert change.action == "acl-deny:group:READ"
    denied = change.applied(())
    assert denied == (("group", "READ"),)
    assert AclChange(False, "group", "READ").applied(denied) == ()
    assert acl_change("kill") is None  # a nemesis action, not an ACL one
    with pytest.raises(ValueError, match="unknown ACL action"):
        acl_change("acl-deny:cluster:ALTER")


@pytest.mark.parametrize("profile", [KAFKA_4_X, KAFKA_3_9], ids=lambda p: p.name)
def test_a_denied_read_refuses_membership_and_changes_nothing(profile) -> None:
    sim = Sim(profile=profile, topics=TOPICS)
    generation = stable_group(sim, "c1", "c2")
    deadline = sim.deadline("c1-1")
    before = sim.only
    _acl(sim, "acl-deny:group:READ")
    sent = [
        join("c3", version=5),
        join("c1", "c1-1", version=5),
        sync("c1", "c1-1", generation, [("c1-1", "x")]),
        heartbeat("c1", "c1-1", generation),
        leave("c2", ("c2-1", None), version=3),
        commit("c1", "c1-1", generation, (("t", 0, 5), ("t", 1, 6))),
    ]
    answers = [sim.take(sim.send(c, at=100 + i)) for i, c in enumerate(sent)]
    assert answers == [
        JoinGroupResponse(error=GAF, member_id=""),
        JoinGroupResponse(error=GAF, member_id=""),  # never the request's own member id
        SyncGroupResponse(error=GAF),
        HeartbeatResponse(error=GAF),
        LeaveGroupResponse(error=GAF),  # at the top, no member results
        OffsetCommitResponse(
            partitions=(
                PartitionError(topic="t", partition=0, error=GAF),
                PartitionError(topic="t", partition=1, error=GAF),
            )
        ),
    ]
    after = sim.only
    assert (after.state, after.generation_id, after.offsets) == (
        before.state,
        before.generation_id,
        before.offsets,
    )
    assert sim.members() == ["c1-1", "c2-1"] and sim.deadline("c1-1") == deadline
    # the refused heartbeat refreshed nothing: c1 expires at its old deadline
    sim.at(deadline + 1)
    assert "c1-1" not in sim.members()
    # DESCRIBE is another operation: a DENY of READ does not deny it
    assert sim.take(sim.send(describe("c2"))).error == "NONE"


def test_a_sync_without_its_protocol_is_refused_for_that_first() -> None:
    sim = Sim(topics=TOPICS)
    generation = stable_group(sim, "c1")
    _acl(sim, "acl-deny:group:READ")
    bare = dataclasses.replace(
        sync("c1", "c1-1", generation, [], version=5), protocol_type=None, protocol_name=None
    )
    assert isinstance(bare, SyncGroup)
    assert sim.take(sim.send(bare)) == SyncGroupResponse(error="INCONSISTENT_GROUP_PROTOCOL")


@pytest.mark.parametrize("version", [1, 2, 6, 8])
def test_a_denied_describe_refuses_reads_as_each_version_writes_it(version: int) -> None:
    sim = Sim(topics=TOPICS)
    generation = stable_group(sim, "c1")
    sim.take(sim.send(commit("c1", "c1-1", generation)))
    _acl(sim, "acl-deny:group:DESCRIBE")
    got = sim.take(sim.send(fetch("c1", ("t", 0), version=version)))
    if version >= 2:
        assert got == OffsetFetchResponse(error=GAF)
    else:  # v0-1 have no group error field: each asked partition carries it, offset -1
        assert got == OffsetFetchResponse(
            error="NONE",
            partitions=(FetchedOffset(topic="t", partition=0, offset=-1, error=GAF),),
        )
    assert sim.take(sim.send(describe("c1"))) == DescribeGroupsResponse(error=GAF)
    assert sim.take(sim.send(find("c1"))) == FindCoordinatorResponse(error=GAF)
    listed = sim.take(sim.send(ListGroups(client="c1", version=4)))
    assert listed.groups == ()  # A5: left out of the listing, not refused
    _acl(sim, "acl-allow:group:DESCRIBE")
    assert sim.take(sim.send(describe("c1"))).error == "NONE"
    assert len(sim.take(sim.send(ListGroups(client="c1", version=4))).groups) == 1


def test_a_denied_topic_read_refuses_commits_before_the_coordinator() -> None:
    sim = Sim(topics=TOPICS)
    generation = stable_group(sim, "c1")
    _acl(sim, "acl-deny:topic:READ")
    # even a commit the group would refuse (a stale generation): the coordinator is not asked
    for gen in (generation, generation + 7):
        got = sim.take(sim.send(commit("c1", "c1-1", gen)))
        assert got == OffsetCommitResponse(
            partitions=(PartitionError(topic="t", partition=0, error=TAF),)
        )
    assert sim.only.offsets == ()
    # a topic the run did not create keeps the prefix's ALLOW: it is unknown, not refused
    other = sim.take(sim.send(commit("c1", "c1-1", generation, (("u", 0, 1),))))
    assert other.partitions[0].error == "UNKNOWN_TOPIC_OR_PARTITION"
    with pytest.raises(Exception, match="beside another topic"):
        sim.send(commit("c1", "c1-1", generation, (("t", 0, 1), ("u", 0, 1))))


@pytest.mark.parametrize("version", [1, 5, 8])
def test_a_denied_topic_describe_hides_offsets(version: int) -> None:
    sim = Sim(topics=TOPICS)
    generation = stable_group(sim, "c1")
    sim.take(sim.send(commit("c1", "c1-1", generation, (("t", 0, 5), ("t", 1, 6)))))
    _acl(sim, "acl-deny:topic:DESCRIBE")
    named = sim.take(sim.send(fetch("c1", ("t", 0), ("t", 1), version=version)))
    epoch = -1 if version >= 5 else None
    assert named == OffsetFetchResponse(
        error="NONE",
        partitions=tuple(
            FetchedOffset(topic="t", partition=p, offset=-1, leader_epoch=epoch, error=TAF)
            for p in (0, 1)
        ),
    )
    every = sim.take(sim.send(fetch("c1", version=max(version, 2))))
    assert every == OffsetFetchResponse(error="NONE")  # the denied topic is left out
    # a commit is READ, not DESCRIBE: it goes through
    done = sim.take(sim.send(commit("c1", "c1-1", generation, (("t", 2, 9),))))
    assert done.partitions[0].error == "NONE"


def test_deletions_need_delete_and_a_group_error_wins_over_topic_errors() -> None:
    sim = Sim(topics=TOPICS)
    _acl(sim, "acl-deny:group:DELETE")
    assert sim.take(sim.send(DeleteGroups(client="c1", version=2))) == DeleteGroupsResponse(
        error=GAF
    )
    parts = (TopicPartition(topic="t", partition=0),)
    delete_offsets = OffsetDelete(client="c1", partitions=parts, version=0)
    assert sim.take(sim.send(delete_offsets)) == OffsetDeleteResponse(error=GAF)
    _acl(sim, "acl-allow:group:DELETE")
    _acl(sim, "acl-deny:topic:READ")
    # no group: the coordinator, asked about no partition, still answers GROUP_ID_NOT_FOUND,
    # which replaces the topic's refusal (``OffsetDeleteResponse.Builder.merge``)
    assert sim.take(sim.send(delete_offsets)) == OffsetDeleteResponse(error="GROUP_ID_NOT_FOUND")
    generation = stable_group(sim, "c1")
    sim.take(sim.send(leave("c1", ("c1-1", None), version=3)))
    assert generation == 1 and sim.only.state == "Empty"
    assert sim.take(sim.send(delete_offsets)) == OffsetDeleteResponse(
        error="NONE", partitions=(PartitionError(topic="t", partition=0, error=TAF),)
    )


def test_a_principal_limited_to_its_prefix_is_refused_the_empty_group_id() -> None:
    """A0: group ``""`` is outside the principal's prefixed ACLs: refused before the id is
    checked, so ``GROUP_AUTHORIZATION_FAILED``, not ``INVALID_GROUP_ID``."""
    empty = dataclasses.replace(join("c1", version=5), empty_group_id=True)
    open_sim, limited = Sim(), Sim(foreign_group_refused=True)
    assert open_sim.take(open_sim.send(empty)).error == "INVALID_GROUP_ID"
    assert limited.take(limited.send(empty)) == JoinGroupResponse(error=GAF, member_id="")
