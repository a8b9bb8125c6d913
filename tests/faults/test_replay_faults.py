"""``kgc analyze`` / ``kgc replay`` of traces with nemesis faults, as a user runs them.

* A fault-mixed trace (here a hand-written history a 3-node cluster could give, with the manifest
  the fault suite writes) is re-checked with no broker by ``kgc analyze``, through the model its
  manifest names.
* ``kgc replay`` refuses, with one line and exit 2, to inject its faults into a broker kgc did not
  start, and writes nothing.
* Live: a passing fault-mixed example replays (``kgc replay``, a subprocess that starts a cluster
  of the recorded shape) with the same faults at the same steps, and passes again (``PASSES``).
  (The broken-model trace's replay is checked in ``test_fault_suite.py``.)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from kgc.engine import traces
from kgc.engine.registry import model_from_manifest
from kgc.model import commands as m
from test_cluster_group_model import CONFIG, commit, commit_answer, find, stable_group_with_commit


def kgc(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kgc.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def fault_trace(tmp_path: Path, *, broken_answer: bool = False) -> Path:
    h = stable_group_with_commit()
    h.fault("kill", 1)
    h.call(find("c2"), m.FindCoordinatorResponse(error="NONE", node_id=2))
    # after failover the generation survives: a commit with a stale one is ILLEGAL_GENERATION
    # (a Heartbeat may be answered NONE while the new coordinator loads; a commit may not)
    answer = "NONE" if broken_answer else "ILLEGAL_GENERATION"
    h.call(commit("c2", "c2-1", 0, 9), commit_answer(answer))
    manifest = traces.new_manifest(
        target={"implementation": "apache-kafka", "version": "4.3.1", "mode": "kraft", "nodes": 3},
        group_id=CONFIG.group_id,
        seed=None,
        profile="faults",
        scenario="classic-faults",
        model={
            "name": "ClusterGroupModel",
            "profile": "kafka-4.x",
            "coordinator": 1,
            "config": {
                "offsets_topic_num_partitions": 1,
                "offsets_partition_leaders": [1],
                "node_ids": [1, 2, 3],
                "group_initial_rebalance_delay_ms": 0,
                "group_min_session_timeout_ms": 500,
            },
        },
        checker={},
    )
    return traces.save(
        traces.Trace(manifest=manifest, events=h.events, result={"verdict": "pass"}),
        tmp_path / ("broken.json" if broken_answer else "faults.json"),
    )


def test_manifest_rebuilds_the_fault_aware_model(tmp_path: Path) -> None:
    from kgc.model.classic.cluster_group import ClusterGroupModel

    trace = traces.load(fault_trace(tmp_path))
    assert isinstance(model_from_manifest(trace.manifest), ClusterGroupModel)


def test_analyze_rechecks_a_fault_trace_without_a_broker(tmp_path: Path) -> None:
    good, bad = fault_trace(tmp_path), fault_trace(tmp_path, broken_answer=True)
    ok = kgc("analyze", str(good))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "PASS" in ok.stdout
    diverged = kgc("analyze", str(bad))
    assert diverged.returncode == 1, diverged.stdout + diverged.stderr
    assert "DIVERGENCE" in diverged.stdout


def test_replay_refuses_faults_on_a_broker_kgc_did_not_start(tmp_path: Path) -> None:
    path = fault_trace(tmp_path)
    before = sorted(tmp_path.iterdir())
    out = kgc("replay", str(path), "--bootstrap-server", "127.0.0.1:9", "--save", str(tmp_path))
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "faults" in lines[0] and "--bootstrap-server" in lines[0], out.stderr
    assert sorted(tmp_path.iterdir()) == before


@pytest.mark.broker
@pytest.mark.faults
def test_replay_of_a_nemesis_trace_has_the_same_faults_at_the_same_steps(
    kraft3: Any, kraft_nemesis: Any, tmp_path: Path, say: Any
) -> None:
    """A passing fault-mixed example, recorded live and saved, replays through ``kgc replay`` (a
    subprocess that starts its own cluster of the recorded shape) with the same faults — same
    action, same node id, same step — and passes again."""
    from kgc.conformance.drivers.fault_suite import run_fault_suite
    from kgc.conformance.faults.nemesis import fault_steps

    examples: list[Any] = []
    result = run_fault_suite(
        kraft3,
        seed=20261122,
        traces_dir=str(tmp_path / "found"),
        settings_overrides={"max_examples": 3, "stateful_step_count": 8},
        example_traces=examples,
    )
    assert result.failure is None, result.message
    with_faults = [t for t in examples if fault_steps(t.events)]
    assert with_faults, f"no example of {len(examples)} injected a fault"
    recorded = max(with_faults, key=lambda t: len(t.events))  # the richest: most to replay
    first_fault = min(s for s, _, _ in fault_steps(recorded.events))
    assert any(e.kind == "invoke" and e.step > first_fault for e in recorded.events), (
        "no request after the fault: the replay would not show the faults landing mid-history"
    )
    assert recorded.result["verdict"] == "pass"
    saved = traces.save(recorded, tmp_path / "nemesis.json")
    say(f"recorded {len(recorded.events)} events, faults {fault_steps(recorded.events)}")

    out = kgc("replay", str(saved), "--save", str(tmp_path / "replayed"))
    say(out.stdout + out.stderr)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "PASSES" in out.stdout
    assert "NOT as recorded" not in out.stdout
    (replayed,) = sorted((tmp_path / "replayed").glob("*.json"))
    again = traces.load(replayed)
    assert fault_steps(again.events) == fault_steps(recorded.events)
    assert [c.type for c in again.commands] == [c.type for c in recorded.commands]
