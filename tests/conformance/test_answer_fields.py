"""Every field a broker answers is compared, or left out for a reason written here (issue 29,
"A stricter checker", item 1). No broker.

For each request type the suite sends (``conformance/wire/requests.py`` ``REQUESTS``), the fields
of its response message at every version (kafka-python's classes carry Kafka's JSON message spec,
``clients/src/main/resources/common/message/*Response.json``; the KIP-848 ones are built from
those specs, ``message_specs.py``) are listed by path (``Members.ClientId``). Each is either

* ``CARRIED`` into the model's response record (``model/commands.py``), at the record path given
  (``members.client_id``; list items without indices): the decoder puts it there and the model
  predicts it, per version (a field a version lacks is ``None``/its default on both sides); or
* ``EXCLUDED`` with the reason it is not compared, or how else it is checked.

A new field in a spec, or a record field no wire field feeds, fails here until it is placed.
That the decoders really carry the fields is shown value by value in ``test_wire.py`` (and
``test_list_groups_wire.py``); that the model predicts them, in ``tests/model/
test_answer_fields_model.py``; that Kafka answers so, by every broker run.
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any, get_args, get_origin, get_type_hints

import pytest
from kgc.conformance.wire.message_specs import message_classes
from kgc.conformance.wire.requests import REQUESTS
from kgc.model import commands as m

THROTTLE = (
    "quota throttling (KIP-219): a broker-wide quota matter, not a group rule; the suite's "
    "brokers have no quotas"
)
TEXT = (
    "free text for people (Kafka's own clients only log it); the error code beside it is compared"
)
OWN_GROUP = (
    "echo of the group id asked for: the decoder answers ANSWERED_OTHER_GROUP (a divergence) "
    "when it is not the run's own group id"
)
AUTHORIZED_OPERATIONS = (
    "ACLs are outside the model: the suite never asks for them (IncludeAuthorizedOperations "
    "false), and the suite's brokers run without an authorizer"
)
COORDINATOR_ADDRESS = (
    "where node_id listens is a Metadata fact (advertised listeners), not a group rule; the "
    "member connections reach node_id at Metadata's address, so a wrong one fails to connect"
)
TOPIC_ID = "the decoder maps topic ids to the topic names the model speaks of (topics.id → name)"

#: request type -> response field path -> the model record's field path
CARRIED: dict[str, dict[str, str]] = {
    "JoinGroup": {
        "ErrorCode": "error",
        "GenerationId": "generation_id",
        "ProtocolType": "protocol_type",
        "ProtocolName": "protocol_name",
        "Leader": "leader",
        "SkipAssignment": "skip_assignment",
        "MemberId": "member_id",
        "Members.MemberId": "members.member_id",
        "Members.GroupInstanceId": "members.group_instance_id",
        "Members.Metadata": "members.metadata",
    },
    "SyncGroup": {
        "ErrorCode": "error",
        "ProtocolType": "protocol_type",
        "ProtocolName": "protocol_name",
        "Assignment": "assignment",
    },
    "Heartbeat": {"ErrorCode": "error"},
    "LeaveGroup": {
        "ErrorCode": "error",
        "Members.MemberId": "members.member_id",
        "Members.GroupInstanceId": "members.group_instance_id",
        "Members.ErrorCode": "members.error",
    },
    "OffsetCommit": {
        "Topics.Name": "partitions.topic",
        "Topics.TopicId": "partitions.topic",
        "Topics.Partitions.PartitionIndex": "partitions.partition",
        "Topics.Partitions.ErrorCode": "partitions.error",
    },
    "OffsetFetch": {
        "ErrorCode": "error",
        "Topics.Name": "partitions.topic",
        "Topics.Partitions.PartitionIndex": "partitions.partition",
        "Topics.Partitions.CommittedOffset": "partitions.offset",
        "Topics.Partitions.CommittedLeaderEpoch": "partitions.leader_epoch",
        "Topics.Partitions.Metadata": "partitions.metadata",
        "Topics.Partitions.ErrorCode": "partitions.error",
        "Groups.ErrorCode": "error",
        "Groups.Topics.Name": "partitions.topic",
        "Groups.Topics.TopicId": "partitions.topic",
        "Groups.Topics.Partitions.PartitionIndex": "partitions.partition",
        "Groups.Topics.Partitions.CommittedOffset": "partitions.offset",
        "Groups.Topics.Partitions.CommittedLeaderEpoch": "partitions.leader_epoch",
        "Groups.Topics.Partitions.Metadata": "partitions.metadata",
        "Groups.Topics.Partitions.ErrorCode": "partitions.error",
    },
    "DescribeGroups": {
        "Groups.ErrorCode": "error",
        "Groups.GroupState": "group_state",
        "Groups.ProtocolType": "protocol_type",
        "Groups.ProtocolData": "protocol_data",
        "Groups.Members.MemberId": "members.member_id",
        "Groups.Members.GroupInstanceId": "members.group_instance_id",
        "Groups.Members.ClientId": "members.client_id",
        "Groups.Members.ClientHost": "members.client_host",
        "Groups.Members.MemberMetadata": "members.metadata",
        "Groups.Members.MemberAssignment": "members.assignment",
    },
    "FindCoordinator": {
        "ErrorCode": "error",
        "NodeId": "node_id",
        "Coordinators.NodeId": "node_id",
        "Coordinators.ErrorCode": "error",
    },
    "ListGroups": {
        "ErrorCode": "error",
        "Groups.ProtocolType": "groups.protocol_type",
        "Groups.GroupState": "groups.group_state",
        "Groups.GroupType": "groups.group_type",
    },
    "DeleteGroups": {"Results.ErrorCode": "error"},
    "OffsetDelete": {
        "ErrorCode": "error",
        "Topics.Name": "partitions.topic",
        "Topics.Partitions.PartitionIndex": "partitions.partition",
        "Topics.Partitions.ErrorCode": "partitions.error",
    },
    "ConsumerGroupHeartbeat": {
        "ErrorCode": "error",
        "MemberId": "member_id",
        "MemberEpoch": "member_epoch",
        "HeartbeatIntervalMs": "heartbeat_interval_ms",
        "Assignment": "assignment",
        "Assignment.TopicPartitions.TopicId": "assignment.topic",
        "Assignment.TopicPartitions.Partitions": "assignment.partition",
    },
    "ConsumerGroupDescribe": {
        "Groups.ErrorCode": "error",
        "Groups.GroupState": "group_state",
        "Groups.GroupEpoch": "group_epoch",
        "Groups.AssignmentEpoch": "assignment_epoch",
        "Groups.AssignorName": "assignor_name",
        "Groups.Members.MemberId": "members.member_id",
        "Groups.Members.InstanceId": "members.instance_id",
        "Groups.Members.MemberEpoch": "members.member_epoch",
        "Groups.Members.SubscribedTopicNames": "members.subscribed_topic_names",
        "Groups.Members.SubscribedTopicRegex": "members.subscribed_topic_regex",
        "Groups.Members.MemberType": "members.member_type",
        "Groups.Members.Assignment.TopicPartitions.TopicId": "members.assignment.topic",
        "Groups.Members.Assignment.TopicPartitions.Partitions": "members.assignment.partition",
        "Groups.Members.TargetAssignment.TopicPartitions.TopicId": (
            "members.target_assignment.topic"
        ),
        "Groups.Members.TargetAssignment.TopicPartitions.Partitions": (
            "members.target_assignment.partition"
        ),
    },
    "ShareGroupHeartbeat": {
        "ErrorCode": "error",
        "MemberId": "member_id",
        "MemberEpoch": "member_epoch",
        "HeartbeatIntervalMs": "heartbeat_interval_ms",
        "Assignment": "assignment",
        "Assignment.TopicPartitions.TopicId": "assignment.topic",
        "Assignment.TopicPartitions.Partitions": "assignment.partition",
    },
    "ShareGroupDescribe": {
        "Groups.ErrorCode": "error",
        "Groups.GroupState": "group_state",
        "Groups.GroupEpoch": "group_epoch",
        "Groups.AssignmentEpoch": "assignment_epoch",
        "Groups.AssignorName": "assignor_name",
        "Groups.Members.MemberId": "members.member_id",
        "Groups.Members.RackId": "members.rack_id",
        "Groups.Members.MemberEpoch": "members.member_epoch",
        "Groups.Members.ClientId": "members.client_id",
        "Groups.Members.SubscribedTopicNames": "members.subscribed_topic_names",
        "Groups.Members.Assignment.TopicPartitions.TopicId": "members.assignment.topic",
        "Groups.Members.Assignment.TopicPartitions.Partitions": "members.assignment.partition",
    },
    "InitProducerId": {
        "ErrorCode": "error",
        "ProducerId": "producer_id",
        "ProducerEpoch": "producer_epoch",
    },
    "AddOffsetsToTxn": {"ErrorCode": "error"},
    "TxnOffsetCommit": {
        "Topics.Name": "partitions.topic",
        "Topics.Partitions.PartitionIndex": "partitions.partition",
        "Topics.Partitions.ErrorCode": "partitions.error",
    },
    "EndTxn": {
        "ErrorCode": "error",
        "ProducerId": "producer_id",
        "ProducerEpoch": "producer_epoch",
    },
}

#: request type -> response field path -> why it is not compared
EXCLUDED: dict[str, dict[str, str]] = {
    "JoinGroup": {"ThrottleTimeMs": THROTTLE},
    "SyncGroup": {"ThrottleTimeMs": THROTTLE},
    "Heartbeat": {"ThrottleTimeMs": THROTTLE},
    "LeaveGroup": {"ThrottleTimeMs": THROTTLE},
    "OffsetCommit": {"ThrottleTimeMs": THROTTLE},
    "OffsetFetch": {"ThrottleTimeMs": THROTTLE, "Groups.GroupId": OWN_GROUP},
    "DescribeGroups": {
        "ThrottleTimeMs": THROTTLE,
        "Groups.ErrorMessage": TEXT,
        "Groups.GroupId": OWN_GROUP,
        "Groups.AuthorizedOperations": AUTHORIZED_OPERATIONS,
    },
    "FindCoordinator": {
        "ThrottleTimeMs": THROTTLE,
        "ErrorMessage": TEXT,
        "Host": COORDINATOR_ADDRESS,
        "Port": COORDINATOR_ADDRESS,
        "Coordinators.Key": OWN_GROUP,
        "Coordinators.Host": COORDINATOR_ADDRESS,
        "Coordinators.Port": COORDINATOR_ADDRESS,
        "Coordinators.ErrorMessage": TEXT,
    },
    "ListGroups": {
        "ThrottleTimeMs": THROTTLE,
        "Groups.GroupId": (
            "picks the run's own group out of every group the broker lists: the model speaks of "
            "that group alone (commands.ListGroupsResponse); other groups are other examples'"
        ),
    },
    "DeleteGroups": {
        "ThrottleTimeMs": THROTTLE,
        "Results.GroupId": (
            "echo of the one group id asked for: the decoder answers ANSWERED_OTHER_GROUP (a "
            "divergence) when it is not the run's own group id, or when there is not one result"
        ),
    },
    "OffsetDelete": {"ThrottleTimeMs": THROTTLE},
    "ConsumerGroupHeartbeat": {"ThrottleTimeMs": THROTTLE, "ErrorMessage": TEXT},
    "ConsumerGroupDescribe": {
        "ThrottleTimeMs": THROTTLE,
        "Groups.ErrorMessage": TEXT,
        "Groups.GroupId": OWN_GROUP,
        "Groups.AuthorizedOperations": AUTHORIZED_OPERATIONS,
        "Groups.Members.Assignment.TopicPartitions.TopicName": (
            "not yet compared: the name beside the topic id, which the decoder maps to the name "
            "itself (issue 29 item 1 follow-up: check it equals the id's name)"
        ),
        "Groups.Members.TargetAssignment.TopicPartitions.TopicName": (
            "not yet compared: as Assignment.TopicPartitions.TopicName"
        ),
        "Groups.Members.RackId": (
            "not yet modelled for KIP-848 members (model/consumer/group.py keeps no rack; the "
            "suite's consumers send none, so Kafka answers null): issue 29 item 1 follow-up"
        ),
        "Groups.Members.ClientId": (
            "not yet modelled for KIP-848 members (model/consumer/group.py keeps no client id): "
            "issue 29 item 1 follow-up; the classic DescribeGroups' ClientId is compared"
        ),
        "Groups.Members.ClientHost": (
            "not yet modelled for KIP-848 members: as Groups.Members.ClientId"
        ),
    },
    "ShareGroupHeartbeat": {"ThrottleTimeMs": THROTTLE, "ErrorMessage": TEXT},
    "ShareGroupDescribe": {
        "ThrottleTimeMs": THROTTLE,
        "Groups.ErrorMessage": TEXT,
        "Groups.GroupId": OWN_GROUP,
        "Groups.AuthorizedOperations": AUTHORIZED_OPERATIONS,
        "Groups.Members.ClientHost": (
            "the connection's address as the broker saw it (``/127.0.0.1``): it names the "
            "machine the suite runs on, not a share-group rule (commands.ShareMember)"
        ),
        "Groups.Members.Assignment.TopicPartitions.TopicName": (
            "not yet compared: the name beside the topic id, which the decoder maps to the name "
            "itself (as ConsumerGroupDescribe's)"
        ),
    },
    "InitProducerId": {
        "ThrottleTimeMs": THROTTLE,
        "OngoingTxnProducerId": (
            "v6 (KIP-939, two-phase commit) only, which the suite does not send: 4.3.1 does not "
            "offer it (latestVersionUnstable)"
        ),
        "OngoingTxnProducerEpoch": "v6 only, as OngoingTxnProducerId",
    },
    "AddOffsetsToTxn": {"ThrottleTimeMs": THROTTLE},
    "TxnOffsetCommit": {"ThrottleTimeMs": THROTTLE},
    "EndTxn": {"ThrottleTimeMs": THROTTLE},
}


def _response_class(name: str) -> Any:
    w = REQUESTS[name]
    if w.request_class is None:
        return message_classes(name)[1]
    module = importlib.import_module(w.request_class.__module__)
    return getattr(module, f"{name}Response")


def _spec_fields(fields: list[dict[str, Any]], prefix: str = "") -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for f in fields:
        path = f"{prefix}{f['name']}"
        out[path] = f
        if "fields" in f:
            out.update(_spec_fields(f["fields"], f"{path}."))
    return out


def spec_fields(name: str) -> dict[str, dict[str, Any]]:
    """Every field of ``name``'s response message at any version, by path."""
    return _spec_fields(_response_class(name)._json["fields"])


def _is_container(field: dict[str, Any]) -> bool:
    """A list of records or a struct: placed through its own fields (it may also be carried
    itself, as ConsumerGroupHeartbeat's nullable ``Assignment`` is)."""
    return "fields" in field


def _record_paths(cls: type[Any], prefix: str = "") -> set[str]:
    """Leaf field paths of a response record (list items' fields as ``members.client_id``)."""
    out: set[str] = set()
    hints = get_type_hints(cls)
    for f in dataclasses.fields(cls):
        path = f"{prefix}{f.name}"
        hint = hints[f.name]
        item = None
        for arg in (hint, *get_args(hint)):
            if get_origin(arg) is tuple:
                item = get_args(arg)[0]
        if item is not None and dataclasses.is_dataclass(item):
            out.add(path)  # the list itself (present or None), as ``Assignment`` is
            out |= _record_paths(item, f"{path}.")
        else:
            out.add(path)
    return out


def _response_record(name: str) -> type[Any]:
    return getattr(m, f"{name}Response")


@pytest.mark.parametrize("name", sorted(REQUESTS))
def test_every_response_field_is_compared_or_excluded_with_a_reason(name):
    fields = spec_fields(name)
    carried = CARRIED.get(name, {})
    excluded = EXCLUDED.get(name, {})
    both = set(carried) & set(excluded)
    assert not both, f"{name}: {sorted(both)} both carried and excluded"
    placed = set(carried) | set(excluded)
    unplaced = sorted(p for p, f in fields.items() if p not in placed and not _is_container(f))
    assert not unplaced, (
        f"{name}Response fields {unplaced} are neither compared nor excluded: decode each into "
        f"the model's {name}Response (and predict it in the model), or add it to EXCLUDED with "
        "the reason it is not compared"
    )
    unknown = sorted(placed - set(fields))
    assert not unknown, f"{name}: {unknown} are not fields of {name}Response in any version"
    for path, reason in excluded.items():
        assert len(reason) > 20, f"{name}.{path}: say why it is excluded"


@pytest.mark.parametrize("name", sorted(REQUESTS))
def test_every_record_field_is_fed_by_a_wire_field(name):
    record = _response_record(name)
    paths = _record_paths(record)
    targets = set(CARRIED.get(name, {}).values())
    missing = sorted(targets - paths)
    assert not missing, f"{name}: CARRIED names {missing}, not fields of {record.__name__}"
    unfed = sorted(p for p in paths if p not in targets and not _fed_by_its_items(p, targets))
    assert not unfed, (
        f"{record.__name__} fields {unfed} come from no response field: a record field the "
        "broker never answers is one the model invents"
    )


def _fed_by_its_items(path: str, targets: set[str]) -> bool:
    """A list field is fed when its items' fields are (``partitions`` by ``partitions.topic``)."""
    return any(t.startswith(f"{path}.") for t in targets)


def test_the_named_fields_of_issue_29_are_compared():
    # the fields the decoders used to drop (issue 29, item 1)
    assert CARRIED["SyncGroup"]["ProtocolType"] == "protocol_type"
    assert CARRIED["SyncGroup"]["ProtocolName"] == "protocol_name"
    assert CARRIED["JoinGroup"]["ProtocolType"] == "protocol_type"
    for f in ("MemberMetadata", "ClientId", "ClientHost"):
        assert f"Groups.Members.{f}" in CARRIED["DescribeGroups"]
    assert "Topics.Partitions.CommittedLeaderEpoch" in CARRIED["OffsetFetch"]
    assert "Groups.Topics.Partitions.CommittedLeaderEpoch" in CARRIED["OffsetFetch"]
