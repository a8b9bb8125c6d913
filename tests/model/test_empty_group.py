"""The empty group id (``model/classic/empty_group.py``): refused before any group is read, and
on 1.x looked up by every request but JoinGroup.

Expectations are Kafka's sources as the rules cite them (4.3.1 ``GroupCoordinatorService``, 2.4.1 -
3.9.2 ``GroupCoordinator.validateGroupStatus``, 1.0.2 / 1.1.1 ``GroupCoordinator``); the brokers
show them in ``tests/differential/test_empty_group_differential.py`` and, for the 1.x switch,
``tests/lines/test_release_line_switches.py``.
"""

from __future__ import annotations

import dataclasses

import pytest
from kgc.model import KAFKA_3_9, KAFKA_4_X, PROFILES
from kgc.model.classic.inputs import EMPTY_GROUP, NO_PROTOCOL, input_class
from kgc.model.commands import (
    HeartbeatResponse,
    JoinGroupResponse,
    LeaveGroupResponse,
    SyncGroupResponse,
)
from model_harness import Sim, heartbeat, join, leave, stable_group, sync


def _empty(command):  # noqa: ANN001, ANN202
    return dataclasses.replace(command, empty_group_id=True)


@pytest.mark.parametrize("profile", [KAFKA_4_X, KAFKA_3_9], ids=lambda p: p.name)
def test_every_membership_request_is_refused_and_nothing_changes(profile) -> None:
    sim = Sim(profile=profile)
    generation = stable_group(sim, "c1", "c2")
    before = sim.only
    deadline = sim.deadline("c1-1")
    sent = [
        _empty(join("c3", version=5)),
        _empty(join("c1", "c1-1", version=5, session=1)),  # even an invalid session timeout
        _empty(sync("c1", "c1-1", generation, [("c1-1", "x")])),
        _empty(heartbeat("c1", "c1-1", generation)),
        _empty(leave("c2", ("c2-1", None), version=3)),
        _empty(leave("c2", ("c2-1", None), version=1)),
    ]
    answers = [sim.take(sim.send(c, at=100 + i)) for i, c in enumerate(sent)]
    assert answers == [
        JoinGroupResponse(error="INVALID_GROUP_ID", member_id=""),
        JoinGroupResponse(error="INVALID_GROUP_ID", member_id="c1-1"),
        SyncGroupResponse(error="INVALID_GROUP_ID"),
        HeartbeatResponse(error="INVALID_GROUP_ID"),
        LeaveGroupResponse(error="INVALID_GROUP_ID"),
        LeaveGroupResponse(error="INVALID_GROUP_ID"),
    ]
    after = sim.only
    # the run's group is as it was: same members, generation, state; no heartbeat rescheduled
    assert (after.state, after.generation_id) == (before.state, before.generation_id)
    assert sim.members() == ["c1-1", "c2-1"] and sim.deadline("c1-1") == deadline
    # the member whose heartbeat went to group "" still expires at its old deadline
    sim.at(deadline + 1)
    assert "c1-1" not in sim.members()


def test_a_sync_without_its_protocol_is_refused_for_that_first() -> None:
    sim = Sim(profile=KAFKA_4_X)
    unnamed = _empty(sync("c1", "c1-1", 1, version=5))
    assert sim.take(sim.send(unnamed)) == SyncGroupResponse(error="INCONSISTENT_GROUP_PROTOCOL")
    named = _empty(
        sync("c1", "c1-1", 1, version=5, protocol_type="consumer", protocol_name="range")
    )
    assert sim.take(sim.send(named)) == SyncGroupResponse(error="INVALID_GROUP_ID")
    state = sim.only
    assert input_class(state, unnamed, metadata_limit=4096) == NO_PROTOCOL
    assert input_class(state, named, metadata_limit=4096) == EMPTY_GROUP


def test_before_2_4_only_join_checks_the_id_and_the_others_find_no_group() -> None:
    profile = PROFILES["kafka-1.1"]
    assert profile.empty_group_id_checked_by_join_only
    assert not PROFILES["kafka-2.4"].empty_group_id_checked_by_join_only
    sim = Sim(profile=profile)
    rid = sim.send(join("c1", version=2), at=0.0)
    first = sim.at(1.0).take(rid)
    generation = first.generation_id
    sim.take(sim.send(sync("c1", "c1-1", generation, [("c1-1", "a")], version=1), at=10.0))
    answers = [
        sim.take(sim.send(_empty(c), at=100 + i))
        for i, c in enumerate(
            [
                join("c2", version=2),
                sync("c1", "c1-1", generation, version=1),
                heartbeat("c1", "c1-1", generation, version=1),
                leave("c1", ("c1-1", None), version=1),
            ]
        )
    ]
    # 1.x writes a JoinGroup error with generation 0 (``Profile.join_error_generation_id``)
    assert answers == [
        JoinGroupResponse(error="INVALID_GROUP_ID", generation_id=0, member_id=""),
        SyncGroupResponse(error="UNKNOWN_MEMBER_ID"),
        HeartbeatResponse(error="UNKNOWN_MEMBER_ID"),
        LeaveGroupResponse(error="UNKNOWN_MEMBER_ID"),
    ]
    assert sim.members() == ["c1-1"] and sim.only.state == "Stable"


def test_the_1_x_lookups_are_not_input_cells_the_search_counts() -> None:
    from kgc.engine.coverage import input_excluded

    versions = {"JoinGroup": (0, 2), "SyncGroup": (0, 1), "Heartbeat": (0, 1)}
    gone = input_excluded(versions, PROFILES["kafka-1.0"])
    assert ("SyncGroup", 1, EMPTY_GROUP) in gone and ("Heartbeat", 0, EMPTY_GROUP) in gone
    assert ("JoinGroup", 2, EMPTY_GROUP) not in gone
    assert not {c for c in input_excluded(versions, PROFILES["kafka-2.4"]) if c[2] == EMPTY_GROUP}
