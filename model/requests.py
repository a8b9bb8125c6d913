"""The classic group's request types: one record per type, every pure fact about it in one place.

A request type is known to every layer by its name (``"JoinGroup"``). What the layers below the
wire need to know of it is written here once, in a :class:`RequestType`:

* its API key (``apis.KEYS``, Kafka's ``ApiKeys``) and its model records (``commands.py``);
* the versions the differential search draws: every version kafka-python 3.0.12 generates
  (its JSON message specs), so every version both sides speak is drawn once a broker's ApiVersions
  answer and the judging release line narrow them (``conformance/wire/negotiate.py``,
  ``properties/machine.py`` ``line_versions``). The versions the search drew before it drew them
  all come first (:func:`every_version`): a draw shrinks towards them, the versions real clients
  send and on each side of KIP-394 and KIP-345, and seeded searches keep finding what they found
  (``tests/quality``); the others follow, oldest first;
* its coverage cells: the errors Kafka's classic group coordinator can answer it with
  (``GroupMetadataManager``/``GroupCoordinator``), crossed with the group states by
  ``engine/coverage.py``;
* whether the search draws it only when asked (``opt_in``): such a type is not negotiated or drawn
  by default, and its cells are known but not counted in the coverage universe (no witness is
  recorded for them, ``tests/engine/test_witnesses.py``).

Its wire side (kafka-python class, builder, decoder) is ``conformance/wire/requests.py``, one
``WireRequest`` per type, which reads this table; its rules are the model's handler
(``classic/group.py`` ``HANDLERS``). Which versions a release line answers is that line's rule
(``profiles.Profile.api_range``).

What each version changes, and where the model holds it (Kafka 4.3.1's message specs,
``common/message/*Request.json``; 3.9.2's Scala coordinator for the lines before 4.0):
JoinGroup v0 has no rebalance timeout, Kafka takes the session timeout
(``JoinGroupRequest.maybeOverrideRebalanceTimeout``; ``classic/join.py``); v0-3 add a new member
at once, v4+ ask for the member id first (KIP-394, ``JoinGroupRequest.requiresKnownMemberId``);
v5+ carry ``group.instance.id`` (KIP-345) and list it to the leader; v7+ name the protocol type,
v9 the skipped assignment (KIP-814).
SyncGroup and Heartbeat v3+ carry the instance id; SyncGroup v5 names the protocol (KIP-559).
LeaveGroup v0-2 remove one member and answer at the top level, v3+ a batch, by instance id too
(``classic/leave.py``). OffsetCommit v1+ carry the generation and member id (v0: a simple commit),
v6+ the leader epoch, v7+ the instance id, v9 answers a missing group GROUP_ID_NOT_FOUND on 4.x;
OffsetFetch v5+ answers the leader epoch (``classic/offsets.py``). DescribeGroups v4+ show instance
ids, v6 answers a missing group GROUP_ID_NOT_FOUND on 4.x (``classic/describe.py``). FindCoordinator
v4+ batch the keys. ListGroups v4 filters by state and names it (KIP-518), v5 by type (KIP-848).
DeleteGroups v0 and v1 are the same request, v2 the flexible one; OffsetDelete has v0 only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from kgc.model import commands as m
from kgc.model.apis import KEYS


def every_version(first: tuple[int, ...], low: int, high: int) -> tuple[int, ...]:
    """Versions ``low``-``high``, ``first`` first, then the others oldest first."""
    return first + tuple(v for v in range(low, high + 1) if v not in first)


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestType:
    """One request type of the classic group (module docstring)."""

    name: str  # Kafka's API name, a key of ``apis.KEYS``
    command: type[Any]  # its record in ``commands.py``
    response: type[Any]  # the record of its answer
    drawn_versions: tuple[int, ...]  # every version kafka-python speaks, oldest first
    errors: tuple[str, ...]  # the errors of its coverage cells
    opt_in: bool = False  # drawn, negotiated and counted only where a search asks for it

    @property
    def key(self) -> int:
        """Kafka's API key (``apis.KEYS``)."""
        return KEYS[self.name]


_CLASSIC: tuple[RequestType, ...] = (
    RequestType(
        name="JoinGroup",
        command=m.JoinGroup,
        response=m.JoinGroupResponse,
        drawn_versions=every_version((3, 5, 7), 0, 9),
        errors=(
            "NONE",
            "MEMBER_ID_REQUIRED",
            "UNKNOWN_MEMBER_ID",
            "INCONSISTENT_GROUP_PROTOCOL",
            "GROUP_MAX_SIZE_REACHED",
            "FENCED_INSTANCE_ID",
            "INVALID_SESSION_TIMEOUT",
            "REBALANCE_IN_PROGRESS",
        ),
    ),
    RequestType(
        name="SyncGroup",
        command=m.SyncGroup,
        response=m.SyncGroupResponse,
        drawn_versions=every_version((3, 4, 5), 0, 5),
        errors=(
            "NONE",
            "UNKNOWN_MEMBER_ID",
            "ILLEGAL_GENERATION",
            "REBALANCE_IN_PROGRESS",
            "FENCED_INSTANCE_ID",
            "INCONSISTENT_GROUP_PROTOCOL",
        ),
    ),
    RequestType(
        name="Heartbeat",
        command=m.Heartbeat,
        response=m.HeartbeatResponse,
        drawn_versions=every_version((3, 4), 0, 4),
        errors=(
            "NONE",
            "UNKNOWN_MEMBER_ID",
            "ILLEGAL_GENERATION",
            "REBALANCE_IN_PROGRESS",
            "FENCED_INSTANCE_ID",
        ),
    ),
    RequestType(
        name="LeaveGroup",
        command=m.LeaveGroup,
        response=m.LeaveGroupResponse,
        drawn_versions=every_version((3, 4), 0, 5),
        errors=("NONE", "UNKNOWN_MEMBER_ID", "FENCED_INSTANCE_ID"),
    ),
    RequestType(
        name="OffsetCommit",
        command=m.OffsetCommit,
        response=m.OffsetCommitResponse,
        drawn_versions=every_version((7, 8, 9), 2, 10),
        errors=(
            "NONE",
            "UNKNOWN_MEMBER_ID",
            "ILLEGAL_GENERATION",
            "REBALANCE_IN_PROGRESS",
            "FENCED_INSTANCE_ID",
            "OFFSET_METADATA_TOO_LARGE",
            "GROUP_ID_NOT_FOUND",
        ),
    ),
    RequestType(
        name="OffsetFetch",
        command=m.OffsetFetch,
        response=m.OffsetFetchResponse,
        drawn_versions=every_version((6, 7), 1, 10),
        errors=("NONE",),
    ),
    RequestType(
        name="DescribeGroups",
        command=m.DescribeGroups,
        response=m.DescribeGroupsResponse,
        drawn_versions=every_version((4, 5, 6), 0, 6),
        errors=("NONE", "GROUP_ID_NOT_FOUND"),
    ),
    RequestType(
        name="FindCoordinator",
        command=m.FindCoordinator,
        response=m.FindCoordinatorResponse,
        drawn_versions=every_version((3,), 0, 6),
        errors=("NONE", "COORDINATOR_NOT_AVAILABLE"),
    ),
    # ``COORDINATOR_NOT_AVAILABLE`` / ``COORDINATOR_LOAD_IN_PROGRESS`` come only with a fault
    RequestType(
        name="ListGroups",
        command=m.ListGroups,
        response=m.ListGroupsResponse,
        drawn_versions=every_version((2, 4, 5), 0, 5),
        errors=("NONE",),
        opt_in=True,
    ),
    # ``GROUP_ID_NOT_FOUND`` is the missing group's (its cell's state is the model's Empty)
    RequestType(
        name="DeleteGroups",
        command=m.DeleteGroups,
        response=m.DeleteGroupsResponse,
        drawn_versions=tuple(range(0, 3)),
        errors=("NONE", "NON_EMPTY_GROUP", "GROUP_ID_NOT_FOUND"),
        opt_in=True,
    ),
    # ``NON_EMPTY_GROUP`` needs members of another protocol type than ``consumer``: the suite's
    # clients have none (a cell Kafka allows that the search does not reach)
    RequestType(
        name="OffsetDelete",
        command=m.OffsetDelete,
        response=m.OffsetDeleteResponse,
        drawn_versions=(0,),
        errors=("NONE", "GROUP_SUBSCRIBED_TO_TOPIC", "GROUP_ID_NOT_FOUND", "NON_EMPTY_GROUP"),
        opt_in=True,
    ),
    # The transactional offsets path (``classic/transactions.py``). InitProducerId v3+ carry a
    # producer id and epoch (the suite sends -1/-1) and v4+ answer PRODUCER_FENCED where older
    # versions get INVALID_PRODUCER_EPOCH, as AddOffsetsToTxn and EndTxn do below v2;
    # TxnOffsetCommit v3+ carry the member (KIP-447), v4+ answer TRANSACTION_ABORTABLE where older
    # ones get INVALID_TXN_STATE, v5 adds the offsets partition itself and EndTxn v5 bumps the epoch
    # (transaction version 2, KIP-890: 4.x only).
    RequestType(
        name="InitProducerId",
        command=m.InitProducerId,
        response=m.InitProducerIdResponse,
        drawn_versions=tuple(range(0, 6)),
        errors=("NONE", "CONCURRENT_TRANSACTIONS"),
        opt_in=True,
    ),
    RequestType(
        name="AddOffsetsToTxn",
        command=m.AddOffsetsToTxn,
        response=m.AddOffsetsToTxnResponse,
        drawn_versions=tuple(range(0, 5)),
        errors=("NONE", "PRODUCER_FENCED", "INVALID_PRODUCER_EPOCH", "CONCURRENT_TRANSACTIONS"),
        opt_in=True,
    ),
    RequestType(
        name="TxnOffsetCommit",
        command=m.TxnOffsetCommit,
        response=m.TxnOffsetCommitResponse,
        drawn_versions=tuple(range(0, 6)),
        errors=(
            "NONE",
            "ILLEGAL_GENERATION",
            "UNKNOWN_MEMBER_ID",
            "FENCED_INSTANCE_ID",
            "INVALID_TXN_STATE",
            "TRANSACTION_ABORTABLE",
            "INVALID_PRODUCER_EPOCH",
            "CONCURRENT_TRANSACTIONS",
        ),
        opt_in=True,
    ),
    RequestType(
        name="EndTxn",
        command=m.EndTxn,
        response=m.EndTxnResponse,
        drawn_versions=tuple(range(0, 6)),
        errors=(
            "NONE",
            "INVALID_TXN_STATE",
            "PRODUCER_FENCED",
            "INVALID_PRODUCER_EPOCH",
            "CONCURRENT_TRANSACTIONS",
        ),
        opt_in=True,
    ),
)

#: Every classic request type, by name, in the order reports list them.
CLASSIC_REQUESTS: Final[dict[str, RequestType]] = {r.name: r for r in _CLASSIC}
#: The request types every classic search draws (the others are ``opt_in``).
DEFAULT_REQUESTS: Final[tuple[str, ...]] = tuple(r.name for r in _CLASSIC if not r.opt_in)
#: The request types a search draws only when asked.
OPT_IN_REQUESTS: Final[tuple[str, ...]] = tuple(r.name for r in _CLASSIC if r.opt_in)
#: The transactional offsets path: asking for one of them asks for all four (``opt_in_closure``).
TRANSACTIONAL_REQUESTS: Final[tuple[str, ...]] = (
    "InitProducerId",
    "AddOffsetsToTxn",
    "TxnOffsetCommit",
    "EndTxn",
)


def opt_in_closure(names: tuple[str, ...]) -> tuple[str, ...]:
    """``names`` with the request types each one needs to be drawn: a TxnOffsetCommit needs a
    producer id (InitProducerId), a transaction (AddOffsetsToTxn) and its end (EndTxn)."""
    out = list(names)
    if set(names) & set(TRANSACTIONAL_REQUESTS):
        out += TRANSACTIONAL_REQUESTS
    return tuple(dict.fromkeys(out))
