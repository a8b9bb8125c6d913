"""The classic group's request types: one record per type, every pure fact about it in one place.

A request type is known to every layer by its name (``"JoinGroup"``). What the layers below the
wire need to know of it is written here once, in a :class:`RequestType`:

* its API key (``apis.KEYS``, Kafka's ``ApiKeys``) and its model records (``commands.py``);
* the versions the differential search draws by default (``properties/machine.py``
  ``DEFAULT_VERSIONS``; a broker and a release line narrow them, ``conformance/wire/negotiate.py``);
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

Default versions, chosen so each behaviour difference between versions is drawn: JoinGroup v3 is
before KIP-394's member-id handshake, v4+ after it; v5+ carries group.instance.id (KIP-345).
SyncGroup v5 names the protocol (KIP-559), so a wrong one can be sent (``misuse``); OffsetCommit
v9 and DescribeGroups v6 (4.x) answer a missing group GROUP_ID_NOT_FOUND. ListGroups v2 is the
last one before flexible versions, v4 filters by state and names it (KIP-518), v5 filters by type
and names it (KIP-848). DeleteGroups v0 and v1 are the same request, v2 the flexible one;
OffsetDelete has v0 only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from kgc.model import commands as m
from kgc.model.apis import KEYS


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestType:
    """One request type of the classic group (module docstring)."""

    name: str  # Kafka's API name, a key of ``apis.KEYS``
    command: type[Any]  # its record in ``commands.py``
    response: type[Any]  # the record of its answer
    drawn_versions: tuple[int, ...]  # the versions the search draws by default
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
        drawn_versions=(3, 5, 7),
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
        drawn_versions=(3, 4, 5),
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
        drawn_versions=(3, 4),
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
        drawn_versions=(3, 4),
        errors=("NONE", "UNKNOWN_MEMBER_ID", "FENCED_INSTANCE_ID"),
    ),
    RequestType(
        name="OffsetCommit",
        command=m.OffsetCommit,
        response=m.OffsetCommitResponse,
        drawn_versions=(7, 8, 9),
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
        drawn_versions=(6, 7),
        errors=("NONE",),
    ),
    RequestType(
        name="DescribeGroups",
        command=m.DescribeGroups,
        response=m.DescribeGroupsResponse,
        drawn_versions=(4, 5, 6),
        errors=("NONE", "GROUP_ID_NOT_FOUND"),
    ),
    RequestType(
        name="FindCoordinator",
        command=m.FindCoordinator,
        response=m.FindCoordinatorResponse,
        drawn_versions=(3,),
        errors=("NONE", "COORDINATOR_NOT_AVAILABLE"),
    ),
    # ``COORDINATOR_NOT_AVAILABLE`` / ``COORDINATOR_LOAD_IN_PROGRESS`` come only with a fault
    RequestType(
        name="ListGroups",
        command=m.ListGroups,
        response=m.ListGroupsResponse,
        drawn_versions=(2, 4, 5),
        errors=("NONE",),
        opt_in=True,
    ),
    # ``GROUP_ID_NOT_FOUND`` is the missing group's (its cell's state is the model's Empty)
    RequestType(
        name="DeleteGroups",
        command=m.DeleteGroups,
        response=m.DeleteGroupsResponse,
        drawn_versions=(0, 1, 2),
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
)

#: Every classic request type, by name, in the order reports list them.
CLASSIC_REQUESTS: Final[dict[str, RequestType]] = {r.name: r for r in _CLASSIC}
#: The request types every classic search draws (the others are ``opt_in``).
DEFAULT_REQUESTS: Final[tuple[str, ...]] = tuple(r.name for r in _CLASSIC if not r.opt_in)
#: The request types a search draws only when asked.
OPT_IN_REQUESTS: Final[tuple[str, ...]] = tuple(r.name for r in _CLASSIC if r.opt_in)
