"""``kgc broker status --strays`` finds kgc-marked processes nobody will stop, and
``kgc broker stop --all`` ends them — without a JVM: a stand-in process carries the same
``-Dkgc.instance`` / ``-Dkgc.owner`` markers on its command line."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest


def kgc(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kgc.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


@pytest.fixture
def stand_in(tmp_path: Path) -> subprocess.Popen[bytes]:
    """A process whose command line looks like an orphaned kgc JVM (its owner is dead)."""
    instance = f"kgc-test-stray-{os.getpid()}"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time; time.sleep(120)",
            f"-Dkgc.instance={instance}",
            f"-Dkgc.owner={dead_pid()}",
            "kafka.Kafka",
        ]
    )
    time.sleep(0.2)
    yield proc
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def test_strays_lists_an_orphan_and_stop_all_ends_it(
    stand_in: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    env = dict(os.environ, KGC_STATE_DIR=str(tmp_path / "state"))
    found = kgc("broker", "status", "--strays", env=env)
    assert found.returncode == 1, found
    assert f"orphaned JVM pid {stand_in.pid} " in found.stdout

    stopped = kgc("broker", "stop", "--all", env=env)
    assert stopped.returncode == 0, stopped.stderr
    assert stand_in.wait(15) is not None  # SIGTERM reached it

    after = kgc("broker", "status", "--strays", env=env)
    assert f"pid {stand_in.pid} " not in after.stdout


def test_a_live_owner_is_not_a_stray(tmp_path: Path) -> None:
    env = dict(os.environ, KGC_STATE_DIR=str(tmp_path / "state"))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time; time.sleep(120)",
            f"-Dkgc.instance=kgc-test-owned-{os.getpid()}",
            f"-Dkgc.owner={os.getpid()}",  # this test process: alive
        ]
    )
    try:
        time.sleep(0.2)
        found = kgc("broker", "status", "--strays", env=env)
        assert f"pid {proc.pid} " not in found.stdout
        listed = kgc("broker", "status", env=env)
        assert f"attached JVM pid {proc.pid} " in listed.stdout
    finally:
        proc.kill()
        proc.wait()


def test_a_detached_broker_still_starting_is_not_a_stray(tmp_path: Path) -> None:
    """A detached broker has no state file until it is ready; while ``kgc broker start`` (here
    this test process) is still starting it, ``stop --all`` from elsewhere must leave it alone."""
    env = dict(os.environ, KGC_STATE_DIR=str(tmp_path / "state"))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time; time.sleep(120)",
            f"-Dkgc.instance=kgc-test-starting-{os.getpid()}",
            "-Dkgc.owner=0",
            f"-Dkgc.state={tmp_path / 'state' / 'not-yet-written.json'}",
            f"-Dkgc.starter={os.getpid()}",
            "kafka.Kafka",
        ]
    )
    try:
        time.sleep(0.2)
        found = kgc("broker", "status", "--strays", env=env)
        assert f"pid {proc.pid} " not in found.stdout
        stopped = kgc("broker", "stop", "--all", env=env)
        assert stopped.returncode == 0, stopped.stderr
        assert proc.poll() is None, "stop --all ended a broker that was still starting"
    finally:
        proc.kill()
        proc.wait()
