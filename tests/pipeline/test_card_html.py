"""The report card in ``report.html`` (``kgc matrix`` hands its ``card.json`` to ``kgc report
--card``): each row's depth, the deviations its profile names, and the status of each deviation
its search found and of each baseline it replayed. No Spark: :func:`render_card` is pure."""

from __future__ import annotations

import json
import re
from pathlib import Path

from kgc.pipeline.report import render_card

from kgc.cli import main

DATA = Path(__file__).parent / "data"


def _row(label: str, reached: int, of: int, **more: object) -> dict:
    return {
        "implementation": label,
        "label": label,
        "version": "1.0",
        "rules": "kafka-4.3",
        "requests": 171,
        "cells": {"reached": reached, "of": of},
        "deviations": [],
        "baselines": [],
        "unsupported": [],
        **more,
    }


CARD = {
    "targets": [
        _row("apache-kafka-4.3.1", 95, 100),
        _row(
            "librdkafka-mock",
            18,
            87,
            rules="kafka-3.7",
            named={"switches": ["a", "b", "c"], "settings": ["x.ms"], "steers": ["s1", "s2"]},
            deviations=[
                {
                    "status": "NEW",
                    "signature": {"request": "JoinGroup", "answer": "no answer"},
                    "sentence": "JoinGroup v0: the broker never answered it",
                    "replay_command": "kgc replay t.json --implementation librdkafka-mock",
                    "source": "GroupMetadataManager.classicGroupJoin*",
                    "replay_on_fresh_instance": "STILL FAILING",
                    "matches": [],
                }
            ],
            baselines=[
                {
                    "trace": "traces/known/librdkafka-mock/one.json",
                    "status": "known",
                    "replay": "STILL FAILING",
                },
                {
                    "trace": "traces/known/librdkafka-mock/two.json",
                    "status": "known",
                    "replay": "STILL FAILING",
                },
                {
                    "trace": "traces/known/librdkafka-mock/three.json",
                    "status": "FIXED",
                    "replay": "PASS",
                },
            ],
        ),
    ]
}


def _cells(html: str, label: str) -> list[str]:
    row = re.search(rf"<tr><th>{re.escape(label)}</th>(.*?)</tr>", html, re.S)
    assert row, label
    return [
        re.sub(r"<[^>]+>", " ", c).split() for c in re.findall(r"<td[^>]*>(.*?)</td>", row[1], re.S)
    ]


def test_each_row_shows_its_depth_its_profile_and_the_status_of_what_it_found() -> None:
    html = render_card(CARD)
    assert '<table id="card">' in html
    version, judged, depth, requests, found, baselines = _cells(html, "librdkafka-mock")
    assert " ".join(judged) == "kafka-3.7 + 4 named deviations; steered around 2"
    assert depth == ["18/87", "cells", "(21%)"] and requests == ["171"]
    assert found == ["1", "NEW"] and baselines == ["1", "FIXED", ",", "2", "known"]
    assert 'style="width:21%"' in html
    apache = _cells(html, "apache-kafka-4.3.1")
    assert " ".join(apache[1]) == "kafka-4.3" and apache[4:] == [["none"], ["none"]]
    # each deviation and baseline listed with its status, a bad one marked so
    assert '<span class="bad status">NEW</span> JoinGroup → no answer' in html
    assert '<span class="bad status">FIXED</span> baseline <code>three.json</code>' in html
    assert html.count('<span class="good status">known</span> baseline') == 2
    assert "named: a, b, c, x.ms, steer s1, steer s2" in html


def test_the_markdown_card_says_what_each_row_was_judged_by() -> None:
    from kgc.cli_matrix import render_markdown

    md = render_markdown(CARD)
    assert (
        "- judged by kafka-3.7 rules + 4 named deviations (a, b, c, x.ms); steered around: s1, s2"
        in md
    )
    assert md.count("- judged by") == 1  # a row without a profile says nothing of one


def test_report_refuses_a_card_it_cannot_read_before_spark(tmp_path, capsys) -> None:
    for text, why in (
        ("{", "cannot read a card"),
        (json.dumps({"rows": []}), "not a kgc matrix card"),
    ):
        bad = tmp_path / "card.json"
        bad.write_text(text)
        out = tmp_path / "r"
        assert main(["report", str(DATA), "--out", str(out), "--card", str(bad)]) == 2
        err = capsys.readouterr().err
        assert f"kgc report: error: --card {bad}: {why}" in err and err.count("\n") == 1
        assert not out.exists()
