"""Broker mutants for the mutation benchmark: each one a bug a Kafka-compatible broker could have.

Role: ``kgc bench mutants`` puts each mutant in a
:class:`~kgc.conformance.mutants.proxy.MutantProxy` in front of a real broker and runs the default
search against it; a divergence kills the mutant. They span every request type the classic suite
sends but FindCoordinator (the suite's own discovery retries its errors, so a broken
FindCoordinator breaks the harness, not a check), and the kinds of bug a group coordinator has:
wrong errors (one error answered as another, or as success), members missing from a list,
generations that slip, assignments and offsets lost, answers dropped.

Not here: an answer merely held back. Measured with two such mutants (every second successful
JoinGroup, and every successful SyncGroup, answered 1.5 s late): the search survived both, and it
should, since a late answer is what a slow network does and the checker allows any answer up to
``latency_bound_ms`` (3 s) after the model emitted it. A broker whose *timers* run late or early
decides differently, which a proxy that only rewrites answers cannot imitate: those mutants, and
the ones whose broker keeps or decides something else than it answered, rewrite requests
(``requests.py``, families ``kept``, ``timer`` and ``decision``); the ones here are the ``answer``
family, and ``MUTANTS`` holds all four.

Each mutant changes answers only where its bug applies (an error swapped only where the broker
gave that error), so a search that never provokes the situation cannot kill it: the share killed
measures how much of the protocol the search reaches, as the issue asks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kgc.conformance.mutants import requests
from kgc.conformance.mutants.proxy import DROP, Mutant
from kgc.model.errors import CODES

NONE = CODES["NONE"]
ILLEGAL_GENERATION = CODES["ILLEGAL_GENERATION"]
UNKNOWN_MEMBER_ID = CODES["UNKNOWN_MEMBER_ID"]
REBALANCE_IN_PROGRESS = CODES["REBALANCE_IN_PROGRESS"]
MEMBER_ID_REQUIRED = CODES["MEMBER_ID_REQUIRED"]
FENCED_INSTANCE_ID = CODES["FENCED_INSTANCE_ID"]
INCONSISTENT_GROUP_PROTOCOL = CODES["INCONSISTENT_GROUP_PROTOCOL"]


def _swap(frm: int, to: int) -> Callable[[Any, int, dict[str, Any]], Any]:
    """The top-level error ``frm`` answered as ``to``."""

    def rewrite(r: Any, version: int, memory: dict[str, Any]) -> Any:
        if r.error_code != frm:
            return None
        r.error_code = to
        return r

    return rewrite


def _partition_swap(frm: int, to: int) -> Callable[[Any, int, dict[str, Any]], Any]:
    """OffsetCommit: every partition error ``frm`` answered as ``to``."""

    def rewrite(r: Any, version: int, memory: dict[str, Any]) -> Any:
        hit = False
        for t in r.topics:
            for p in t.partitions:
                if p.error_code == frm:
                    p.error_code, hit = to, True
        return r if hit else None

    return rewrite


def _every(n: int, when: Callable[[Any], bool], verdict: Callable[[Any], Any]) -> Any:
    """Every ``n``-th answer for which ``when`` holds gets ``verdict``."""

    def rewrite(r: Any, version: int, memory: dict[str, Any]) -> Any:
        if not when(r):
            return None
        memory["seen"] = memory.get("seen", 0) + 1
        return verdict(r) if memory["seen"] % n == 0 else None

    return rewrite


def _succeeded(r: Any) -> bool:
    return bool(r.error_code == NONE)


def _leader_list_loses_one(r: Any, version: int, memory: dict[str, Any]) -> Any:
    if r.error_code != NONE or len(r.members) < 2:
        return None
    r.members = r.members[:-1]
    return r


def _generation_slips(r: Any, version: int, memory: dict[str, Any]) -> Any:
    if r.error_code != NONE:
        return None
    r.generation_id += 1
    return r


def _everyone_leads(r: Any, version: int, memory: dict[str, Any]) -> Any:
    if r.error_code != NONE or r.leader == r.member_id:
        return None
    r.leader = r.member_id
    return r


def _other_protocol(r: Any, version: int, memory: dict[str, Any]) -> Any:
    if r.error_code != NONE or r.protocol_name not in ("range", "roundrobin"):
        return None
    r.protocol_name = "roundrobin" if r.protocol_name == "range" else "range"
    return r


def _assignment_lost(r: Any, version: int, memory: dict[str, Any]) -> Any:
    if r.error_code != NONE or not r.assignment:
        return None
    r.assignment = b""
    return r


def _leave_member_errors(frm: int, to: int) -> Callable[[Any, int, dict[str, Any]], Any]:
    """LeaveGroup: ``frm`` answered as ``to``, at the top or for a member (v3+ batches)."""

    def rewrite(r: Any, version: int, memory: dict[str, Any]) -> Any:
        hit = False
        if r.error_code == frm:
            r.error_code, hit = to, True
        for m in r.members or ():
            if m.error_code == frm:
                m.error_code, hit = to, True
        return r if hit else None

    return rewrite


def _fetched(change: Callable[[int], int]) -> Callable[[Any, int, dict[str, Any]], Any]:
    """OffsetFetch: every committed offset (>= 0) changed by ``change``."""

    def rewrite(r: Any, version: int, memory: dict[str, Any]) -> Any:
        topics = [t for g in r.groups for t in g.topics] if version >= 8 else r.topics
        hit = False
        for t in topics:
            for p in t.partitions:
                if p.committed_offset >= 0:
                    p.committed_offset, hit = change(p.committed_offset), True
        return r if hit else None

    return rewrite


def _state_named(frm: str, to: str) -> Callable[[Any, int, dict[str, Any]], Any]:
    def rewrite(r: Any, version: int, memory: dict[str, Any]) -> Any:
        hit = False
        for g in r.groups:
            if g.group_state == frm:
                g.group_state, hit = to, True
        return r if hit else None

    return rewrite


def _described_member_missing(r: Any, version: int, memory: dict[str, Any]) -> Any:
    hit = False
    for g in r.groups:
        if len(g.members) >= 2:
            g.members, hit = g.members[:-1], True
    return r if hit else None


def _m(name: str, api: str, kind: str, what: str, rewrite: Any) -> Mutant:
    return Mutant(name=name, api=api, kind=kind, what=what, rewrite=rewrite)


ANSWERS: tuple[Mutant, ...] = (
    # JoinGroup
    _m("join-leader-list-loses-a-member", "JoinGroup", "missing member",
       "the leader's member list lacks its last member", _leader_list_loses_one),
    _m("join-generation-slips", "JoinGroup", "generation slip",
       "a successful join names the next generation", _generation_slips),
    _m("join-everyone-leads", "JoinGroup", "wrong leader",
       "every member is told it is the leader", _everyone_leads),
    _m("join-other-protocol", "JoinGroup", "wrong protocol",
       "the other of range/roundrobin is named as chosen", _other_protocol),
    _m("join-unknown-member-accepted", "JoinGroup", "wrong error",
       "UNKNOWN_MEMBER_ID answered as NONE", _swap(UNKNOWN_MEMBER_ID, NONE)),
    _m("join-member-id-required-as-unknown", "JoinGroup", "wrong error",
       "MEMBER_ID_REQUIRED answered as UNKNOWN_MEMBER_ID",
       _swap(MEMBER_ID_REQUIRED, UNKNOWN_MEMBER_ID)),
    _m("join-fenced-as-unknown", "JoinGroup", "wrong error",
       "FENCED_INSTANCE_ID answered as UNKNOWN_MEMBER_ID",
       _swap(FENCED_INSTANCE_ID, UNKNOWN_MEMBER_ID)),
    _m("join-inconsistent-protocol-accepted", "JoinGroup", "wrong error",
       "INCONSISTENT_GROUP_PROTOCOL answered as NONE",
       _swap(INCONSISTENT_GROUP_PROTOCOL, NONE)),
    _m("join-answer-dropped", "JoinGroup", "dropped answer",
       "every third successful join is never answered", _every(3, _succeeded, lambda r: DROP)),
    # SyncGroup
    _m("sync-assignment-lost", "SyncGroup", "lost assignment",
       "a member's assignment comes back empty", _assignment_lost),
    _m("sync-stale-generation-accepted", "SyncGroup", "wrong error",
       "ILLEGAL_GENERATION answered as NONE", _swap(ILLEGAL_GENERATION, NONE)),
    _m("sync-rebalance-hidden", "SyncGroup", "wrong error",
       "REBALANCE_IN_PROGRESS answered as NONE", _swap(REBALANCE_IN_PROGRESS, NONE)),
    _m("sync-unknown-as-illegal-generation", "SyncGroup", "wrong error",
       "UNKNOWN_MEMBER_ID answered as ILLEGAL_GENERATION",
       _swap(UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION)),
    # Heartbeat
    _m("heartbeat-never-rebalancing", "Heartbeat", "wrong error",
       "REBALANCE_IN_PROGRESS answered as NONE: members never learn of a rebalance",
       _swap(REBALANCE_IN_PROGRESS, NONE)),
    _m("heartbeat-stale-generation-accepted", "Heartbeat", "wrong error",
       "ILLEGAL_GENERATION answered as NONE", _swap(ILLEGAL_GENERATION, NONE)),
    _m("heartbeat-unknown-as-illegal-generation", "Heartbeat", "wrong error",
       "UNKNOWN_MEMBER_ID answered as ILLEGAL_GENERATION",
       _swap(UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION)),
    _m("heartbeat-dropped", "Heartbeat", "dropped answer",
       "every fourth heartbeat is never answered", _every(4, lambda r: True, lambda r: DROP)),
    # LeaveGroup
    _m("leave-unknown-accepted", "LeaveGroup", "wrong error",
       "UNKNOWN_MEMBER_ID (the group's or a member's) answered as NONE",
       _leave_member_errors(UNKNOWN_MEMBER_ID, NONE)),
    _m("leave-refused", "LeaveGroup", "wrong error",
       "a successful leave answered UNKNOWN_MEMBER_ID", _swap(NONE, UNKNOWN_MEMBER_ID)),
    # OffsetCommit
    _m("commit-stale-generation-accepted", "OffsetCommit", "wrong error",
       "ILLEGAL_GENERATION answered as NONE", _partition_swap(ILLEGAL_GENERATION, NONE)),
    _m("commit-unknown-member-accepted", "OffsetCommit", "wrong error",
       "UNKNOWN_MEMBER_ID answered as NONE", _partition_swap(UNKNOWN_MEMBER_ID, NONE)),
    _m("commit-rebalance-as-illegal-generation", "OffsetCommit", "wrong error",
       "REBALANCE_IN_PROGRESS answered as ILLEGAL_GENERATION",
       _partition_swap(REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION)),
    # OffsetFetch
    _m("fetch-offset-off-by-one", "OffsetFetch", "wrong value",
       "a committed offset read back one higher", _fetched(lambda o: o + 1)),
    _m("fetch-forgets-offsets", "OffsetFetch", "lost state",
       "a committed offset read back as -1 (nothing committed)", _fetched(lambda o: -1)),
    # DescribeGroups
    _m("describe-completing-as-preparing", "DescribeGroups", "wrong state",
       "CompletingRebalance named PreparingRebalance",
       _state_named("CompletingRebalance", "PreparingRebalance")),
    _m("describe-stable-as-completing", "DescribeGroups", "wrong state",
       "Stable named CompletingRebalance", _state_named("Stable", "CompletingRebalance")),
    _m("describe-member-missing", "DescribeGroups", "missing member",
       "a described group of two or more lacks its last member", _described_member_missing),
)  # fmt: skip

MUTANTS: tuple[Mutant, ...] = ANSWERS + requests.MUTANTS
BY_NAME = {m.name: m for m in MUTANTS}
