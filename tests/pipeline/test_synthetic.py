"""Synthetic corpora: deterministic, self-consistent, readable by the converter and the project's
own trace loader."""

from __future__ import annotations

import pytest
from kgc.engine.traces import dumps_jsonl
from kgc.pipeline.synthetic import make_trace


def test_same_seed_same_bytes_different_seed_different_trace():
    assert dumps_jsonl(make_trace(5)) == dumps_jsonl(make_trace(5))
    assert dumps_jsonl(make_trace(5)) != dumps_jsonl(make_trace(6))


def test_a_synthetic_trace_passes_kgc_analyze(tmp_path):
    from kgc.engine.traces import load, save

    from kgc.cli_analyze import analyze_trace

    trace = make_trace(21)
    assert trace.result["verdict"] == "pass"
    path = save(trace, tmp_path / "t.jsonl")
    verdict, divergence = analyze_trace(load(path))
    assert (verdict, divergence) == ("pass", None)
    assert trace.manifest["target"]["implementation"] == "kgc-synthetic"


@pytest.mark.spark
def test_jsonl_corpus_written_by_spark_converts_back_without_problems(spark, tmp_path):
    from kgc.pipeline.convert import convert
    from kgc.pipeline.synthetic import write_jsonl

    files = write_jsonl(spark, 40, str(tmp_path / "jsonl"), files=3)
    assert 1 <= len(files) <= 3 and all(f.endswith(".jsonl") for f in files)
    summary = convert(spark, [tmp_path / "jsonl"], tmp_path / "parquet")
    assert (summary.traces, summary.problems) == (40, [])
