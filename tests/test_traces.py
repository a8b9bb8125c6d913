"""Every trace saved under ``traces/`` is a regression test.

A saved trace is a failure found earlier. Each one is (1) re-checked against the current model
with no broker, which must be able to read it, and (2) replayed against the session broker, where
it must now pass (the bug it recorded is fixed). A trace that still fails keeps this test red until
the model or the broker is fixed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

TRACES = sorted(
    p for p in (Path(__file__).resolve().parents[1] / "traces").glob("*.json*") if p.is_file()
)

if TRACES:

    @pytest.mark.broker
    @pytest.mark.parametrize("path", TRACES, ids=[p.name for p in TRACES])
    def test_saved_trace_replays_clean(path, kgc_broker):
        from kgc.conformance.drivers.suite import replay_on_broker
        from kgc.conformance.wire.client import Cluster
        from kgc.engine.traces import load, render

        trace = load(path)
        cluster = Cluster(kgc_broker.bootstrap_servers, client_id="kgc-regression")
        try:
            done = replay_on_broker(kgc_broker, cluster, trace)
        finally:
            cluster.close()
        assert done.engine.divergence is None, "still failing:\n" + render(done.trace)
