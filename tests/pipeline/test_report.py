"""``kgc report`` on the hand-made corpus (two Kafka versions): numbers, examples, and the page as a
person sees it in headless Chromium.

Expected numbers come from how ``make_corpus.py`` built the corpus: per version two passing
member lifecycles and one planted stale-generation heartbeat answered NONE where the model allows
only ILLEGAL_GENERATION; plus one 4.3.1 trace with two corrupt lines.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def report(spark, tmp_path_factory):
    from kgc.pipeline.report import build

    out = tmp_path_factory.mktemp("report")
    data = build(spark, [str(DATA)], out, title="kgc test report")
    return out, data


def _cell(data, version, request):
    (row,) = [r for r in data["matrix"]["rows"] if r["version"] == version]
    return row["cells"][request]


def test_summary_counts_every_trace_and_every_unusable_line(report):
    out, data = report
    s = data["summary"]
    assert (s["traces"], s["pass"], s["divergence"], s["incomplete"], s["problems"]) == (
        7,
        4,
        2,
        1,
        3,
    )
    assert s["recheck_ran"] is True
    assert [(Path(p["source_file"]).name, p["line"]) for p in data["problems"]] == [
        ("corrupt.jsonl", 4),
        ("corrupt.jsonl", 7),
        ("corrupt.jsonl", 22),
    ]
    # the re-check (the model's checker, no broker) reaches the recorded verdict on every
    # complete trace, including the planted divergence
    assert [t["rechecked"] for t in data["targets"]] == [3, 3]
    assert sum(t["recheck_disagrees"] for t in data["targets"]) == 0
    assert json.loads((out / "report.json").read_text())["summary"] == s


def test_matrix_per_version_and_request_type(report):
    _, data = report
    assert [(r["implementation"], r["version"]) for r in data["matrix"]["rows"]] == [
        ("apache-kafka", "3.9.2"),
        ("apache-kafka", "4.3.1"),
    ]
    hb39, hb43 = _cell(data, "3.9.2", "Heartbeat"), _cell(data, "4.3.1", "Heartbeat")
    assert (hb39["checked"], hb39["agreed"], hb39["diverged"], hb39["unchecked"]) == (3, 2, 1, 0)
    # 4.3.1 also has the corrupt trace's heartbeat, which nobody could check
    assert (hb43["checked"], hb43["agreed"], hb43["diverged"], hb43["unchecked"]) == (3, 2, 1, 1)
    join = _cell(data, "3.9.2", "JoinGroup")
    assert (join["checked"], join["agreed"], join["agreement"]) == (6, 6, 1.0)


def test_divergences_grouped_by_signature_with_a_replayable_example(report):
    from kgc.engine.traces import load

    _, data = report
    (group,) = data["divergence_groups"]
    assert group["count"] == 2
    assert group["targets"] == ["apache-kafka 3.9.2", "apache-kafka 4.3.1"]
    assert (group["request_type"], group["kind"]) == ("Heartbeat", "receive")
    assert group["observed"] == "HeartbeatResponse NONE"
    assert group["allowed"] == ["HeartbeatResponse ILLEGAL_GENERATION"]
    path = Path(group["example"]["path"])
    assert group["replay"] == f"kgc replay {path}"
    trace = load(path)  # a standalone trace the project's own loader reads
    assert trace.result["divergence"]["index"] == 11
    assert trace.manifest["trace_id"] in ("3d01", "4d01")
    assert ">>" in group["example"]["steps"]  # the readable step list marks the diverging step


def test_coverage_cells_reached_and_never_reached(report):
    from kgc.engine.coverage import universe

    _, data = report
    cov = data["coverage"]
    reached = {(c["group_state"], c["request_type"], c["error"]) for c in cov["cells"]}
    assert {
        ("Empty", "JoinGroup", "MEMBER_ID_REQUIRED"),
        ("Empty", "JoinGroup", "NONE"),
        ("CompletingRebalance", "SyncGroup", "NONE"),
        ("Stable", "Heartbeat", "NONE"),
        ("Stable", "OffsetCommit", "NONE"),
        ("Stable", "LeaveGroup", "NONE"),
    } <= reached
    never = {(c["group_state"], c["request_type"], c["error"]) for c in cov["never_reached"]}
    assert (
        "Stable",
        "Heartbeat",
        "ILLEGAL_GENERATION",
    ) in never  # the model's answer was never seen
    assert len(never) + cov["reached"] == cov["universe"] == len(universe())


def test_latency_percentiles_per_request_and_version(report):
    _, data = report
    (join39,) = [
        r for r in data["latency"] if (r["version"], r["request_type"]) == ("3.9.2", "JoinGroup")
    ]
    # 3.9.2 JoinGroup latencies planted: 3, 9 (3a01), 4, 12 (3a02), 1.5, 4.5 (3d01)
    assert join39["count"] == 6
    assert join39["max_ms"] == 12.0
    assert join39["p50_ms"] in (4.0, 4.5)


def test_the_page_shows_the_matrix_and_a_plot_in_chromium(
    report, tmp_path, run_chromium, page_colours
):
    out, data = report
    assert set(data["plots"]) >= {"matrix", "latency", "coverage", "divergences"}
    colours = page_colours(out / "report.html", tmp_path)
    # the matrix table: agreeing cells (#b7e1b9) and the diverging Heartbeat cells (#f4a6a6)
    assert colours[(0xB7, 0xE1, 0xB9)] > 2000
    assert colours[(0xF4, 0xA6, 0xA6)] > 500
    # the heat map plot: RdYlGn at 100 % agreement, a colour only the plot draws
    assert colours[(0, 104, 55)] > 5000
    dom = run_chromium(["--dump-dom", (out / "report.html").as_uri()], tmp_path / "dom").stdout
    assert re.search(r'<table id="matrix">.*Heartbeat.*</table>', dom, re.S)
    assert re.search(r'<img class="plot" id="plot-matrix"[^>]*src="data:image/png;base64,', dom)


def test_the_screenshot_check_fails_without_plots(report, tmp_path, page_colours):
    """Quality: the same pixel check on the page rendered without its plots finds no plot."""
    from kgc.pipeline.report import render_html

    _, data = report
    bare = tmp_path / "bare.html"
    bare.write_text(render_html(data, {}), encoding="utf-8")
    colours = page_colours(bare, tmp_path)
    assert colours[(0, 104, 55)] == 0
    assert colours[(0xB7, 0xE1, 0xB9)] > 2000  # the table is still there


def test_a_converted_corpus_is_reused_without_converting_again(spark, report, tmp_path):
    from kgc.pipeline.report import build

    out, data = report
    again = build(spark, [str(out / "parquet")], tmp_path / "again", recheck=False)
    s = again["summary"]
    assert (s["traces"], s["pass"], s["divergence"], s["incomplete"]) == (7, 4, 2, 1)
    assert s["files"] is None and s["recheck_ran"] is False
    assert again["problems"] == data["problems"]  # kept from the conversion
    assert not (tmp_path / "again" / "parquet").exists()
