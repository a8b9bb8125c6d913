"""``kgc matrix``: bad input is one line; a run on a launched implementation proves each deviation
on a fresh instance and replays the implementation's baselines (``traces/known``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


def kgc(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kgc.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )


def one_line(run: subprocess.CompletedProcess[str]) -> str:
    assert run.returncode == 2, (run.returncode, run.stderr[-2000:])
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    return lines[0]


def test_an_unknown_implementation_is_one_line(tmp_path: Path) -> None:
    line = one_line(kgc("matrix", "--implementations", "redpanda", "--out", str(tmp_path / "o")))
    assert "unknown implementation 'redpanda'" in line


def test_a_card_is_never_written_over(tmp_path: Path) -> None:
    (tmp_path / "card.md").write_text("mine")
    line = one_line(kgc("matrix", "--implementations", "tansu", "--out", str(tmp_path)))
    assert "is not empty" in line
    assert (tmp_path / "card.md").read_text() == "mine"


def test_an_unknown_protocol_is_one_line(tmp_path: Path) -> None:
    out = str(tmp_path / "o")
    line = one_line(
        kgc("matrix", "--implementations", "tansu", "--protocols", "queue", "--out", out)
    )
    assert "--protocols 'queue': choose from classic, consumer, migration, share" in line
    assert "(queue unknown)" in line


@pytest.mark.broker
def test_a_protocol_a_target_does_not_run_is_a_row_saying_why(tmp_path: Path) -> None:
    """``--protocols share`` on tansu (which offers no ShareGroupHeartbeat): one row, ``not run``
    with the refusal ``kgc check --protocol share`` gives, no search, and tansu's baselines still
    replayed once, in that first row."""
    out = tmp_path / "card"
    run = kgc(
        "matrix", "--implementations", "tansu", "--protocols", "share", "--out", str(out),
        "--no-report", timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    (row,) = json.loads((out / "card.json").read_text())["targets"]
    assert (row["label"], row["protocol"], row["requests"]) == ("tansu share", "share", 0)
    assert row["not_run"].startswith("the broker does not offer ShareGroupHeartbeat (API key 76)")
    known = sorted(p.name for p in (ROOT / "traces" / "known" / "tansu").glob("*.json"))
    assert sorted(Path(b["trace"]).name for b in row["baselines"]) == known
    assert f"| tansu | {row['version']} | loopback | share |" in (out / "card.md").read_text()


@pytest.mark.broker
@pytest.mark.slow
def test_tansu_card_proves_its_deviations_and_replays_its_baselines(tmp_path: Path) -> None:
    out = tmp_path / "card"
    run = kgc("matrix", "--implementations", "tansu", "--out", str(out), "--no-report", timeout=900)
    card = json.loads((out / "card.json").read_text())
    (row,) = card["targets"]
    assert row["implementation"] == "tansu" and row["version"] not in (None, "unknown")
    assert "JoinGroup" in row["advertised"] and row["requests"] > 0
    known = sorted(p.name for p in (ROOT / "traces" / "known" / "tansu").glob("*.json"))
    assert sorted(Path(b["trace"]).name for b in row["baselines"]) == known
    for b in row["baselines"]:
        # known: fails again at the event it recorded; otherwise FIXED, fails differently (with
        # both events) or unconfirmed (the replay could not finish)
        if b["replay"] == "STILL FAILING":
            assert b["status"] in ("known", "fails differently"), b
            assert (b["status"] == "known") == ("recorded_event" not in b), b
        else:
            assert b["status"] in ("FIXED", "unconfirmed"), b
    usable = {b["trace"] for b in row["baselines"] if b["status"] == "known"}
    for d in row["deviations"]:
        # a deviation is a finding only when it failed again on a fresh instance
        assert (d["status"] == "unconfirmed") == (d["replay_on_fresh_instance"] != "STILL FAILING")
        assert (
            d["replay_command"].startswith("kgc replay ")
            and "--implementation tansu" in (d["replay_command"])
        )
        assert set(d["matches"]) <= usable  # only a baseline still failing at its event names
    new = [d for d in row["deviations"] if d["status"] == "NEW"]
    assert run.returncode == (1 if new else 0), run.stderr[-3000:]
    assert "# kgc report card" in (out / "card.md").read_text()


@pytest.mark.broker
def test_check_names_the_baseline_a_deviation_matches(tmp_path: Path) -> None:
    """``kgc check --implementation`` says when what it saved is a deviation already on record.
    Judged by Kafka's rules alone (``--implementation-profile none``), tansu's search stops at its
    first deviation, whatever the timing: the v3 ``MEMBER_ID_REQUIRED`` on record. (Judged by its
    profile it goes on into tansu's own join phase, which a time-bounded shrink leaves in more
    than one shape.)"""
    run = kgc(
        "check", "--implementation", "tansu", "--implementation-profile", "none",
        "--seed", "2", "--traces", str(tmp_path),
    )  # fmt: skip
    assert run.returncode == 1, run.stderr[-2000:]
    (saved,) = tmp_path.glob("*.json")
    known = [line for line in run.stdout.splitlines() if line.startswith("known:")]
    assert known == [
        "known:  traces/known/tansu/joingroup-v3-member-id-required.json: the same deviation "
        "(request, answer and what Kafka allows there), a deviation of tansu on record "
        "(traces/known/README.md)"
    ], run.stdout[-3000:]
    assert f"saved: {saved}" in run.stdout


def test_a_deviation_is_named_by_its_request_its_answer_and_kafkas() -> None:
    from kgc.engine.traces import load

    from kgc.cli_matrix import known_matches, sentence, signature

    known = ROOT / "traces" / "known"
    sync = load(known / "kfake" / "syncgroup-unknown-group-group-id-not-found.json")
    assert signature(sync) == {
        "request": "SyncGroup",
        "answer": "SyncGroupResponse GROUP_ID_NOT_FOUND",
    }
    text = sentence(sync)
    assert text.startswith("SyncGroup v3: the broker answered SyncGroupResponse GROUP_ID_NOT_FOUND")
    assert "Kafka's rules allow only UNKNOWN_MEMBER_ID" in text
    tansu = load(known / "tansu" / "joingroup-v3-member-id-required.json")
    assert "MEMBER_ID_REQUIRED" in sentence(tansu) and "the request waits" in sentence(tansu)
    # a baseline matches the same deviation (kgc.engine.deviations), within the implementation's
    # own folder only
    assert known_matches("kfake", sync, known) == [
        known / "kfake" / "syncgroup-unknown-group-group-id-not-found.json"
    ]
    assert known_matches("tansu", sync, known) == []
    assert known_matches("kfake", tansu, known) == []
    # an answer that never came: the request the checker names as owed, and "no answer"
    mock = known / "librdkafka-mock"
    silent_path = mock / "joingroup-session-timeout-unchecked-never-answered.json"
    silent = load(silent_path)
    assert signature(silent) == {"request": "JoinGroup", "answer": "no answer"}
    text = sentence(silent)
    assert text.startswith("JoinGroup v3: the broker never answered it in "), text
    assert "where Kafka's rules answer JoinGroupResponse(error='INVALID_SESSION_TIMEOUT'" in text
    assert known_matches("librdkafka-mock", silent, known) == [silent_path]
    assert known_matches("librdkafka-mock", sync, known) == []


@pytest.mark.broker
def test_broker_start_launches_an_implementation_detached(tmp_path: Path) -> None:
    import os

    env = {**os.environ, "KGC_STATE_DIR": str(tmp_path / "run")}

    def broker(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "kgc.cli", "broker", *args],
            capture_output=True,
            text=True,
            timeout=600,
            env=env,
        )

    started = broker("start", "--implementation", "tansu", "--name", "t1")
    assert started.returncode == 0, started.stderr
    bootstrap = started.stdout.strip()
    try:
        from kgc.conformance.wire import probe

        host, port = bootstrap.rsplit(":", 1)
        assert 11 in probe.api_versions(host, int(port), 5.0).api_keys  # JoinGroup: it serves
        status = json.loads(broker("status", "--json").stdout)
        (row,) = status["brokers"]
        assert row["implementation"] == "tansu" and row["version"] not in ("", "unknown")
        assert row["bootstrap_servers"] == bootstrap and row["alive_pids"]
    finally:
        stopped = broker("stop", "--name", "t1")
    assert stopped.returncode == 0, stopped.stderr
    assert json.loads(broker("status", "--json").stdout)["brokers"] == []


def test_the_baselines_are_found_from_outside_the_clone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kgc.cli_matrix import known_root

    monkeypatch.chdir(ROOT)
    assert known_root() == Path("traces") / "known"  # a clone's root: its own folder
    monkeypatch.chdir(tmp_path)  # elsewhere: the clone kgc runs from
    assert known_root() == ROOT.resolve() / "traces" / "known"
    (tmp_path / "traces" / "known").mkdir(parents=True)  # a folder here wins
    assert known_root() == Path("traces") / "known"
