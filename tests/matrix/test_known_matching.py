"""Matching a deviation against the baselines in ``traces/known`` (``kgc.engine.deviations``,
``kgc matrix``, ``kgc check --implementation``), with no broker: the histories are the baselines'
own, changed by hand where a test needs another deviation, and a "fresh instance" is the model.

* a deviation is known only when it is the same deviation: the same request, the same whole
  answer and the same answers the model allowed there; the same request type and error is not
  enough;
* only a baseline that still fails at its own event names anything known: one that replays clean
  is FIXED, one that fails at another event "fails differently", and neither matches.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from kgc.engine.deviations import deviation_of, failing_event
from kgc.engine.registry import model_from_manifest
from kgc.engine.replay import replay
from kgc.engine.target import ModelTarget
from kgc.engine.traces import Trace, load
from kgc.model.history import event_to_json

from kgc import cli_check, cli_matrix

KNOWN = Path(__file__).parents[2] / "traces" / "known"
TANSU = KNOWN / "tansu" / "joingroup-v3-member-id-required.json"
KFAKE_EPOCH = KNOWN / "kfake" / "consumer-new-group-first-epoch-1.json"
KFAKE_SYNC = KNOWN / "kfake" / "syncgroup-unknown-group-group-id-not-found.json"


def answered(trace: Trace, **fields: Any) -> Trace:
    """``trace`` with the broker's diverging answer changed (the event and the result's record)."""
    div = trace.result["divergence"]
    i = div["index"]
    event = trace.events[i]
    changed = dataclasses.replace(event, response=dataclasses.replace(event.response, **fields))
    result = {**trace.result, "divergence": {**div, "observed": event_to_json(changed)}}
    events = [*trace.events[:i], changed, *trace.events[i + 1 :]]
    return dataclasses.replace(trace, events=events, result=result)


def on_the_model(trace: Trace) -> tuple[str, Trace]:
    """Replay ``trace`` on a fresh instance that is the model itself: it never deviates."""
    target = ModelTarget(model_from_manifest(trace.manifest))
    try:
        done = replay(trace, target, group_id="kgc-replay-test")
    finally:
        target.close()
    return done.verdict, done.trace


def test_the_same_request_type_and_error_with_another_answer_is_a_new_deviation() -> None:
    # tansu asks a JoinGroup v3 for a member id (MEMBER_ID_REQUIRED, naming the id c2-1); here a
    # broker answers the same request MEMBER_ID_REQUIRED naming no member id: another deviation
    known = load(TANSU)
    other = answered(known, member_id="")
    assert cli_matrix.signature(other) == cli_matrix.signature(known)  # the old rule: "known"
    assert cli_matrix.known_matches("tansu", other, KNOWN) == []
    near = cli_matrix.near_baselines("tansu", other, KNOWN)
    assert (TANSU, ("answer",)) in near  # other tansu baselines may be near in more parts
    assert all(len(parts) > 1 for path, parts in near if path != TANSU)


def test_a_consumer_heartbeat_answered_none_with_another_epoch_is_a_new_deviation() -> None:
    # kfake starts a new consumer group's first member at epoch 1 where Kafka 4.3 answers 2; a
    # broker answering epoch 3 (also NONE) deviates otherwise
    known = load(KFAKE_EPOCH)
    other = answered(known, member_epoch=3)
    assert cli_matrix.signature(other) == cli_matrix.signature(known)
    assert cli_matrix.known_matches("kfake", other, KNOWN) == []
    assert cli_matrix.known_matches("kfake", known, KNOWN) == [KFAKE_EPOCH]


def test_the_same_answer_to_another_request_is_a_new_deviation() -> None:
    # kfake answers a SyncGroup v3 for a group that does not exist GROUP_ID_NOT_FOUND; the same
    # answer to the same request at another version is not the deviation on record
    known = load(KFAKE_SYNC)
    i = next(i for i, e in enumerate(known.events) if getattr(e, "request_id", None) == 2)
    sync = known.events[i]
    other = dataclasses.replace(
        known,
        events=[
            *known.events[:i],
            dataclasses.replace(sync, command=dataclasses.replace(sync.command, version=2)),
            *known.events[i + 1 :],
        ],
    )
    assert cli_matrix.signature(other) == cli_matrix.signature(known)
    assert deviation_of(other).differs_in(deviation_of(known)) == ("request",)
    assert cli_matrix.known_matches("kfake", other, KNOWN) == []


def test_names_a_run_made_do_not_make_another_deviation(tmp_path: Path) -> None:
    # the same history with the clients swapped and another topic: the same deviation
    text = TANSU.read_text().replace('"c2', '"cX').replace('"c1', '"c2').replace('"cX', '"c1')
    text = text.replace("kgc-suite-511ea7", "kgc-suite-0a0b0c")
    assert '"c1-1"' in text and "kgc-suite-0a0b0c" in text
    (tmp_path / "renamed.json").write_text(text)
    renamed = load(tmp_path / "renamed.json")
    assert cli_matrix.known_matches("tansu", renamed, KNOWN) == [TANSU]


def confirmed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every saved deviation fails again on its fresh instance (no broker is started)."""
    monkeypatch.setattr(cli_matrix, "replay_fresh", lambda *_: ("STILL FAILING", None))


def card_rows(
    saved: list[Path], baselines: list[dict[str, Any]], implementation: str
) -> list[dict[str, Any]]:
    return cli_matrix._deviations(implementation, None, saved, baselines, KNOWN, load)


def test_a_new_deviation_on_the_card_is_new_and_names_its_near_baseline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    confirmed(monkeypatch)
    saved = tmp_path / "other.json"
    saved.write_text(json.dumps(answered(load(TANSU), member_id="").to_document()))
    baselines = [{"trace": str(TANSU), "status": "known"}]
    (row,) = card_rows([saved, TANSU], baselines, "tansu")[:1]
    assert row["status"] == "NEW" and row["matches"] == []
    assert {"trace": str(TANSU), "differs_in": ["answer"]} in row["near"]
    same = card_rows([TANSU], baselines, "tansu")[0]
    assert same["status"] == "known" and same["matches"] == [str(TANSU)]


def test_a_fixed_baseline_names_nothing_known(monkeypatch: pytest.MonkeyPatch) -> None:
    # the baseline replayed on a fresh instance that answers as Kafka does: FIXED, and the very
    # deviation it recorded, found again, is NEW
    baseline = load(TANSU)
    verdict, replayed = on_the_model(baseline)
    assert verdict == "FIXED"
    status = cli_matrix.baseline_status(baseline, verdict, replayed)
    assert status == {"status": "FIXED"}
    confirmed(monkeypatch)
    (row,) = card_rows([TANSU], [{"trace": str(TANSU), **status}], "tansu")
    assert row["status"] == "NEW" and row["matches"] == []
    assert row["same_as_not_known"] == [{"trace": str(TANSU), "status": "FIXED"}]
    md = cli_matrix._deviation_lines(row)
    assert any("which is FIXED: it names nothing known" in line for line in md)


def diverged_at(trace: Trace, index: int) -> Trace:
    """``trace`` as a replay that diverged at event ``index`` (an answer) instead."""
    event = trace.events[index]
    div = {"index": index, "step": event.step, "observed": event_to_json(event), "allowed": []}
    return dataclasses.replace(trace, result={"verdict": "divergence", "divergence": div})


def test_a_baseline_still_fails_only_at_the_event_it_recorded() -> None:
    baseline = load(KFAKE_SYNC)  # diverges at step 2, request 2: SyncGroup GROUP_ID_NOT_FOUND
    at = baseline.result["divergence"]["index"]
    same = diverged_at(baseline, at)
    assert cli_matrix.baseline_status(baseline, "STILL FAILING", same) == {"status": "known"}
    # a replay that fails earlier, at the first JoinGroup's answer (step 0, request 0)
    earlier = diverged_at(baseline, 1)
    status = cli_matrix.baseline_status(baseline, "STILL FAILING", earlier)
    assert status["status"] == "fails differently"
    assert status["recorded_event"].startswith("step 2, request #2 ")
    assert status["recorded_event"].endswith(": answer SyncGroupResponse GROUP_ID_NOT_FOUND")
    assert status["replayed_event"].startswith("step 0, request #0 ")
    assert status["replayed_event"].endswith(": answer JoinGroupResponse INVALID_SESSION_TIMEOUT")
    # at the same step and request, but another kind of divergence: another error
    other_error = answered(baseline, error="UNKNOWN_MEMBER_ID")
    other_kind = cli_matrix.baseline_status(baseline, "STILL FAILING", other_error)
    assert other_kind["status"] == "fails differently"
    assert failing_event(other_error).step == failing_event(baseline).step
    assert other_kind["replayed_event"].endswith("answer SyncGroupResponse UNKNOWN_MEMBER_ID")


def test_a_baseline_that_fails_differently_names_nothing_known(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    baseline = load(KFAKE_SYNC)
    status = cli_matrix.baseline_status(baseline, "STILL FAILING", diverged_at(baseline, 1))
    confirmed(monkeypatch)
    (row,) = card_rows([KFAKE_SYNC], [{"trace": str(KFAKE_SYNC), **status}], "kfake")
    assert row["status"] == "NEW"
    card = {
        "targets": [
            {
                "implementation": "kfake",
                "label": "kfake",
                "requests": 1,
                "cells": {"reached": 1, "of": 1},
                "unsupported": [],
                "deviations": [row],
                "baselines": [{"trace": str(KFAKE_SYNC), "replay": "STILL FAILING", **status}],
            }
        ]
    }
    md = cli_matrix.render_markdown(card)
    assert "| 1 (1) | 0 | 0 | 1 | 0 | 0 |" in md  # baselines: known, fails differently, FIXED, …
    assert f"- baseline `{KFAKE_SYNC.name}`: fails differently (STILL FAILING)" in md
    assert "  - recorded: step 2, request #2 " in md and "  - replayed: step 0, request #0 " in md


def test_a_replay_that_cannot_finish_is_unconfirmed() -> None:
    status = cli_matrix.baseline_status(load(TANSU), "REPLAY ERROR (refused)", None)
    assert status == {"status": "unconfirmed"}


@pytest.mark.parametrize(
    ("replayed", "line"),
    [
        (
            lambda t: ("STILL FAILING", t),
            f"known:  {TANSU}: the same deviation (request, answer and what Kafka allows there), "
            "a deviation of tansu on record (traces/known/README.md)",
        ),
        (
            on_the_model,
            f"not known: {TANSU} records the same deviation, but its replay on a fresh instance "
            "is FIXED: it names nothing known; retire or re-record it",
        ),
    ],
)
def test_check_says_known_only_for_a_baseline_that_still_fails(
    monkeypatch: pytest.MonkeyPatch, replayed: Any, line: str
) -> None:
    # ``kgc check --implementation tansu`` saved the deviation tansu's baseline records
    monkeypatch.setattr(cli_matrix, "replay_fresh", lambda _n, _v, trace: replayed(trace))
    monkeypatch.setattr(cli_matrix, "KNOWN", KNOWN)
    lines = cli_check._known_lines("tansu", TANSU)
    # the one baseline recording this deviation; other tansu baselines are only "near" lines
    assert [x for x in lines if not x.startswith("near:")] == [line]


def test_a_racy_baseline_is_known_when_one_of_its_replays_fails_at_its_event() -> None:
    """``confirm_baseline`` replays on fresh instances until one fails at the recorded event (a
    racy implementation may fail earlier on another, or pass), reporting every other event; only
    replays that all pass are FIXED; replays that all fail elsewhere (or pass) are ``fails
    differently``."""
    baseline = load(KFAKE_SYNC)
    at = baseline.result["divergence"]["index"]
    earlier, same = diverged_at(baseline, 1), diverged_at(baseline, at)

    def replays(*outcomes: tuple[str, Trace | None]):  # noqa: ANN202
        queue = list(outcomes)
        return lambda trace: queue.pop(0)

    verdict, _, status = cli_matrix.confirm_baseline(
        replays(("STILL FAILING", earlier), ("STILL FAILING", same)), baseline
    )
    assert (verdict, status["status"], status["replays"]) == ("STILL FAILING", "known", 2)
    assert status["failed_elsewhere"][0].startswith("step 0, request #0 ")

    clean = dataclasses.replace(baseline, result={"verdict": "pass", "divergence": None})
    _, _, status = cli_matrix.confirm_baseline(
        replays(("PASSES", clean), ("STILL FAILING", same)), baseline
    )  # a clean replay does not end it: the next fails at its event
    assert (status["status"], status["replays"], status["passed_clean"]) == ("known", 2, 1)
    _, _, status = cli_matrix.confirm_baseline(replays(*[("PASSES", clean)] * 3), baseline)
    assert status["status"] == "FIXED" and status["replays"] == 3
    _, _, status = cli_matrix.confirm_baseline(
        replays(("STILL FAILING", earlier), ("PASSES", clean), ("PASSES", clean)), baseline
    )
    assert status["status"] == "fails differently" and status["passed_clean"] == 2

    _, _, status = cli_matrix.confirm_baseline(
        replays(*[("STILL FAILING", earlier)] * 3), baseline, attempts=3
    )
    assert status["status"] == "fails differently" and status["replays"] == 3
    assert len(status["failed_elsewhere"]) == 3


def test_a_new_deviation_fails_the_card_unless_tolerated_as_near_a_known_one() -> None:
    """``kgc matrix`` exits 1 on a NEW deviation of another implementation; with
    ``--tolerate-near`` (kgc's own CI) only on one that is near no known baseline. Apache Kafka
    fails on any confirmed deviation either way."""
    from kgc.cli_matrix import _fails

    near = {"status": "NEW", "near": [{"trace": "b.json", "differs_in": ["answer"]}]}
    alone = {"status": "NEW", "near": []}
    for impl, devs, strict, tolerant in [
        ("tansu", [near], True, False),
        ("tansu", [alone], True, True),
        ("tansu", [{"status": "unconfirmed", "near": []}], False, False),
        ("apache-kafka", [{"status": "known", "near": []}], True, True),
    ]:
        row = {"implementation": impl, "deviations": devs}
        assert _fails(row) is strict, (impl, devs)
        assert _fails(row, tolerate_near=True) is tolerant, (impl, devs)
