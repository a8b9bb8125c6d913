"""The empty group id against a real broker (``model/classic/empty_group.py``).

A member c1 is Stable in the run's group; then JoinGroup, SyncGroup, Heartbeat and LeaveGroup are
sent at every version the broker speaks, naming the group id ``""``, and the model checks each
answer. Kafka refuses all of them (``INVALID_GROUP_ID``, 4.3.1 ``GroupCoordinatorService`` and 3.9.2
``GroupCoordinator.validateGroupStatus``), a SyncGroup v5 without its protocol first for that
(``INCONSISTENT_GROUP_PROTOCOL``, ``KafkaApis``); none of them touches the run's group: c1's
heartbeat after them is still answered in its generation. ``--kgc-kafka-version 3.9.2`` runs it
on the Scala coordinator.
"""

from __future__ import annotations

import json

import pytest
from kgc.engine.traces import render
from kgc.model import PROFILES
from kgc.model.commands import (
    Assignment,
    Heartbeat,
    HeartbeatResponse,
    JoinGroup,
    JoinGroupResponse,
    LeaveGroup,
    LeaveGroupResponse,
    MemberIdentity,
    Protocol,
    SyncGroup,
    SyncGroupResponse,
    Tick,
)

from tests.scripted import Classic, classic_run

pytestmark = pytest.mark.broker


def _history(run: Classic) -> list:
    profile = PROFILES[run.record["profile"]]
    protocols = (Protocol(name="range", metadata=json.dumps({"topics": [run.topic]})),)

    def versions(api: str) -> range:
        r = profile.api_range(api)
        return range(r.min_version, r.max_version + 1)

    def join(version: int, *, empty: bool, member_id: str = "") -> JoinGroup:
        return JoinGroup(
            client="c1",
            member_id=member_id,
            session_timeout_ms=10_000,
            rebalance_timeout_ms=10_000,
            protocols=protocols,
            version=version,
            empty_group_id=empty,
        )

    def sync(version: int, **fields: object) -> SyncGroup:
        named = {"protocol_type": "consumer", "protocol_name": "range"} if version >= 5 else {}
        return SyncGroup(
            client="c1",
            member_id="c1-1",
            generation_id=1,
            assignments=(Assignment(member_id="c1-1", assignment="a"),),
            version=version,
            **{**named, **fields},  # type: ignore[arg-type]
        )

    def heartbeat(version: int, *, empty: bool) -> Heartbeat:
        return Heartbeat(
            client="c1", member_id="c1-1", generation_id=1, version=version, empty_group_id=empty
        )

    history: list = [
        join(3, empty=False),
        Tick(ms=run.delay_ms + 300),
        sync(3),
        *(join(v, empty=True, member_id="c1-1" if v % 2 else "") for v in versions("JoinGroup")),
        *(sync(v, empty_group_id=True) for v in versions("SyncGroup")),
        sync(5, empty_group_id=True, protocol_type=None, protocol_name=None),
        *(heartbeat(v, empty=True) for v in versions("Heartbeat")),
        *(
            LeaveGroup(
                client="c1",
                members=(MemberIdentity(member_id="c1-1"),),
                version=v,
                empty_group_id=True,
            )
            for v in versions("LeaveGroup")
        ),
        heartbeat(3, empty=False),
    ]
    return history


def test_the_empty_group_id_is_refused_and_leaves_the_group_alone(kgc_broker) -> None:  # noqa: ANN001
    engine, trace, answers = classic_run(kgc_broker, "kgc-empty-", _history)
    assert engine.divergence is None, render(trace)
    refused = answers[2:-1]
    assert refused, render(trace)
    errors = [(type(r).__name__, r.error) for r in refused]
    assert ("SyncGroupResponse", "INCONSISTENT_GROUP_PROTOCOL") in errors
    assert {e for _, e in errors} == {"INVALID_GROUP_ID", "INCONSISTENT_GROUP_PROTOCOL"}, errors
    kinds = {type(r) for r in refused}
    assert kinds == {JoinGroupResponse, SyncGroupResponse, HeartbeatResponse, LeaveGroupResponse}
    assert answers[-1] == HeartbeatResponse(error="NONE"), render(trace)
