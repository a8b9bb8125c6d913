"""Every trace saved under ``traces/`` is a regression test.

A saved trace is a failure found earlier. Each one is (1) re-checked against the current model
with no broker, which must be able to read it, and (2) replayed against the session broker, where
it must now pass (the bug it recorded is fixed). A trace that still fails keeps this test red until
the model or the broker is fixed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

FOLDER = Path(__file__).resolve().parents[1] / "traces"
TRACES = sorted(p for p in FOLDER.glob("*.json*") if p.is_file())


def test_every_file_saved_in_traces_is_a_readable_trace():
    """What ``traces/`` holds besides its README and ``known/`` (the implementations' baselines,
    replayed by ``tests/differential/test_implementations.py``) is a trace the model can read, so
    nothing saved there is passed over silently; the count is printed with ``-rA``."""
    from kgc.engine.registry import model_from_manifest
    from kgc.engine.traces import load

    others = [
        p for p in FOLDER.iterdir() if p.name not in ("README.md", "known") and p not in TRACES
    ]
    assert others == [], f"traces/ holds files that are not traces (*.json, *.jsonl): {others}"
    for path in TRACES:
        model_from_manifest(load(path).manifest)  # raises, naming the field, if unreadable
    print(f"{len(TRACES)} saved trace(s) under traces/")


# With no saved trace the parameter set is empty and pytest reports this test as skipped with
# "got empty parameter set" (visible under -ra), never as silently absent.
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
