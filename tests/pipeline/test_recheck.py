"""The re-check: the model's own checker folded over every stored history, inside Spark.

Expectations come from outside the code under test: the recorded verdicts (written by the engine
while it ran, or by the planted-divergence step, each using the checker live), and direct calls of
``kgc.model.checker.check``.
"""

from __future__ import annotations

import json
from collections import Counter

import kgc.model.checker
import pytest
from kgc.engine.traces import dumps_jsonl
from kgc.pipeline import recheck
from kgc.pipeline.convert import parse_lines
from kgc.pipeline.synthetic import make_trace


def _row(trace):
    (row,) = [
        r for k, r in parse_lines("mem.jsonl", dumps_jsonl(trace).splitlines()) if k == "trace"
    ]
    return row


def test_the_fold_calls_the_checker_the_suite_uses():
    # the engine of every live run feeds a ``Checker``; so does the fold (through ``_Observing``)
    assert recheck.Checker is kgc.model.checker.Checker


def test_fold_finds_the_divergence_the_checker_finds():
    from kgc.engine.registry import model_from_manifest

    trace = make_trace(7, divergence_rate=1.0)  # one response replaced, verdict re-recorded
    config = kgc.model.checker.CheckerConfig.from_manifest(trace.manifest)
    direct = kgc.model.checker.check(model_from_manifest(trace.manifest), trace.events, config)
    facts = recheck.fold(_row(trace))
    assert direct is not None
    assert (facts["recheck_verdict"], facts["divergence_index"]) == ("divergence", direct.index)
    assert facts["divergence_reason"] == direct.reason
    assert facts["agrees_with_recorded"] is True
    statuses = Counter(r["status"] for r in facts["requests"])
    assert statuses["diverged"] == 1


def test_group_states_come_from_the_model_when_the_trace_has_none():
    trace = make_trace(11)
    recorded = recheck.fold(_row(trace))
    for extra in trace.extras:
        extra.pop("group_state", None)
    derived = recheck.fold(_row(trace))
    assert (recorded["state_source"], derived["state_source"]) == ("recorded", "model")
    # the engine recorded the state only when every live model state agreed; compare those
    both = zip(recorded["requests"], derived["requests"], strict=True)
    pairs = [(a["states"], b["states"]) for a, b in both]
    assert pairs and all(b == a for a, b in pairs if a != ["?"])


def test_incomplete_traces_are_not_rechecked_and_model_errors_are_reported_per_trace():
    row = _row(make_trace(3))
    row["complete"] = False
    assert recheck.fold(row)["verdict"] == "incomplete"
    assert recheck.fold(row)["recheck_verdict"] is None
    row = _row(make_trace(3))
    manifest = json.loads(row["manifest_json"])
    manifest["model"]["profile"] = "kafka-9.9"
    row["manifest_json"] = json.dumps(manifest)
    facts = recheck.fold(row)
    assert facts["recheck_verdict"] == "error" and "kafka-9.9" in facts["recheck_error"]


@pytest.mark.spark
def test_recheck_in_spark_reaches_every_recorded_verdict(spark, tmp_path):
    from kgc.pipeline.convert import read_traces
    from kgc.pipeline.synthetic import write_parquet

    write_parquet(spark, 80, str(tmp_path), divergence_rate=0.25, min_steps=4, max_steps=10)
    facts = recheck.facts(read_traces(spark, tmp_path))
    rows = facts.select(
        "recorded_verdict", "recheck_verdict", "agrees_with_recorded", "version"
    ).collect()
    assert len(rows) == 80
    assert all(r["agrees_with_recorded"] for r in rows), [
        r for r in rows if not r["agrees_with_recorded"]
    ]
    verdicts = Counter(r["recheck_verdict"] for r in rows)
    assert verdicts["divergence"] > 5 and verdicts["pass"] > 40  # ~25 % planted, most diverge
    assert {r["version"] for r in rows} == {"4.3.1", "3.9.2"}
