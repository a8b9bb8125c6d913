"""Recording a run as a corpus (``run_suite(record_dir=…)``, ``kgc check --record``), no broker.

The recorder's output must be what the pipeline's converter and ``kgc analyze`` read, land in the
corpus layout, be written atomically, and never replace a different file. Traces here come from
the engine driving the model as a target (``pipeline/synthetic.py``), exactly the objects the
suite records; the end-to-end run against real brokers is ``tests/pipeline/ci_report_check.py``
after ``make test``'s recording passes.
"""

from __future__ import annotations

import subprocess
import sys

import pytest


def _trace(seed: int):
    from kgc.pipeline.synthetic import make_trace

    return make_trace(seed, version="3.9.2")


def test_a_recorded_trace_lands_in_the_corpus_layout_and_reads_back(tmp_path):
    from kgc.conformance.drivers.suite import record_trace
    from kgc.engine.traces import load
    from kgc.pipeline.convert import parse_file

    trace = _trace(7)
    path = record_trace(trace, tmp_path)
    assert path == tmp_path / "kgc-synthetic-3.9.2-model" / (
        f"kgc-synthetic-7_{trace.manifest['trace_id']}.jsonl"
    )
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left
    again = load(path)  # kgc analyze's loader
    assert again.events == trace.events
    assert {k: v for k, v in again.result.items() if k != "kind"} == trace.result
    assert again.extras == trace.extras  # latency_ms and group_state travel with the events
    rows = list(parse_file(str(path)))
    assert [kind for kind, _ in rows] == ["trace"]  # the pipeline: one complete trace, no problem
    row = rows[0][1]
    assert (row["implementation"], row["version"], row["complete"]) == (
        "kgc-synthetic",
        "3.9.2",
        True,
    )
    assert row["event_count"] == len(trace.events)
    received = [e for e in row["events"] if e["kind"] == "receive"]
    assert received and all(e["latency_ms"] is not None for e in received)


def test_recording_never_replaces_a_different_file(tmp_path):
    from kgc.conformance.drivers.suite import record_trace

    trace = _trace(8)
    first = record_trace(trace, tmp_path)
    assert record_trace(trace, tmp_path) == first  # the same content again: kept, not doubled
    other = _trace(9)
    other.manifest["trace_id"] = trace.manifest["trace_id"]
    other.manifest["group_id"] = trace.manifest["group_id"]  # same file name, other content
    before = first.read_bytes()
    second = record_trace(other, tmp_path)
    assert second != first and second.name.endswith("-2.jsonl")
    assert first.read_bytes() == before
    assert sorted(p.name for p in first.parent.iterdir()) == sorted([first.name, second.name])


def test_unsafe_target_names_make_safe_folder_names(tmp_path):
    from kgc.conformance.drivers.suite import record_trace

    trace = _trace(10)
    trace.manifest["target"] = {**trace.manifest["target"], "implementation": "../x y/(z)"}
    path = record_trace(trace, tmp_path)
    assert path.parent.parent == tmp_path
    assert path.parent.name == "x-y-z-3.9.2-model"


def test_a_record_folder_that_is_a_file_is_refused_before_any_broker_starts(tmp_path):
    from kgc.conformance.drivers.suite import RecordError, prepare_record_dir

    saved = tmp_path / "mine.txt"
    saved.write_text("a user's file\n")
    with pytest.raises(RecordError, match="it is a file"):
        prepare_record_dir(saved)
    proc = subprocess.run(
        [sys.executable, "-m", "kgc.cli", "check", "--record", str(saved)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("kgc check: error: cannot record into") and "it is a file" in line
    assert saved.read_text() == "a user's file\n"
