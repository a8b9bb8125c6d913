"""``kgc matrix --baseline OLD/card.json``: what changed since an earlier card (new and gone
deviations, baselines whose status changed, cells gained or lost), and a bad baseline is one line
before anything starts."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from kgc.cli_matrix import compare_cards, deviation_key, render_changes
from tests.matrix.test_matrix_cli import kgc, one_line

KNOWN_JOIN = {
    "status": "known",
    "signature": {"request": "JoinGroup", "answer": "JoinGroupResponse NONE"},
    "sentence": "JoinGroup v5: the broker answered JoinGroupResponse NONE, where ...",
    "matches": ["traces/known/kfake/joingroup-no-initial-rebalance-delay.json"],
}
NEVER_ANSWERED = {
    "status": "NEW",
    "signature": {"request": "SyncGroup", "answer": "no answer"},
    "sentence": "SyncGroup v3: the broker never answered it in 3012 ms, where Kafka's rules "
    "answer REBALANCE_IN_PROGRESS",
    "matches": [],
}


def _row(label: str, deviations: list, baselines: list, reached: int) -> dict:
    return {
        "label": label,
        "deviations": deviations,
        "baselines": baselines,
        "cells": {"reached": reached, "of": 97},
        "requests": 70 + reached,
    }


def _card() -> dict:
    base = [{"trace": "traces/known/kfake/a.json", "status": "known"}]
    return {"targets": [_row("kfake", [KNOWN_JOIN], base, 2), _row("tansu", [], [], 1)]}


def test_an_unchanged_card_reports_nothing_changed() -> None:
    changes = compare_cards(_card(), _card())
    for r in changes["rows"]:
        assert r["deviations_new"] == r["deviations_gone"] == r["baselines_changed"] == []
        assert r["cells_before"] == r["cells_after"]


def test_new_gone_fixed_and_cells() -> None:
    old, new = _card(), _card()
    kfake = new["targets"][0]
    kfake["deviations"] = [NEVER_ANSWERED]  # the known one gone, a new one seen
    kfake["baselines"][0]["status"] = "FIXED"
    kfake["cells"]["reached"] = 30
    new["targets"].append(_row("librdkafka-mock", [], [], 2))
    del new["targets"][1]  # tansu's row gone
    rows = {r["label"]: r for r in compare_cards(old, new)["rows"]}
    assert rows["kfake"]["deviations_new"] == [deviation_key(NEVER_ANSWERED)]
    assert rows["kfake"]["deviations_gone"] == [deviation_key(KNOWN_JOIN)]
    assert rows["kfake"]["baselines_changed"] == [
        {"baseline": "a.json", "was": "known", "now": "FIXED"}
    ]
    assert (rows["kfake"]["cells_before"], rows["kfake"]["cells_after"]) == (2, 30)
    assert rows["librdkafka-mock"] == {"label": "librdkafka-mock", "change": "new row"}
    assert rows["tansu"] == {"label": "tansu", "change": "row gone"}
    text = render_changes(compare_cards(old, new), "old/card.json")
    assert "known → FIXED" in text and "cells 2 → 30" in text and "row gone" in text


def test_the_same_unanswered_request_with_another_wait_is_not_new() -> None:
    old, new = _card(), _card()
    old["targets"][1]["deviations"] = [NEVER_ANSWERED]
    again = copy.deepcopy(NEVER_ANSWERED)
    again["sentence"] = again["sentence"].replace("3012 ms", "2987 ms")
    new["targets"][1]["deviations"] = [again]
    tansu = compare_cards(old, new)["rows"][1]
    assert tansu["deviations_new"] == tansu["deviations_gone"] == []
    # an unconfirmed deviation is never counted as seen
    new["targets"][1]["deviations"] = [{**again, "status": "unconfirmed"}]
    assert compare_cards(old, new)["rows"][1]["deviations_gone"] == [deviation_key(again)]


def test_a_bad_baseline_is_one_line_before_anything_starts(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    line = one_line(kgc("matrix", "--out", str(tmp_path / "o"), "--baseline", str(missing)))
    assert "--baseline" in line and "cannot read" in line
    garbage = tmp_path / "card.json"
    garbage.write_text("{not json")
    assert "not JSON" in one_line(
        kgc("matrix", "--out", str(tmp_path / "o"), "--baseline", str(garbage))
    )
    garbage.write_text(json.dumps({"rows": []}))
    assert "not a kgc matrix card" in one_line(
        kgc("matrix", "--out", str(tmp_path / "o"), "--baseline", str(garbage))
    )
    assert not (tmp_path / "o").exists()
