"""Coverage of group-state × request × error cells, computed from a recorded history.

A cell is (the group's state when the request was sent, the request type, the error it got). The
state comes from the model: the engine records it on each ``Invoke`` as the extra key
``group_state`` when every live model state agrees (``"?"`` when they do not). The universe lists,
per request, the errors Kafka's classic group coordinator can return for it (the ``errors`` the
request's handling in ``GroupMetadataManager``/``GroupCoordinator`` produces); a cell never reached
is listed by ``kgc check`` and the Spark report, so nobody mistakes a quiet run for a thorough one.

The same function serves ``kgc check`` (live) and the pipeline (over stored traces).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from kgc.model.commands import (
    LeaveGroupResponse,
    OffsetCommitResponse,
    OffsetDeleteResponse,
    OffsetFetchResponse,
    Response,
)
from kgc.model.errors import NONE
from kgc.model.history import Event, Invoke, Receive
from kgc.model.requests import CLASSIC_REQUESTS, DEFAULT_REQUESTS, OPT_IN_REQUESTS

GROUP_STATES = ("Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead")

# per request, the errors of its cells: each request type's own (``model/requests.py``)
ERRORS_BY_REQUEST: dict[str, tuple[str, ...]] = {
    name: CLASSIC_REQUESTS[name].errors for name in DEFAULT_REQUESTS
}

Cell = tuple[str, str, str]

# Cells no history can reach, and why (the denominator must not count them). The state is the
# *model's* when the request was sent, so a cell is impossible when the model's rules (each citing
# Kafka's source) never give that answer in that state. ``cells_never_possible`` is checked against
# the model by tests/properties/test_coverage_universe.py.
_NO_MEMBERS = (
    "an Empty (or missing) group has no members: member validation answers UNKNOWN_MEMBER_ID"
)
IMPOSSIBLE_BY_RULE: dict[tuple[str, str, str], str] = {
    ("Empty", "JoinGroup", "GROUP_MAX_SIZE_REACHED"): "an Empty group accepts every joiner "
    "(acceptJoiningMember / canAddMember; before 2.6 the limit counts members, and it has none)",
    ("Empty", "JoinGroup", "FENCED_INSTANCE_ID"): "no member holds an instance id; a new static "
    "member is added",
    ("Empty", "SyncGroup", "NONE"): _NO_MEMBERS,
    ("Empty", "SyncGroup", "ILLEGAL_GENERATION"): _NO_MEMBERS,
    ("Empty", "SyncGroup", "FENCED_INSTANCE_ID"): _NO_MEMBERS,
    ("Empty", "Heartbeat", "ILLEGAL_GENERATION"): _NO_MEMBERS,
    ("Empty", "Heartbeat", "REBALANCE_IN_PROGRESS"): _NO_MEMBERS,
    ("Empty", "Heartbeat", "FENCED_INSTANCE_ID"): _NO_MEMBERS,
    ("Empty", "LeaveGroup", "FENCED_INSTANCE_ID"): _NO_MEMBERS,
    ("Empty", "OffsetCommit", "REBALANCE_IN_PROGRESS"): "only CompletingRebalance refuses a "
    "valid member's commit",
    ("Empty", "OffsetCommit", "FENCED_INSTANCE_ID"): _NO_MEMBERS,
    ("PreparingRebalance", "SyncGroup", "NONE"): "a valid SyncGroup in PreparingRebalance is "
    "answered REBALANCE_IN_PROGRESS at once",
    ("PreparingRebalance", "OffsetCommit", "REBALANCE_IN_PROGRESS"): "only CompletingRebalance "
    "refuses a valid member's commit",
    ("CompletingRebalance", "Heartbeat", "REBALANCE_IN_PROGRESS"): "a valid Heartbeat in "
    "CompletingRebalance is answered NONE",
    ("CompletingRebalance", "OffsetCommit", "NONE"): "a valid member's commit is "
    "REBALANCE_IN_PROGRESS, any other is refused (UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION)",
    ("Stable", "Heartbeat", "REBALANCE_IN_PROGRESS"): "a valid Heartbeat in Stable is NONE",
    ("Stable", "OffsetCommit", "REBALANCE_IN_PROGRESS"): "only CompletingRebalance refuses a "
    "valid member's commit",
}
# JoinGroup REBALANCE_IN_PROGRESS: Kafka 4.x answers a classic group's parked joins so only when
# a KIP-848 consumer-protocol member converts the group (GroupMetadataManager
# .convertToConsumerGroup); the suite speaks the classic protocol only.
for _state in ("Empty", "PreparingRebalance", "CompletingRebalance", "Stable"):
    IMPOSSIBLE_BY_RULE[(_state, "JoinGroup", "REBALANCE_IN_PROGRESS")] = (
        "only when a consumer-protocol (KIP-848) member converts the group; the suite is classic"
    )

IMPOSSIBLE_BY_RULE[("CompletingRebalance", "OffsetCommit", "OFFSET_METADATA_TOO_LARGE")] = (
    "a valid member's commit is REBALANCE_IN_PROGRESS before any partition is looked at "
    "(model/classic/offsets.py rule 2)"
)
for _state in ("PreparingRebalance", "CompletingRebalance", "Stable"):
    for _request in ("OffsetCommit", "DescribeGroups"):
        IMPOSSIBLE_BY_RULE[(_state, _request, "GROUP_ID_NOT_FOUND")] = (
            "the group exists (only a missing group, which the model calls Empty, is "
            "GROUP_ID_NOT_FOUND)"
        )

# Cells a history reaches only inside a window a broker keeps for milliseconds: not counted (a
# search could not be asked to hit them), but not outside Kafka's rules either. 4.x describes a
# group at the last committed offset, so a group whose creation record is not yet committed is
# missing to DescribeGroups while it rebalances (``model/classic/describe.py`` rule 3, RULES D3):
# on one node the commit follows within milliseconds; ``tests/faults/test_uncommitted_group.py``
# holds it open with a paused follower. Once an answer shows the record committed (a join or sync
# answer, ``describe.shows_writes_committed``), the group exists; Stable follows a sync answer.
WINDOW_ONLY: dict[Cell, str] = {
    (s, "DescribeGroups", "GROUP_ID_NOT_FOUND"): "4.x: only while the new group's creation "
    "record is uncommitted (describe.py rule 3), a window of milliseconds on one node"
    for s in ("PreparingRebalance", "CompletingRebalance")
}
for _cell in WINDOW_ONLY:
    del IMPOSSIBLE_BY_RULE[_cell]

# Cells only a fault gives (a coordinator without a leader, or loading the group): the
# differential run never injects one, so they are not in its universe; the fault suite
# (``conformance/drivers/fault_suite.py``) reaches them. A history that reaches one is not
# "outside".
FAULT_ONLY: dict[Cell, str] = {
    **{
        (s, "FindCoordinator", "COORDINATOR_NOT_AVAILABLE"): "a coordinator without a leader "
        "(fault injection)"
        for s in ("Empty", "PreparingRebalance", "CompletingRebalance", "Stable")
    },
    # while the coordinator loads: Heartbeat is answered NONE, 3.9 turns SyncGroup's
    # COORDINATOR_LOAD_IN_PROGRESS into REBALANCE_IN_PROGRESS (model/coordinator.py)
    ("Empty", "Heartbeat", "NONE"): "a coordinator loading the group (fault injection)",
    ("PreparingRebalance", "Heartbeat", "NONE"): "a coordinator loading the group (fault "
    "injection)",
    **{
        (s, "SyncGroup", "REBALANCE_IN_PROGRESS"): "Kafka 3.9 with a coordinator loading the "
        "group (fault injection)"
        for s in ("Empty", "Stable")
    },
}
for _cell in FAULT_ONLY:
    IMPOSSIBLE_BY_RULE.pop(_cell, None)

# Cells of the request types a search draws only when asked (``RequestType.opt_in``): known, so a
# run that reaches one does not call it "outside", but not counted (no witness is recorded for
# them). A missing group is not listed (a ``NONE`` answer without it): the model's Empty.
UNCOUNTED: dict[Cell, str] = {
    (s, name, e): "a request type drawn only when the search asks for it (opt-in)"
    for name in OPT_IN_REQUESTS
    for s in GROUP_STATES[:-1]
    for e in CLASSIC_REQUESTS[name].errors
}

# Cells reachable only with a broker setting: counted where the target has it (the embedded
# broker does: ``conformance/brokers/embedded.py`` ``default_config``), left out of the denominator
# where it does not (``unreachable_on``).
LARGEST_GROUP = 4  # clients one example of the classic search has at most (``MAX_CLIENTS``)
# Every line with ``group.max.size`` reaches them in all three states: 2.6+ by
# ``acceptJoiningMember``, 2.2 - 2.5 by the size-only rule
# (``Profile.max_size_limits_unknown_members_only``: a new member of a full group is refused in any
# state). 1.x has no such setting: its size is unknown or Kafka's default, so they are left out.
NEEDS_SETUP: dict[Cell, str] = {
    (s, "JoinGroup", "GROUP_MAX_SIZE_REACHED"): "group.max.size below the suite's group sizes"
    for s in ("PreparingRebalance", "CompletingRebalance", "Stable")
}
# Cells only a request version gives, and the line rule that must be on: left out where the
# versions the suite sends the target (negotiated) or its line's rules lack them. A static member
# (every FENCED_INSTANCE_ID) needs JoinGroup v5 (KIP-345), MEMBER_ID_REQUIRED JoinGroup v4
# (KIP-394), a SyncGroup naming a protocol v5 (KIP-559).
NEEDS_VERSION: dict[Cell, tuple[str, int, str | None]] = {
    **{
        (s, request, "FENCED_INSTANCE_ID"): ("JoinGroup", 5, None)
        for s in ("PreparingRebalance", "CompletingRebalance", "Stable")
        for request in ("JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit")
    },
    **{
        (s, "JoinGroup", "MEMBER_ID_REQUIRED"): ("JoinGroup", 4, None)
        for s in ("Empty", "PreparingRebalance", "CompletingRebalance", "Stable")
    },
    **{
        (s, "SyncGroup", "INCONSISTENT_GROUP_PROTOCOL"): ("SyncGroup", 5, None)
        for s in ("Empty", "PreparingRebalance", "CompletingRebalance", "Stable")
    },
    ("Empty", "DescribeGroups", "GROUP_ID_NOT_FOUND"): (
        "DescribeGroups",
        6,
        "describe_missing_group_error_v6",
    ),
    ("Empty", "OffsetCommit", "GROUP_ID_NOT_FOUND"): (
        "OffsetCommit",
        9,
        "commit_missing_group_v9_group_id_not_found",
    ),
}


# The KIP-848 consumer group (``model/consumer/group.py``): states as ConsumerGroupDescribe names
# them, ``Dead`` for a group that does not exist (yet).
CONSUMER_GROUP_STATES = ("Empty", "Assigning", "Reconciling", "Stable", "Dead")
CONSUMER_ERRORS_BY_REQUEST: dict[str, tuple[str, ...]] = {
    "ConsumerGroupHeartbeat": (
        "NONE",
        "INVALID_REQUEST",
        "UNSUPPORTED_ASSIGNOR",
        "GROUP_ID_NOT_FOUND",
        "UNKNOWN_MEMBER_ID",
        "FENCED_MEMBER_EPOCH",
        "GROUP_MAX_SIZE_REACHED",
        "UNRELEASED_INSTANCE_ID",
        "FENCED_INSTANCE_ID",
        "INVALID_REGULAR_EXPRESSION",  # a new regex that does not compile (rule 12)
    ),
    "ConsumerGroupDescribe": ("NONE", "GROUP_ID_NOT_FOUND"),
    # offsets with member epochs (rule 11 of ``model/consumer/group.py``)
    "OffsetCommit": (
        "NONE",
        "GROUP_ID_NOT_FOUND",
        "ILLEGAL_GENERATION",
        "UNKNOWN_MEMBER_ID",
        "UNSUPPORTED_VERSION",
        "STALE_MEMBER_EPOCH",
        "OFFSET_METADATA_TOO_LARGE",
    ),
    "OffsetFetch": ("NONE", "UNKNOWN_MEMBER_ID", "STALE_MEMBER_EPOCH"),
}
_NO_GROUP = "a missing group: a join creates it, anything else is GROUP_ID_NOT_FOUND"
_NO_GROUP_COMMIT = (
    "a missing group: a commit is GROUP_ID_NOT_FOUND (v9+) or ILLEGAL_GENERATION (v8); epoch -1 "
    "would make a classic group, which the suite never asks for"
)
_MEMBERLESS = "an Empty group has no member whose epoch could be wrong: UNKNOWN_MEMBER_ID"
_CONSUMER_IMPOSSIBLE: dict[Cell, str] = {
    ("Dead", "ConsumerGroupHeartbeat", "UNKNOWN_MEMBER_ID"): _NO_GROUP,
    ("Dead", "ConsumerGroupHeartbeat", "FENCED_MEMBER_EPOCH"): _NO_GROUP,
    ("Dead", "ConsumerGroupHeartbeat", "GROUP_MAX_SIZE_REACHED"): "a missing group has no "
    "members, and group.consumer.max.size is at least 1",
    ("Dead", "ConsumerGroupDescribe", "NONE"): _NO_GROUP,
    ("Dead", "ConsumerGroupHeartbeat", "UNRELEASED_INSTANCE_ID"): _NO_GROUP,
    ("Dead", "ConsumerGroupHeartbeat", "FENCED_INSTANCE_ID"): _NO_GROUP,
    ("Empty", "ConsumerGroupHeartbeat", "FENCED_MEMBER_EPOCH"): "an Empty group has no member "
    "whose epoch could be wrong: UNKNOWN_MEMBER_ID",
    ("Empty", "ConsumerGroupHeartbeat", "UNRELEASED_INSTANCE_ID"): "an Empty group has no "
    "member holding an instance id",
    ("Empty", "ConsumerGroupHeartbeat", "FENCED_INSTANCE_ID"): "an Empty group has no member "
    "holding an instance id: UNKNOWN_MEMBER_ID",
    ("Empty", "ConsumerGroupHeartbeat", "GROUP_MAX_SIZE_REACHED"): "an Empty group has no "
    "members, and group.consumer.max.size is at least 1 (GroupMetadataManager"
    ".throwIfConsumerGroupIsFull: numMembers() >= consumerGroupMaxSize())",
    **{
        (state, request, "GROUP_ID_NOT_FOUND"): "the group exists"
        for state in ("Empty", "Assigning", "Reconciling", "Stable")
        for request in ("ConsumerGroupHeartbeat", "ConsumerGroupDescribe", "OffsetCommit")
    },
    **{
        (state, "OffsetCommit", "ILLEGAL_GENERATION"): "the group exists and its members use the "
        "consumer protocol: a wrong epoch is STALE_MEMBER_EPOCH"
        for state in ("Empty", "Assigning", "Reconciling", "Stable")
    },
    **{
        ("Dead", "OffsetCommit", error): _NO_GROUP_COMMIT
        for error in (
            "NONE",
            "UNKNOWN_MEMBER_ID",
            "UNSUPPORTED_VERSION",
            "STALE_MEMBER_EPOCH",
            "OFFSET_METADATA_TOO_LARGE",
        )
    },
    ("Empty", "OffsetCommit", "UNSUPPORTED_VERSION"): _MEMBERLESS,
    ("Empty", "OffsetCommit", "STALE_MEMBER_EPOCH"): _MEMBERLESS,
    ("Empty", "OffsetFetch", "STALE_MEMBER_EPOCH"): _MEMBERLESS,
    ("Dead", "OffsetFetch", "UNKNOWN_MEMBER_ID"): "a missing group reads as nothing committed",
    ("Dead", "OffsetFetch", "STALE_MEMBER_EPOCH"): "a missing group reads as nothing committed",
}
CONSUMER_NEEDS_SETUP: dict[Cell, str] = {
    (s, "ConsumerGroupHeartbeat", "GROUP_MAX_SIZE_REACHED"): "group.consumer.max.size below the "
    "suite's group sizes"
    for s in ("Assigning", "Reconciling", "Stable")
}


def consumer_universe() -> list[Cell]:
    """The cells a KIP-848 consumer group can reach by Kafka's rules."""
    return [
        (state, request, error)
        for state in CONSUMER_GROUP_STATES
        for request, errors in CONSUMER_ERRORS_BY_REQUEST.items()
        for error in errors
        if (state, request, error) not in _CONSUMER_IMPOSSIBLE
    ]


# The KIP-932 share group (``model/share/group.py``; docs/share-groups.md): ``Empty`` or ``Stable``
# as ShareGroupDescribe names them (``ShareGroup.stateAsString``), ``Dead`` for a group that does
# not exist (yet, or again after DeleteGroups).
SHARE_GROUP_STATES = ("Empty", "Stable", "Dead")
SHARE_ERRORS_BY_REQUEST: dict[str, tuple[str, ...]] = {
    # GroupMetadataManager.shareGroupHeartbeat and the validation before it (docs §2's table)
    "ShareGroupHeartbeat": (
        "NONE",
        "INVALID_REQUEST",
        "GROUP_ID_NOT_FOUND",
        "UNKNOWN_MEMBER_ID",
        "FENCED_MEMBER_EPOCH",
        "GROUP_MAX_SIZE_REACHED",
    ),
    "ShareGroupDescribe": ("NONE", "GROUP_ID_NOT_FOUND"),
    # GroupCoordinatorShard.sharePartitionDeleteRequests, then the common delete (docs §4)
    "DeleteGroups": ("NONE", "NON_EMPTY_GROUP", "GROUP_ID_NOT_FOUND"),
    "ListGroups": ("NONE",),
}
_NO_SHARE_GROUP = "a missing group: a join creates it, anything else is GROUP_ID_NOT_FOUND"
_SHARE_IMPOSSIBLE: dict[Cell, str] = {
    ("Dead", "ShareGroupHeartbeat", "UNKNOWN_MEMBER_ID"): _NO_SHARE_GROUP,
    ("Dead", "ShareGroupHeartbeat", "FENCED_MEMBER_EPOCH"): _NO_SHARE_GROUP,
    ("Dead", "ShareGroupHeartbeat", "GROUP_MAX_SIZE_REACHED"): _NO_SHARE_GROUP,
    ("Dead", "ShareGroupDescribe", "NONE"): _NO_SHARE_GROUP,
    ("Dead", "DeleteGroups", "NONE"): "nothing to delete: GROUP_ID_NOT_FOUND",
    ("Dead", "DeleteGroups", "NON_EMPTY_GROUP"): "nothing to delete: GROUP_ID_NOT_FOUND",
    ("Empty", "ShareGroupHeartbeat", "FENCED_MEMBER_EPOCH"): "an Empty group has no member "
    "whose epoch could be wrong: UNKNOWN_MEMBER_ID",
    ("Empty", "ShareGroupHeartbeat", "GROUP_MAX_SIZE_REACHED"): "an Empty group has no members, "
    "and group.share.max.size is at least 1 (GroupMetadataManager.throwIfShareGroupIsFull)",
    ("Empty", "DeleteGroups", "NON_EMPTY_GROUP"): "an Empty group is deleted",
    ("Stable", "DeleteGroups", "NONE"): "a group with members is NON_EMPTY_GROUP "
    "(GroupCoordinatorShard.sharePartitionDeleteRequests)",
    **{
        (state, request, "GROUP_ID_NOT_FOUND"): "the group exists and is a share group"
        for state in ("Empty", "Stable")
        for request in ("ShareGroupHeartbeat", "ShareGroupDescribe", "DeleteGroups")
    },
}


def share_universe() -> list[Cell]:
    """The cells a KIP-932 share group can reach by Kafka's rules."""
    return [
        (state, request, error)
        for state in SHARE_GROUP_STATES
        for request, errors in SHARE_ERRORS_BY_REQUEST.items()
        for error in errors
        if (state, request, error) not in _SHARE_IMPOSSIBLE
    ]


# One group id used by both protocols (``model/consumer/migration.py``): the cells of the crossing
# rules, where a request of one protocol meets the other's group. A group state is named by its
# type: ``classic/Stable``, ``consumer/Empty`` (``MigratingGroupModel.group_state``). Which cells a
# broker can give depends on its ``group.consumer.migration.policy``.
_CLASSIC_KINDS = (
    "classic/Empty",
    "classic/PreparingRebalance",
    "classic/CompletingRebalance",
    "classic/Stable",
)
_CONSUMER_KINDS = ("consumer/Empty", "consumer/Stable", "consumer/Reconciling")


def migration_universe(policy: str = "bidirectional") -> list[Cell]:
    """The crossing cells (rules 1-4 of ``model/consumer/migration.py``) under ``policy``."""
    upgrade = policy in ("bidirectional", "upgrade")
    mixed = policy != "disabled"  # classic members may join a consumer group with members
    cells: list[Cell] = [("classic/Empty", "ConsumerGroupHeartbeat", "NONE")]  # rule 1: deleted
    cells += [(s, "ConsumerGroupHeartbeat", "GROUP_ID_NOT_FOUND") for s in _CLASSIC_KINDS]
    cells += [(s, "ConsumerGroupDescribe", "GROUP_ID_NOT_FOUND") for s in _CLASSIC_KINDS]
    if upgrade:  # a consumer member converts a classic group with members
        cells += [(s, "ConsumerGroupHeartbeat", "NONE") for s in _CLASSIC_KINDS[1:]]
    cells += [("consumer/Empty", "JoinGroup", e) for e in ("NONE", "MEMBER_ID_REQUIRED")]
    for s in _CONSUMER_KINDS:
        cells += [(s, r, "UNKNOWN_MEMBER_ID") for r in ("SyncGroup", "Heartbeat", "LeaveGroup")]
        cells += [(s, "DescribeGroups", e) for e in ("NONE", "GROUP_ID_NOT_FOUND")]
        if s == "consumer/Empty":
            continue
        cells.append((s, "LeaveGroup", "NONE"))  # a member removed by a classic LeaveGroup
        if not mixed:  # rule 2: a group with members refuses classic members
            cells.append((s, "JoinGroup", "INCONSISTENT_GROUP_PROTOCOL"))
            continue
        # classic members of a consumer group (``classicGroup*ToConsumerGroup``)
        cells += [(s, "JoinGroup", e) for e in ("NONE", "MEMBER_ID_REQUIRED")]
        cells += [(s, r, "NONE") for r in ("SyncGroup", "Heartbeat", "OffsetCommit")]
        if s == "consumer/Reconciling":
            # a member behind the assignment epoch, or revoking, is told to rejoin; in a Stable
            # group every member is reconciled at that epoch, so none is
            cells += [(s, r, "REBALANCE_IN_PROGRESS") for r in ("SyncGroup", "Heartbeat")]
    cells.append(("Dead", "OffsetCommit", "NONE"))  # rule 4: a simple classic group is made
    return cells


def excluded() -> dict[Cell, str]:
    """Every cell left out of :func:`universe`, with the reason."""
    out: dict[Cell, str] = {}
    for request, errors in ERRORS_BY_REQUEST.items():
        for error in errors:
            out[("Dead", request, error)] = (
                "the model has no Dead state (a missing group is Empty; no DeleteGroups command)"
            )
    out.update(IMPOSSIBLE_BY_RULE)
    out.update(WINDOW_ONLY)
    out.update(FAULT_ONLY)
    return out


def unreachable_on(target: Mapping[str, Any]) -> dict[Cell, str]:
    """Cells of :func:`universe` that a run against ``target`` (a trace manifest's ``target``:
    its ``group_config``, negotiated ``request_versions`` and line) cannot reach, with why."""
    out: dict[Cell, str] = {}
    size = (target.get("group_config") or {}).get("group.max.size")
    if size is None or int(size) >= LARGEST_GROUP:
        # where the value came from (``brokerconfig.facts``): a value kgc assumed says so
        source = (target.get("fact_sources") or {}).get("group.max.size")
        if source == "assumed":
            source = "assumed: Kafka's default, the broker did not say"
        shown = "unknown" if size is None else f"{size}" + (f", {source}" if source else "")
        for cell, why in NEEDS_SETUP.items():
            out[cell] = f"{why} (group.max.size is {shown})"
    versions = target.get("request_versions")
    profile = profile_of(target)
    known = set(universe())
    for cell, (api, least, rule) in NEEDS_VERSION.items():
        if cell not in known:
            continue
        sent = [int(v) for v in (versions or {}).get(api, ())]
        if versions is not None and not any(v >= least for v in sent):
            out[cell] = f"{api} v{least}+ is not among the versions sent ({sent or 'none'})"
        elif rule is not None and profile is not None and not getattr(profile, rule, True):
            out[cell] = f"the {profile.name} rules do not give it ({rule} is off)"
    return out


def profile_of(target: Mapping[str, Any]) -> Any:
    """The ``Profile`` a run against ``target`` is judged by: its line's, with an
    implementation's switches in force; None for a target described too little to say."""
    from kgc.engine.registry import model_manifest, with_switches
    from kgc.model import PROFILES

    try:
        record = model_manifest(dict(target))
        profile = PROFILES.get(record["profile"])
        return None if profile is None else with_switches(profile, record.get("switches"))
    except Exception:  # noqa: BLE001 - a target described too little to say: no line rule
        return None


def universe() -> list[Cell]:
    """The cells a classic group can reach by Kafka's rules (with any broker setup)."""
    gone = excluded()
    return [
        (state, request, error)
        for state in GROUP_STATES
        for request, errors in ERRORS_BY_REQUEST.items()
        for error in errors
        if (state, request, error) not in gone
    ]


def error_of(response: Response) -> str:
    """The error a response carries: top level, else the first per-member/partition error."""
    nested = _nested(response)
    if response.error != NONE or not nested:
        return response.error
    return nested[0]


def _nested(response: Response) -> list[str]:
    errs: list[str] = []
    if isinstance(response, LeaveGroupResponse):
        errs = [m.error for m in response.members]
    elif isinstance(response, OffsetCommitResponse | OffsetFetchResponse | OffsetDeleteResponse):
        errs = [p.error for p in response.partitions]
    bad = [e for e in errs if e != NONE]
    return bad or errs


def reached(
    events: Sequence[Event], extras: Sequence[Mapping[str, Any]]
) -> Iterator[tuple[int, Cell]]:
    """Each answer of one history with the cell it reached: (event index, cell)."""
    state_at: dict[int, str] = {}
    kind_of: dict[int, str] = {}
    for i, e in enumerate(events):
        if isinstance(e, Invoke):
            x = extras[i] if i < len(extras) else {}
            state_at[e.request_id] = str(x.get("group_state", "?"))
            kind_of[e.request_id] = e.command.type
        elif isinstance(e, Receive) and e.request_id in kind_of:
            yield i, (state_at[e.request_id], kind_of[e.request_id], error_of(e.response))


def cells_of(events: Sequence[Event], extras: Sequence[Mapping[str, Any]]) -> Counter[Cell]:
    """Count the cells one history reached."""
    return Counter(cell for _, cell in reached(events, extras))


# Authorization cells: a request and the authorization error it was answered, in any group state
# (the authorizer answers before the group is looked at: ``model/classic/authorization.py``).
# The universe is the default search's requests under each permission the search denies (a run
# whose principal the search may deny operations: ``SuiteContext.acl_actions``).
AUTHORIZATION_CELLS: tuple[tuple[str, str], ...] = (
    *(
        (request, "GROUP_AUTHORIZATION_FAILED")
        for request in (
            "JoinGroup",
            "SyncGroup",
            "Heartbeat",
            "LeaveGroup",
            "OffsetCommit",
            "OffsetFetch",
            "DescribeGroups",
            "FindCoordinator",
        )
    ),
    ("OffsetCommit", "TOPIC_AUTHORIZATION_FAILED"),
    ("OffsetFetch", "TOPIC_AUTHORIZATION_FAILED"),
)
AUTHORIZATION_ERRORS = frozenset(e for _, e in AUTHORIZATION_CELLS)


def summarise_authorization(counts: Mapping[Cell, int]) -> dict[str, Any]:
    """Reached and never-reached authorization cells (:data:`AUTHORIZATION_CELLS`), from the
    group-state × request × error cells a run reached."""
    hit = {(r, e) for (_, r, e), n in counts.items() if n and e in AUTHORIZATION_ERRORS}
    reached = [c for c in AUTHORIZATION_CELLS if c in hit]
    return {
        "cells": len(AUTHORIZATION_CELLS),
        "reached": len(reached),
        "percent": 100.0 * len(reached) / len(AUTHORIZATION_CELLS),
        "never": [f"{r} × {e}" for r, e in AUTHORIZATION_CELLS if (r, e) not in hit],
    }


def summarise(
    counts: Mapping[Cell, int] | Iterable[tuple[Cell, int]],
    unsupported: Iterable[str] = (),
    protocol: str = "classic",
    target: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Reached and never-reached cells of the ``protocol``'s universe (``classic``,
    ``consumer``, ``share``; ``migration``: its crossing cells). Cells of an ``unsupported``
    request type (one the target cannot be sent) leave the denominator and are listed under
    ``unsupported``; with the ``target`` described, so do the cells its setup cannot give
    (:func:`unreachable_on`), listed under ``unreachable``."""
    reached = dict(counts) if isinstance(counts, Mapping) else dict(counts)
    off = set(unsupported)
    if protocol == "migration":
        policy = ((target or {}).get("group_config") or {}).get(
            "group.consumer.migration.policy", "bidirectional"
        )
        return _summarise_migration(reached, str(policy))
    if protocol == "share":
        return _summarise_share(reached, off)
    consumer = protocol == "consumer"
    all_cells = consumer_universe() if consumer else universe()
    needs_setup = CONSUMER_NEEDS_SETUP if consumer else NEEDS_SETUP
    cannot = {} if consumer or target is None else unreachable_on(target)
    cells = [c for c in all_cells if c[1] not in off and c not in cannot]
    lost = [f"{s} × {r} × {e}" for (s, r, e) in all_cells if r in off]
    hit = [c for c in cells if reached.get(c, 0) > 0]
    never = [f"{s} × {r} × {e}" for (s, r, e) in cells if reached.get((s, r, e), 0) == 0]
    known = set(all_cells) | (set() if consumer else set(FAULT_ONLY) | set(UNCOUNTED))
    extra = sorted(
        f"{s} × {r} × {e}"
        for (s, r, e) in reached
        if (s, r, e) not in known and e not in AUTHORIZATION_ERRORS  # counted on their own
    )
    return {
        "unreachable": {f"{s} × {r} × {e}": why for (s, r, e), why in sorted(cannot.items())},
        "cells": len(cells),
        "reached": len(hit),
        "percent": 100.0 * len(hit) / len(cells),
        "never": never,
        "outside_universe": extra,
        "unsupported": lost,
        # impossible cells, not counted (see ``excluded()``)
        "excluded": len(_CONSUMER_IMPOSSIBLE) if consumer else len(excluded()),
        "never_needs_setup": [
            f"{s} × {r} × {e}"
            for (s, r, e) in cells
            if reached.get((s, r, e), 0) == 0 and (s, r, e) in needs_setup
        ],
    }


def _summarise_share(reached: dict[Cell, int], off: set[str]) -> dict[str, Any]:
    """:func:`summarise` for the share machine: :func:`share_universe`, less the cells of a
    request type the target goes without (``off``)."""
    known = set(share_universe())
    cells = [c for c in share_universe() if c[1] not in off]
    hit = sum(1 for c in cells if reached.get(c, 0) > 0)
    return {
        "unreachable": {},
        "cells": len(cells),
        "reached": hit,
        "percent": 100.0 * hit / len(cells),
        "never": [f"{s} × {r} × {e}" for (s, r, e) in cells if reached.get((s, r, e), 0) == 0],
        "outside_universe": sorted(
            f"{s} × {r} × {e}" for (s, r, e), n in reached.items() if n and (s, r, e) not in known
        ),
        "unsupported": [f"{s} × {r} × {e}" for (s, r, e) in share_universe() if r in off],
        "excluded": len(_SHARE_IMPOSSIBLE),
        "never_needs_setup": [],
    }


def _summarise_migration(reached: dict[Cell, int], policy: str) -> dict[str, Any]:
    """:func:`summarise` for the migration machine: the crossing cells under the broker's
    ``policy`` only (each protocol's own cells are its own machine's to cover)."""
    cells = migration_universe(policy)
    hit = [c for c in cells if reached.get(c, 0) > 0]
    return {
        "unreachable": {},
        "cells": len(cells),
        "reached": len(hit),
        "percent": 100.0 * len(hit) / len(cells),
        "never": [f"{s} × {r} × {e}" for (s, r, e) in cells if reached.get((s, r, e), 0) == 0],
        "outside_universe": [],
        "unsupported": [],
        "excluded": 0,
        "never_needs_setup": [],
    }


# ------------------------------------------------------------------------------ input cells
# An input cell is (request type, version, field class): what the request's fields were to the
# group when it was sent (``model/classic/inputs.py``), recorded by the engine on each ``Invoke`` as
# the extra key ``input_class`` when every live model state agrees. The universe is every version
# the run sends (``request_versions`` of its target; without one, the line's or kafka-python's) ×
# each request's classes, less the classes a version has no field for and those the versions sent
# cannot give at all (:func:`input_excluded`). Opt-in request types are known, not counted, as for
# the state cells.
InputCell = tuple[str, int, str]


def input_versions(target: Mapping[str, Any] | None = None) -> dict[str, tuple[int, ...]]:
    """The versions of each request type every search draws that a run against ``target``
    sends: its negotiated ``request_versions`` (a type missing from them is not sent), else
    every version kafka-python speaks (``RequestType.drawn_versions``) within its line's range."""
    sent = (target or {}).get("request_versions")
    profile = profile_of(target) if target is not None else None
    out: dict[str, tuple[int, ...]] = {}
    for name in DEFAULT_REQUESTS:
        if sent is not None:
            if name in sent:
                out[name] = tuple(sorted(int(v) for v in sent[name]))
            continue
        versions = CLASSIC_REQUESTS[name].drawn_versions
        if profile is not None:
            try:
                r = profile.api_range(name)
            except KeyError:
                continue
            versions = tuple(v for v in versions if r.min_version <= v <= r.max_version)
        if versions:
            out[name] = versions
    return out


def input_excluded(
    versions: Mapping[str, Sequence[int]],
    profile: Any = None,
    steers: Sequence[str] = (),
) -> dict[InputCell, str]:
    """Cells of the sent ``versions`` × each request's classes no run can reach, with why: a
    version without the class's field, a class only a JoinGroup version not sent gives, or one
    the search does not send to the line of ``profile`` (a ``Profile``; None: any line) or to an
    implementation with ``steers`` (``implementation_steers``)."""
    from kgc.model.classic.inputs import (
        CLASS_SINCE,
        EMPTY_GROUP,
        INPUT_CLASSES,
        NEEDS_PENDING,
        NEEDS_STATIC,
    )

    joins = [int(v) for v in versions.get("JoinGroup", ())]
    looks_up = profile is not None and profile.empty_group_id_checked_by_join_only
    out: dict[InputCell, str] = {}
    for api, sent in versions.items():
        for v in sent:
            for cls in INPUT_CLASSES.get(api, ()):
                since = CLASS_SINCE.get((api, cls))
                if cls == EMPTY_GROUP and "group_id_never_empty" in steers:
                    out[(api, v, cls)] = (
                        "steered around: this implementation takes the group id '' for a group "
                        "of its own (conformance/brokers/implementations.py STEERS)"
                    )
                elif cls == EMPTY_GROUP and api != "JoinGroup" and looks_up:
                    out[(api, v, cls)] = (
                        "this line looks the group '' up (model/classic/empty_group.py rule 3): "
                        "not a group the suite may touch"
                    )
                elif since is not None and v < since:
                    out[(api, v, cls)] = (
                        f"{api} v{v} has no field for it ({api}Request.json: from v{since})"
                    )
                elif (api, cls) in NEEDS_STATIC and not any(j >= 5 for j in joins):
                    out[(api, v, cls)] = "no static member: no JoinGroup v5+ is sent (KIP-345)"
                elif (api, cls) in NEEDS_PENDING and not any(j >= 4 for j in joins):
                    out[(api, v, cls)] = (
                        "no pending member: no JoinGroup v4+ is sent (KIP-394's member-id "
                        "handshake)"
                    )
    return out


def excluded_for(target: Mapping[str, Any] | None) -> dict[InputCell, str]:
    """:func:`input_excluded` for a run against ``target``: its versions, its line's profile and
    its implementation's steers (``implementation_steers``); None: any line, no steer."""
    if target is None:
        return input_excluded(input_versions(None))
    steers = tuple(target.get("implementation_steers") or ())
    return input_excluded(input_versions(target), profile_of(target), steers)


def input_universe(target: Mapping[str, Any] | None = None) -> list[InputCell]:
    """The input cells a run against ``target`` counts (module section above)."""
    from kgc.model.classic.inputs import INPUT_CLASSES

    versions = input_versions(target)
    gone = excluded_for(target)
    return [
        (api, v, cls)
        for api, sent in versions.items()
        for v in sent
        for cls in INPUT_CLASSES.get(api, ())
        if (api, v, cls) not in gone
    ]


def input_name(cell: InputCell) -> str:
    """``Heartbeat v0 × member, current generation``."""
    api, version, cls = cell
    return f"{api} v{version} × {cls}"


def inputs_reached(
    events: Sequence[Event], extras: Sequence[Mapping[str, Any]]
) -> Iterator[tuple[int, InputCell]]:
    """Each request of one history with the input cell it reached: (event index, cell). A request
    the live model states classed differently (``?``) reaches none."""
    for i, e in enumerate(events):
        if isinstance(e, Invoke):
            cls = (extras[i] if i < len(extras) else {}).get("input_class")
            if cls is not None and cls != "?":
                yield i, (e.command.type, int(e.command.version), str(cls))


def input_cells_of(
    events: Sequence[Event], extras: Sequence[Mapping[str, Any]]
) -> Counter[InputCell]:
    """Count the input cells one history reached."""
    return Counter(cell for _, cell in inputs_reached(events, extras))


def summarise_inputs(
    counts: Mapping[InputCell, int], target: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Reached and never-reached input cells of the universe for ``target``; ``excluded`` counts
    the cells of the versions sent that no run can reach (:func:`input_excluded`)."""
    from kgc.model.classic.inputs import INPUT_CLASSES

    cells = input_universe(target)
    counted = set(cells)
    hit = [c for c in cells if counts.get(c, 0) > 0]
    known_types = set(INPUT_CLASSES)
    return {
        "cells": len(cells),
        "reached": len(hit),
        "percent": 100.0 * len(hit) / len(cells) if cells else 0.0,
        "never": [input_name(c) for c in cells if counts.get(c, 0) == 0],
        # cells of types every search draws that the universe does not count (a model change)
        "outside_universe": sorted(
            input_name(c)
            for c in counts
            if c not in counted and c[0] in DEFAULT_REQUESTS and c[0] in known_types
        ),
        "excluded": len(excluded_for(target)),
    }
