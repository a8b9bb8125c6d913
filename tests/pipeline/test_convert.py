"""Trace files to Parquet: every line accounted for, the explicit schema, partitions per target.

The corpus in ``data/`` is described in ``make_corpus.py``; the line numbers asserted here are the
ones planted there (corrupt.jsonl: line 4 cut off, line 7 not an event, line 22 after the result).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kgc.pipeline.convert import expand, parse_document, parse_file, parse_lines

DATA = Path(__file__).parent / "data"
CORRUPT = str((DATA / "corrupt" / "corrupt.jsonl").resolve())


def _split(items):
    items = list(items)
    traces = [r for k, r in items if k == "trace"]
    problems = [r for k, r in items if k == "problem"]
    return traces, problems


def test_corrupt_lines_are_counted_with_file_and_line_and_the_trace_is_kept_incomplete():
    traces, problems = _split(parse_file(CORRUPT))
    assert [(p["source_file"], p["line"]) for p in problems] == [
        (CORRUPT, 4),
        (CORRUPT, 7),
        (CORRUPT, 22),
    ]
    assert problems[0]["message"].startswith("bad JSON")
    assert "at_ms" in problems[1]["message"]  # valid JSON, but not an event: names the field
    assert "no manifest" in problems[2]["message"]
    (trace,) = traces
    assert trace["trace_id"] == "4c01"
    assert trace["corrupt_lines"] == 2
    assert trace["complete"] is False
    assert trace["event_count"] == 19 - 2  # the two broken lines are not events


def test_two_traces_in_one_jsonl_file_and_a_json_document():
    traces, problems = _split(parse_file(str(DATA / "kafka-3.9.2" / "two-traces.jsonl")))
    assert problems == []
    assert [t["trace_id"] for t in traces] == ["3a01", "3a02"]
    assert [t["first_line"] for t in traces] == [1, 22]
    assert all(t["complete"] and t["verdict"] == "pass" for t in traces)
    doc, problems = _split(parse_file(str(DATA / "kafka-3.9.2" / "stale-heartbeat.json")))
    assert problems == []
    assert doc[0]["verdict"] == "divergence" and doc[0]["divergence_index"] == 11


def test_event_fields_are_flattened_with_request_type_error_and_latency():
    (trace,), _ = _split(parse_file(str(DATA / "kafka-4.3.1" / "pass-a.jsonl")))
    receives = [e for e in trace["events"] if e["kind"] == "receive"]
    # first JoinGroup: MEMBER_ID_REQUIRED after 1.5 ms (make_corpus: latency 1.5)
    assert (receives[0]["request_type"], receives[0]["error"], receives[0]["latency_ms"]) == (
        "JoinGroup",
        "MEMBER_ID_REQUIRED",
        1.5,
    )
    invokes = [e for e in trace["events"] if e["kind"] == "invoke"]
    assert [e["group_state"] for e in invokes][:3] == ["Empty", "Empty", "CompletingRebalance"]
    assert [e["index"] for e in trace["events"]] == list(range(len(trace["events"])))


def test_a_trace_without_result_is_reported_at_its_last_line():
    lines = (DATA / "kafka-4.3.1" / "pass-a.jsonl").read_text().splitlines()[:-1]
    traces, problems = _split(parse_lines("cut.jsonl", lines))
    assert traces[0]["complete"] is False and traces[0]["verdict"] is None
    assert [(p["line"], "without a result" in p["message"]) for p in problems] == [
        (len(lines), True)
    ]


def test_an_unusable_manifest_reports_it_and_its_orphaned_events():
    lines = (DATA / "kafka-4.3.1" / "pass-a.jsonl").read_text().splitlines()
    manifest = json.loads(lines[0])
    manifest["format_version"] = 99
    traces, problems = _split(parse_lines("future.jsonl", [json.dumps(manifest), *lines[1:]]))
    assert traces == []
    assert problems[0]["line"] == 1 and "format_version" in problems[0]["message"]
    assert problems[1]["line"] == 2 and "skipped" in problems[1]["message"]
    # the result line outside any trace is reported too
    assert any("result line outside" in p["message"] for p in problems)


def test_a_broken_json_document_names_the_line():
    _, problems = _split(parse_document("bad.json", '{"manifest": {}\n, oops'))
    assert problems[0]["line"] == 2 and problems[0]["message"].startswith("bad JSON")


@pytest.mark.spark
def test_parquet_partitioned_by_implementation_and_version_with_the_explicit_schema(
    spark, tmp_path
):
    from kgc.pipeline.convert import convert, read_problems, read_traces
    from kgc.pipeline.schema import TRACE

    summary = convert(spark, [DATA], tmp_path)
    assert (summary.files, summary.traces) == (len(expand([DATA])), 7)
    assert [(p["line"]) for p in summary.problems] == [4, 7, 22]
    assert read_problems(tmp_path) == summary.problems
    parts = sorted(
        p.relative_to(tmp_path / "traces").as_posix()
        for p in (tmp_path / "traces").glob("implementation=*/version=*")
    )
    assert parts == [
        "implementation=apache-kafka/version=3.9.2",
        "implementation=apache-kafka/version=4.3.1",
    ]
    df = read_traces(spark, tmp_path)
    # Parquet reads every column back as nullable; names and types are the schema's
    assert [(f.name, f.dataType.simpleString()) for f in df.schema] == [
        (f.name, f.dataType.simpleString()) for f in TRACE
    ]
    rows = {
        r["trace_id"]: r
        for r in df.select("trace_id", "version", "event_count", "complete").collect()
    }
    assert sorted(rows) == ["3a01", "3a02", "3d01", "4a01", "4a02", "4c01", "4d01"]
    assert rows["3a01"]["version"] == "3.9.2"  # a string, never inferred as a number
    assert rows["4c01"]["complete"] is False and rows["4a01"]["event_count"] == 19
