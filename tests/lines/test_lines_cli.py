"""``kgc lines``: every release line with its newest patch, its mode and its rules or why it cannot
run here; a line that cannot run is refused in one line before anything starts."""

from __future__ import annotations

import json
import subprocess
import sys


def kgc(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kgc.cli", *args], capture_output=True, text=True, timeout=120
    )


def test_every_line_has_rules_or_a_measured_reason() -> None:
    run = kgc("lines", "--json")
    assert run.returncode == 0, run.stderr
    rows = {r["line"]: r for r in json.loads(run.stdout)}
    assert rows["1.0"]["rules"] == "kafka-1.0" and rows["1.0"]["modes"] == ["zookeeper"]
    assert rows["3.9"]["modes"] == ["kraft", "zookeeper"] and rows["4.4"]["modes"] == ["kraft"]
    assert "ZOOKEEPER-3779" in rows["2.3"]["cannot_run"]
    assert "javax/xml/bind" in rows["0.11"]["cannot_run"]
    assert all(("rules" in r) != ("cannot_run" in r) for r in rows.values())


def test_a_sweep_over_a_line_that_cannot_run_is_refused_in_one_line() -> None:
    run = kgc("lines", "--sweep", "--only", "2.2")
    assert run.returncode == 2 and run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "2.2.x cannot run here" in lines[0], run.stderr
    run = kgc("lines", "--sweep", "--only", "7.1")
    assert run.returncode == 2 and "unknown release line(s) 7.1" in run.stderr
