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
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kgc.model.history import Event, Invoke, Receive

GROUP_STATES = ("Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead")

ERRORS_BY_REQUEST: dict[str, tuple[str, ...]] = {
    "JoinGroup": (
        "NONE",
        "MEMBER_ID_REQUIRED",
        "UNKNOWN_MEMBER_ID",
        "INCONSISTENT_GROUP_PROTOCOL",
        "GROUP_MAX_SIZE_REACHED",
        "FENCED_INSTANCE_ID",
        "INVALID_SESSION_TIMEOUT",
        "REBALANCE_IN_PROGRESS",
    ),
    "SyncGroup": (
        "NONE",
        "UNKNOWN_MEMBER_ID",
        "ILLEGAL_GENERATION",
        "REBALANCE_IN_PROGRESS",
        "FENCED_INSTANCE_ID",
        "INCONSISTENT_GROUP_PROTOCOL",
    ),
    "Heartbeat": (
        "NONE",
        "UNKNOWN_MEMBER_ID",
        "ILLEGAL_GENERATION",
        "REBALANCE_IN_PROGRESS",
        "FENCED_INSTANCE_ID",
    ),
    "LeaveGroup": ("NONE", "UNKNOWN_MEMBER_ID", "FENCED_INSTANCE_ID"),
    "OffsetCommit": (
        "NONE",
        "UNKNOWN_MEMBER_ID",
        "ILLEGAL_GENERATION",
        "REBALANCE_IN_PROGRESS",
        "FENCED_INSTANCE_ID",
    ),
    "OffsetFetch": ("NONE",),
    "DescribeGroups": ("NONE",),
    "FindCoordinator": ("NONE", "COORDINATOR_NOT_AVAILABLE"),
}

Cell = tuple[str, str, str]


def universe() -> list[Cell]:
    return [
        (state, request, error)
        for state in GROUP_STATES
        for request, errors in ERRORS_BY_REQUEST.items()
        for error in errors
    ]


def error_of(response: Any) -> str:
    """The error a response carries: top level, else the first per-member/partition error."""
    top = getattr(response, "error", None)
    if top is not None and (top != "NONE" or not _nested(response)):
        return str(top)
    nested = _nested(response)
    return nested[0] if nested else "NONE"


def _nested(response: Any) -> list[str]:
    errs = []
    for name in ("members", "partitions"):
        for item in getattr(response, name, ()) or ():
            e = getattr(item, "error", None)
            if e is not None:
                errs.append(str(e))
    bad = [e for e in errs if e != "NONE"]
    return bad or errs


def cells_of(events: Sequence[Event], extras: Sequence[Mapping[str, Any]]) -> Counter[Cell]:
    """Count the cells one history reached."""
    state_at: dict[int, str] = {}
    kind_of: dict[int, str] = {}
    out: Counter[Cell] = Counter()
    for i, e in enumerate(events):
        if isinstance(e, Invoke):
            x = extras[i] if i < len(extras) else {}
            state_at[e.request_id] = str(x.get("group_state", "?"))
            kind_of[e.request_id] = e.command.type
        elif isinstance(e, Receive) and e.request_id in kind_of:
            out[(state_at[e.request_id], kind_of[e.request_id], error_of(e.response))] += 1
    return out


def summarise(counts: Mapping[Cell, int] | Iterable[tuple[Cell, int]]) -> dict[str, Any]:
    reached = dict(counts) if isinstance(counts, Mapping) else dict(counts)
    cells = universe()
    hit = [c for c in cells if reached.get(c, 0) > 0]
    never = [f"{s} × {r} × {e}" for (s, r, e) in cells if reached.get((s, r, e), 0) == 0]
    extra = sorted(f"{s} × {r} × {e}" for (s, r, e) in reached if (s, r, e) not in set(cells))
    return {
        "cells": len(cells),
        "reached": len(hit),
        "percent": 100.0 * len(hit) / len(cells),
        "never": never,
        "outside_universe": extra,
    }
