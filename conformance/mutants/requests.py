"""Broker mutants that change requests, so that state, timers and decisions go wrong (issue 29).

Role: the answer mutants of ``catalogue.py`` change what a client *hears*; these change what the
broker *keeps*, *times* or *decides*, by rewriting a request before the broker sees it (or
answering it in the proxy and never forwarding it), with the client answered as the broker
answers, or as if nothing happened. Three families (``proxy.FAMILIES``):

* ``kept``     — kept ≠ answered: an OffsetCommit answered NONE whose offset, metadata or one
  partition the broker never got; a LeaveGroup answered NONE and never forwarded; the leader's
  SyncGroup forwarded without one member's assignment; a JoinGroup forwarded with other protocol
  metadata or with fewer protocols.
* ``timer``    — a timer fires early, late or never: JoinGroup forwarded with its session or
  rebalance timeout smaller or larger (never below ``group.min.session.timeout.ms``, 500 ms on the
  embedded broker: a refused timeout would be a wrong *answer*); heartbeats answered NONE by the
  proxy and never forwarded, so the member's session runs out.
* ``decision`` — a choice is wrong: another member leads (every answer of the generation agrees),
  the protocol votes reversed, assignments handed to the wrong members, a known member treated as
  new, a static member treated as dynamic, a commit or a heartbeat with a stale generation counted.

Each mutant changes only where its bug applies (a protocol list of two, a timeout the search
draws), so the share killed still measures what the search reaches. Each exchange a mutant
changes is recorded by the proxy (``MutantProxy.mutations``): the bench counts a kill only when
the divergence comes at or after the first one of its group.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafka.protocol.consumer.group import (
    HeartbeatResponse,
    LeaveGroupResponse,
    OffsetCommitResponse,
)
from kgc.conformance.mutants.proxy import Forward, Mutant, Reply
from kgc.model.apis import KEYS
from kgc.model.errors import CODES

NONE = CODES["NONE"]
MIN_SESSION_MS = 500  # the embedded broker's group.min.session.timeout.ms
# the timeouts the search draws (1-2 s, times the time scale); the misuses' 1 ms and too-long
# sessions are left alone (their answer is the point, and 60 times one would not fit an int32)
DRAWN_SESSION_MS = 1000
LONGEST_DRAWN_MS = 60_000
JOIN_GROUP = KEYS["JoinGroup"]

RequestHook = Callable[[Any, int, dict[str, Any]], Any]


# ---------------------------------------------------------------------- kept ≠ answered
def _committed(change: Callable[[Any], bool]) -> RequestHook:
    """OffsetCommit forwarded with each partition changed by ``change`` (True: it changed)."""

    def hook(r: Any, version: int, memory: dict[str, Any]) -> Any:
        hit = False
        for t in r.topics:
            for p in t.partitions:
                hit = change(p) or hit
        return r if hit else None

    return hook


def _offset_plus_one(p: Any) -> bool:
    if p.committed_offset < 0:
        return False
    p.committed_offset += 1
    return True


def _other_metadata(p: Any) -> bool:
    if len(p.committed_metadata or "") > 100:  # the oversized misuse: its answer is the point
        return False
    p.committed_metadata = (p.committed_metadata or "") + "~"
    return True


def _commit_partition_dropped(r: Any, version: int, memory: dict[str, Any]) -> Any:
    """Forward without the last partition; answer it as its siblings were answered (or NONE)."""
    if not r.topics or not r.topics[-1].partitions:
        return None
    topic = r.topics[-1]
    dropped = topic.partitions.pop()
    name, topic_id = topic.name, getattr(topic, "topic_id", None)
    if not topic.partitions:
        r.topics.pop()

    def then(answer: Any, v: int) -> Any:
        siblings = [p.error_code for t in answer.topics for p in t.partitions]
        error = siblings[0] if siblings else NONE
        part = _commit_answer_partition(dropped.partition_index, error)
        for t in answer.topics:
            if t.name == name and getattr(t, "topic_id", None) == topic_id:
                t.partitions.append(part)
                return answer
        answer.topics.append(_commit_answer_topic(name, topic_id, [part]))
        return answer

    return Forward(r, then)


def _commit_answer_topic(name: str, topic_id: Any, partitions: list[Any]) -> Any:
    return OffsetCommitResponse.OffsetCommitResponseTopic(
        name=name, topic_id=topic_id, partitions=partitions
    )


def _commit_answer_partition(index: int, error: int) -> Any:
    topic_cls = OffsetCommitResponse.OffsetCommitResponseTopic
    return topic_cls.OffsetCommitResponsePartition(partition_index=index, error_code=error)


def _commit_not_forwarded(r: Any, version: int, memory: dict[str, Any]) -> Any:
    topics = [
        _commit_answer_topic(
            t.name,
            getattr(t, "topic_id", None),
            [_commit_answer_partition(p.partition_index, NONE) for p in t.partitions],
        )
        for t in r.topics
    ]
    return Reply(OffsetCommitResponse(throttle_time_ms=0, topics=topics))


def _leave_not_forwarded(r: Any, version: int, memory: dict[str, Any]) -> Any:
    members = [
        LeaveGroupResponse.MemberResponse(
            member_id=m.member_id, group_instance_id=m.group_instance_id, error_code=NONE
        )
        for m in (r.members or ())
    ]
    return Reply(LeaveGroupResponse(throttle_time_ms=0, error_code=NONE, members=members))


def _sync_drops_an_assignment(r: Any, version: int, memory: dict[str, Any]) -> Any:
    others = [a for a in r.assignments if a.member_id != r.member_id]
    if len(r.assignments) < 2 or not others:
        return None
    r.assignments = [a for a in r.assignments if a is not others[-1]]
    return r


def _join_metadata_changed(r: Any, version: int, memory: dict[str, Any]) -> Any:
    if not r.protocols:
        return None
    for p in r.protocols:
        p.metadata = bytes(p.metadata or b"") + b"\x00"
    return r


def _join_protocols_trimmed(r: Any, version: int, memory: dict[str, Any]) -> Any:
    if len(r.protocols) < 2:
        return None
    r.protocols = r.protocols[:1]
    return r


# ---------------------------------------------------------------------- timers
def _join_timeout(field: str, change: Callable[[int], int]) -> RequestHook:
    """JoinGroup forwarded with ``field`` changed (only the timeouts the search draws; never
    below the broker's minimum session)."""

    def hook(r: Any, version: int, memory: dict[str, Any]) -> Any:
        if field == "rebalance_timeout_ms" and version < 1:
            return None  # v0 has none (the session timeout serves)
        value = getattr(r, field)
        if not DRAWN_SESSION_MS <= value <= LONGEST_DRAWN_MS:
            return None
        setattr(r, field, max(MIN_SESSION_MS, change(value)))
        return r

    return hook


def _heartbeat_swallowed(every: int) -> RequestHook:
    """Every ``every``-th heartbeat answered NONE by the proxy, never forwarded."""

    def hook(r: Any, version: int, memory: dict[str, Any]) -> Any:
        memory["seen"] = memory.get("seen", 0) + 1
        if memory["seen"] % every:
            return None
        return Reply(HeartbeatResponse(throttle_time_ms=0, error_code=NONE))

    return hook


# ---------------------------------------------------------------------- decisions
def _leader_moved(r: Any, version: int, memory: Any) -> Any:
    """Another member leads: in every answer of a generation, the last member of the broker's
    leader's list that is not that leader is named leader and gets the list; the broker's leader
    is told it follows. A follower's answer waits (up to 300 ms) for the leader's, which alone
    names the members; with no leader answer it passes unchanged."""
    group = r.group_id

    def then(answer: Any, v: int) -> Any:
        if answer.error_code != NONE:
            return None
        key = f"{group}/{answer.generation_id}"
        moves = memory.setdefault("moves", {})
        if answer.member_id == answer.leader:
            if key not in moves:
                others = [m for m in answer.members if m.member_id != answer.leader]
                moves[key] = (others[-1].member_id, list(answer.members)) if others else None
        else:
            memory.wait_for(lambda: key in moves, 0.3)
        move = moves.get(key)
        if move is None:
            return None
        answer.leader = move[0]
        answer.members = list(move[1]) if answer.member_id == move[0] else []
        return answer

    return Forward(r, then)


def _protocols_reversed(r: Any, version: int, memory: dict[str, Any]) -> Any:
    if len(r.protocols) < 2:
        return None
    r.protocols = list(reversed(r.protocols))
    return r


def _assignments_rotated(r: Any, version: int, memory: dict[str, Any]) -> Any:
    a = r.assignments
    if len(a) < 2 or len({bytes(x.assignment or b"") for x in a}) < 2:
        return None
    payloads = [x.assignment for x in a]
    for x, p in zip(a, payloads[1:] + payloads[:1], strict=True):
        x.assignment = p
    return r


def _rejoin_as_new(r: Any, version: int, memory: dict[str, Any]) -> Any:
    if not r.member_id or r.group_instance_id:
        return None
    r.member_id = ""
    return r


def _static_as_dynamic(r: Any, version: int, memory: dict[str, Any]) -> Any:
    if version < 5 or r.group_instance_id is None:
        return None
    r.group_instance_id = None
    return r


def _commit_generation_unchecked(r: Any, version: int, memory: dict[str, Any]) -> Any:
    if version < 1 or r.generation_id_or_member_epoch < 0:
        return None
    r.generation_id_or_member_epoch = -1
    r.member_id = ""
    if version >= 7:
        r.group_instance_id = None
    return r


def _stale_heartbeat_kept(r: Any, version: int, memory: dict[str, Any]) -> Any:
    """Heartbeat forwarded with the group's newest generation (learned from JoinGroup answers)
    when it names an older one: a member that should rejoin is kept as it is."""
    generations = memory.setdefault("generations", {})
    group = r.group_id
    if r.API_KEY == JOIN_GROUP:

        def learn(answer: Any, v: int) -> None:
            if answer.error_code == NONE:
                generations[group] = max(generations.get(group, -1), answer.generation_id)

        return Forward(r, learn)
    newest = generations.get(group)
    if newest is None or r.generation_id < 0 or r.generation_id >= newest:
        return None
    r.generation_id = newest
    return r


def _m(name: str, api: str, family: str, kind: str, what: str, hook: RequestHook) -> Mutant:
    return Mutant(name=name, api=api, family=family, kind=kind, what=what, request=hook)


KEPT: tuple[Mutant, ...] = (
    _m("commit-kept-offset-plus-one", "OffsetCommit", "kept", "kept ≠ answered",
       "a commit is forwarded one offset higher, answered as the broker answers",
       _committed(_offset_plus_one)),
    _m("commit-kept-other-metadata", "OffsetCommit", "kept", "kept ≠ answered",
       "a commit is forwarded with other metadata, answered as the broker answers",
       _committed(_other_metadata)),
    _m("commit-partition-dropped", "OffsetCommit", "kept", "kept ≠ answered",
       "a commit is forwarded without its last partition, answered as if it had it",
       _commit_partition_dropped),
    _m("commit-never-forwarded", "OffsetCommit", "kept", "kept ≠ answered",
       "every commit is answered NONE by the proxy and never reaches the broker",
       _commit_not_forwarded),
    _m("leave-never-forwarded", "LeaveGroup", "kept", "kept ≠ answered",
       "every leave is answered NONE by the proxy and never reaches the broker",
       _leave_not_forwarded),
    _m("sync-leader-drops-an-assignment", "SyncGroup", "kept", "kept ≠ answered",
       "the leader's SyncGroup is forwarded without another member's assignment",
       _sync_drops_an_assignment),
    _m("join-kept-other-metadata", "JoinGroup", "kept", "kept ≠ answered",
       "a join is forwarded with a byte added to each protocol's metadata",
       _join_metadata_changed),
    _m("join-kept-fewer-protocols", "JoinGroup", "kept", "kept ≠ answered",
       "a join naming two protocols is forwarded with only its first",
       _join_protocols_trimmed),
)  # fmt: skip

TIMERS: tuple[Mutant, ...] = (
    _m("join-session-timeout-halved", "JoinGroup", "timer", "timer early",
       "a join is forwarded with half its session timeout: the session expires early",
       _join_timeout("session_timeout_ms", lambda ms: ms // 2)),
    _m("join-session-timeout-doubled", "JoinGroup", "timer", "timer late",
       "a join is forwarded with twice its session timeout: the session expires late",
       _join_timeout("session_timeout_ms", lambda ms: ms * 2)),
    _m("join-session-timeout-never", "JoinGroup", "timer", "timer never",
       "a join is forwarded with 60 times its session timeout: the session never expires",
       _join_timeout("session_timeout_ms", lambda ms: ms * 60)),
    _m("join-rebalance-timeout-halved", "JoinGroup", "timer", "timer early",
       "a join is forwarded with half its rebalance timeout: the join phase ends early",
       _join_timeout("rebalance_timeout_ms", lambda ms: ms // 2)),
    _m("join-rebalance-timeout-doubled", "JoinGroup", "timer", "timer late",
       "a join is forwarded with twice its rebalance timeout: the join phase ends late",
       _join_timeout("rebalance_timeout_ms", lambda ms: ms * 2)),
    _m("join-rebalance-timeout-never", "JoinGroup", "timer", "timer never",
       "a join is forwarded with 60 times its rebalance timeout: the join phase waits on",
       _join_timeout("rebalance_timeout_ms", lambda ms: ms * 60)),
    _m("heartbeat-swallowed", "Heartbeat", "timer", "timer early",
       "every heartbeat is answered NONE by the proxy and never forwarded: the session runs out",
       _heartbeat_swallowed(1)),
    _m("heartbeat-every-second-swallowed", "Heartbeat", "timer", "timer early",
       "every second heartbeat is answered NONE by the proxy and never forwarded",
       _heartbeat_swallowed(2)),
)  # fmt: skip

DECISIONS: tuple[Mutant, ...] = (
    _m("join-leader-moved", "JoinGroup", "decision", "wrong leader",
       "another member leads: every answer of the generation names it, it gets the list",
       _leader_moved),
    _m("join-protocol-votes-reversed", "JoinGroup", "decision", "wrong protocol",
       "a join naming two protocols is forwarded with them in reverse preference",
       _protocols_reversed),
    _m("sync-assignments-rotated", "SyncGroup", "decision", "wrong assignment",
       "the leader's assignments are handed each to the next member",
       _assignments_rotated),
    _m("join-known-member-as-new", "JoinGroup", "decision", "wrong member",
       "a dynamic member's rejoin is forwarded with no member id: it joins as a new member",
       _rejoin_as_new),
    _m("join-static-as-dynamic", "JoinGroup", "decision", "wrong member",
       "a static member's join is forwarded without its group instance id",
       _static_as_dynamic),
    _m("commit-generation-unchecked", "OffsetCommit", "decision", "wrong fencing",
       "a generation-checked commit is forwarded as a simple one (generation -1, no member)",
       _commit_generation_unchecked),
    Mutant(name="heartbeat-stale-generation-kept", api="Heartbeat", also=("JoinGroup",),
           family="decision", kind="wrong fencing",
           what="a heartbeat naming an old generation is forwarded with the newest one",
           request=_stale_heartbeat_kept),
)  # fmt: skip

MUTANTS: tuple[Mutant, ...] = KEPT + TIMERS + DECISIONS
