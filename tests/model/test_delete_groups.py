"""DeleteGroups and OffsetDelete rules (model/classic/delete.py), on small hand-written histories.

Each expectation is read off Kafka's source, cited at the test: 4.x
``ClassicGroup.validateDeleteGroup`` / ``validateOffsetDelete`` / ``isSubscribedToTopic``,
``OffsetMetadataManager.deleteOffsets``, ``GroupCoordinatorShard.deleteGroups``; 3.9
``GroupCoordinator.handleDeleteGroups`` / ``handleDeleteOffsets`` and
``GroupMetadataManager.cleanupGroupMetadata``.
"""

from __future__ import annotations

import json

import pytest
from kgc.model.commands import (
    DeleteGroups,
    DeleteGroupsResponse,
    OffsetDelete,
    OffsetDeleteResponse,
    PartitionError,
    Protocol,
    TopicPartition,
)
from kgc.model.profiles import KAFKA_3_9, KAFKA_4_X
from model_harness import Sim, commit, describe, fetch, join, leave, stable_group, sync

LINES = pytest.mark.parametrize("profile", [KAFKA_4_X, KAFKA_3_9], ids=["4.x", "3.9"])
SUBSCRIBED_TO_T = (Protocol(name="range", metadata=json.dumps({"topics": ["t"]})),)


def delete_groups(client: str = "c9", version: int = 2) -> DeleteGroups:
    return DeleteGroups(client=client, version=version)


def offset_delete(*partitions: tuple[str, int], client: str = "c9") -> OffsetDelete:
    return OffsetDelete(
        client=client,
        partitions=tuple(TopicPartition(topic=t, partition=p) for t, p in partitions),
        version=0,
    )


def errors(response: OffsetDeleteResponse) -> dict[tuple[str, int], str]:
    return {(p.topic, p.partition): p.error for p in response.partitions}


def subscribed_stable_group(sim: Sim, *clients: str) -> int:
    """``clients`` in one Stable generation, each subscribed to topic ``t`` (consumer protocol)."""
    rids = [sim.send(join(c, version=3, protocols=SUBSCRIBED_TO_T)) for c in clients]
    sim.at(sim.t + 1)
    gen = sim.take(rids[0]).generation_id  # type: ignore[union-attr]
    for r in rids[1:]:
        sim.take(r)
    ids = [f"{c}-1" for c in clients]
    sim.take(sim.send(sync(clients[0], ids[0], gen, [(m, "") for m in ids])))
    for c, m in zip(clients[1:], ids[1:], strict=True):
        sim.take(sim.send(sync(c, m, gen)))
    assert sim.only.state == "Stable"
    return gen


def emptied_group(sim: Sim, *clients: str) -> None:
    """A Stable group whose members all leave: Empty, its protocol type still ``consumer``."""
    subscribed_stable_group(sim, *clients)
    for c in clients:
        sim.take(sim.send(leave(c, (f"{c}-1", None))))
    sim.at(sim.t + 1)
    assert sim.only.state == "Empty" and sim.only.exists


# ------------------------------------------------------------------------------ DeleteGroups


@LINES
def test_deleting_a_group_that_does_not_exist_is_group_id_not_found(profile) -> None:  # noqa: ANN001
    # 4.x: GroupMetadataManager.group throws GroupIdNotFoundException; 3.9 handleDeleteGroups:
    # getGroup is None and groupNotExists -> GROUP_ID_NOT_FOUND
    sim = Sim(profile=profile)
    assert sim.take(sim.send(delete_groups())) == DeleteGroupsResponse(error="GROUP_ID_NOT_FOUND")


@LINES
def test_a_group_with_members_is_not_deleted(profile) -> None:  # noqa: ANN001
    # validateDeleteGroup / handleDeleteGroups: Stable, PreparingRebalance, CompletingRebalance
    # -> NON_EMPTY_GROUP, and the group is left as it was
    sim = Sim(profile=profile)
    joined = sim.send(join("c1", version=3))
    assert sim.only.state == "PreparingRebalance"
    assert sim.take(sim.send(delete_groups())).error == "NON_EMPTY_GROUP"
    sim.at(1)
    sim.take(joined)
    assert sim.only.state == "CompletingRebalance"
    assert sim.take(sim.send(delete_groups(version=0))).error == "NON_EMPTY_GROUP"
    sim.take(sim.send(sync("c1", "c1-1", 1, [("c1-1", "a")])))
    before = sim.only
    assert sim.take(sim.send(delete_groups(version=1))).error == "NON_EMPTY_GROUP"
    assert (sim.only.state, sim.only.members) == ("Stable", before.members)


@LINES
def test_deleting_an_empty_group_deletes_its_offsets_and_a_join_starts_it_anew(profile) -> None:  # noqa: ANN001
    # Empty -> NONE: 4.x deleteGroups writes deleteAllOffsets' tombstones and the group's; 3.9
    # transitions it Dead and cleanupGroupMetadata(removeAllOffsets) drops it. The group id is then
    # free: a JoinGroup creates a new group at generation 1, and a second delete finds nothing
    sim = Sim(profile=profile)
    gen = stable_group(sim, "c1")
    assert gen == 1
    assert sim.take(sim.send(commit("c1", "c1-1", gen))).error == "NONE"
    sim.take(sim.send(leave("c1", ("c1-1", None))))
    sim.at(sim.t + 1)
    assert sim.only.state == "Empty" and sim.only.offsets
    assert sim.take(sim.send(delete_groups())) == DeleteGroupsResponse(error="NONE")
    fetched = sim.take(sim.send(fetch("c9", ("t", 0))))
    assert [p.offset for p in fetched.partitions] == [-1]  # type: ignore[union-attr]
    assert sim.take(sim.send(describe("c9"))).group_state == "Dead"  # type: ignore[union-attr]
    assert sim.take(sim.send(delete_groups())).error == "GROUP_ID_NOT_FOUND"
    rejoin = sim.send(join("c1", version=3))
    sim.at(sim.t + 1)
    assert sim.take(rejoin).generation_id == 1  # type: ignore[union-attr]


def test_a_pending_member_does_not_keep_an_empty_group_from_deletion() -> None:
    # a KIP-394 pending member is no member (the group stays Empty): the delete succeeds, and the
    # pending member's JoinGroup then names a member id of no group (4.x classicGroupJoin:
    # UNKNOWN_MEMBER_ID for a member id and no group)
    sim = Sim()
    assert sim.take(sim.send(join("c1", version=4))).error == "MEMBER_ID_REQUIRED"
    assert sim.only.state == "Empty" and sim.only.pending_members
    assert sim.take(sim.send(delete_groups())).error == "NONE"
    assert not sim.only.exists and not sim.only.pending_members
    assert sim.take(sim.send(join("c1", "c1-1", version=4))).error == "UNKNOWN_MEMBER_ID"


@LINES
def test_a_group_of_simple_commits_is_deleted(profile) -> None:  # noqa: ANN001
    # a commit with generation -1 makes an Empty group with no protocol type: Empty -> NONE
    sim = Sim(profile=profile)
    assert sim.take(sim.send(commit("c1", "", -1))).error == "NONE"
    assert sim.take(sim.send(delete_groups())).error == "NONE"
    assert not sim.only.exists and not sim.only.offsets


# ----------------------------------------------------------------------------- OffsetDelete


@LINES
def test_offset_delete_of_a_group_that_does_not_exist(profile) -> None:  # noqa: ANN001
    # 4.x validateOffsetDelete: group() throws GroupIdNotFoundException; 3.9 handleDeleteOffsets:
    # GROUP_ID_NOT_FOUND; the group error answers alone (OffsetDeleteResponse.Builder.merge /
    # getErrorResponse)
    sim = Sim(profile=profile)
    assert sim.take(sim.send(offset_delete(("t", 0)))) == OffsetDeleteResponse(
        error="GROUP_ID_NOT_FOUND"
    )


@LINES
def test_a_stable_consumer_group_keeps_the_offsets_of_topics_it_subscribes_to(profile) -> None:  # noqa: ANN001
    # subscribed topics computed by initNextGeneration from the members' subscriptions ({t}):
    # t's partitions GROUP_SUBSCRIBED_TO_TOPIC (kept), u's NONE (deleted)
    sim = Sim(profile=profile)
    gen = subscribed_stable_group(sim, "c1", "c2")
    sim.take(sim.send(commit("c1", "c1-1", gen, (("t", 0, 5), ("u", 0, 7)))))
    answer = sim.take(sim.send(offset_delete(("t", 0), ("t", 1), ("u", 0))))
    assert answer == OffsetDeleteResponse(
        error="NONE",
        partitions=(
            PartitionError(topic="t", partition=0, error="GROUP_SUBSCRIBED_TO_TOPIC"),
            PartitionError(topic="t", partition=1, error="GROUP_SUBSCRIBED_TO_TOPIC"),
            PartitionError(topic="u", partition=0, error="NONE"),
        ),
    )
    assert [(o.topic, o.partition) for o in sim.only.offsets] == [("t", 0)]


@LINES
def test_in_the_first_join_phase_every_topic_is_subscribed(profile) -> None:  # noqa: ANN001
    # no initNextGeneration yet: subscribedTopics is empty/None, so a consumer group is subscribed
    # to every topic (4.x orElse(usesConsumerGroupProtocol()); 3.9 ``case None => true``)
    sim = Sim(profile=profile)
    sim.send(join("c1", version=3, protocols=SUBSCRIBED_TO_T))
    assert sim.only.state == "PreparingRebalance"
    answer = sim.take(sim.send(offset_delete(("u", 0))))
    assert errors(answer) == {("u", 0): "GROUP_SUBSCRIBED_TO_TOPIC"}  # type: ignore[arg-type]


@LINES
def test_right_after_the_group_was_empty_no_topic_is_subscribed(profile) -> None:  # noqa: ANN001
    # the Empty generation computed no topics (computeSubscribedTopics: a consumer group without
    # members -> the empty set), kept until the next join phase completes: so while a new member
    # joins, the offsets of the very topic it subscribes to may be deleted
    sim = Sim(profile=profile)
    emptied_group(sim, "c1")
    sim.take(sim.send(commit("c9", "", -1, (("t", 0, 3),))))
    sim.send(join("c2", version=3, protocols=SUBSCRIBED_TO_T))
    assert sim.only.state == "PreparingRebalance"
    answer = sim.take(sim.send(offset_delete(("t", 0))))
    assert errors(answer) == {("t", 0): "NONE"}  # type: ignore[arg-type]
    assert not sim.only.offsets


@LINES
def test_a_group_of_another_protocol_type_with_members_is_non_empty(profile) -> None:  # noqa: ANN001
    # ClassicGroup.validateOffsetDelete: not usesConsumerGroupProtocol -> NON_EMPTY_GROUP; 3.9:
    # ``case _ => NON_EMPTY_GROUP`` (isConsumerGroup false)
    sim = Sim(profile=profile)
    sim.send(join("c1", version=3, protocol_type="connect"))
    assert sim.take(sim.send(offset_delete(("t", 0)))) == OffsetDeleteResponse(
        error="NON_EMPTY_GROUP"
    )


def test_4x_keeps_an_empty_group_whose_last_offsets_are_deleted() -> None:
    # 4.x deleteOffsets writes offset tombstones only
    sim = Sim(profile=KAFKA_4_X)
    emptied_group(sim, "c1")
    sim.take(sim.send(commit("c9", "", -1, (("t", 0, 3),))))
    answer = sim.take(sim.send(offset_delete(("t", 0), ("t", 1))))
    assert errors(answer) == {("t", 0): "NONE", ("t", 1): "NONE"}  # type: ignore[arg-type]
    assert sim.only.exists and sim.only.state == "Empty" and not sim.only.offsets
    assert sim.take(sim.send(delete_groups())).error == "NONE"


def test_3_9_drops_an_empty_group_left_without_offsets() -> None:
    # 3.9 handleDeleteOffsets (Empty: every partition eligible) -> cleanupGroupMetadata: Empty
    # and no offsets -> Dead; so the delete that follows finds no group. With an offset left, the
    # group stays
    sim = Sim(profile=KAFKA_3_9)
    emptied_group(sim, "c1")
    sim.take(sim.send(commit("c9", "", -1, (("t", 0, 3), ("t", 1, 4)))))
    sim.take(sim.send(offset_delete(("t", 0))))
    assert sim.only.exists
    sim.take(sim.send(offset_delete(("t", 1))))
    assert not sim.only.exists
    assert sim.take(sim.send(delete_groups())).error == "GROUP_ID_NOT_FOUND"


def test_partitions_of_unknown_topics_are_answered_by_the_broker() -> None:
    # KafkaApis.handleOffsetDeleteRequest: a topic or partition the metadata cache lacks is
    # UNKNOWN_TOPIC_OR_PARTITION, beside the coordinator's answers; a group error replaces both
    sim = Sim(topics=(("t", 2),))
    assert sim.take(sim.send(offset_delete(("t", 0)))).error == "GROUP_ID_NOT_FOUND"
    sim.take(sim.send(commit("c9", "", -1, (("t", 0, 3),))))
    answer = sim.take(sim.send(offset_delete(("t", 0), ("t", 5), ("nope", 0))))
    assert errors(answer) == {  # type: ignore[arg-type]
        ("nope", 0): "UNKNOWN_TOPIC_OR_PARTITION",
        ("t", 0): "NONE",
        ("t", 5): "UNKNOWN_TOPIC_OR_PARTITION",
    }


def test_each_line_answers_the_versions_its_release_has() -> None:
    # DeleteGroupsRequest.json: v0 in 1.1 (KIP-229), v1 in 2.0, v2 (flexible) in 2.4, "0-2" in
    # 4.3.1; OffsetDeleteRequest.json: v0 only, from 2.4 (KIP-496)
    from kgc.model.profiles import PROFILES

    def versions(line: str, api: str) -> tuple[int, int] | None:
        try:
            r = PROFILES[line].api_range(api)
        except KeyError:
            return None
        return (r.min_version, r.max_version)

    assert versions("kafka-1.0", "DeleteGroups") is None
    assert versions("kafka-1.1", "DeleteGroups") == (0, 0)
    assert versions("kafka-2.4", "DeleteGroups") == (0, 2)
    assert versions("kafka-4.3", "DeleteGroups") == (0, 2)
    assert versions("kafka-1.1", "OffsetDelete") is None
    assert versions("kafka-2.4", "OffsetDelete") == (0, 0)
    assert versions("kafka-4.3", "OffsetDelete") == (0, 0)
