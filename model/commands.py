"""Commands a simulated client sends, and the responses the model predicts or a broker returns.

These are the wire-independent vocabulary shared by the model, the differential engine, traces and
the Spark pipeline. Names follow Kafka's own message specs (``clients/src/main/resources/common/
message/JoinGroupRequest.json`` and friends): ``member_id``, ``generation_id``,
``group_instance_id``, ``protocol_type``, error names such as ``ILLEGAL_GENERATION``.

Identity is symbolic:

* ``client`` names one simulated client connection (``c1``, ``c2`` …). Each client has exactly one
  connection and at most one request in flight (a broker mutes a connection until it answers).
* Member ids are symbolic too. The broker generates member ids; the model names the n-th member id
  handed to client ``cK`` as ``cK-n`` (see :func:`member_name`). The conformance layer maps the
  broker's real ids onto the same names, so responses compare directly.
* ``""`` (:data:`NO_MEMBER_ID`) is the member id of a client that has none yet: Kafka's
  ``JoinGroupRequest.UNKNOWN_MEMBER_ID``, not to be confused with the error of that name.

Opaque payloads (protocol metadata, assignments) are strings; the broker adapter sends their UTF-8
bytes. The broker only relays them, so the model treats them as opaque too.

Every record serialises to a JSON object with a ``"type"`` field (see :func:`to_json` /
:func:`from_json`); this is the trace format's command and response encoding.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, TypeAlias, get_args, get_origin, get_type_hints

from kgc.model.errors import NONE

NO_MEMBER_ID = ""  # JoinGroupRequest.UNKNOWN_MEMBER_ID
NO_GENERATION = -1  # JoinGroupRequest.UNKNOWN_GENERATION_ID


def member_name(client: str, n: int) -> str:
    """Symbolic name of the n-th (1-based) member id the coordinator handed to ``client``."""
    return f"{client}-{n}"


# Every request of simulated client ``cK`` carries client id ``kgc-cK`` in its request header
# (the wire opens each client's connection so: ``conformance/wire/client.py`` ``GroupClient``).
# Kafka keeps a member's client id from the JoinGroup that added it and shows it in DescribeGroups
# (``DescribeGroupsResponse.json`` ``ClientId``: "used in the member's latest join group request").
CLIENT_ID_PREFIX = "kgc-"


def client_id_of(client: str) -> str:
    """The client id simulated client ``client`` sends in every request header."""
    return f"{CLIENT_ID_PREFIX}{client}"


# --------------------------------------------------------------------------------------- commands


@dataclass(frozen=True, slots=True, kw_only=True)
class Protocol:
    """One entry of JoinGroup's ``protocols``: an assignor name and its opaque metadata."""

    name: str
    metadata: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class JoinGroup:
    type: ClassVar[str] = "JoinGroup"
    client: str
    member_id: str = NO_MEMBER_ID
    group_instance_id: str | None = None
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str = "consumer"
    protocols: tuple[Protocol, ...]
    version: int
    # the group id sent is "" instead of the run's own (``model/classic/empty_group.py``)
    empty_group_id: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Assignment:
    member_id: str
    assignment: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SyncGroup:
    type: ClassVar[str] = "SyncGroup"
    client: str
    member_id: str
    generation_id: int
    group_instance_id: str | None = None
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignments: tuple[Assignment, ...] = ()
    version: int
    # the group id sent is "" instead of the run's own (``model/classic/empty_group.py``)
    empty_group_id: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Heartbeat:
    type: ClassVar[str] = "Heartbeat"
    client: str
    member_id: str
    generation_id: int
    group_instance_id: str | None = None
    version: int
    # the group id sent is "" instead of the run's own (``model/classic/empty_group.py``)
    empty_group_id: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class MemberIdentity:
    member_id: str
    group_instance_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaveGroup:
    """LeaveGroup. Before v3 only ``members[0].member_id`` is sent (the single-member form)."""

    type: ClassVar[str] = "LeaveGroup"
    client: str
    members: tuple[MemberIdentity, ...]
    version: int
    # the group id sent is "" instead of the run's own (``model/classic/empty_group.py``)
    empty_group_id: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicPartitionOffset:
    topic: str
    partition: int
    offset: int
    metadata: str = ""
    # v6+ ``CommittedLeaderEpoch`` (KIP-320); -1 (the spec's default) is "no epoch"
    leader_epoch: int = -1


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetCommit:
    type: ClassVar[str] = "OffsetCommit"
    client: str
    member_id: str
    generation_id: int
    group_instance_id: str | None = None
    offsets: tuple[TopicPartitionOffset, ...]
    version: int


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicPartition:
    topic: str
    partition: int


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetFetch:
    type: ClassVar[str] = "OffsetFetch"
    client: str
    partitions: tuple[TopicPartition, ...]
    version: int
    # v9+ (KIP-848): a consumer-group member names itself and its epoch; ``None``/-1 is an admin
    # or a client outside group management (``OffsetFetchRequest.json``)
    member_id: str | None = None
    member_epoch: int = -1
    # v7+ (KIP-447): answer ``UNSTABLE_OFFSET_COMMIT`` for a partition a transaction still has
    # pending offsets for, instead of its committed offset; not sent below v7
    require_stable: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribeGroups:
    type: ClassVar[str] = "DescribeGroups"
    client: str
    version: int


@dataclass(frozen=True, slots=True, kw_only=True)
class FindCoordinator:
    type: ClassVar[str] = "FindCoordinator"
    client: str
    version: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ListGroups:
    """ListGroups (``ListGroupsRequest.json``): the groups the coordinator holds, those in one of
    ``states_filter``'s states (v4+, KIP-518) and of one of ``types_filter``'s types (v5+,
    KIP-848); an empty filter filters nothing. Kafka matches both case-insensitively."""

    type: ClassVar[str] = "ListGroups"
    client: str
    states_filter: tuple[str, ...] = ()
    types_filter: tuple[str, ...] = ()
    version: int


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteGroups:
    """DeleteGroups (KIP-229, ``DeleteGroupsRequest.json``) naming the run's own group alone: the
    group and every offset it committed are deleted if it is Empty."""

    type: ClassVar[str] = "DeleteGroups"
    client: str
    version: int


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetDelete:
    """OffsetDelete (KIP-496, ``OffsetDeleteRequest.json``): delete the run's group's committed
    offsets of ``partitions``."""

    type: ClassVar[str] = "OffsetDelete"
    client: str
    partitions: tuple[TopicPartition, ...]
    version: int


@dataclass(frozen=True, slots=True, kw_only=True)
class InitProducerId:
    """InitProducerId (KIP-98, ``InitProducerIdRequest.json``) for a transactional id, sent to its
    transaction coordinator. ``transactional_id`` is symbolic (``t1``; the wire prefixes the run's
    group id); the request names no producer id or epoch (-1/-1: a producer starting, which fences
    every earlier epoch)."""

    type: ClassVar[str] = "InitProducerId"
    client: str
    transactional_id: str
    transaction_timeout_ms: int = 60000
    version: int


@dataclass(frozen=True, slots=True, kw_only=True)
class AddOffsetsToTxn:
    """AddOffsetsToTxn (``AddOffsetsToTxnRequest.json``): add the run's group's offsets partition to
    the transaction. ``producer_id`` is symbolic (the n-th producer id the run saw: ``n``)."""

    type: ClassVar[str] = "AddOffsetsToTxn"
    client: str
    transactional_id: str
    producer_id: int
    producer_epoch: int
    version: int


@dataclass(frozen=True, slots=True, kw_only=True)
class TxnOffsetCommit:
    """TxnOffsetCommit (KIP-98; member fields v3+, KIP-447) of the run's group, sent to the group
    coordinator: offsets pending in the transaction until its marker commits or aborts them."""

    type: ClassVar[str] = "TxnOffsetCommit"
    client: str
    transactional_id: str
    producer_id: int
    producer_epoch: int
    member_id: str = ""
    generation_id: int = -1
    group_instance_id: str | None = None
    offsets: tuple[TopicPartitionOffset, ...]
    version: int


@dataclass(frozen=True, slots=True, kw_only=True)
class EndTxn:
    """EndTxn (``EndTxnRequest.json``): commit (``committed``) or abort the transaction; v5 is
    transaction version 2 (KIP-890), whose answer names the bumped epoch."""

    type: ClassVar[str] = "EndTxn"
    client: str
    transactional_id: str
    producer_id: int
    producer_epoch: int
    committed: bool
    version: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumerGroupHeartbeat:
    """KIP-848's one request of the consumer protocol (``ConsumerGroupHeartbeatRequest.json``).

    ``member_id`` is chosen by the client from v1 on (KIP-1082); the model's clients name theirs
    ``cK-n`` like the classic ids, and the adapter sends that name as the real id. ``member_epoch``
    is 0 to join, -1 to leave, -2 for a static member's temporary leave. Every optional field is
    ``None`` when it did not change since the member's last heartbeat, as on the wire.
    ``topic_partitions`` are the partitions the member owns (topic names here; ids on the wire).
    ``subscribed_topic_regex`` is a Java regular expression over topic names (KIP-848); ``""``
    drops the member's regex.
    """

    type: ClassVar[str] = "ConsumerGroupHeartbeat"
    client: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: tuple[str, ...] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    topic_partitions: tuple[TopicPartition, ...] | None = None
    version: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumerGroupDescribe:
    """ConsumerGroupDescribe of the run's group (``ConsumerGroupDescribeRequest.json``)."""

    type: ClassVar[str] = "ConsumerGroupDescribe"
    client: str
    version: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ShareGroupHeartbeat:
    """KIP-932's membership request of a share group (``ShareGroupHeartbeatRequest.json``, v1).

    The client chooses ``member_id`` (1 to 36 characters; the broker never makes one); the
    model's clients name theirs ``cK-n``, sent as the real id, and a rule may send ``""`` or a
    longer id to see it refused. ``member_epoch`` is 0 to join, -1 to leave. ``rack_id`` and
    ``subscribed_topic_names`` are ``None`` when unchanged since the last heartbeat, as on the
    wire. There is no instance id, rebalance timeout or owned-partitions field."""

    type: ClassVar[str] = "ShareGroupHeartbeat"
    client: str
    member_id: str
    member_epoch: int
    rack_id: str | None = None
    subscribed_topic_names: tuple[str, ...] | None = None
    version: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ShareGroupDescribe:
    """ShareGroupDescribe of the run's group (``ShareGroupDescribeRequest.json``, v1)."""

    type: ClassVar[str] = "ShareGroupDescribe"
    client: str
    version: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Tick:
    """Let ``ms`` milliseconds of real time pass. Not a request: no client, no response."""

    type: ClassVar[str] = "Tick"
    ms: int


Request: TypeAlias = (
    JoinGroup
    | SyncGroup
    | Heartbeat
    | LeaveGroup
    | OffsetCommit
    | OffsetFetch
    | DescribeGroups
    | FindCoordinator
    | ListGroups
    | DeleteGroups
    | OffsetDelete
    | ConsumerGroupHeartbeat
    | ConsumerGroupDescribe
    | ShareGroupHeartbeat
    | ShareGroupDescribe
    | InitProducerId
    | AddOffsetsToTxn
    | TxnOffsetCommit
    | EndTxn
)
Command: TypeAlias = Request | Tick

# -------------------------------------------------------------------------------------- responses


@dataclass(frozen=True, slots=True, kw_only=True)
class JoinedMember:
    member_id: str
    group_instance_id: str | None = None
    metadata: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class JoinGroupResponse:
    """``protocol_type`` is sent from v7 (``None`` below, and Kafka's null on an error answer);
    ``skip_assignment`` from v9 (KIP-814; ``False`` below)."""

    type: ClassVar[str] = "JoinGroupResponse"
    error: str
    generation_id: int = NO_GENERATION
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    member_id: str = NO_MEMBER_ID
    members: tuple[JoinedMember, ...] = ()  # non-empty only in the leader's response; sorted by id
    skip_assignment: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class SyncGroupResponse:
    """``protocol_type`` and ``protocol_name`` are sent from v5 (KIP-559; ``None`` below, and
    Kafka's null on an error answer)."""

    type: ClassVar[str] = "SyncGroupResponse"
    error: str
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class HeartbeatResponse:
    type: ClassVar[str] = "HeartbeatResponse"
    error: str


@dataclass(frozen=True, slots=True, kw_only=True)
class MemberResult:
    member_id: str
    group_instance_id: str | None = None
    error: str


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaveGroupResponse:
    type: ClassVar[str] = "LeaveGroupResponse"
    error: str
    members: tuple[MemberResult, ...] = ()  # v3+ per-member results, in request order


@dataclass(frozen=True, slots=True, kw_only=True)
class PartitionError:
    topic: str
    partition: int
    error: str


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetCommitResponse:
    type: ClassVar[str] = "OffsetCommitResponse"
    partitions: tuple[PartitionError, ...]  # sorted by (topic, partition)

    @property
    def error(self) -> str:
        """The commit's outcome as one error, as every response has one. The message has no
        top-level error code (``OffsetCommitResponse.json``): this is the first partition error
        other than ``NONE`` (a consumer fails the commit on the first it meets,
        ``ConsumerCoordinator.OffsetCommitResponseHandler``), else ``NONE``. Not a field: traces
        carry the partitions only."""
        return next((p.error for p in self.partitions if p.error != NONE), NONE)


@dataclass(frozen=True, slots=True, kw_only=True)
class FetchedOffset:
    topic: str
    partition: int
    offset: int  # -1 when nothing is committed
    # v5+ ``CommittedLeaderEpoch`` (-1: none); ``None`` below v5, where the field is not sent
    leader_epoch: int | None = None
    metadata: str = ""
    error: str = NONE


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetFetchResponse:
    type: ClassVar[str] = "OffsetFetchResponse"
    error: str
    partitions: tuple[FetchedOffset, ...] = ()  # sorted by (topic, partition)


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribedMember:
    """``client_id``/``client_host``: the connection of the JoinGroup that added the member, as the
    broker saw it (``client_id_of``; ``GroupConfig.client_host``); ``metadata``: the member's
    metadata for the group's protocol, shown in Stable only."""

    member_id: str
    group_instance_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    metadata: str = ""
    assignment: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribeGroupsResponse:
    type: ClassVar[str] = "DescribeGroupsResponse"
    error: str
    group_state: str = (
        ""  # Kafka's names: Empty, PreparingRebalance, CompletingRebalance, Stable, Dead
    )
    protocol_type: str = ""
    protocol_data: str = ""  # the selected protocol name while a generation is live
    members: tuple[DescribedMember, ...] = ()  # sorted by id


@dataclass(frozen=True, slots=True, kw_only=True)
class FindCoordinatorResponse:
    type: ClassVar[str] = "FindCoordinatorResponse"
    error: str
    node_id: int = -1


@dataclass(frozen=True, slots=True, kw_only=True)
class ListedGroup:
    """One group of a ListGroups answer. ``group_state`` is sent from v4 (``""`` below),
    ``group_type`` from v5 (``"classic"``, ``"consumer"``; ``""`` below)."""

    protocol_type: str = ""
    group_state: str = ""
    group_type: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ListGroupsResponse:
    """A ListGroups answer as it concerns the run's own group: ``groups`` holds that group if the
    coordinator listed it (at most one), never another group. A broker lists every group it
    coordinates; the wire adapter keeps only the entry whose id is the run's group id."""

    type: ClassVar[str] = "ListGroupsResponse"
    error: str
    groups: tuple[ListedGroup, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteGroupsResponse:
    """A DeleteGroups answer for the run's group: its entry's error (the wire adapter keeps the
    one result, and answers ``ANSWERED_OTHER_GROUP`` for a result about another group)."""

    type: ClassVar[str] = "DeleteGroupsResponse"
    error: str


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetDeleteResponse:
    """An OffsetDelete answer: a group-level ``error`` (then no partitions), else one error per
    partition asked, sorted by (topic, partition)."""

    type: ClassVar[str] = "OffsetDeleteResponse"
    error: str
    partitions: tuple[PartitionError, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class InitProducerIdResponse:
    """``producer_id`` symbolic (1 for the first producer id the run saw, …; -1 on an error)."""

    type: ClassVar[str] = "InitProducerIdResponse"
    error: str
    producer_id: int = -1
    producer_epoch: int = -1


@dataclass(frozen=True, slots=True, kw_only=True)
class AddOffsetsToTxnResponse:
    type: ClassVar[str] = "AddOffsetsToTxnResponse"
    error: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TxnOffsetCommitResponse:
    """One error per partition, sorted by (topic, partition); ``error`` as OffsetCommit's."""

    type: ClassVar[str] = "TxnOffsetCommitResponse"
    partitions: tuple[PartitionError, ...]

    @property
    def error(self) -> str:
        """The first partition error other than ``NONE``, else ``NONE`` (not a field)."""
        return next((p.error for p in self.partitions if p.error != NONE), NONE)


@dataclass(frozen=True, slots=True, kw_only=True)
class EndTxnResponse:
    """``producer_id``/``producer_epoch`` exist from v5 (KIP-890): the epoch the producer goes on
    with; -1 below v5 and on an error."""

    type: ClassVar[str] = "EndTxnResponse"
    error: str
    producer_id: int = -1
    producer_epoch: int = -1


@dataclass(frozen=True, slots=True, kw_only=True)
class ConnectionClosed:
    """What a broker did instead of answering: it closed (or refused) the connection the request
    was sent on. Kafka answers every request it offers (a version it does not speak gets
    UNSUPPORTED_VERSION), so no model state allows this; recorded as the request's answer, it is a
    divergence like any other, shrunk, saved and replayed. ``reason`` is the client's words."""

    type: ClassVar[str] = "ConnectionClosed"
    error: str = "CONNECTION_CLOSED"
    reason: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumerGroupHeartbeatResponse:
    """``member_id`` is the symbolic id (``None`` on an error answer that carries none);
    ``assignment`` is ``None`` when the coordinator sent no assignment (nothing changed), else the
    member's partitions sorted by ``(topic, partition)``."""

    type: ClassVar[str] = "ConsumerGroupHeartbeatResponse"
    error: str
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: tuple[TopicPartition, ...] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumerMember:
    """One member of a ConsumerGroupDescribe answer; partitions sorted by ``(topic, partition)``."""

    member_id: str
    instance_id: str | None = None
    member_epoch: int
    subscribed_topic_names: tuple[str, ...] = ()
    subscribed_topic_regex: str | None = None  # None for none or ``""`` (one to Kafka)
    # v1 (KIP-1099): 0 for a member of the classic protocol, 1 for a consumer; -1 below v1
    member_type: int = -1
    assignment: tuple[TopicPartition, ...] = ()
    target_assignment: tuple[TopicPartition, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumerGroupDescribeResponse:
    """Kafka's consumer-group state names: ``Empty``, ``Assigning``, ``Reconciling``, ``Stable``,
    ``Dead`` (``ConsumerGroup.ConsumerGroupState``); members sorted by id."""

    type: ClassVar[str] = "ConsumerGroupDescribeResponse"
    error: str
    group_state: str = ""
    group_epoch: int = 0
    assignment_epoch: int = 0
    assignor_name: str = ""
    members: tuple[ConsumerMember, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ShareGroupHeartbeatResponse:
    """``member_id`` is the id the broker echoed (``None`` on an error answer, which carries only
    the error); ``assignment`` is ``None`` when the coordinator sent none, else the member's
    partitions sorted by ``(topic, partition)`` (topic ids on the wire)."""

    type: ClassVar[str] = "ShareGroupHeartbeatResponse"
    error: str
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: tuple[TopicPartition, ...] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ShareMember:
    """One member of a ShareGroupDescribe answer: subscribed names sorted, partitions sorted by
    ``(topic, partition)``. ``client_id`` is the one its last heartbeat's header carried
    (``kgc-cK``). ``ClientHost`` (the connection's address as the broker saw it) is not
    recorded: it names the machine, not the protocol."""

    member_id: str
    rack_id: str | None = None
    member_epoch: int
    client_id: str = ""
    subscribed_topic_names: tuple[str, ...] = ()
    assignment: tuple[TopicPartition, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ShareGroupDescribeResponse:
    """Kafka's share-group state names: ``Empty`` or ``Stable`` (``ShareGroup.ShareGroupState``;
    ``Dead`` is never set); members sorted by id."""

    type: ClassVar[str] = "ShareGroupDescribeResponse"
    error: str
    group_state: str = ""
    group_epoch: int = 0
    assignment_epoch: int = 0
    assignor_name: str = ""
    members: tuple[ShareMember, ...] = ()


Response: TypeAlias = (
    JoinGroupResponse
    | SyncGroupResponse
    | HeartbeatResponse
    | LeaveGroupResponse
    | OffsetCommitResponse
    | OffsetFetchResponse
    | DescribeGroupsResponse
    | FindCoordinatorResponse
    | ListGroupsResponse
    | DeleteGroupsResponse
    | OffsetDeleteResponse
    | ConsumerGroupHeartbeatResponse
    | ConsumerGroupDescribeResponse
    | ShareGroupHeartbeatResponse
    | ShareGroupDescribeResponse
    | InitProducerIdResponse
    | AddOffsetsToTxnResponse
    | TxnOffsetCommitResponse
    | EndTxnResponse
    | ConnectionClosed
)


def is_response(record: Command | Response) -> bool:
    """Whether ``record`` is something a target answered (a response, or ``ConnectionClosed``)."""
    return record.type.endswith("Response") or isinstance(record, ConnectionClosed)


# ---------------------------------------------------------------------------------- serialisation

# Every record by its ``type``: the request and response unions above are the one list of them.
_RECORD_TYPES: dict[str, type[Any]] = {
    cls.type: cls for cls in (*get_args(Request), Tick, *get_args(Response))
}


_HINTS: dict[type[Any], dict[str, Any]] = {}


def _item_type(cls: type[Any], name: str) -> type[Any] | None:
    """The item type of field ``name`` of record ``cls`` when it is a tuple (``tuple[X, ...]``,
    or ``tuple[X, ...] | None``): a record class, or ``str``; ``None`` for any other field. Read
    off the records' own annotations, so a new record needs no entry in any codec table."""
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = get_type_hints(cls)
    hint = hints.get(name)
    for arg in (hint, *get_args(hint)):
        if get_origin(arg) is tuple:
            item: type[Any] = get_args(arg)[0]
            return item
    return None


class TraceFormatError(ValueError):
    """A JSON object is not a valid command or response; the message names the field."""


class NotModelled(ValueError):
    """A request outside what a model covers: an API or version it does not take, or a case it
    does not model. A history with one cannot be judged by that model; the message says what."""


# Fields a request has only from some version on (Kafka 4.x's message specs, ``"versions":
# "1+"``): a trace with one at a lower version holds a request no client could send.
_SINCE_VERSION: dict[tuple[str, str], int] = {
    ("ConsumerGroupHeartbeat", "subscribed_topic_regex"): 1,
}


def to_json(record: Command | Response) -> dict[str, Any]:
    """Plain JSON object for a command or response, with a ``type`` field first."""
    out: dict[str, Any] = {"type": record.type}
    for f in dataclasses.fields(record):
        out[f.name] = _plain(getattr(record, f.name))
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return value


def _item(kind: str, key: str, nested: type[Any], value: Any) -> Any:
    if not isinstance(value, dict):
        raise TraceFormatError(f"field {kind}.{key}: expected objects, got {type(value).__name__}")
    fields_of = {f.name for f in dataclasses.fields(nested)}
    args = dict(value)
    for name in fields_of:
        inner = args.get(name)
        if isinstance(inner, list):
            sub = _item_type(nested, name)
            if sub is str:
                args[name] = _strings(kind, f"{key}.{name}", inner)
            elif sub is not None:
                args[name] = tuple(_item(kind, f"{key}.{name}", sub, v) for v in inner)
    try:
        return nested(**args)
    except TypeError as exc:
        raise TraceFormatError(f"field {kind}.{key}: {exc}") from None


def _strings(kind: str, key: str, value: list[Any]) -> tuple[str, ...]:
    if not all(isinstance(v, str) for v in value):
        raise TraceFormatError(f"field {kind}.{key}: expected a list of strings")
    return tuple(value)


def unrecorded_fields(obj: Any) -> tuple[str, ...]:
    """The fields of the record a JSON object encodes that the object does not hold, as
    ``checker.differences`` names them (``members[0].client_id``): fields added after the trace
    was written (:func:`to_json` writes every field). A response read from such a trace has the
    field's default there, which says nothing of what the broker answered; the checker does not
    judge it (``history.Receive.unrecorded``)."""
    kind = obj.get("type") if isinstance(obj, dict) else None
    cls = _RECORD_TYPES.get(kind) if isinstance(kind, str) else None
    return () if cls is None else _unrecorded(cls, obj, "")


def _unrecorded(cls: type[Any], obj: dict[str, Any], path: str) -> tuple[str, ...]:
    out: list[str] = []
    for f in dataclasses.fields(cls):
        where = f"{path}.{f.name}" if path else f.name
        if f.name not in obj:
            out.append(where)
            continue
        item = _item_type(cls, f.name)
        value = obj[f.name]
        if item is not None and item is not str and isinstance(value, list):
            for i, v in enumerate(value):
                if isinstance(v, dict):
                    out += _unrecorded(item, v, f"{where}[{i}]")
    return tuple(out)


def from_json(obj: Any) -> Command | Response:
    """Inverse of :func:`to_json`. Raises :class:`TraceFormatError` naming the bad field."""
    if not isinstance(obj, dict):
        raise TraceFormatError(f"expected a JSON object, got {type(obj).__name__}")
    kind = obj.get("type")
    cls = _RECORD_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise TraceFormatError(f"field 'type': unknown command or response {kind!r}")
    kwargs: dict[str, Any] = {}
    names = {f.name for f in dataclasses.fields(cls)}
    for key, value in obj.items():
        if key == "type":
            continue
        if key not in names:
            raise TraceFormatError(f"field {kind}.{key}: not a field of {kind}")
        if isinstance(value, list):
            nested = _item_type(cls, key)
            if nested is None:
                raise TraceFormatError(f"field {kind}.{key}: unexpected list")
            if nested is str:
                value = _strings(str(kind), key, value)
            else:
                value = tuple(_item(str(kind), key, nested, v) for v in value)
        kwargs[key] = value
    try:
        record = cls(**kwargs)
    except TypeError as exc:
        raise TraceFormatError(f"{kind}: {exc}") from None
    version = kwargs.get("version")
    for (owner, name), since in _SINCE_VERSION.items():
        present = owner == kind and kwargs.get(name) is not None
        if present and isinstance(version, int) and version < since:
            raise TraceFormatError(
                f"field {kind}.{name}: a v{since}+ field in a v{version} request"
            )
    return record  # type: ignore[no-any-return]
