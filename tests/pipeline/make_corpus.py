"""Writes the small hand-made corpus in ``tests/pipeline/data/`` (run once; files are committed).

Each history is written out step by step below, with what it is for. Times are plausible client
times in ms; member ids are symbolic (``c1-1``). Run: ``python tests/pipeline/make_corpus.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

from kgc.model.commands import (
    Assignment,
    Heartbeat,
    HeartbeatResponse,
    JoinedMember,
    JoinGroup,
    JoinGroupResponse,
    LeaveGroup,
    LeaveGroupResponse,
    MemberIdentity,
    MemberResult,
    OffsetCommit,
    OffsetCommitResponse,
    PartitionError,
    Protocol,
    SyncGroup,
    SyncGroupResponse,
    TopicPartitionOffset,
)
from kgc.model.history import Invoke, Quiet, Receive, Tick, event_to_json

DATA = Path(__file__).parent / "data"


def manifest(trace_id: str, version: str, group: str, seed: int) -> dict:
    return {
        "kind": "manifest",
        "format_version": 1,
        "kgc_version": "0.1.0",
        "trace_id": trace_id,
        "scenario": "classic",
        "group_id": group,
        "seed": seed,
        "profile": "ci",
        "created_at": "2026-11-21T00:00:00+00:00",
        "target": {
            "implementation": "apache-kafka",
            "version": version,
            "mode": "kraft",
            "nodes": 1,
            "config": {"group.initial.rebalance.delay.ms": 0},
        },
        "model": {
            "name": "ClassicGroupModel",
            "profile": "kafka-4.x" if version.startswith("4") else "kafka-3.9",
            "config": {
                "group_initial_rebalance_delay_ms": 0,
                "group_min_session_timeout_ms": 500,
                "offsets_topic_num_partitions": 10,
            },
        },
        "checker": {"early_ms": 20, "late_ms": 250, "latency_bound_ms": 2000},
    }


class H:
    """A tiny history builder: request ids and steps count up; extras ride on the event."""

    def __init__(self) -> None:
        self.lines: list[dict] = []
        self.step = 0
        self.rid = 0
        self.sent: dict[int, float] = {}

    def invoke(self, at: float, command, state: str) -> int:
        rid = self.rid
        self.rid += 1
        e = event_to_json(Invoke(step=self.step, at_ms=at, request_id=rid, command=command))
        e["group_state"] = state
        self.lines.append(e)
        self.sent[rid] = at
        return rid

    def receive(self, at: float, rid: int, response) -> None:
        e = event_to_json(Receive(step=self.step, at_ms=at, request_id=rid, response=response))
        e["latency_ms"] = round(at - self.sent[rid], 3)
        self.lines.append(e)

    def quiet(self, at: float) -> None:
        self.lines.append(event_to_json(Quiet(step=self.step, at_ms=at)))
        self.step += 1

    def tick(self, at: float, ms: int) -> None:
        self.lines.append(event_to_json(Tick(step=self.step, at_ms=at, ms=ms)))
        self.step += 1


JOIN = dict(
    session_timeout_ms=6000, rebalance_timeout_ms=10000, protocols=(Protocol(name="range"),)
)


def one_member(h: H, t0: float, version: int, latency: float) -> float:
    """c1 joins (MEMBER_ID_REQUIRED first), syncs, heartbeats; returns the time reached."""
    r = h.invoke(t0, JoinGroup(client="c1", version=version, **JOIN), "Empty")
    h.receive(t0 + latency, r, JoinGroupResponse(error="MEMBER_ID_REQUIRED", member_id="c1-1"))
    h.quiet(t0 + 40)
    r = h.invoke(
        t0 + 41, JoinGroup(client="c1", member_id="c1-1", version=version, **JOIN), "Empty"
    )
    h.receive(
        t0 + 41 + 3 * latency,
        r,
        JoinGroupResponse(
            error="NONE",
            generation_id=1,
            protocol_name="range",
            leader="c1-1",
            member_id="c1-1",
            members=(JoinedMember(member_id="c1-1"),),
        ),
    )
    h.quiet(t0 + 90)
    r = h.invoke(
        t0 + 91,
        SyncGroup(
            client="c1",
            member_id="c1-1",
            generation_id=1,
            protocol_type="consumer",
            protocol_name="range",
            assignments=(Assignment(member_id="c1-1", assignment="t-0"),),
            version=5,
        ),
        "CompletingRebalance",
    )
    h.receive(t0 + 91 + 2 * latency, r, SyncGroupResponse(error="NONE", assignment="t-0"))
    h.quiet(t0 + 140)
    h.tick(t0 + 141, 500)
    return t0 + 650


def passing(trace_id: str, version: str, api: int, latency: float) -> list[dict]:
    """A member's whole life in a 1-member group: join, sync, heartbeat, commit, leave. Passes."""
    h = H()
    t = one_member(h, 1.0, api, latency)
    r = h.invoke(t, Heartbeat(client="c1", member_id="c1-1", generation_id=1, version=4), "Stable")
    h.receive(t + latency, r, HeartbeatResponse(error="NONE"))
    h.quiet(t + 45)
    r = h.invoke(
        t + 50,
        OffsetCommit(
            client="c1",
            member_id="c1-1",
            generation_id=1,
            offsets=(TopicPartitionOffset(topic="t", partition=0, offset=7),),
            version=8,
        ),
        "Stable",
    )
    h.receive(
        t + 50 + 2 * latency,
        r,
        OffsetCommitResponse(partitions=(PartitionError(topic="t", partition=0, error="NONE"),)),
    )
    h.quiet(t + 95)
    r = h.invoke(
        t + 100,
        LeaveGroup(client="c1", members=(MemberIdentity(member_id="c1-1"),), version=5),
        "Stable",
    )
    h.receive(
        t + 100 + latency,
        r,
        LeaveGroupResponse(error="NONE", members=(MemberResult(member_id="c1-1", error="NONE"),)),
    )
    h.quiet(t + 145)
    events = h.lines
    return [
        manifest(trace_id, version, f"kgc-{trace_id}", 7),
        *events,
        {
            "kind": "result",
            "verdict": "pass",
            "events": len(events),
            "peak_states": 1,
            "divergence": None,
        },
    ]


def stale_heartbeat(trace_id: str, version: str, api: int) -> list[dict]:
    """After sync, the member heartbeats with generation 0 (stale). The model allows only
    ILLEGAL_GENERATION; the recorded broker answered NONE. Recorded as a divergence at that receive
    — a planted disagreement, the same in both versions, so the report must group the two."""
    h = H()
    t = one_member(h, 1.0, api, 1.5)
    r = h.invoke(t, Heartbeat(client="c1", member_id="c1-1", generation_id=0, version=4), "Stable")
    h.receive(t + 1.2, r, HeartbeatResponse(error="NONE"))
    events = h.lines
    observed = events[-1]
    allowed = [f"request {r}: HeartbeatResponse(error='ILLEGAL_GENERATION')"]
    return [
        manifest(trace_id, version, f"kgc-{trace_id}", 11),
        *events,
        {
            "kind": "result",
            "verdict": "divergence",
            "events": len(events),
            "peak_states": 1,
            "divergence": {
                "index": len(events) - 1,
                "step": observed["step"],
                "reason": f"the broker answered request {r} with HeartbeatResponse(error='NONE'), "
                "which no model state allows at this time",
                "allowed": allowed,
                "observed": {k: v for k, v in observed.items() if k != "latency_ms"},
            },
        },
    ]


def write(path: Path, lines: list[dict] | list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = [x if isinstance(x, str) else json.dumps(x, sort_keys=True) for x in lines]
    path.write_text("\n".join(text) + "\n", encoding="utf-8")


def main() -> None:
    # Kafka 4.3.1: two passing traces (one per file) and one planted divergence.
    write(DATA / "kafka-4.3.1" / "pass-a.jsonl", passing("4a01", "4.3.1", 9, 1.5))
    write(DATA / "kafka-4.3.1" / "pass-b.jsonl", passing("4a02", "4.3.1", 9, 2.5))
    write(DATA / "kafka-4.3.1" / "stale-heartbeat.jsonl", stale_heartbeat("4d01", "4.3.1", 9))
    # Kafka 3.9.2: two traces back to back in one file, and the same planted divergence as JSON.
    write(
        DATA / "kafka-3.9.2" / "two-traces.jsonl",
        passing("3a01", "3.9.2", 7, 3.0) + passing("3a02", "3.9.2", 7, 4.0),
    )
    doc = stale_heartbeat("3d01", "3.9.2", 7)
    write(
        DATA / "kafka-3.9.2" / "stale-heartbeat.json",
        [
            json.dumps(
                {
                    "manifest": {k: v for k, v in doc[0].items() if k != "kind"},
                    "events": doc[1:-1],
                    "result": {k: v for k, v in doc[-1].items() if k != "kind"},
                },
                indent=1,
            )
        ],
    )
    # Corrupt: trace 4c01 with line 4 cut off mid-object (bad JSON) and line 7 valid JSON that is
    # not an event (no at_ms); then an event line after the result with no manifest (line 22).
    lines = [json.dumps(x, sort_keys=True) for x in passing("4c01", "4.3.1", 9, 2.0)]
    lines[3] = lines[3][: len(lines[3]) // 2]
    lines[6] = json.dumps({"kind": "receive", "step": 1, "request_id": 1})
    lines.append(json.dumps({"kind": "quiet", "step": 9, "at_ms": 999.0}))
    write(DATA / "corrupt" / "corrupt.jsonl", lines)


if __name__ == "__main__":
    main()
