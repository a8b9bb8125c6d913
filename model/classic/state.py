"""Model states: one classic group as its coordinator holds it, plus the requests it still owes.

Role: the data the checker keeps sets of. Everything is a frozen, slotted record with sorted
tuples, so equal situations are equal values (the checker merges them) and hashing is cheap.
Names follow Kafka's ``ClassicGroup`` / ``ClassicGroupMember`` (4.x) and ``GroupMetadata`` /
``MemberMetadata`` (3.9): ``generation_id``, ``protocol_type``, ``protocol_name``, ``leader``,
``pending_members`` (KIP-394 members that got ``MEMBER_ID_REQUIRED``), ``pending_sync`` (members
that have not sent SyncGroup for the current generation), ``is_new``, ``awaiting_join``,
``awaiting_sync``.

Timers are explicit deadlines (milliseconds on the history's clock):

* ``Member.heartbeat_deadline_ms`` — the member's one delayed heartbeat (3.9 ``DelayedHeartbeat``
  keyed by ``MemberKey``; 4.x timer key ``classicGroupHeartbeatKey``). ``None`` after it fired
  while the member was awaiting a JoinGroup/SyncGroup answer: the expiry is then ignored and no new
  timer is set until the next reschedule (both versions).
* ``PendingMember.deadline_ms`` — a KIP-394 pending member expires after its session timeout.
* ``join_timer`` — the join phase's deadline (3.9 ``DelayedJoin``/``InitialDelayedJoin``; 4.x
  ``classicGroupJoinKey``); ``initial`` marks a phase that started from Empty and completes only
  when this timer fires (``delay_ms``/``remaining_ms`` as in ``InitialDelayedJoin``).
* ``sync_timer`` — members that have not sent SyncGroup by this deadline are removed
  (3.9 ``DelayedSync``; 4.x ``classicGroupSyncKey``), for ``generation_id``.

``leader`` is a tuple of *candidates*: ``()`` no leader, one id = the leader. When the leader
leaves, Kafka picks the next one by ``HashMap`` iteration order over random member ids, which is
not knowable; the model keeps every remaining member as a candidate (all are possible) and resolves
the choice when the join phase completes — the first moment the leader is observable. In
CompletingRebalance and Stable the leader is always a single id.

``issued_ids`` counts the member ids handed to each client (symbolic ``cK-n``, see
``commands.member_name``); ``unrevealed`` holds ids generated but not yet shown to their owner
(an id that dies unrevealed is never named by the conformance layer, so its number is reused).

States serialise to JSON with :func:`state_to_json` / :func:`state_from_json`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from kgc.model.commands import (
    Protocol,
    Response,
    TraceFormatError,
    from_json,
    to_json,
)
from kgc.model.known_bugs import BugWorld
from kgc.model.timed import Deferred

EMPTY = "Empty"
PREPARING_REBALANCE = "PreparingRebalance"
COMPLETING_REBALANCE = "CompletingRebalance"
STABLE = "Stable"
DEAD = "Dead"
GROUP_STATES = (EMPTY, PREPARING_REBALANCE, COMPLETING_REBALANCE, STABLE, DEAD)


@dataclass(frozen=True, slots=True, kw_only=True)
class Member:
    member_id: str
    group_instance_id: str | None = None
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: tuple[Protocol, ...]
    assignment: str = ""
    is_new: bool = False
    awaiting_join: int | None = None  # request id of the parked JoinGroup
    awaiting_join_version: int = 0
    awaiting_sync: int | None = None  # request id of the parked SyncGroup
    awaiting_sync_version: int = 0
    heartbeat_deadline_ms: float | None = None
    # the client id of the JoinGroup that added the member (``ClassicGroupMember.clientId`` /
    # ``MemberMetadata.clientId``: set once, kept when a static member's id is replaced)
    client_id: str = ""
    # the member's group.instance.id maps to it (3.9 ``GroupMetadata.staticMembers``). Only a
    # JoinGroup refused for group.max.size in 2.3 - 2.7 unmaps it and keeps the member
    # (``Profile.max_size_refusal_forgets_instance``; ``join.py`` rule 3).
    in_static_members: bool = True
    _hash: int = field(default=0, init=False, compare=False, repr=False)

    def __hash__(self) -> int:
        # States are hashed constantly by the checker; members are shared between states, so
        # their hash is computed once.
        h = self._hash
        if h == 0:
            h = hash(
                (
                    self.member_id,
                    self.group_instance_id,
                    self.session_timeout_ms,
                    self.rebalance_timeout_ms,
                    self.protocol_type,
                    self.protocols,
                    self.assignment,
                    self.is_new,
                    self.awaiting_join,
                    self.awaiting_join_version,
                    self.awaiting_sync,
                    self.awaiting_sync_version,
                    self.heartbeat_deadline_ms,
                    self.client_id,
                    self.in_static_members,
                )
            )
            object.__setattr__(self, "_hash", h)
        return h

    def metadata(self, protocol: str | None) -> str:
        for p in self.protocols:
            if p.name == protocol:
                return p.metadata
        return ""


@dataclass(frozen=True, slots=True, kw_only=True)
class PendingMember:
    member_id: str
    deadline_ms: float


@dataclass(frozen=True, slots=True, kw_only=True)
class JoinTimer:
    deadline_ms: float
    initial: bool
    delay_ms: int = 0
    remaining_ms: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class SyncTimer:
    deadline_ms: float
    generation_id: int


@dataclass(frozen=True, slots=True, kw_only=True)
class CommittedOffset:
    topic: str
    partition: int
    offset: int
    metadata: str = ""
    leader_epoch: int = -1  # the commit's ``CommittedLeaderEpoch`` (-1: none)
    _hash: int = field(default=0, init=False, compare=False, repr=False)

    def __hash__(self) -> int:  # shared between states, hashed once
        h = self._hash
        if h == 0:
            h = hash((self.topic, self.partition, self.offset, self.metadata, self.leader_epoch))
            object.__setattr__(self, "_hash", h)
        return h


@dataclass(frozen=True, slots=True, kw_only=True)
class Producer:
    """One transactional id as its transaction coordinator holds it (``TransactionMetadata``), as
    small as the group side needs (``transactions.py``). ``producer_id`` is symbolic (the n-th
    producer id the run was given: ``n``); ``state`` is Kafka's ``TransactionState`` name.
    ``offsets_added``: the group's offsets partition is in the transaction. In PrepareCommit or
    PrepareAbort the markers are on their way: ``markers_written`` once the group's marker is
    written (the pending offsets committed or dropped), and both are done by
    ``markers_deadline_ms`` (``transactions.py`` rule T9)."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    state: str
    offsets_added: bool = False
    markers_written: bool = False
    markers_deadline_ms: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PendingTxnOffset:
    """An offset a TxnOffsetCommit wrote in a transaction that has not ended: invisible to
    OffsetFetch until the commit marker (``OffsetMetadataManager.pendingTransactionalOffsets``; 3.9
    ``GroupMetadata.pendingTransactionalOffsetCommits``). ``superseded``: a plain commit of the same
    partition was written after it, so the commit marker keeps the plain one (the later record
    wins, ``replayEndTransactionMarker``; 3.9 ``completePendingTxnOffsetCommit``)."""

    producer_id: int
    producer_epoch: int
    topic: str
    partition: int
    offset: int
    metadata: str = ""
    leader_epoch: int = -1
    superseded: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Outgoing:
    """A response the coordinator has emitted and the client has not read yet."""

    request_id: int
    response: Response
    emitted_at_ms: float


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupState:
    exists: bool = False
    state: str = EMPTY
    generation_id: int = 0
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: tuple[str, ...] = ()
    members: tuple[Member, ...] = ()  # sorted by member_id
    pending_members: tuple[PendingMember, ...] = ()  # sorted by member_id
    pending_sync: tuple[str, ...] = ()  # sorted
    join_timer: JoinTimer | None = None
    sync_timer: SyncTimer | None = None
    new_member_added: bool = False
    offsets: tuple[CommittedOffset, ...] = ()  # sorted by (topic, partition)
    # the topics the members subscribed to, as the last join phase that completed computed them
    # (``ClassicGroup.subscribedTopics``/``GroupMetadata.subscribedTopics``, set by
    # ``initNextGeneration`` only); ``None``: never computed, or not a consumer group, or a
    # subscription Kafka could not parse (``delete.py`` rule 5)
    subscribed_topics: tuple[str, ...] | None = None
    issued_ids: tuple[tuple[str, int], ...] = ()  # sorted by client
    unrevealed: tuple[str, ...] = ()
    outbox: tuple[Outgoing, ...] = ()  # sorted by request_id
    deferred: Deferred | None = None
    now_ms: float = 0.0
    # 4.x: a JoinGroup created the group, and no answer yet showed that the record it wrote
    # (``Profile.new_group_writes_empty_record``) is committed: a read at the last committed
    # offset may not find the group (``describe.py`` rule 3)
    unconfirmed: bool = False
    # when the coordinator's cleanup last deleted this group (at the earliest: the model time of
    # the last request before it), or None: the next cleanup is a whole interval later
    # (``GroupConfig.cleanup_interval_ms``)
    cleaned_at_ms: float | None = None
    # Kafka met a bug the model knows by name here (``known_bugs.py``): a world that predicts
    # nothing more, which the checker sets aside
    known_bug: BugWorld | None = None
    # the transactional path (``transactions.py``): each transactional id's coordinator state,
    # sorted by id; the offsets transactions hold pending, sorted; producer ids handed out so far
    producers: tuple[Producer, ...] = ()
    txn_offsets: tuple[PendingTxnOffset, ...] = ()
    producer_ids_issued: int = 0
    # the operations an operator denies the run's principal on the run's group and topic, as
    # (resource, operation), sorted (``authorization.py``): the authorizer's, not the group's
    denied: tuple[tuple[str, str], ...] = ()
    _hash: int = field(default=0, init=False, compare=False, repr=False)
    # the earliest coordinator timer (deadline, kind, key), computed once; () = not computed yet
    _next_timer: tuple[float, int, str] | tuple[()] | None = field(
        default=(), init=False, compare=False, repr=False
    )

    def __hash__(self) -> int:
        h = self._hash
        if h == 0:
            h = hash(
                (
                    self.exists,
                    self.state,
                    self.generation_id,
                    self.protocol_type,
                    self.protocol_name,
                    self.leader,
                    self.members,
                    self.pending_members,
                    self.pending_sync,
                    self.join_timer,
                    self.sync_timer,
                    self.new_member_added,
                    self.offsets,
                    self.subscribed_topics,
                    self.issued_ids,
                    self.unrevealed,
                    self.outbox,
                    self.deferred,
                    self.now_ms,
                    self.unconfirmed,
                    self.cleaned_at_ms,
                    self.known_bug,
                    self.producers,
                    self.txn_offsets,
                    self.producer_ids_issued,
                    self.denied,
                )
            )
            object.__setattr__(self, "_hash", h)
        return h

    def member(self, member_id: str) -> Member | None:
        for m in self.members:
            if m.member_id == member_id:
                return m
        return None

    @property
    def leader_id(self) -> str | None:
        """The leader when it is known (always in CompletingRebalance and Stable)."""
        return self.leader[0] if len(self.leader) == 1 else None


_STATE_FIELDS = tuple(f.name for f in fields(GroupState) if f.init)
_MEMBER_FIELDS = tuple(f.name for f in fields(Member) if f.init)
_MEMBER_FIELD_SET = frozenset(_MEMBER_FIELDS)


def evolve_member(member: Member, **changes: Any) -> Member:
    """``dataclasses.replace`` for :class:`Member`, several times faster (it is on the hot path of
    every heartbeat); unknown field names are an error, as with ``replace``."""
    if not changes.keys() <= _MEMBER_FIELD_SET:
        raise TypeError(f"Member has no field(s) {sorted(changes.keys() - _MEMBER_FIELD_SET)}")
    new = object.__new__(Member)
    for name in _MEMBER_FIELDS:
        object.__setattr__(new, name, changes[name] if name in changes else getattr(member, name))
    object.__setattr__(new, "_hash", 0)
    return new


def with_outbox(state: GroupState, outbox: tuple[Outgoing, ...]) -> GroupState:
    """``replace(state, outbox=outbox)`` without ``dataclasses.replace``'s overhead (on the path of
    every delivered response)."""
    new = object.__new__(GroupState)
    for name in _STATE_FIELDS:
        object.__setattr__(new, name, getattr(state, name))
    object.__setattr__(new, "outbox", outbox)
    object.__setattr__(new, "_hash", 0)
    object.__setattr__(new, "_next_timer", state._next_timer)  # the timers did not change
    return new


# ------------------------------------------------------------------------------- serialisation

_CLASSES: dict[str, type[Any]] = {
    "BugWorld": BugWorld,
    "Member": Member,
    "PendingMember": PendingMember,
    "JoinTimer": JoinTimer,
    "SyncTimer": SyncTimer,
    "CommittedOffset": CommittedOffset,
    "Outgoing": Outgoing,
    "Deferred": Deferred,
    "GroupState": GroupState,
    "Producer": Producer,
    "PendingTxnOffset": PendingTxnOffset,
}


def _encode(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_encode(v) for v in value]
    if hasattr(value, "type") and hasattr(value, "__dataclass_fields__"):
        return to_json(value)  # a command or response record
    if hasattr(value, "__dataclass_fields__"):
        out: dict[str, Any] = {"record": type(value).__name__}
        for f in fields(value):
            if f.init:  # skip caches such as ``_hash``
                out[f.name] = _encode(getattr(value, f.name))
        return out
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_decode(v) for v in value)
    if isinstance(value, dict):
        if "type" in value:
            return from_json(value)
        name = value.get("record")
        if name == "Protocol":
            return Protocol(name=value["name"], metadata=value.get("metadata", ""))
        cls = _CLASSES.get(name) if isinstance(name, str) else None
        if cls is None:
            raise TraceFormatError(f"field 'record': unknown model record {name!r}")
        kwargs = {k: _decode(v) for k, v in value.items() if k != "record"}
        try:
            return cls(**kwargs)
        except TypeError as exc:
            raise TraceFormatError(f"{name}: {exc}") from None
    return value


def state_to_json(state: GroupState) -> dict[str, Any]:
    """Plain JSON object for a model state (records carry a ``record`` field)."""
    out = _encode(state)
    assert isinstance(out, dict)
    return out


def state_from_json(obj: Any) -> GroupState:
    """Inverse of :func:`state_to_json`; raises ``TraceFormatError`` naming the bad record."""
    state = _decode(obj)
    if not isinstance(state, GroupState):
        raise TraceFormatError(f"expected a GroupState record, got {type(state).__name__}")
    return state
