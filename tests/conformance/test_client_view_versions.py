"""The version gates of ``kgc.model.client_view`` agree with Kafka's message specs, and every
driver's requests go through them.

``INSTANCE_ID_SINCE`` and ``SYNC_PROTOCOL_SINCE`` are checked against kafka-python's request
classes, which are generated from Kafka's ``*Request.json`` (each field carries its ``versions``).
The synthetic corpus driver once built its Heartbeat with the client's ``group.instance.id`` at any
version; built through the client view, a static client's requests carry the instance id exactly
from the first version that has the field, whatever version a driver picks.
"""

from __future__ import annotations

import random

import pytest
from kafka.protocol.consumer.group import (
    HeartbeatRequest,
    JoinGroupRequest,
    OffsetCommitRequest,
    SyncGroupRequest,
)
from kgc.model.client_view import INSTANCE_ID_SINCE, SYNC_PROTOCOL_SINCE, ClientView
from kgc.model.commands import TopicPartitionOffset

REQUESTS = {
    "JoinGroup": JoinGroupRequest,
    "SyncGroup": SyncGroupRequest,
    "Heartbeat": HeartbeatRequest,
    "OffsetCommit": OffsetCommitRequest,
}


def _first_version_with(cls: type, field: str) -> int:
    return int(cls[cls.max_version].fields[field].min_version)


@pytest.mark.parametrize("api", sorted(REQUESTS))
def test_instance_id_gate_matches_the_message_spec(api: str) -> None:
    assert INSTANCE_ID_SINCE[api] == _first_version_with(REQUESTS[api], "group_instance_id")


def test_sync_protocol_gate_matches_the_message_spec() -> None:
    assert _first_version_with(SyncGroupRequest, "protocol_name") == SYNC_PROTOCOL_SINCE
    assert _first_version_with(SyncGroupRequest, "protocol_type") == SYNC_PROTOCOL_SINCE


def _static(name: str = "c1") -> ClientView:
    view = ClientView(
        client=name,
        session_timeout_ms=1000,
        rebalance_timeout_ms=1000,
        group_instance_id=f"{name}-instance",
        protocols=("range",),
        member_id=f"{name}-1",
        generation_id=1,
    )
    return view


@pytest.mark.parametrize("api", sorted(REQUESTS))
def test_a_static_clients_requests_carry_its_instance_id_only_where_the_version_has_it(
    api: str,
) -> None:
    cls = REQUESTS[api]
    view = _static()
    offsets = (TopicPartitionOffset(topic="t", partition=0, offset=1),)
    for version in range(cls.min_version, cls.max_version + 1):
        command = {
            "JoinGroup": lambda v: view.join_group(version=v),
            "SyncGroup": lambda v: view.sync_group(version=v),
            "Heartbeat": lambda v: view.heartbeat(version=v),
            "OffsetCommit": lambda v: view.offset_commit(version=v, offsets=offsets),
        }[api](version)
        expected = view.group_instance_id if version >= INSTANCE_ID_SINCE[api] else None
        assert command.group_instance_id == expected, (api, version)


def test_synthetic_driver_sends_no_instance_id_below_the_fields_first_version(monkeypatch) -> None:
    """The synthetic corpus driver, drawing from every version kafka-python encodes, never puts
    an instance id in a request version that has no such field."""
    from kgc.engine.registry import build
    from kgc.engine.target import ModelTarget
    from kgc.pipeline import synthetic
    from kgc.properties import machine

    everything = {
        api: tuple(range(cls.min_version, cls.max_version + 1)) for api, cls in REQUESTS.items()
    }
    monkeypatch.setattr(machine, "DEFAULT_VERSIONS", {**machine.DEFAULT_VERSIONS, **everything})
    record = {"profile": "kafka-4.x", "config": {"group_min_session_timeout_ms": 500}}
    checked = 0
    for seed in range(20):
        rng = random.Random(seed)
        target = ModelTarget(build(record, "kgc-synthetic"), choose=lambda o, r=rng: r.choice(o))
        driver = synthetic._Driver(rng, type("E", (), {"target": target})())
        for view in driver.views.values():
            view.group_instance_id = f"{view.client}-instance"
            view.member_id, view.generation_id = f"{view.client}-1", 1
        for _ in range(50):
            command = driver.command()
            api = type(command).__name__
            if api in INSTANCE_ID_SINCE and api != "LeaveGroup":
                checked += 1
                if command.version < INSTANCE_ID_SINCE[api]:
                    assert command.group_instance_id is None, command
    assert checked > 100
