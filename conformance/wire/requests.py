"""One descriptor per request type the suite sends: how a model command goes on the wire and back.

A :class:`WireRequest` names a request type (its name, hence its API key, ``model/apis.py``), its
kafka-python request class (whose ``valid_versions`` are the versions kafka-python encodes), a
builder (model command -> kafka-python request object) and a decoder (decoded kafka-python
response -> the model's response record), and which member ids an answer mentions. ``encoding.
encode``/``decode`` look the command's type up in :data:`REQUESTS`; nothing else branches on it.
The pure facts of a classic request type (default versions, coverage cells) are its
``RequestType`` in ``model/requests.py``, which the layers below the wire read.

Adding a request type: its command and response records (``model/commands.py``, in the
``Request``/``Response`` unions), its ``RequestType`` (``model/requests.py``), one ``WireRequest``
here, and its handler in the model (``model/classic/``, one ``HANDLERS`` line); to draw it, a
rule (``properties/machine.py``) and the client view's builder (``model/client_view.py``).

The builders of the older types call ``client.py``'s ``*_request`` functions, which probes and
fault scenarios send too; a type only the model's commands send builds its kafka-python object
here. Layouts by version are in ``encoding.py``'s module docstring.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kafka.protocol.admin.groups import (
    DeleteGroupsRequest,
    DescribeGroupsRequest,
    ListGroupsRequest,
)
from kafka.protocol.consumer.group import (
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    OffsetCommitRequest,
    OffsetDeleteRequest,
    OffsetFetchRequest,
    SyncGroupRequest,
)
from kafka.protocol.metadata.find_coordinator import FindCoordinatorRequest
from kafka.protocol.producer import (
    AddOffsetsToTxnRequest,
    EndTxnRequest,
    InitProducerIdRequest,
    TxnOffsetCommitRequest,
)
from kgc.conformance.wire import client as kc
from kgc.conformance.wire.client import error_name
from kgc.conformance.wire.payloads import (
    assignment_bytes,
    assignment_text,
    metadata_bytes,
    metadata_text,
    names_by_id,
    partitions_by_name,
    topic_id,
    topic_name,
)
from kgc.model import commands as m
from kgc.model.apis import KEYS
from kgc.model.errors import NONE

if TYPE_CHECKING:
    from kgc.conformance.wire.encoding import MemberIds


@dataclass(frozen=True, slots=True, kw_only=True)
class Wire:
    """What a builder or decoder reads besides the command and the answer: the run's group id
    (not part of the model's vocabulary), its member ids, and topic ids where a version needs
    them."""

    group_id: str | None
    ids: MemberIds
    topic_ids: Mapping[str, Any] | None = None
    # the local port of each simulated client's connection -> its Kafka client id (``kgc-c1``):
    # an address with a port in an answer names the client it belongs to (``client_host``)
    client_ports: Mapping[int, str] | None = None


#: The error a decoder gives an answer about another group than the one asked for (an echoed
#: ``GroupId`` or ``Key`` that is not the run's): no model state allows it, so it is a divergence.
ANSWERED_OTHER_GROUP = "ANSWERED_OTHER_GROUP"


def _no_member_ids(command: Any, response: Any) -> list[str]:
    return []


def _no_member_owners(command: Any, response: Any) -> list[tuple[str, str]]:
    return []


@dataclass(frozen=True, slots=True, kw_only=True)
class WireRequest:
    """One request type on the wire (module docstring). ``request_class`` ``None``: the class is
    built from Kafka's message specs on first use (``message_specs.py``, the KIP-848 and KIP-932
    APIs)."""

    name: str
    request_class: Any | None
    build: Callable[[Any, Wire], Any]
    decode: Callable[[Any, Any, Wire], m.Response]
    # real member ids an answer mentions besides the receiver's own JoinGroup id
    member_ids: Callable[[Any, Any], list[str]] = _no_member_ids
    # (real member id, client) pairs where the answer itself names the member's client
    member_owners: Callable[[Any, Any], list[tuple[str, str]]] = _no_member_owners

    @property
    def key(self) -> int:
        return KEYS[self.name]

    def cls(self) -> Any:
        """The kafka-python request class."""
        if self.request_class is not None:
            return self.request_class
        from kgc.conformance.wire.message_specs import message_classes

        return message_classes(self.name)[0]


def _group_id(c: Any, w: Wire) -> str | None:
    """The group id a group request names: the run's, or ``""`` for one sent with the empty
    group id (``m.JoinGroup.empty_group_id``; ``model/classic/empty_group.py``)."""
    return "" if c.empty_group_id else w.group_id


# ------------------------------------------------------------------------------------- JoinGroup


def _build_join_group(c: m.JoinGroup, w: Wire) -> Any:
    return kc.join_group_request(
        _group_id(c, w),
        session_timeout_ms=c.session_timeout_ms,
        rebalance_timeout_ms=c.rebalance_timeout_ms,
        member_id=w.ids.real(c.member_id),
        group_instance_id=c.group_instance_id,
        protocol_type=c.protocol_type,
        protocols=[(p.name, metadata_bytes(p.metadata)) for p in c.protocols],
    )


def _decode_join_group(c: m.JoinGroup, r: Any, w: Wire) -> m.Response:
    own = w.ids.symbolic(r.member_id, owner_client=c.client) if r.member_id else None
    name = w.ids.name_or_unknown
    error = error_name(r.error_code)
    protocol_name = r.protocol_name
    if protocol_name == "" and error != NONE and c.version < 7:
        protocol_name = None
    members = sorted(
        (
            m.JoinedMember(
                member_id=name(x.member_id),
                group_instance_id=x.group_instance_id,
                metadata=metadata_text(x.metadata),
            )
            for x in r.members
        ),
        key=lambda j: j.member_id,
    )
    return m.JoinGroupResponse(
        error=error,
        generation_id=r.generation_id,
        protocol_type=r.protocol_type if c.version >= 7 else None,
        protocol_name=protocol_name,
        leader=name(r.leader),
        member_id=own if own is not None else m.NO_MEMBER_ID,
        members=tuple(members),
        skip_assignment=bool(r.skip_assignment) if c.version >= 9 else False,
    )


# ------------------------------------------------------------------------- SyncGroup, Heartbeat


def _build_sync_group(c: m.SyncGroup, w: Wire) -> Any:
    return kc.sync_group_request(
        _group_id(c, w),
        generation_id=c.generation_id,
        member_id=w.ids.real(c.member_id),
        group_instance_id=c.group_instance_id,
        protocol_type=c.protocol_type,
        protocol_name=c.protocol_name,
        assignments=[
            (w.ids.real(a.member_id), assignment_bytes(a.assignment)) for a in c.assignments
        ],
    )


def _decode_sync_group(c: m.SyncGroup, r: Any, w: Wire) -> m.Response:
    v5 = c.version >= 5  # ProtocolType and ProtocolName exist from v5 (KIP-559)
    return m.SyncGroupResponse(
        error=error_name(r.error_code),
        protocol_type=r.protocol_type if v5 else None,
        protocol_name=r.protocol_name if v5 else None,
        assignment=assignment_text(r.assignment),
    )


def _build_heartbeat(c: m.Heartbeat, w: Wire) -> Any:
    return kc.heartbeat_request(
        _group_id(c, w),
        generation_id=c.generation_id,
        member_id=w.ids.real(c.member_id),
        group_instance_id=c.group_instance_id,
    )


def _decode_heartbeat(c: m.Heartbeat, r: Any, w: Wire) -> m.Response:
    return m.HeartbeatResponse(error=error_name(r.error_code))


# ------------------------------------------------------------------------------------ LeaveGroup


def _build_leave_group(c: m.LeaveGroup, w: Wire) -> Any:
    return kc.leave_group_request(
        _group_id(c, w),
        [(w.ids.real(x.member_id), x.group_instance_id) for x in c.members],
        version=c.version,
    )


def _decode_leave_group(c: m.LeaveGroup, r: Any, w: Wire) -> m.Response:
    return m.LeaveGroupResponse(
        error=error_name(r.error_code),
        members=tuple(
            m.MemberResult(
                member_id=w.ids.name_or_unknown(x.member_id),
                group_instance_id=x.group_instance_id,
                error=error_name(x.error_code),
            )
            for x in (r.members or ())
        ),
    )


# ---------------------------------------------------------------------- OffsetCommit, OffsetFetch


def _build_offset_commit(c: m.OffsetCommit, w: Wire) -> Any:
    return kc.offset_commit_request(
        w.group_id,
        generation_id=c.generation_id,
        member_id=w.ids.real(c.member_id),
        group_instance_id=c.group_instance_id,
        offsets=[(o.topic, o.partition, o.offset, o.metadata) for o in c.offsets],
        leader_epochs=[o.leader_epoch for o in c.offsets],
        topic_ids=w.topic_ids,
        version=c.version,
    )


def _decode_offset_commit(c: m.OffsetCommit, r: Any, w: Wire) -> m.Response:
    names = names_by_id(w.topic_ids)
    partitions = (
        m.PartitionError(
            topic=topic_name(t, c.version, names),
            partition=p.partition_index,
            error=error_name(p.error_code),
        )
        for t in r.topics
        for p in t.partitions
    )
    return m.OffsetCommitResponse(
        partitions=tuple(sorted(partitions, key=lambda x: (x.topic, x.partition)))
    )


def _build_offset_fetch(c: m.OffsetFetch, w: Wire) -> Any:
    return kc.offset_fetch_request(
        w.group_id,
        [(tp.topic, tp.partition) for tp in c.partitions],
        topic_ids=w.topic_ids,
        member_id=None if c.member_id is None else w.ids.real(c.member_id),
        member_epoch=c.member_epoch,
        require_stable=c.require_stable and c.version >= 7,  # a v7+ field (KIP-447)
        version=c.version,
    )


def _decode_offset_fetch(c: m.OffsetFetch, r: Any, w: Wire) -> m.Response:
    names = names_by_id(w.topic_ids)
    v = c.version
    if v >= 8:
        if len(r.groups) != 1:
            raise ValueError(f"OffsetFetch v{v}: expected one group, got {r!r}")
        group = r.groups[0]
        error = error_name(group.error_code)
        if w.group_id is not None and group.group_id != w.group_id:
            error = ANSWERED_OTHER_GROUP
        topics = group.topics
    else:
        error = error_name(r.error_code) if v >= 2 else NONE
        topics = r.topics
    partitions = (
        m.FetchedOffset(
            topic=topic_name(t, v, names),
            partition=p.partition_index,
            offset=p.committed_offset,
            leader_epoch=p.committed_leader_epoch if v >= 5 else None,
            metadata=p.metadata or "",
            error=error_name(p.error_code),
        )
        for t in topics
        for p in t.partitions
    )
    return m.OffsetFetchResponse(
        error=error, partitions=tuple(sorted(partitions, key=lambda x: (x.topic, x.partition)))
    )


# ------------------------------------------------------------------------------- DescribeGroups


def _build_describe_groups(c: m.DescribeGroups, w: Wire) -> Any:
    return kc.describe_groups_request([w.group_id])


_HOST_PORT = re.compile(r"^(?P<host>[^/][^:]*|\[[^\]]*\]):(?P<port>\d+)$")


def client_host(text: str, w: Wire) -> str:
    """A member's ``ClientHost`` as the model writes it: Kafka's ``/127.0.0.1`` as it is; an
    address with the port of one of the run's own client connections (``host:port``, Go's form:
    kfake) as ``host:<port of kgc-c1>``, naming the client (``Profile.client_host_with_port``).
    Any other port stays as it is, so it matches nothing the model says."""
    found = _HOST_PORT.match(text or "")
    if found is None or not w.client_ports:
        return text
    client = w.client_ports.get(int(found.group("port")))
    return text if client is None else f"{found.group('host')}:<port of {client}>"


def _decode_describe_groups(c: m.DescribeGroups, r: Any, w: Wire) -> m.Response:
    if len(r.groups) != 1:
        raise ValueError(f"DescribeGroups: expected one group, got {r!r}")
    g = r.groups[0]
    members = (
        m.DescribedMember(
            member_id=w.ids.name_or_unknown(x.member_id),
            group_instance_id=x.group_instance_id,
            client_id=x.client_id,
            client_host=client_host(x.client_host, w),
            metadata=metadata_text(x.member_metadata),
            assignment=assignment_text(x.member_assignment),
        )
        for x in g.members
    )
    own = w.group_id is None or g.group_id == w.group_id
    return m.DescribeGroupsResponse(
        error=error_name(g.error_code) if own else ANSWERED_OTHER_GROUP,
        group_state=g.group_state,
        protocol_type=g.protocol_type,
        protocol_data=g.protocol_data,
        members=tuple(sorted(members, key=lambda d: d.member_id)),
    )


def _describe_groups_ids(c: m.DescribeGroups, r: Any) -> list[str]:
    return [x.member_id for g in r.groups for x in g.members]


#: the Kafka client id each simulated client connects with: ``kgc-cK``
_OWN_CLIENT_ID = re.compile(r"^kgc-(c\d+)$")


def _describe_groups_owners(c: m.DescribeGroups, r: Any) -> list[tuple[str, str]]:
    """Each listed member whose ``client_id`` is one of the run's clients' (``kgc-cK``): the
    broker's own word on whose member it is, whatever its member ids look like."""
    out = []
    for g in r.groups:
        for x in g.members:
            found = _OWN_CLIENT_ID.match(x.client_id or "")
            if found is not None:
                out.append((x.member_id, found.group(1)))
    return out


# ------------------------------------------------------------------------------ FindCoordinator


def _build_find_coordinator(c: m.FindCoordinator, w: Wire) -> Any:
    return kc.find_coordinator_request(w.group_id, version=c.version)


def _decode_find_coordinator(c: m.FindCoordinator, r: Any, w: Wire) -> m.Response:
    if c.version >= 4:
        if len(r.coordinators) != 1:
            raise ValueError(f"FindCoordinator: expected one coordinator, got {r!r}")
        x = r.coordinators[0]
        if w.group_id is not None and x.key != w.group_id:
            return m.FindCoordinatorResponse(error=ANSWERED_OTHER_GROUP, node_id=x.node_id)
        return m.FindCoordinatorResponse(error=error_name(x.error_code), node_id=x.node_id)
    return m.FindCoordinatorResponse(error=error_name(r.error_code), node_id=r.node_id)


# ----------------------------------------------------------------------------------- ListGroups


def _build_list_groups(c: m.ListGroups, w: Wire) -> Any:
    """ListGroups: ``StatesFilter`` exists from v4, ``TypesFilter`` from v5
    (``ListGroupsRequest.json``); a filter at a version without the field is refused, as the
    client view never builds one."""
    if c.states_filter and c.version < 4:
        raise ValueError("StatesFilter is a ListGroups v4 field")
    if c.types_filter and c.version < 5:
        raise ValueError("TypesFilter is a ListGroups v5 field")
    return ListGroupsRequest(states_filter=list(c.states_filter), types_filter=list(c.types_filter))


def _decode_list_groups(c: m.ListGroups, r: Any, w: Wire) -> m.Response:
    """The broker lists every group it coordinates: those of other examples and runs (all named
    with the suite's prefix, ``kgc-``) and any other client's. Only the entry whose id is this
    run's own group id is kept, as the model speaks of that group alone
    (``commands.ListGroupsResponse``). ``GroupState`` exists from v4, ``GroupType`` from v5:
    below, ``""``."""
    if w.group_id is None:
        raise ValueError("ListGroups: decode with the run's group_id to pick its own group")
    own = [
        m.ListedGroup(
            protocol_type=g.protocol_type or "",
            group_state=(g.group_state or "") if c.version >= 4 else "",
            group_type=(g.group_type or "") if c.version >= 5 else "",
        )
        for g in r.groups or ()
        if g.group_id == w.group_id
    ]
    return m.ListGroupsResponse(error=error_name(r.error_code), groups=tuple(own))


# ---------------------------------------------------------------------- DeleteGroups, OffsetDelete


def _build_delete_groups(c: m.DeleteGroups, w: Wire) -> Any:
    """DeleteGroups naming the run's group alone (``GroupsNames``, every version)."""
    return DeleteGroupsRequest(groups_names=[w.group_id])


def _decode_delete_groups(c: m.DeleteGroups, r: Any, w: Wire) -> m.Response:
    """The one result, for the run's group: another group's, or a number of results other than
    one, is ``ANSWERED_OTHER_GROUP`` (a divergence)."""
    results = list(r.results or ())
    if len(results) != 1 or (w.group_id is not None and results[0].group_id != w.group_id):
        return m.DeleteGroupsResponse(error=ANSWERED_OTHER_GROUP)
    return m.DeleteGroupsResponse(error=error_name(results[0].error_code))


def _build_offset_delete(c: m.OffsetDelete, w: Wire) -> Any:
    by_topic: dict[str, list[int]] = {}
    for tp in c.partitions:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    topic = OffsetDeleteRequest.OffsetDeleteRequestTopic
    partition = topic.OffsetDeleteRequestPartition
    return OffsetDeleteRequest(
        group_id=w.group_id,
        topics=[
            topic(name=name, partitions=[partition(partition_index=p) for p in ps])
            for name, ps in sorted(by_topic.items())
        ],
    )


def _decode_offset_delete(c: m.OffsetDelete, r: Any, w: Wire) -> m.Response:
    partitions = (
        m.PartitionError(topic=t.name, partition=p.partition_index, error=error_name(p.error_code))
        for t in r.topics or ()
        for p in t.partitions
    )
    return m.OffsetDeleteResponse(
        error=error_name(r.error_code),
        partitions=tuple(sorted(partitions, key=lambda x: (x.topic, x.partition))),
    )


# ------------------------------------------------------------------ the transactional path


def transactional_id(c: Any, group_id: str | None) -> str:
    """The real transactional id of a command's symbolic one: ``<group id>-t1``, the example's
    own (``encoding.py``)."""
    return f"{group_id}-{c.transactional_id}"


def _build_init_producer_id(c: m.InitProducerId, w: Wire) -> Any:
    return InitProducerIdRequest(
        transactional_id=transactional_id(c, w.group_id),
        transaction_timeout_ms=c.transaction_timeout_ms,
        producer_id=-1,
        producer_epoch=-1,
    )


def _decode_init_producer_id(c: m.InitProducerId, r: Any, w: Wire) -> m.Response:
    return m.InitProducerIdResponse(
        error=error_name(r.error_code),
        producer_id=w.ids.producer(r.producer_id),
        producer_epoch=r.producer_epoch,
    )


def _build_add_offsets_to_txn(c: m.AddOffsetsToTxn, w: Wire) -> Any:
    return AddOffsetsToTxnRequest(
        transactional_id=transactional_id(c, w.group_id),
        producer_id=w.ids.producer_real(c.producer_id),
        producer_epoch=c.producer_epoch,
        group_id=w.group_id,
    )


def _decode_add_offsets_to_txn(c: m.AddOffsetsToTxn, r: Any, w: Wire) -> m.Response:
    return m.AddOffsetsToTxnResponse(error=error_name(r.error_code))


def _build_txn_offset_commit(c: m.TxnOffsetCommit, w: Wire) -> Any:
    """Member fields exist from v3 (KIP-447), the leader epoch from v2."""
    t = TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic
    p = t.TxnOffsetCommitRequestPartition
    by_topic: dict[str, list[Any]] = {}
    for o in c.offsets:
        part = p(
            partition_index=o.partition, committed_offset=o.offset, committed_metadata=o.metadata
        )
        if c.version >= 2:
            part.committed_leader_epoch = o.leader_epoch
        by_topic.setdefault(o.topic, []).append(part)
    request = TxnOffsetCommitRequest(
        transactional_id=transactional_id(c, w.group_id),
        group_id=w.group_id,
        producer_id=w.ids.producer_real(c.producer_id),
        producer_epoch=c.producer_epoch,
        topics=[t(name=name, partitions=ps) for name, ps in sorted(by_topic.items())],
    )
    if c.version >= 3:
        request.generation_id = c.generation_id
        request.member_id = w.ids.real(c.member_id)
        request.group_instance_id = c.group_instance_id
    return request


def _decode_txn_offset_commit(c: m.TxnOffsetCommit, r: Any, w: Wire) -> m.Response:
    partitions = (
        m.PartitionError(topic=t.name, partition=p.partition_index, error=error_name(p.error_code))
        for t in r.topics
        for p in t.partitions
    )
    return m.TxnOffsetCommitResponse(
        partitions=tuple(sorted(partitions, key=lambda x: (x.topic, x.partition)))
    )


def _build_end_txn(c: m.EndTxn, w: Wire) -> Any:
    return EndTxnRequest(
        transactional_id=transactional_id(c, w.group_id),
        producer_id=w.ids.producer_real(c.producer_id),
        producer_epoch=c.producer_epoch,
        committed=c.committed,
    )


def _decode_end_txn(c: m.EndTxn, r: Any, w: Wire) -> m.Response:
    v5 = c.version >= 5  # ProducerId and ProducerEpoch answered from v5 (KIP-890)
    return m.EndTxnResponse(
        error=error_name(r.error_code),
        producer_id=w.ids.producer(r.producer_id) if v5 else -1,
        producer_epoch=r.producer_epoch if v5 else -1,
    )


#: The requests that go to the transactional id's transaction coordinator, not the group's.
TO_TRANSACTION_COORDINATOR = frozenset({"InitProducerId", "AddOffsetsToTxn", "EndTxn"})


# ------------------------------------------------------------------------ KIP-848 consumer group


def _build_consumer_group_heartbeat(c: m.ConsumerGroupHeartbeat, w: Wire) -> Any:
    owned = None
    if c.topic_partitions is not None:
        by_topic: dict[str, list[int]] = {}
        for tp in c.topic_partitions:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        owned = [(topic_id(t, w.topic_ids), ps) for t, ps in sorted(by_topic.items())]
    if c.subscribed_topic_regex is not None and c.version < 1:
        raise ValueError("SubscribedTopicRegex is a ConsumerGroupHeartbeat v1 field")
    w.ids.chosen(c.member_id)
    return kc.consumer_group_heartbeat_request(
        w.group_id,
        c.member_id,  # client-chosen (KIP-1082): the symbolic id is the real one
        c.member_epoch,
        instance_id=c.instance_id,
        rebalance_timeout_ms=c.rebalance_timeout_ms,
        subscribed_topic_names=c.subscribed_topic_names,
        subscribed_topic_regex=c.subscribed_topic_regex,
        server_assignor=c.server_assignor,
        topic_partitions=owned,
        version=c.version,
    )


def _decode_consumer_group_heartbeat(c: m.ConsumerGroupHeartbeat, r: Any, w: Wire) -> m.Response:
    names = names_by_id(w.topic_ids)
    return m.ConsumerGroupHeartbeatResponse(
        error=error_name(r.error_code),
        member_id=r.member_id,
        member_epoch=r.member_epoch,
        heartbeat_interval_ms=r.heartbeat_interval_ms,
        assignment=None
        if r.assignment is None
        else partitions_by_name(r.assignment.topic_partitions, names),
    )


def _build_consumer_group_describe(c: m.ConsumerGroupDescribe, w: Wire) -> Any:
    return kc.consumer_group_describe_request([w.group_id], version=c.version)


def _decode_consumer_group_describe(c: m.ConsumerGroupDescribe, r: Any, w: Wire) -> m.Response:
    g, error = _one_described_group(r, w, m.ConsumerGroupDescribeResponse)
    if g is None:
        return error
    names = names_by_id(w.topic_ids)
    members = (
        m.ConsumerMember(
            # a classic member of a consumer group (online migration) has an id the broker made:
            # its symbolic name, as in every other answer
            member_id=w.ids.name_or_unknown(x.member_id),
            instance_id=x.instance_id,
            member_epoch=x.member_epoch,
            subscribed_topic_names=tuple(sorted(x.subscribed_topic_names or ())),
            subscribed_topic_regex=x.subscribed_topic_regex or None,
            member_type=x.member_type if c.version >= 1 else -1,
            assignment=partitions_by_name(x.assignment.topic_partitions, names),
            target_assignment=partitions_by_name(x.target_assignment.topic_partitions, names),
        )
        for x in g.members
    )
    return _described_group(m.ConsumerGroupDescribeResponse, g, members)


def _one_described_group(r: Any, w: Wire, answer: Callable[..., m.Response]) -> tuple[Any, Any]:
    """The one group a ConsumerGroupDescribe or ShareGroupDescribe answer describes, the run's
    own, and None; or None and the answer as the model compares it, ``answer(error=…)``: another
    count of groups, another group's id, or the group's error (an error answer keeps only its
    code)."""
    groups = list(r.groups or ())
    if len(groups) != 1:
        return None, answer(error=f"ANSWERED_{len(groups)}_GROUPS")
    g = groups[0]
    error = error_name(g.error_code)
    if w.group_id is not None and g.group_id != w.group_id:
        error = ANSWERED_OTHER_GROUP
    if error != NONE:
        return None, answer(error=error)
    return g, None


def _described_group(answer: Callable[..., m.Response], g: Any, members: Iterable[Any]) -> Any:
    """A described group's answer: its state, epochs and assignor, members sorted by id."""
    return answer(
        error=NONE,
        group_state=g.group_state,
        group_epoch=g.group_epoch,
        assignment_epoch=g.assignment_epoch,
        assignor_name=g.assignor_name,
        members=tuple(sorted(members, key=lambda x: x.member_id)),
    )


# ------------------------------------------------------------------------- KIP-932 share group


def _build_share_group_heartbeat(c: m.ShareGroupHeartbeat, w: Wire) -> Any:
    """The client chooses its member id (``ShareGroupHeartbeatRequest.json``: "generated by the
    consumer"; the broker never makes one, docs/share-groups.md §2): the symbolic id is the real
    one, as for ConsumerGroupHeartbeat. Topics go by name; only the answer names them by id."""
    w.ids.chosen(c.member_id)
    return kc.share_group_heartbeat_request(
        w.group_id,
        c.member_id,
        c.member_epoch,
        rack_id=c.rack_id,
        subscribed_topic_names=c.subscribed_topic_names,
        version=c.version,
    )


def _decode_share_group_heartbeat(c: m.ShareGroupHeartbeat, r: Any, w: Wire) -> m.Response:
    """An error answer carries only its code: ``MemberId`` null (-> ``None``), epoch 0, interval
    0, no assignment (``GroupCoordinatorService.java`` l.689-692, 719-721; ``KafkaApis.scala``
    l.3055-3058). ``Assignment`` null -> ``None`` (sent only on a join, a full request or a
    change, ``ShareGroupHeartbeatResponse.java`` l.77-88); its topic ids -> the run's names."""
    return m.ShareGroupHeartbeatResponse(
        error=error_name(r.error_code),
        member_id=r.member_id,
        member_epoch=r.member_epoch,
        heartbeat_interval_ms=r.heartbeat_interval_ms,
        assignment=None
        if r.assignment is None
        else partitions_by_name(r.assignment.topic_partitions, names_by_id(w.topic_ids)),
    )


def _build_share_group_describe(c: m.ShareGroupDescribe, w: Wire) -> Any:
    return kc.share_group_describe_request([w.group_id], version=c.version)


def _decode_share_group_describe(c: m.ShareGroupDescribe, r: Any, w: Wire) -> m.Response:
    """One described group, the run's own (``ShareGroupDescribeResponse.json``); an error answer
    keeps only its code. Member ids are the clients' own (no mapping); ``ClientHost`` is not
    recorded (``m.ShareMember``); assignments by the run's topic names, from the topic ids."""
    g, error = _one_described_group(r, w, m.ShareGroupDescribeResponse)
    if g is None:
        return error
    names = names_by_id(w.topic_ids)
    members = (
        m.ShareMember(
            member_id=x.member_id,
            rack_id=x.rack_id,
            member_epoch=x.member_epoch,
            client_id=x.client_id,
            subscribed_topic_names=tuple(sorted(x.subscribed_topic_names or ())),
            assignment=partitions_by_name(x.assignment.topic_partitions, names),
        )
        for x in g.members
    )
    return _described_group(m.ShareGroupDescribeResponse, g, members)


# ---------------------------------------------------------------------------------------- table


def _join_group_ids(c: m.JoinGroup, r: Any) -> list[str]:
    return [r.leader, *(x.member_id for x in r.members)]


def _leave_group_ids(c: m.LeaveGroup, r: Any) -> list[str]:
    return [x.member_id for x in (r.members or ())]


#: Every request type the suite sends, by name.
REQUESTS: dict[str, WireRequest] = {
    w.name: w
    for w in (
        WireRequest(
            name="JoinGroup",
            request_class=JoinGroupRequest,
            build=_build_join_group,
            decode=_decode_join_group,
            member_ids=_join_group_ids,
        ),
        WireRequest(
            name="SyncGroup",
            request_class=SyncGroupRequest,
            build=_build_sync_group,
            decode=_decode_sync_group,
        ),
        WireRequest(
            name="Heartbeat",
            request_class=HeartbeatRequest,
            build=_build_heartbeat,
            decode=_decode_heartbeat,
        ),
        WireRequest(
            name="LeaveGroup",
            request_class=LeaveGroupRequest,
            build=_build_leave_group,
            decode=_decode_leave_group,
            member_ids=_leave_group_ids,
        ),
        WireRequest(
            name="OffsetCommit",
            request_class=OffsetCommitRequest,
            build=_build_offset_commit,
            decode=_decode_offset_commit,
        ),
        WireRequest(
            name="OffsetFetch",
            request_class=OffsetFetchRequest,
            build=_build_offset_fetch,
            decode=_decode_offset_fetch,
        ),
        WireRequest(
            name="DescribeGroups",
            request_class=DescribeGroupsRequest,
            build=_build_describe_groups,
            decode=_decode_describe_groups,
            member_ids=_describe_groups_ids,
            member_owners=_describe_groups_owners,
        ),
        WireRequest(
            name="FindCoordinator",
            request_class=FindCoordinatorRequest,
            build=_build_find_coordinator,
            decode=_decode_find_coordinator,
        ),
        WireRequest(
            name="ListGroups",
            request_class=ListGroupsRequest,
            build=_build_list_groups,
            decode=_decode_list_groups,
        ),
        WireRequest(
            name="DeleteGroups",
            request_class=DeleteGroupsRequest,
            build=_build_delete_groups,
            decode=_decode_delete_groups,
        ),
        WireRequest(
            name="OffsetDelete",
            request_class=OffsetDeleteRequest,
            build=_build_offset_delete,
            decode=_decode_offset_delete,
        ),
        WireRequest(
            name="ConsumerGroupHeartbeat",
            request_class=None,
            build=_build_consumer_group_heartbeat,
            decode=_decode_consumer_group_heartbeat,
        ),
        WireRequest(
            name="ConsumerGroupDescribe",
            request_class=None,
            build=_build_consumer_group_describe,
            decode=_decode_consumer_group_describe,
        ),
        WireRequest(
            name="ShareGroupHeartbeat",
            request_class=None,
            build=_build_share_group_heartbeat,
            decode=_decode_share_group_heartbeat,
        ),
        WireRequest(
            name="ShareGroupDescribe",
            request_class=None,
            build=_build_share_group_describe,
            decode=_decode_share_group_describe,
        ),
        WireRequest(
            name="InitProducerId",
            request_class=InitProducerIdRequest,
            build=_build_init_producer_id,
            decode=_decode_init_producer_id,
        ),
        WireRequest(
            name="AddOffsetsToTxn",
            request_class=AddOffsetsToTxnRequest,
            build=_build_add_offsets_to_txn,
            decode=_decode_add_offsets_to_txn,
        ),
        WireRequest(
            name="TxnOffsetCommit",
            request_class=TxnOffsetCommitRequest,
            build=_build_txn_offset_commit,
            decode=_decode_txn_offset_commit,
        ),
        WireRequest(
            name="EndTxn",
            request_class=EndTxnRequest,
            build=_build_end_txn,
            decode=_decode_end_txn,
        ),
    )
}
