"""``kgc bench broker``: how fast the embedded Apache Kafka comes up and answers a Heartbeat.

Measures, with jars already cached (a first run resolves them before timing): seconds from
``EmbeddedKafka.start()`` to ready for a 1-node and a 3-node KRaft cluster (storage formatting
included), and the round-trip time of the classic-protocol Heartbeat (api key 12) of one member of a
Stable group, sent one at a time over a raw socket with kafka-python's generated protocol classes.
The group is formed the way a consumer does it (``GroupCoordinator`` classic protocol, KIP-394):
FindCoordinator, JoinGroup (MEMBER_ID_REQUIRED, then again with the id), SyncGroup as leader.
Targets: ready < 15 s (1 node), < 30 s (3 nodes), Heartbeat p50 < 2 ms. ``jvm_cpu_s_*`` (CPU
seconds the broker JVMs used until ready) is the load-independent version of the ready times.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any

from kafka.protocol.consumer.group import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from kafka.protocol.metadata import FindCoordinatorRequest, FindCoordinatorResponse

from kgc.conformance.artifacts.maven import DEFAULT_KAFKA_VERSION, resolve_kafka
from kgc.conformance.brokers.embedded import EmbeddedKafka
from kgc.conformance.wire import probe

NONE = 0
COORDINATOR_LOAD_IN_PROGRESS = 14
COORDINATOR_NOT_AVAILABLE = 15
NOT_COORDINATOR = 16
MEMBER_ID_REQUIRED = 79


def _log(msg: str) -> None:
    print(f"kgc bench broker: {msg}", file=sys.stderr, flush=True)


def _pct(sorted_values: list[float], q: float) -> float:
    idx = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[idx]


def _find_coordinator(host: str, port: int, group_id: str, deadline: float) -> tuple[str, int]:
    """The group coordinator's address; retries while ``__consumer_offsets`` is being created."""
    while True:
        with probe.connect(host, port, 5.0) as sock:
            req = FindCoordinatorRequest(key_type=0, coordinator_keys=[group_id])
            resp = probe.round_trip(sock, req, FindCoordinatorResponse, 4)
        c = resp.coordinators[0]
        if c.error_code == NONE:
            return c.host, c.port
        if c.error_code not in (COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS):
            raise RuntimeError(f"FindCoordinator error code {c.error_code}")
        if time.monotonic() > deadline:
            raise RuntimeError("no group coordinator became available in time")
        time.sleep(0.1)


def heartbeat_rtts(
    bootstrap: tuple[str, int], *, count: int, group_id: str = "kgc-bench-heartbeat"
) -> list[float]:
    """Form a one-member Stable group and time ``count`` Heartbeats; returns RTTs in ms."""
    deadline = time.monotonic() + 60
    # The coordinator may be loading its partition right after FindCoordinator: retry the join.
    while True:
        host, port = _find_coordinator(*bootstrap, group_id, deadline)
        sock = probe.connect(host, port, 10.0)
        try:
            member_id = ""
            for _ in range(2):
                join = JoinGroupRequest(
                    group_id=group_id,
                    session_timeout_ms=10_000,
                    rebalance_timeout_ms=10_000,
                    member_id=member_id,
                    protocol_type="consumer",
                    protocols=[
                        JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=b"")
                    ],
                )
                joined = probe.round_trip(sock, join, JoinGroupResponse, 5)
                member_id = joined.member_id
                if joined.error_code != MEMBER_ID_REQUIRED:
                    break
            if joined.error_code in (COORDINATOR_LOAD_IN_PROGRESS, NOT_COORDINATOR):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"JoinGroup error code {joined.error_code}")
                time.sleep(0.1)
                continue
            if joined.error_code != NONE:
                raise RuntimeError(f"JoinGroup error code {joined.error_code}")
            sync = SyncGroupRequest(
                group_id=group_id,
                generation_id=joined.generation_id,
                member_id=member_id,
                assignments=[
                    SyncGroupRequest.SyncGroupRequestAssignment(member_id=member_id, assignment=b"")
                ],
            )
            synced = probe.round_trip(sock, sync, SyncGroupResponse, 3)
            if synced.error_code != NONE:
                raise RuntimeError(f"SyncGroup error code {synced.error_code}")
            rtts = []
            for _ in range(count):
                hb = HeartbeatRequest(
                    group_id=group_id, generation_id=joined.generation_id, member_id=member_id
                )
                t0 = time.perf_counter()
                resp = probe.round_trip(sock, hb, HeartbeatResponse, 3)
                rtts.append((time.perf_counter() - t0) * 1000)
                if resp.error_code != NONE:
                    raise RuntimeError(f"Heartbeat error code {resp.error_code}")
            return rtts
        finally:
            sock.close()


def _cpu_s(pids: list[int]) -> float:
    """User + system CPU seconds the processes have used so far (Linux /proc): a start-up cost
    that, unlike wall time, does not grow when other work shares the machine."""
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def run(args: argparse.Namespace) -> dict[str, Any]:
    version = getattr(args, "kafka_version", None) or DEFAULT_KAFKA_VERSION
    quick = bool(getattr(args, "quick", False))
    count = 100 if quick else 500
    _log(f"resolving Kafka {version} (cached after the first run)")
    resolve_kafka(version)
    result: dict[str, Any] = {"kafka_version": version, "heartbeats": count}

    _log("starting 1 KRaft node")
    t0 = time.monotonic()
    with EmbeddedKafka(version, nodes=1) as k1:
        result["ready_s_1_node"] = round(time.monotonic() - t0, 2)
        result["jvm_cpu_s_1_node"] = round(_cpu_s(k1.pids()), 2)
        _log(f"1 node ready in {result['ready_s_1_node']} s; forming a group")
        rtts = heartbeat_rtts(k1.broker_address(1), count=count + 50)[50:]  # drop warm-up
    rtts.sort()
    result["heartbeat_rtt_p50_ms"] = round(statistics.median(rtts), 3)
    result["heartbeat_rtt_p99_ms"] = round(_pct(rtts, 0.99), 3)
    result["heartbeat_rtt_max_ms"] = round(rtts[-1], 3)

    if not quick:
        _log("starting 3 KRaft nodes")
        t0 = time.monotonic()
        with EmbeddedKafka(version, nodes=3) as k3:
            result["ready_s_3_nodes"] = round(time.monotonic() - t0, 2)
            result["jvm_cpu_s_3_nodes"] = round(_cpu_s(k3.pids()), 2)
        _log(f"3 nodes ready in {result['ready_s_3_nodes']} s")
    return result
