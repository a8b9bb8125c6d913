"""``Profile.any_join_sets_protocol_type`` (kfake's switch in
``conformance/brokers/implementations.py``): off, as Kafka, a group's protocol type is set when its
first member is added; on, by the first JoinGroup whose protocols the group supports, whatever that
join is then answered. One timeline per answer that adds no member, under both rule families."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kgc.model import KAFKA_3_9, KAFKA_4_X
from kgc.model.commands import DescribeGroupsResponse
from kgc.model.profiles import Profile
from model_harness import Sim, commit, describe, join

PROFILES = [KAFKA_4_X, KAFKA_3_9]


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
@pytest.mark.parametrize("any_join", [True, False])
@pytest.mark.parametrize(
    ("member_id", "instance", "version", "answered"),
    [
        ("", None, 4, "MEMBER_ID_REQUIRED"),  # the handshake
        ("stranger", "i2", 8, "UNKNOWN_MEMBER_ID"),  # an instance id the group does not have
        ("stranger", None, 3, "UNKNOWN_MEMBER_ID"),  # a member id the group does not have
    ],
)
def test_a_join_that_adds_no_member(
    profile: Profile,
    any_join: bool,
    member_id: str,
    instance: str | None,
    version: int,
    answered: str,
) -> None:
    # a simple commit makes the group, Empty and with no protocol type; the join adds no member
    sim = Sim(profile=replace(profile, any_join_sets_protocol_type=any_join))
    assert sim.take(sim.send(commit("c1", "", -1, version=5), at=0)).type == "OffsetCommitResponse"
    got = sim.take(sim.send(join("c2", member_id, version=version, instance=instance), at=10))
    assert got.error == answered  # type: ignore[union-attr]
    described = sim.take(sim.send(describe("c2"), at=20))
    assert isinstance(described, DescribeGroupsResponse) and described.group_state == "Empty"
    assert described.protocol_type == ("consumer" if any_join else "")
