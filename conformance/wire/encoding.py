"""The model's vocabulary (``kgc.model.commands``) <-> Kafka wire messages (kafka-python classes).

Role: the only place that knows both sides. :func:`encode` turns a model command into a kafka-python
request object at the command's pinned ``version``; :func:`decode` turns the decoded response back
into the model's response record, keeping only the fields the model compares. Field names and
layouts follow Kafka's message specs (``clients/src/main/resources/common/message/*.json``, bundled
by kafka-python in ``kafka/protocol/schemas/resources``).

Member ids (:class:`MemberIds`): the broker generates member ids; the model names the n-th id handed
to client ``cK`` as ``cK-n`` (:func:`kgc.model.commands.member_name`). A real id gets its symbolic
name the first time it is revealed to a client as *its own* id: the ``member_id`` field of that
client's JoinGroup response, including the ``MEMBER_ID_REQUIRED`` answer (KIP-394). Ids that show up
elsewhere first (a leader's member list, DescribeGroups, a LeaveGroup result) are *not* named on
sight, because their owner is not known. Callers handle that in two passes (see
:func:`learn_own_id`, :func:`all_ids_known`): register the own id of every response that arrived
together, then decode; if an id is still unknown, wait a little for its owner's answer. If it never
comes, :func:`decode` names it ``unknown-<real id>``, which no model state allows, so the checker
reports the divergence instead of the adapter hiding it.

Outgoing symbolic ids the broker never revealed (a model command naming ``stranger`` or ``c1-7``
before ``c1`` got a 7th id) map to a stable fake real id ``kgc-stranger-<name>``; answers that echo
it (LeaveGroup v3+ member results) map back to the same name. ``""`` stays ``""``.

Opaque payloads: protocol metadata and assignments are the UTF-8 bytes of the model's strings;
bytes that are not UTF-8 decode with backslash escapes (visible in a divergence, never a crash).

Version coverage (what kafka-python 3.0.12 encodes; a broker accepts a sub-range, e.g. 4.x dropped
some old versions per KIP-896):

==================  ========  ==============================================================
API                 versions  layout notes
==================  ========  ==============================================================
JoinGroup           0-9       rebalance_timeout_ms v1+, group_instance_id v5+, reason v8+
SyncGroup           0-5       group_instance_id v3+, protocol_type/_name v5+
Heartbeat           0-4       group_instance_id v3+
LeaveGroup          0-5       v0-2 single ``member_id`` (exactly one member), v3+ ``members``
OffsetCommit        2-10      v10 names topics by id: pass ``topic_ids`` (name -> UUID)
OffsetFetch         1-10      v8+ batched ``groups`` layout (one group); v10 topic ids
DescribeGroups      0-6
FindCoordinator     0-6       v0-3 ``key``, v4+ batched ``coordinator_keys`` (one key)
==================  ========  ==============================================================

Normalisations (each makes one model field version-independent; all documented on the field):

* JoinGroup ``protocol_name``: v0-6 cannot encode null and send ``""`` on errors; an error
  response's ``""`` decodes as ``None`` like v7+'s null.
* OffsetFetch ``error``: v0-1 have no top-level error code (``"NONE"``); v8+ use the group's.
* OffsetFetch partition ``metadata``: null decodes as ``""``.
* Member lists (JoinGroup leader's ``members``, DescribeGroups ``members``) and partition lists
  are sorted (by symbolic member id; by ``(topic, partition)``); LeaveGroup results keep request
  order, as the model's record says.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kafka.protocol.admin.groups import DescribeGroupsRequest
from kafka.protocol.consumer.group import (
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
    SyncGroupRequest,
)
from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)
from kafka.protocol.metadata.find_coordinator import FindCoordinatorRequest
from kgc.conformance.wire import client as kc
from kgc.conformance.wire.client import error_name
from kgc.model import commands as m
from kgc.model.errors import NONE

__all__ = [
    "MemberIds",
    "REQUEST_CLASSES",
    "all_ids_known",
    "decode",
    "encode",
    "learn_own_id",
]

FAKE_ID_PREFIX = "kgc-stranger-"
UNKNOWN_PREFIX = "unknown-"

#: model command type -> kafka-python request class
REQUEST_CLASSES: dict[str, Any] = {
    "JoinGroup": JoinGroupRequest,
    "SyncGroup": SyncGroupRequest,
    "Heartbeat": HeartbeatRequest,
    "LeaveGroup": LeaveGroupRequest,
    "OffsetCommit": OffsetCommitRequest,
    "OffsetFetch": OffsetFetchRequest,
    "DescribeGroups": DescribeGroupsRequest,
    "FindCoordinator": FindCoordinatorRequest,
}


# ------------------------------------------------------------------------------------ member ids


class MemberIds:
    """Real <-> symbolic member ids for one group (see the module docstring for the rule)."""

    def __init__(self) -> None:
        self._symbolic: dict[str, str] = {}  # real -> symbolic
        self._real: dict[str, str] = {}  # symbolic -> real (revealed ids only)
        self._count: dict[str, int] = {}  # client -> ids revealed to it
        self._fake: dict[str, str] = {}  # fake real id -> symbolic name

    def symbolic(self, real: str, *, owner_client: str | None = None) -> str | None:
        """Symbolic name of ``real``. With ``owner_client`` (the id was revealed to that client as
        its own), an unseen id gets the client's next name ``cK-(n+1)``. Without it, an unseen id
        gives ``None``: the caller defers until the owner's answer arrives."""
        if real == m.NO_MEMBER_ID:
            return m.NO_MEMBER_ID
        known = self._symbolic.get(real) or self._fake.get(real)
        if known is not None:
            return known
        if owner_client is None:
            return None
        n = self._count.get(owner_client, 0) + 1
        name = m.member_name(owner_client, n)
        self._count[owner_client] = n
        self._symbolic[real] = name
        self._real[name] = real
        return name

    def real(self, symbolic: str) -> str:
        """Real id to send for ``symbolic``; an unrevealed name gets a stable fake id."""
        if symbolic == m.NO_MEMBER_ID:
            return m.NO_MEMBER_ID
        real = self._real.get(symbolic)
        if real is not None:
            return real
        fake = FAKE_ID_PREFIX + symbolic
        self._fake[fake] = symbolic
        return fake

    def chosen(self, member_id: str) -> None:
        """A member id the client chose itself (ConsumerGroupHeartbeat, KIP-1082): its symbolic
        name is the real id, for every later request that names it (OffsetCommit, OffsetFetch)."""
        if member_id != m.NO_MEMBER_ID and member_id not in self._real:
            self._real[member_id] = member_id
            self._symbolic[member_id] = member_id

    def name_or_unknown(self, real: str) -> str:
        """Symbolic name, or ``unknown-<real>`` for an id no client was ever told is its own."""
        name = self.symbolic(real)
        return UNKNOWN_PREFIX + real if name is None else name

    def as_dict(self) -> dict[str, str]:
        """``symbolic -> real`` for every revealed id (for traces)."""
        return dict(self._real)

    def __len__(self) -> int:
        return len(self._real)

    def __repr__(self) -> str:
        return f"MemberIds({self._real!r})"


# --------------------------------------------------------------------------------------- encode


def _utf8(s: str) -> bytes:
    return s.encode("utf-8")


def _text(b: bytes | None) -> str:
    if b is None:
        return ""
    return bytes(b).decode("utf-8", errors="backslashreplace")


# ---- consumer-protocol payloads ------------------------------------------------------------------
# With protocol_type "consumer", Kafka 4.x's coordinator *parses* JoinGroup metadata as a
# ConsumerProtocolSubscription (and assignments as ConsumerProtocolAssignment); bytes that do not
# parse make its join timer's write fail, and the join never completes (found by this suite on
# 4.3.1: "Tried to allocate a collection of size 1953460329"). So the model's opaque strings have a
# canonical JSON form for these two structures, sent as the real encoding:
#   subscription  {"topics": ["t1", …]}            -> ConsumerProtocolSubscription v0
#   assignment    {"t1": [0, 2], …}               -> ConsumerProtocolAssignment v0
# Any string not starting with "{" is sent as its raw UTF-8 bytes. Decoding turns bytes back into
# the canonical JSON only when they decode *and* re-encode to the same bytes; else UTF-8 text.


def _metadata_bytes(s: str) -> bytes:
    if not s.startswith("{"):
        return _utf8(s)
    obj = json.loads(s)
    sub = ConsumerProtocolSubscription(version=0, topics=list(obj["topics"]), user_data=None)
    return bytes(sub.encode(version=0))


def _assignment_bytes(s: str) -> bytes:
    if not s.startswith("{"):
        return _utf8(s)
    obj = json.loads(s)
    parts = [
        ConsumerProtocolAssignment.TopicPartition(topic=t, partitions=list(ps))
        for t, ps in sorted(obj.items())
    ]
    return bytes(
        ConsumerProtocolAssignment(version=0, assigned_partitions=parts, user_data=None).encode(
            version=0
        )
    )


def _metadata_text(b: bytes | None) -> str:
    raw = b"" if b is None else bytes(b)
    try:
        sub = ConsumerProtocolSubscription.decode(raw)
        canonical = json.dumps({"topics": list(sub.topics)}, sort_keys=True)
        if raw and _metadata_bytes(canonical) == raw:
            return canonical
    except Exception:  # noqa: BLE001 - not a subscription: fall back to text
        pass
    return _text(raw)


def _assignment_text(b: bytes | None) -> str:
    raw = b"" if b is None else bytes(b)
    try:
        a = ConsumerProtocolAssignment.decode(raw)
        canonical = json.dumps(
            {tp.topic: list(tp.partitions) for tp in a.assigned_partitions}, sort_keys=True
        )
        if raw and _assignment_bytes(canonical) == raw:
            return canonical
    except Exception:  # noqa: BLE001 - not an assignment: fall back to text
        pass
    return _text(raw)


def request_class(api: str) -> Any:
    """The kafka-python request class of a model command type: kafka-python's own, or for the
    KIP-848 APIs one built from Kafka's message specs (``message_specs.py``, fetched on first
    use)."""
    if api in REQUEST_CLASSES:
        return REQUEST_CLASSES[api]
    from kgc.conformance.wire.message_specs import message_classes

    return message_classes(api)[0]


def _check_version(command: m.Request) -> int:
    cls = request_class(command.type)
    v = command.version
    lo, hi = cls.valid_versions
    if not lo <= v <= hi:
        raise ValueError(f"{command.type} v{v}: kafka-python encodes v{lo}-v{hi}")
    return v


def encode(
    command: m.Request,
    group_id: str,
    ids: MemberIds,
    *,
    topic_ids: Mapping[str, Any] | None = None,
) -> tuple[Any, int]:
    """``(kafka-python request object, version)`` for a model command at ``command.version``.

    ``group_id`` is not part of the model's vocabulary; the caller owns it. ``topic_ids`` (topic
    name -> ``uuid.UUID``) is needed only for OffsetCommit/OffsetFetch v10+, which name topics by
    id. Raises ``ValueError`` for a version kafka-python cannot encode or a command the version
    cannot express (LeaveGroup v0-2 with other than one member).
    """
    v = _check_version(command)
    match command:
        case m.JoinGroup():
            req: Any = kc.join_group_request(
                group_id,
                session_timeout_ms=command.session_timeout_ms,
                rebalance_timeout_ms=command.rebalance_timeout_ms,
                member_id=ids.real(command.member_id),
                group_instance_id=command.group_instance_id,
                protocol_type=command.protocol_type,
                protocols=[(p.name, _metadata_bytes(p.metadata)) for p in command.protocols],
            )
        case m.SyncGroup():
            req = kc.sync_group_request(
                group_id,
                generation_id=command.generation_id,
                member_id=ids.real(command.member_id),
                group_instance_id=command.group_instance_id,
                protocol_type=command.protocol_type,
                protocol_name=command.protocol_name,
                assignments=[
                    (ids.real(a.member_id), _assignment_bytes(a.assignment))
                    for a in command.assignments
                ],
            )
        case m.Heartbeat():
            req = kc.heartbeat_request(
                group_id,
                generation_id=command.generation_id,
                member_id=ids.real(command.member_id),
                group_instance_id=command.group_instance_id,
            )
        case m.LeaveGroup():
            req = kc.leave_group_request(
                group_id,
                [(ids.real(x.member_id), x.group_instance_id) for x in command.members],
                version=v,
            )
        case m.OffsetCommit():
            req = kc.offset_commit_request(
                group_id,
                generation_id=command.generation_id,
                member_id=ids.real(command.member_id),
                group_instance_id=command.group_instance_id,
                offsets=[(o.topic, o.partition, o.offset, o.metadata) for o in command.offsets],
                topic_ids=topic_ids,
                version=v,
            )
        case m.OffsetFetch():
            req = kc.offset_fetch_request(
                group_id,
                [(tp.topic, tp.partition) for tp in command.partitions],
                topic_ids=topic_ids,
                member_id=None if command.member_id is None else ids.real(command.member_id),
                member_epoch=command.member_epoch,
                version=v,
            )
        case m.DescribeGroups():
            req = kc.describe_groups_request([group_id])
        case m.FindCoordinator():
            req = kc.find_coordinator_request(group_id, version=v)
        case m.ConsumerGroupHeartbeat():
            owned = None
            if command.topic_partitions is not None:
                by_topic: dict[str, list[int]] = {}
                for tp in command.topic_partitions:
                    by_topic.setdefault(tp.topic, []).append(tp.partition)
                owned = [(_topic_id(t, topic_ids), ps) for t, ps in sorted(by_topic.items())]
            if command.subscribed_topic_regex is not None and v < 1:
                raise ValueError("SubscribedTopicRegex is a ConsumerGroupHeartbeat v1 field")
            ids.chosen(command.member_id)
            req = kc.consumer_group_heartbeat_request(
                group_id,
                command.member_id,  # client-chosen (KIP-1082): the symbolic id is the real one
                command.member_epoch,
                instance_id=command.instance_id,
                rebalance_timeout_ms=command.rebalance_timeout_ms,
                subscribed_topic_names=command.subscribed_topic_names,
                subscribed_topic_regex=command.subscribed_topic_regex,
                server_assignor=command.server_assignor,
                topic_partitions=owned,
                version=v,
            )
        case m.ConsumerGroupDescribe():
            req = kc.consumer_group_describe_request([group_id], version=v)
        case _:
            raise TypeError(f"not a request command: {command!r}")
    req.API_VERSION = v
    return req, v


def _topic_id(topic: str, topic_ids: Mapping[str, Any] | None) -> Any:
    if topic_ids is None or topic not in topic_ids:
        raise ValueError(
            f"ConsumerGroupHeartbeat names topics by id: pass topic_ids with {topic!r}"
        )
    return topic_ids[topic]


def _partitions_by_name(topics: Any, names: dict[Any, str]) -> tuple[m.TopicPartition, ...]:
    """Wire ``[{topic_id, partitions}]`` -> the model's sorted (topic, partition) records; an id
    no topic of the run has becomes ``unknown-topic-<id>`` (a visible divergence)."""
    out = [
        m.TopicPartition(topic=names.get(t.topic_id, f"unknown-topic-{t.topic_id}"), partition=p)
        for t in topics or ()
        for p in t.partitions
    ]
    return tuple(sorted(out, key=lambda tp: (tp.topic, tp.partition)))


# --------------------------------------------------------------------------------------- decode


def learn_own_id(command: m.Request, response: Any, ids: MemberIds) -> str | None:
    """Register the id a JoinGroup response reveals to ``command.client`` as its own (also on
    errors such as ``MEMBER_ID_REQUIRED``); return its symbolic name. Other responses reveal no own
    id: ``None``. Idempotent."""
    if isinstance(command, m.JoinGroup) and response.member_id:
        return ids.symbolic(response.member_id, owner_client=command.client)
    return None


def _member_ids_in(command: m.Request, response: Any) -> list[str]:
    """Real member ids a response mentions besides the receiver's own JoinGroup id."""
    match command:
        case m.JoinGroup():
            return [response.leader, *(x.member_id for x in response.members)]
        case m.LeaveGroup():
            return [x.member_id for x in (response.members or ())]
        case m.DescribeGroups():
            return [x.member_id for g in response.groups for x in g.members]
        case _:
            return []


def member_ids_in(command: m.Request, response: Any) -> list[str]:
    """Every member id a decoded response mentions (own id and lists)."""
    return _member_ids_in(command, response)


def all_ids_known(command: m.Request, response: Any, ids: MemberIds) -> bool:
    """Whether every member id in ``response`` already has a symbolic name (call
    :func:`learn_own_id` on every response that arrived together first)."""
    return all(ids.symbolic(r) is not None for r in _member_ids_in(command, response))


def decode(
    command: m.Request,
    response: Any,
    ids: MemberIds,
    *,
    topic_ids: Mapping[str, Any] | None = None,
) -> m.Response:
    """The model's response record for a decoded kafka-python response to ``command``.

    Learns the JoinGroup own id first (:func:`learn_own_id`). Ids still unknown are named
    ``unknown-<real id>`` (see the module docstring). ``topic_ids`` maps names to ids for
    OffsetCommit/OffsetFetch v10+ responses, which carry only topic ids.
    """
    name = ids.name_or_unknown
    match command:
        case m.JoinGroup():
            own = learn_own_id(command, response, ids)
            error = error_name(response.error_code)
            protocol_name = response.protocol_name
            if protocol_name == "" and error != NONE and command.version < 7:
                protocol_name = None
            members = sorted(
                (
                    m.JoinedMember(
                        member_id=name(x.member_id),
                        group_instance_id=x.group_instance_id,
                        metadata=_metadata_text(x.metadata),
                    )
                    for x in response.members
                ),
                key=lambda j: j.member_id,
            )
            return m.JoinGroupResponse(
                error=error,
                generation_id=response.generation_id,
                protocol_name=protocol_name,
                leader=name(response.leader),
                member_id=own if own is not None else m.NO_MEMBER_ID,
                members=tuple(members),
            )
        case m.SyncGroup():
            return m.SyncGroupResponse(
                error=error_name(response.error_code),
                assignment=_assignment_text(response.assignment),
            )
        case m.Heartbeat():
            return m.HeartbeatResponse(error=error_name(response.error_code))
        case m.LeaveGroup():
            return m.LeaveGroupResponse(
                error=error_name(response.error_code),
                members=tuple(
                    m.MemberResult(
                        member_id=name(x.member_id),
                        group_instance_id=x.group_instance_id,
                        error=error_name(x.error_code),
                    )
                    for x in (response.members or ())
                ),
            )
        case m.OffsetCommit():
            names = _names_by_id(topic_ids)
            return m.OffsetCommitResponse(
                partitions=tuple(
                    sorted(
                        (
                            m.PartitionError(
                                topic=_topic_name(t, command.version, names),
                                partition=p.partition_index,
                                error=error_name(p.error_code),
                            )
                            for t in response.topics
                            for p in t.partitions
                        ),
                        key=lambda x: (x.topic, x.partition),
                    )
                )
            )
        case m.OffsetFetch():
            names = _names_by_id(topic_ids)
            v = command.version
            if v >= 8:
                if len(response.groups) != 1:
                    raise ValueError(f"OffsetFetch v{v}: expected one group, got {response!r}")
                group = response.groups[0]
                error = error_name(group.error_code)
                topics = group.topics
            else:
                error = error_name(response.error_code) if v >= 2 else NONE
                topics = response.topics
            return m.OffsetFetchResponse(
                error=error,
                partitions=tuple(
                    sorted(
                        (
                            m.FetchedOffset(
                                topic=_topic_name(t, v, names),
                                partition=p.partition_index,
                                offset=p.committed_offset,
                                metadata=p.metadata or "",
                                error=error_name(p.error_code),
                            )
                            for t in topics
                            for p in t.partitions
                        ),
                        key=lambda x: (x.topic, x.partition),
                    )
                ),
            )
        case m.DescribeGroups():
            if len(response.groups) != 1:
                raise ValueError(f"DescribeGroups: expected one group, got {response!r}")
            g = response.groups[0]
            return m.DescribeGroupsResponse(
                error=error_name(g.error_code),
                group_state=g.group_state,
                protocol_type=g.protocol_type,
                protocol_data=g.protocol_data,
                members=tuple(
                    sorted(
                        (
                            m.DescribedMember(
                                member_id=name(x.member_id),
                                group_instance_id=x.group_instance_id,
                                assignment=_assignment_text(x.member_assignment),
                            )
                            for x in g.members
                        ),
                        key=lambda d: d.member_id,
                    )
                ),
            )
        case m.FindCoordinator():
            if command.version >= 4:
                if len(response.coordinators) != 1:
                    raise ValueError(f"FindCoordinator: expected one coordinator, got {response!r}")
                c = response.coordinators[0]
                return m.FindCoordinatorResponse(error=error_name(c.error_code), node_id=c.node_id)
            return m.FindCoordinatorResponse(
                error=error_name(response.error_code), node_id=response.node_id
            )
        case m.ConsumerGroupHeartbeat():
            names = _names_by_id(topic_ids)
            error = error_name(response.error_code)
            return m.ConsumerGroupHeartbeatResponse(
                error=error,
                member_id=response.member_id,
                member_epoch=response.member_epoch,
                heartbeat_interval_ms=response.heartbeat_interval_ms,
                assignment=None
                if response.assignment is None
                else _partitions_by_name(response.assignment.topic_partitions, names),
            )
        case m.ConsumerGroupDescribe():
            names = _names_by_id(topic_ids)
            groups = list(response.groups or ())
            if len(groups) != 1:
                return m.ConsumerGroupDescribeResponse(error=f"ANSWERED_{len(groups)}_GROUPS")
            g = groups[0]
            error = error_name(g.error_code)
            if error != NONE:
                return m.ConsumerGroupDescribeResponse(error=error)
            members = sorted(
                (
                    m.ConsumerMember(
                        # a classic member of a consumer group (online migration) has an id the
                        # broker made: its symbolic name, as in every other answer
                        member_id=name(x.member_id),
                        instance_id=x.instance_id,
                        member_epoch=x.member_epoch,
                        subscribed_topic_names=tuple(sorted(x.subscribed_topic_names or ())),
                        subscribed_topic_regex=x.subscribed_topic_regex or None,
                        member_type=x.member_type if command.version >= 1 else -1,
                        assignment=_partitions_by_name(x.assignment.topic_partitions, names),
                        target_assignment=_partitions_by_name(
                            x.target_assignment.topic_partitions, names
                        ),
                    )
                    for x in g.members
                ),
                key=lambda x: x.member_id,
            )
            return m.ConsumerGroupDescribeResponse(
                error=error,
                group_state=g.group_state,
                group_epoch=g.group_epoch,
                assignment_epoch=g.assignment_epoch,
                assignor_name=g.assignor_name,
                members=tuple(members),
            )
        case _:
            raise TypeError(f"not a request command: {command!r}")


def _names_by_id(topic_ids: Mapping[str, Any] | None) -> dict[Any, str]:
    return {} if topic_ids is None else {tid: name for name, tid in topic_ids.items()}


def _topic_name(topic: Any, version: int, names: dict[Any, str]) -> str:
    if version >= 10:
        return names.get(topic.topic_id, f"topic-id-{topic.topic_id}")
    return str(topic.name)
