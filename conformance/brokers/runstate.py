"""Detached embedded brokers: find, inspect and stop the JVMs ``kgc broker start`` left running.

A detached :class:`~kgc.conformance.brokers.embedded.EmbeddedKafka` writes ``<state
dir>/<name>.json`` (pids, ports, version, workdir). Every JVM kgc starts carries
``-Dkgc.instance=<name>`` and ``-Dkgc.owner=<pid>`` (0 when detached) on its command line, so a pid
is only signalled when ``/proc/<pid>/cmdline`` still names that instance (no harm from pid reuse),
and JVMs whose state file or owner is gone can still be found.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgc.conformance.brokers.embedded import iter_kgc_jvms, state_dir


@dataclass(frozen=True, slots=True, kw_only=True)
class DetachedBroker:
    name: str
    state_file: Path
    state: dict[str, Any]
    alive_pids: tuple[int, ...]
    dead_pids: tuple[int, ...]

    @property
    def bootstrap_servers(self) -> str:
        return str(self.state.get("bootstrap_servers", ""))


def pid_is_instance(pid: int, name: str) -> bool:
    """True if ``pid`` runs and its command line carries ``-Dkgc.instance=<name>``."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return f"-Dkgc.instance={name}".encode() in argv


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def load(name: str) -> DetachedBroker | None:
    path = state_dir() / f"{name}.json"
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    pids = [p["pid"] for p in state.get("processes", []) if p.get("pid")]
    alive = tuple(p for p in pids if pid_is_instance(p, name))
    dead = tuple(p for p in pids if p not in alive)
    return DetachedBroker(name=name, state_file=path, state=state, alive_pids=alive, dead_pids=dead)


def secured_by_kgc(bootstrap_servers: str) -> DetachedBroker | None:
    """The running secured broker ``kgc broker start --security`` started at
    ``bootstrap_servers``, if any: kgc started it, so it holds its super user's credentials
    (``client_properties`` in its state file)."""
    wanted = {s.strip() for s in bootstrap_servers.split(",") if s.strip()}
    for broker in list_detached():
        served = {s.strip() for s in broker.bootstrap_servers.split(",")}
        if broker.alive_pids and wanted & served and broker.state.get("client_properties"):
            return broker
    return None


def list_detached() -> list[DetachedBroker]:
    d = state_dir()
    if not d.is_dir():
        return []
    found = (load(p.stem) for p in sorted(d.glob("*.json")))
    return [b for b in found if b is not None]


def strays() -> list[dict[str, Any]]:
    """kgc-started JVMs the state files of this state dir do not account for, each with
    ``owner_alive``: its owning Python process runs, or (detached) the state file named on its
    command line (possibly in another ``KGC_STATE_DIR``) still exists, or the ``kgc broker start``
    that is starting it still runs (its state file is written only once it is ready)."""
    known = {pid for b in list_detached() for pid in b.alive_pids}
    out = []
    for jvm in iter_kgc_jvms():
        if jvm["pid"] in known:
            continue
        state = jvm.get("state_file")
        jvm["owner_alive"] = (
            (jvm["owner"] > 0 and pid_alive(jvm["owner"]))
            or bool(state and Path(state).is_file())
            or (jvm.get("starter", 0) > 0 and pid_alive(jvm["starter"]))  # still starting
        )
        out.append(jvm)
    return out


def terminate(pids: list[int], name_of: dict[int, str], grace_s: float = 10.0) -> list[int]:
    """SIGTERM (after SIGCONT) each pid still carrying its instance marker, SIGKILL after
    ``grace_s``; returns the pids that were signalled."""
    targets = [p for p in pids if pid_is_instance(p, name_of[p])]
    for pid in targets:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)
            os.kill(pid, signal.SIGTERM)
    end = time.monotonic() + grace_s
    while time.monotonic() < end and any(pid_is_instance(p, name_of[p]) for p in targets):
        time.sleep(0.1)
    for pid in targets:
        if pid_is_instance(pid, name_of[pid]):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    end = time.monotonic() + 5
    while time.monotonic() < end and any(pid_is_instance(p, name_of[p]) for p in targets):
        time.sleep(0.05)
    return targets


def stop_detached(broker: DetachedBroker, grace_s: float = 10.0) -> list[int]:
    """Stop a detached broker's JVMs, then remove its state file and (kgc-owned) workdir."""
    pids = list(broker.alive_pids)
    stopped = terminate(pids, dict.fromkeys(pids, broker.name), grace_s)
    workdir = broker.state.get("workdir")
    if workdir and Path(workdir).resolve().parent == state_dir().resolve():
        shutil.rmtree(workdir, ignore_errors=True)
    with contextlib.suppress(FileNotFoundError):
        broker.state_file.unlink()
    return stopped
