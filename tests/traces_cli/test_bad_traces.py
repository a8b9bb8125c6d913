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

import pytest

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
                "events": [
                    {**INVOKE, "command": {"type": "ConsumerGroupHeartbeat", "client": "c1"}}
                ],
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
