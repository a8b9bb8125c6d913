"""Measure how late a broker fires its group timers, to set the checker's tolerance window.

The model fires a timer exactly at its deadline; a broker fires it a little later (the request is
processed after we stamp it, the timer thread has a granularity, the machine is busy). The checker
allows a timer to fire anywhere in ``[deadline - early_ms, deadline + late_ms]`` as seen from the
client, so ``late_ms`` must cover the lateness actually observed (docs/design-notes.md, "Time").

Two timers are measured, each through a response whose arrival *is* the timer firing:

* **join timeout** (the delayed join at the rebalance timeout): member A is Stable and keeps
  heartbeating but never rejoins; member B's JoinGroup waits until the rebalance timeout removes A.
  Lateness = B's answer time − (B's join send time + rebalance timeout).
* **session expiry** (the delayed heartbeat): A is Stable with a short session and a long rebalance
  timeout, and stops heartbeating; B's pending JoinGroup completes as soon as A's session expires.
  Lateness = B's answer time − (A's last heartbeat send time + session timeout).

Numbers from these runs are in docs/design-notes.md ("Time"); ``kgc bench timing`` repeats
them on any machine.
"""

from __future__ import annotations

import secrets
import statistics
import time
from typing import Any

from kgc.conformance.wire.broker_target import BrokerTarget
from kgc.conformance.wire.client import Cluster
from kgc.model.client_view import ClientView
from kgc.model.commands import (
    Assignment,
    Request,
    Response,
)
from kgc.model.errors import NONE


class _Driver:
    def __init__(self, cluster: Cluster, group_id: str) -> None:
        self.t = BrokerTarget(cluster, group_id, description={})
        self.rid = 0
        self.answers: dict[int, tuple[Response, float]] = {}
        self.views: dict[str, ClientView] = {}

    def send(self, cmd: Request) -> tuple[int, float]:
        rid = self.rid
        self.rid += 1
        at = self.t.now_ms()
        self.t.send(rid, cmd)
        return rid, at

    def wait(self, rid: int, timeout_ms: float = 20_000) -> tuple[Response, float]:
        end = self.t.now_ms() + timeout_ms
        while rid not in self.answers and self.t.now_ms() < end:
            for a in self.t.poll(5):
                self.answers[a.request_id] = (a.response, a.at_ms)
        if rid not in self.answers:
            raise TimeoutError(f"request {rid} not answered within {timeout_ms} ms")
        return self.answers.pop(rid)

    def call(self, cmd: Request) -> Response:
        return self.wait(self.send(cmd)[0])[0]

    def join_two_step(self, client: str, session: int, rebalance: int) -> tuple[int, float]:
        """JoinGroup v5 as a new member, then again with the id ``MEMBER_ID_REQUIRED`` handed
        out (KIP-394); returns the second join's request id and send time."""
        view = ClientView(
            client=client,
            session_timeout_ms=session,
            rebalance_timeout_ms=rebalance,
            group_instance_id=None,
            protocols=("range",),
        )
        self.views[client] = view
        view.learn(self.call(view.join_group(version=5)))
        return self.send(view.join_group(version=5))


def _stable_leader(d: _Driver, session: int, rebalance: int) -> tuple[str, int]:
    rid, _ = d.join_two_step("c1", session, rebalance)
    joined, _ = d.wait(rid)
    assert joined.error == NONE, joined
    view = d.views["c1"]
    view.learn(joined)
    synced = d.call(
        view.sync_group(
            version=3, assignments=(Assignment(member_id=view.member_id, assignment=""),)
        )
    )
    assert synced.error == NONE, synced
    return view.member_id, view.generation_id


def join_timeout_lateness(cluster: Cluster, rebalance_ms: int = 1000) -> float:
    d = _Driver(cluster, f"kgc-timing-{secrets.token_hex(4)}")
    try:
        _stable_leader(d, session=rebalance_ms * 4, rebalance=rebalance_ms)
        rid, sent = d.join_two_step("c2", rebalance_ms * 4, rebalance_ms)
        # A keeps its session alive but never rejoins
        while rid not in d.answers:
            hb = d.send(d.views["c1"].heartbeat(version=3))[0]
            d.wait(hb)
            end = d.t.now_ms() + 100
            while d.t.now_ms() < end and rid not in d.answers:
                for a in d.t.poll(5):
                    d.answers[a.request_id] = (a.response, a.at_ms)
        _, at = d.answers.pop(rid)
        return at - (sent + rebalance_ms)
    finally:
        d.t.close()


def session_expiry_lateness(cluster: Cluster, session_ms: int = 1000) -> float:
    d = _Driver(cluster, f"kgc-timing-{secrets.token_hex(4)}")
    try:
        _stable_leader(d, session=session_ms, rebalance=session_ms * 10)
        rid, _ = d.join_two_step("c2", session_ms * 10, session_ms * 10)
        last_hb = d.send(d.views["c1"].heartbeat(version=3))
        d.wait(last_hb[0])
        _, at = d.wait(rid)
        return at - (last_hb[1] + session_ms)
    finally:
        d.t.close()


def measure(bootstrap_servers: str, *, rounds: int = 8) -> dict[str, Any]:
    cluster = Cluster(bootstrap_servers, client_id="kgc-timing")
    try:
        joins = [join_timeout_lateness(cluster) for _ in range(rounds)]
        expiries = [session_expiry_lateness(cluster) for _ in range(rounds)]
    finally:
        cluster.close()

    def stats(xs: list[float], key: str) -> dict[str, float]:
        xs = sorted(xs)
        return {
            f"{key}_min_ms": round(xs[0], 1),
            f"{key}_median_ms": round(statistics.median(xs), 1),
            f"{key}_max_ms": round(xs[-1], 1),
        }

    return {
        "rounds": rounds,
        **stats(joins, "join_timeout_late"),
        **stats(expiries, "session_expiry_late"),
    }


def run(args: Any) -> dict[str, Any]:
    """``kgc bench timing``: timer lateness of an embedded broker (or ``--kafka-version``)."""
    from kgc.conformance.brokers.session import open_broker

    t0 = time.monotonic()
    with open_broker(kafka_version=getattr(args, "kafka_version", None)) as broker:
        out = measure(broker.bootstrap_servers, rounds=3 if getattr(args, "quick", False) else 8)
        out["kafka_version"] = broker.describe().get("version")
    out["wall_s"] = round(time.monotonic() - t0, 1)
    return out
