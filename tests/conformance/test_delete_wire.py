"""DeleteGroups and OffsetDelete on the wire, with no broker: each request names the run's group
(and the asked partitions) at every version kafka-python encodes, and each answer decodes to the
model's record (``conformance/wire/requests.py``)."""

from __future__ import annotations

import pytest
from kafka.protocol.admin.groups import DeleteGroupsResponse
from kafka.protocol.consumer.group import OffsetDeleteResponse
from kgc.conformance.wire import encoding as wire
from kgc.conformance.wire.requests import ANSWERED_OTHER_GROUP, REQUESTS
from kgc.model import commands as m
from kgc.model.apis import KEYS
from kgc.model.requests import CLASSIC_REQUESTS

GROUP = "kgc-run-7"


def on_the_wire(req, version):  # noqa: ANN001
    req.with_header(correlation_id=7, client_id="kgc-c1")
    data = req.encode(header=True, framed=True)
    return type(req).decode(data, version=version, header=True, framed=True)


@pytest.mark.parametrize("name", ["DeleteGroups", "OffsetDelete"])
def test_the_descriptor_names_kafkas_key_and_every_drawn_version_encodes(name: str) -> None:
    assert REQUESTS[name].key == KEYS[name] == CLASSIC_REQUESTS[name].key
    low, high = REQUESTS[name].cls().valid_versions
    assert all(low <= v <= high for v in CLASSIC_REQUESTS[name].drawn_versions)


@pytest.mark.parametrize("v", range(3))
def test_delete_groups_names_the_runs_group_alone(v: int) -> None:
    got = on_the_wire(*wire.encode(m.DeleteGroups(client="c1", version=v), GROUP, wire.MemberIds()))
    assert list(got.groups_names) == [GROUP]


@pytest.mark.parametrize("v", range(3))
def test_a_delete_groups_answer_is_the_runs_groups_result(v: int) -> None:
    def answer(*results: tuple[str, int]) -> m.Response:
        data = DeleteGroupsResponse(
            throttle_time_ms=0,
            results=[
                DeleteGroupsResponse.DeletableGroupResult(group_id=g, error_code=code)
                for g, code in results
            ],
        ).encode(version=v)
        response = DeleteGroupsResponse.decode(data, version=v)
        command = m.DeleteGroups(client="c1", version=v)
        return wire.decode(command, response, wire.MemberIds(), group_id=GROUP)

    assert answer((GROUP, 68)) == m.DeleteGroupsResponse(error="NON_EMPTY_GROUP")
    assert answer((GROUP, 0)) == m.DeleteGroupsResponse(error="NONE")
    assert answer(("someone-elses", 0)).error == ANSWERED_OTHER_GROUP
    assert answer((GROUP, 0), ("kgc-run-6", 69)).error == ANSWERED_OTHER_GROUP


def test_offset_delete_names_each_partition_under_its_topic() -> None:
    command = m.OffsetDelete(
        client="c1",
        partitions=(
            m.TopicPartition(topic="t", partition=2),
            m.TopicPartition(topic="u", partition=0),
            m.TopicPartition(topic="t", partition=0),
        ),
        version=0,
    )
    got = on_the_wire(*wire.encode(command, GROUP, wire.MemberIds()))
    assert got.group_id == GROUP
    assert {t.name: sorted(p.partition_index for p in t.partitions) for t in got.topics} == {
        "t": [0, 2],
        "u": [0],
    }


def test_an_offset_delete_answer_decodes_its_errors_sorted() -> None:
    topic = OffsetDeleteResponse.OffsetDeleteResponseTopic
    partition = topic.OffsetDeleteResponsePartition
    data = OffsetDeleteResponse(
        error_code=0,
        throttle_time_ms=0,
        topics=[
            topic(
                name="t",
                partitions=[
                    partition(partition_index=1, error_code=86),
                    partition(partition_index=0, error_code=0),
                ],
            )
        ],
    ).encode(version=0)
    response = OffsetDeleteResponse.decode(data, version=0)
    command = m.OffsetDelete(client="c1", partitions=(), version=0)
    assert wire.decode(command, response, wire.MemberIds(), group_id=GROUP) == (
        m.OffsetDeleteResponse(
            error="NONE",
            partitions=(
                m.PartitionError(topic="t", partition=0, error="NONE"),
                m.PartitionError(topic="t", partition=1, error="GROUP_SUBSCRIBED_TO_TOPIC"),
            ),
        )
    )
    refused = OffsetDeleteResponse(error_code=69, throttle_time_ms=0, topics=[]).encode(version=0)
    assert wire.decode(
        command, OffsetDeleteResponse.decode(refused, version=0), wire.MemberIds(), group_id=GROUP
    ) == m.OffsetDeleteResponse(error="GROUP_ID_NOT_FOUND")


def test_a_line_without_the_request_switches_it_off() -> None:
    from kgc.conformance.wire.negotiate import negotiate
    from kgc.model import PROFILES

    broker = {KEYS["DeleteGroups"]: (0, 2), KEYS["OffsetDelete"]: (0, 0)}
    old = negotiate(broker, PROFILES["kafka-1.0"], ("DeleteGroups", "OffsetDelete"))
    assert set(old.unsupported) >= {"DeleteGroups", "OffsetDelete"}
    new = negotiate(broker, PROFILES["kafka-4.3"], ("DeleteGroups", "OffsetDelete"))
    assert new.versions["DeleteGroups"] == (0, 1, 2)
    assert new.versions["OffsetDelete"] == (0,)
