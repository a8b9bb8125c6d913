"""The reorder window (rule N2), on the broker: two clients' requests sent close together may be
handled in either order, and the suite's model allows both.

Each trial forms a fresh group the KIP-394 way: c1 and c2 get their member ids (MEMBER_ID_REQUIRED),
then c1 rejoins with its id, which parks (c2 is still a pending member), and c2's rejoin is sent at
once after it (the engine's ``settle_ms`` set to 0). The first member the broker adds leads: c1 if
the broker handled the joins in send order, c2 if it handled c2's first. Every history must pass
the suite's model (``model_manifest``: ``reorder_window_ms`` set), and the same history checked by
the model without the window must diverge exactly when c2 leads — so the window is what explains
those trials, and they happen (the broker's network threads serve the two connections
concurrently). Trials run until two reordered ones were seen, at most ``MAX_TRIALS``.
"""

from __future__ import annotations

import pytest
from kgc.conformance.broker_target import BrokerTarget
from kgc.conformance.brokerconfig import facts
from kgc.conformance.client import Cluster
from kgc.conformance.session import description_of
from kgc.engine.loop import Engine, EngineConfig
from kgc.engine.registry import build, model_manifest
from kgc.engine.traces import Trace, render, result_of
from kgc.model.checker import check
from kgc.model.commands import JoinGroup, JoinGroupResponse, Protocol

MAX_TRIALS = 300
WANTED_REORDERS = 2


def _join(client: str, member: str) -> JoinGroup:
    return JoinGroup(
        client=client,
        member_id=member,
        session_timeout_ms=10_000,
        rebalance_timeout_ms=10_000,
        protocols=(Protocol(name="range", metadata='{"topics": []}'),),
        version=5,
    )


def _trial(cluster: Cluster, description: dict, prefix: str, i: int) -> tuple[Engine, str]:
    group_id = f"{prefix}-{i}"
    target = BrokerTarget(cluster, group_id, description=description)
    engine = Engine(
        target,
        build(model_manifest(description), group_id),
        config=EngineConfig(settle_ms=0.0),
    )
    try:
        engine.run(
            [_join("c1", ""), _join("c2", ""), _join("c1", "c1-1"), _join("c2", "c2-1")],
            stop_at_divergence=False,
        )
    finally:
        target.close()
    # the first rejoin answered names the leader: whichever join the broker handled first (the
    # other one may stay parked: with no initial delay the join phase can complete in between)
    answers = [
        r.response
        for r in engine.events
        if getattr(r, "request_id", None) in (2, 3)
        and isinstance(getattr(r, "response", None), JoinGroupResponse)
        and r.response.error == "NONE"
    ]
    return engine, (answers[0].leader if answers else "")


@pytest.mark.broker
def test_close_joins_of_two_clients_are_handled_in_either_order_and_the_model_allows_both(
    kgc_broker, kgc_group_id
):
    cluster = Cluster(kgc_broker.bootstrap_servers, client_id="kgc-reorder")
    description = {**description_of(kgc_broker), **facts(cluster)}
    leaders: list[str] = []
    try:
        while len(leaders) < MAX_TRIALS and leaders.count("c2-1") < WANTED_REORDERS:
            engine, leader = _trial(cluster, description, kgc_group_id, len(leaders))
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
