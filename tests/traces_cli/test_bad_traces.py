"""Bad trace files: one line naming the file (and line) and the field, exit 2, nothing modified.

Each case is a file a user might really have: truncated JSON, a trace from a future format, a
command this kgc does not know. ``kgc analyze`` and ``kgc replay`` must refuse it before touching
anything (replay must not even start a broker), and every file under the folder stays byte-equal.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from kgc.engine import traces
from kgc.model import profile_for_version

GOOD_MANIFEST = {
    "format_version": 1,
    "kgc_version": "0.1.0",
    "trace_id": "t1",
    "group_id": "kgc-x",
    "target": {"implementation": "apache-kafka", "version": "4.3.1"},
    "model": {"profile": "kafka-4.x", "config": {"group_min_session_timeout_ms": 500}},
    "checker": {},
}
INVOKE = {
    "kind": "invoke",
    "step": 0,
    "at_ms": 1.0,
    "request_id": 0,
    "command": {"type": "DescribeGroups", "client": "c1", "version": 5},
}

CASES = {
    "bad-json.json": ('{"manifest": {"format_version": 1,', "bad JSON"),
    "future.json": (
        json.dumps({"manifest": {**GOOD_MANIFEST, "format_version": 99}, "events": []}),
        "format_version",
    ),
    "unknown-command.json": (
        json.dumps(
            {
                "manifest": GOOD_MANIFEST,
                "events": [{**INVOKE, "command": {"type": "ElectLeaders", "client": "c1"}}],
            }
        ),
        "field 'type'",
    ),
    "bad-field.jsonl": (
        json.dumps({"kind": "manifest", **GOOD_MANIFEST})
        + "\n"
        + json.dumps({**INVOKE, "command": {**INVOKE["command"], "colour": "red"}})
        + "\n",
        "DescribeGroups.colour",
    ),
}


def _kgc(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kgc.cli", *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("command", ["analyze", "replay"])
def test_bad_trace_is_one_line_error_and_nothing_changes(tmp_path: Path, name: str, command: str):
    text, field = CASES[name]
    folder = tmp_path / "traces"
    folder.mkdir()
    bad = folder / name
    bad.write_text(text)
    bystander = folder / "kept.txt"
    bystander.write_text("a user's file")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}

    # replay with an address nothing listens on: it must fail on the file before any connection
    extra = ["--bootstrap-server", "127.0.0.1:1"] if command == "replay" else []
    out = _kgc(command, str(bad), *extra)

    assert out.returncode == 2, out
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert str(bad) in lines[0] and field in lines[0], lines[0]
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


# A readable trace whose manifest names a model kgc cannot build: `kgc analyze` must say which file
# and which field, in one line, before printing any verdict (a traceback was printed before).
BAD_MODELS = {
    "unknown-model.json": ({"name": "ZooKeeperGroupModel"}, "manifest.model.name"),
    "bad-coordinator.json": (
        {"name": "ClusterGroupModel", "profile": "kafka-4.x", "coordinator": "node-one"},
        "manifest.model.coordinator",
    ),
    # a setting of the wrong kind, or settings no broker can have (each crashed the checker)
    "setting-not-a-number.json": (
        {"profile": "kafka-4.x", "config": {"group_max_size": "big"}},
        "manifest.model.config.group_max_size': expected a whole number, got 'big'",
    ),
    "setting-missing.json": (
        {"profile": "kafka-4.x", "config": {"offsets_commit_timeout_ms": None}},
        "manifest.model.config.offsets_commit_timeout_ms': expected a whole number, got None",
    ),
    "settings-contradict.json": (
        {"profile": "kafka-4.x", "config": {"offsets_commit_timeout_ms": 0}},
        "manifest.model.config': offsets_commit_timeout_ms must be >= 1",
    ),
    "consumer-setting-not-a-number.json": (
        {"name": "ConsumerGroupModel", "profile": "kafka-4.3", "config": {"max_size": 1.5}},
        "manifest.model.config.max_size': expected a whole number, got 1.5",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_MODELS))
def test_analyze_bad_model_record_is_one_line_error(tmp_path: Path, name: str) -> None:
    record, field = BAD_MODELS[name]
    good = tmp_path / "a-good.json"
    good.write_text(json.dumps({"manifest": GOOD_MANIFEST, "events": [INVOKE]}))
    bad = tmp_path / name
    bad.write_text(json.dumps({"manifest": {**GOOD_MANIFEST, "model": record}, "events": []}))
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}

    out = _kgc("analyze", str(good), str(bad))

    assert out.returncode == 2, out
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert str(bad) in lines[0] and field in lines[0], lines[0]
    assert out.stdout == ""  # refused before any verdict, the good trace's included
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


# Histories no engine could have recorded. Each one used to be analysed as if it were real (two of
# them passed, one was reported as a broker divergence, one crashed on int("v23")); the loader
# refuses them, so every front end does.


def _jsonl(manifest: dict, events: list[dict]) -> str:
    lines = [{"kind": "manifest", **manifest}, *events]
    return "".join(json.dumps(obj) + "\n" for obj in lines)


def _invoke(request_id: int, at_ms: float) -> dict:
    return {**INVOKE, "request_id": request_id, "at_ms": at_ms, "step": request_id}


def _receive(request_id: int, at_ms: float) -> dict:
    return {
        "kind": "receive",
        "step": request_id,
        "at_ms": at_ms,
        "request_id": request_id,
        "response": {"type": "DescribeGroupsResponse", "error": "NONE", "group_state": "Dead"},
    }


def _refused(tmp_path: Path, command: str, name: str, text: str) -> str:
    """Run ``kgc <command>`` on the file: exit 2, one line naming the file, nothing changed."""
    folder = tmp_path / "traces"
    folder.mkdir()
    bad = folder / name
    bad.write_text(text)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    extra = ["--bootstrap-server", "127.0.0.1:1"] if command == "replay" else []
    out = _kgc(command, str(bad), *extra)
    assert out.returncode == 2, out
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert out.stdout == ""
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    return lines[0]


@pytest.mark.parametrize("command", ["analyze", "replay"])
def test_time_going_backwards_is_refused(tmp_path: Path, command: str) -> None:
    # c1's second request is stamped 50 ms after its first at 100 ms: the driver stamps its
    # requests from one monotonic clock, in the order it records them
    text = _jsonl(GOOD_MANIFEST, [_invoke(0, 100.0), _receive(0, 101.0), _invoke(1, 50.0)])
    line = _refused(tmp_path, command, "backwards.jsonl", text)
    assert f"{tmp_path / 'traces' / 'backwards.jsonl'}:4: field 'at_ms'" in line, line
    assert "time goes backwards" in line and "line 2" in line, line


@pytest.mark.parametrize("command", ["analyze", "replay"])
def test_answer_before_its_request_is_refused(tmp_path: Path, command: str) -> None:
    # request 0 is answered at 5 ms but was only sent at 10 ms
    doc = {"manifest": GOOD_MANIFEST, "events": [_invoke(0, 10.0), _receive(0, 5.0)]}
    line = _refused(tmp_path, command, "early-answer.json", json.dumps(doc))
    assert f"{tmp_path / 'traces' / 'early-answer.json'}: events[1]: field 'at_ms'" in line, line
    assert "before it was invoked" in line, line


@pytest.mark.parametrize("command", ["analyze", "replay"])
def test_duplicate_request_id_is_refused(tmp_path: Path, command: str) -> None:
    # two requests both numbered 0: which one an answer belongs to is ambiguous
    doc = {"manifest": GOOD_MANIFEST, "events": [_invoke(0, 1.0), {**_invoke(0, 2.0), "step": 1}]}
    line = _refused(tmp_path, command, "duplicate-id.json", json.dumps(doc))
    assert f"{tmp_path / 'traces' / 'duplicate-id.json'}: events[1]: field 'request_id'" in line
    assert "duplicate request id 0" in line and "events[0]" in line, line


@pytest.mark.parametrize("command", ["analyze", "replay"])
def test_receive_for_a_request_never_invoked_is_refused(tmp_path: Path, command: str) -> None:
    # an answer to request 7, which the history never sent: a broken file, not a broker divergence
    text = _jsonl(GOOD_MANIFEST, [_invoke(0, 1.0), _receive(7, 2.0)])
    line = _refused(tmp_path, command, "orphan-answer.jsonl", text)
    assert f"{tmp_path / 'traces' / 'orphan-answer.jsonl'}:3: field 'request_id'" in line, line
    assert "request 7" in line and "never invoked" in line, line


@pytest.mark.parametrize("command", ["analyze", "replay"])
@pytest.mark.parametrize("with_model", [True, False], ids=["model-recorded", "model-from-version"])
def test_unparsable_target_version_is_refused(
    tmp_path: Path, command: str, with_model: bool
) -> None:
    # another product's version string where a Kafka release is expected: it picks the model
    # profile (when the manifest records no model) and the broker a replay starts
    manifest = {**GOOD_MANIFEST, "target": {"implementation": "other", "version": "v23.2.1"}}
    if not with_model:
        del manifest["model"]
    line = _refused(tmp_path, command, "version.jsonl", _jsonl(manifest, [_invoke(0, 1.0)]))
    assert f"{tmp_path / 'traces' / 'version.jsonl'}:1: field 'manifest.target.version'" in line
    assert "'v23.2.1' is not an Apache Kafka release number" in line, line


def test_profile_for_an_unparsable_version_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"'v23\.2\.1' is not an Apache Kafka release number"):
        profile_for_version("v23.2.1")


def test_answer_recorded_after_a_later_request_loads(tmp_path: Path) -> None:
    # what the engine really records: c1's answer arrived at 3 ms but was read after c2's request
    # was sent at 4 ms (answers carry their arrival time, requests the time they were sent);
    # unknown and model targets carry placeholder versions
    second = {**_invoke(1, 4.0), "command": {**INVOKE["command"], "client": "c2"}}
    for version in ("unknown", "model", "4.1.0-SNAPSHOT"):
        manifest = {**GOOD_MANIFEST, "target": {"implementation": "x", "version": version}}
        path = tmp_path / f"{version}.jsonl"
        path.write_text(
            _jsonl(manifest, [_invoke(0, 1.0), second, _receive(0, 3.0), _receive(1, 5.0)])
        )
        assert len(traces.load(path).events) == 4


def test_a_launched_brokers_own_version_is_read_with_its_recorded_model(tmp_path: Path) -> None:
    """A trace recorded against a broker kgc launches (kfake here) carries that broker's own
    version; the recorded ``model`` picks the rules, so it is read. Without a model it is
    refused, naming the field."""
    target = {"implementation": "kfake", "version": "v0.0.0-20260918054303-01f206a7e32c"}
    good = tmp_path / "kfake.jsonl"
    good.write_text(_jsonl({**GOOD_MANIFEST, "target": target}, [_invoke(0, 1.0)]))
    out = _kgc("analyze", str(good))
    assert out.returncode == 0 and "PASS" in out.stdout, out.stdout + out.stderr
    bare = {k: v for k, v in GOOD_MANIFEST.items() if k != "model"}
    line = _refused(tmp_path, "analyze", "bare.jsonl", _jsonl({**bare, "target": target}, []))
    assert "field 'manifest.model': required for a trace recorded against kfake" in line, line


@pytest.mark.parametrize("command", ["analyze", "replay"])
def test_a_field_newer_than_its_request_version_is_refused(tmp_path: Path, command: str) -> None:
    # SubscribedTopicRegex is a ConsumerGroupHeartbeat v1 field: no client sends it at v0
    heartbeat = {
        "type": "ConsumerGroupHeartbeat",
        "client": "c1",
        "member_id": "c1-1",
        "member_epoch": 0,
        "subscribed_topic_regex": "kgc-.*",
        "version": 0,
    }
    line = _refused(
        tmp_path,
        command,
        "v0-regex.jsonl",
        _jsonl(GOOD_MANIFEST, [{**INVOKE, "command": heartbeat}]),
    )
    assert f"{tmp_path / 'traces' / 'v0-regex.jsonl'}:2: field " in line, line
    assert "ConsumerGroupHeartbeat.subscribed_topic_regex: a v1+ field in a v0 request" in line


def _not_judged(tmp_path: Path) -> Path:
    """A well-formed trace with a DescribeGroups v99, which the recorded model (kafka-4.x) does
    not take."""
    path = tmp_path / "v99.jsonl"
    v99 = {**INVOKE, "command": {**INVOKE["command"], "version": 99}}
    path.write_text(_jsonl(GOOD_MANIFEST, [v99]))
    return path


def test_a_request_the_model_does_not_judge_is_one_line_error_in_analyze(tmp_path: Path) -> None:
    path = _not_judged(tmp_path)
    out = _kgc("analyze", str(path))
    assert out.returncode == 2, out
    (line,) = out.stderr.strip().splitlines()
    assert f"{path}: a request its model does not judge: DescribeGroups v99" in line, line
    assert out.stdout == ""


@pytest.mark.broker
def test_a_request_the_model_does_not_judge_is_one_line_error_in_replay(
    tmp_path: Path, kgc_broker: Any
) -> None:
    path = _not_judged(tmp_path)
    out = _kgc("replay", str(path), "--bootstrap-server", kgc_broker.bootstrap_servers)
    assert out.returncode == 2, out
    (line,) = out.stderr.strip().splitlines()
    assert f"{path}: a request its model does not judge: DescribeGroups v99" in line, line
    assert "Traceback" not in out.stdout + out.stderr
