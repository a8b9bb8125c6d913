"""How often a broker handles two clients' requests in the other order than they were sent.

The trial (rule N2 in ``model/RULES.md``): a fresh group formed the KIP-394 way. c1 and c2 get
their member ids (``MEMBER_ID_REQUIRED``), then c1 rejoins with its id, which parks (c2 is still a
pending member), and c2's rejoin follows ``gap_ms`` later (the engine's ``settle_ms`` is 0, so
nothing else spaces them). The first member the coordinator adds leads: c1 if it handled the joins
in send order, c2 if it handled c2's first (``ClassicGroup.add``: the first member added to a
group with no leader becomes its leader; ``GroupMetadata.add`` in the Scala coordinator).

``kgc bench reorder`` runs ``TRIALS`` trials at each gap and prints the share reordered; the table
in ``docs/design-notes.md`` ("Order at the broker") is its output, and the model's reorder window
(``engine/registry.py``, ``REORDER_WINDOW_MS``) and the engine's ``settle_ms`` are set from it.
``tests/differential/test_reorder_window.py`` runs the same trial until the broker reorders.
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from typing import Any

from kgc.conformance.brokers.session import description_of, open_broker
from kgc.conformance.wire.broker_target import BrokerTarget
from kgc.conformance.wire.brokerconfig import facts
from kgc.conformance.wire.client import Cluster
from kgc.engine.loop import Engine, EngineConfig
from kgc.engine.registry import build, model_manifest
from kgc.model.commands import JoinGroup, JoinGroupResponse, Protocol, Tick
from kgc.model.history import Receive

GAPS_MS = (0.0, 1.0, 2.0, 5.0, 10.0, 20.0)
TRIALS = 60


def _join(client: str, member: str) -> JoinGroup:
    return JoinGroup(
        client=client,
        member_id=member,
        session_timeout_ms=10_000,
        rebalance_timeout_ms=10_000,
        protocols=(Protocol(name="range", metadata='{"topics": []}'),),
        version=5,
    )


def trial(
    cluster: Cluster, description: dict[str, Any], group_id: str, *, gap_ms: float = 0.0
) -> tuple[Engine, str]:
    """Run one trial on a fresh ``group_id``; returns the engine (its history checked by the
    suite's model) and the leader named by the first rejoin answered (``c1-1`` in send order,
    ``c2-1`` reordered, ``""`` when no rejoin was answered)."""
    target = BrokerTarget(cluster, group_id, description=description)
    engine = Engine(
        target,
        build(model_manifest(description), group_id),
        config=EngineConfig(settle_ms=0.0),
    )
    commands: list[Any] = [_join("c1", ""), _join("c2", ""), _join("c1", "c1-1")]
    if gap_ms > 0:
        commands.append(Tick(ms=gap_ms))
    commands.append(_join("c2", "c2-1"))
    rejoins = {2, 3}  # request ids of the two rejoins (a Tick is no request)
    try:
        engine.run(commands, stop_at_divergence=False)
    finally:
        target.close()
    # whichever join the broker handled first completes the join phase (the other may stay
    # parked: with no initial delay the phase can complete in between)
    answers = [
        e.response
        for e in engine.events
        if isinstance(e, Receive)
        and e.request_id in rejoins
        and isinstance(e.response, JoinGroupResponse)
        and e.response.error == "NONE"
    ]
    return engine, (answers[0].leader if answers else "")


def run(args: Any) -> dict[str, Any]:
    """``kgc bench reorder``: share of trials reordered at each gap, side by side in one run."""
    trials = 10 if getattr(args, "quick", False) else TRIALS
    out: dict[str, Any] = {"trials_per_gap": trials}
    load_before = os.getloadavg()[0]
    with open_broker(kafka_version=getattr(args, "kafka_version", None)) as broker:
        cluster = Cluster(broker.bootstrap_servers, client_id="kgc-reorder")
        description = {**description_of(broker), **facts(cluster)}
        prefix = f"kgc-bench-reorder-{uuid.uuid4().hex[:8]}"
        try:
            for gap in GAPS_MS:
                reordered = unanswered = 0
                started = time.monotonic()
                for i in range(trials):
                    _, leader = trial(cluster, description, f"{prefix}-{gap:g}-{i}", gap_ms=gap)
                    reordered += leader == "c2-1"
                    unanswered += leader == ""
                key = f"{gap:g}ms"
                out[f"reordered_trials_at_{key}"] = reordered
                out[f"unanswered_trials_at_{key}"] = unanswered
                print(
                    f"bench reorder: gap {gap:g} ms: {reordered}/{trials} reordered "
                    f"({time.monotonic() - started:.1f} s)",
                    file=sys.stderr,
                )
        finally:
            cluster.close()
        out["kafka_version"] = str(description.get("version"))
    out["load_avg_1min_before"] = round(load_before, 2)
    out["load_avg_1min_after"] = round(os.getloadavg()[0], 2)
    return out
