"""The reorder window (rule N2), on the broker: two clients' requests sent close together may be
handled in either order, and the suite's model allows both.

Each trial (``kgc.bench.reorder.trial``, gap 0) forms a fresh group whose two rejoins are sent
back to back; the leader says which one the broker handled first. Every history must pass
the suite's model (``model_manifest``: ``reorder_window_ms`` set), and the same history checked by
the model without the window must diverge exactly when c2 leads — so the window is what explains
those trials, and they happen (the broker's network threads serve the two connections
concurrently). Trials run until two reordered ones were seen, at most ``MAX_TRIALS``.
"""

from __future__ import annotations

import pytest
from kgc.conformance.brokers.session import description_of
from kgc.conformance.wire.brokerconfig import facts
from kgc.conformance.wire.client import Cluster
from kgc.engine.registry import build, model_manifest
from kgc.engine.traces import Trace, render, result_of
from kgc.model.checker import check

from kgc.bench.reorder import trial

MAX_TRIALS = 300
WANTED_REORDERS = 2


@pytest.mark.broker
def test_close_joins_of_two_clients_are_handled_in_either_order_and_the_model_allows_both(
    kgc_broker, kgc_group_id
):
    cluster = Cluster(kgc_broker.bootstrap_servers, client_id="kgc-reorder")
    description = {**description_of(kgc_broker), **facts(cluster)}
    leaders: list[str] = []
    try:
        while len(leaders) < MAX_TRIALS and leaders.count("c2-1") < WANTED_REORDERS:
            engine, leader = trial(cluster, description, f"{kgc_group_id}-{len(leaders)}")
            trace = Trace(
                manifest={"target": description, "group_id": f"{kgc_group_id}-{len(leaders)}"},
                events=engine.events,
                extras=engine.extras,
                result=result_of(engine),
            )
            assert engine.divergence is None, "the suite's model disagrees:\n" + render(trace)
            assert leader in ("c1-1", "c2-1"), render(trace)
            strict = build(model_manifest(description, reorder=False), engine.target.group_id)
            in_send_order = check(strict, engine.events, engine.checker_config) is None
            assert in_send_order == (leader == "c1-1"), render(trace)
            leaders.append(leader)
    finally:
        cluster.close()
    reordered = leaders.count("c2-1")
    print(f"kgc: {reordered} of {len(leaders)} trials handled c2's join first")
    assert reordered >= 1, (
        f"in {len(leaders)} trials the broker always handled the joins in send order: the reorder "
        "window explains nothing here"
    )
