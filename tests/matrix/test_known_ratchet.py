"""The installed suite as an implementer's ratchet: ``pytest --pyargs kgc.testsuite
--kgc-bootstrap-server … --kgc-known DIR`` against franz-go's kfake, launched on loopback as a user
would run it beside their own CI (``kgc.testsuite.test_differential``).

* With kfake's own baselines (``traces/known/kfake``, less those of deviations that kill it, which
  its steers name: a replay of one would end the one broker the suite is given) it passes: the
  search stops at a known deviation, and every baseline still fails at its own event.
* With the baseline the search stops at taken out, the same run fails, naming a NEW deviation.
  (That run's folder holds only the clean baseline below: the first run replayed all the others.)
* A baseline that replays clean (here: kfake's DescribeGroups baseline cut before its
  DescribeGroups, so only the join and sync kfake answers as Kafka does are left) is reported
  FIXED, as a warning, and the run still passes.
* Without ``--kgc-known`` the replays are deselected, never skipped; a folder that is not one is a
  one-line usage error.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from kgc.conformance.brokers.implementations import STEERS, launched
from kgc.engine.traces import load, save
from kgc.model.history import Invoke

ROOT = Path(__file__).parents[2]
KFAKE = ROOT / "traces" / "known" / "kfake"


def _pytest(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "pytest", "--pyargs", "kgc.testsuite", "-p", "no:cacheprovider"]
    return subprocess.run(
        [*cmd, "-rA", "-q", *args], capture_output=True, text=True, timeout=900, cwd=cwd
    )


def _cut_before_describe(path: Path, into: Path) -> Path:
    trace = load(path)
    rid = next(
        e.request_id
        for e in trace.events
        if isinstance(e, Invoke) and e.command.type == "DescribeGroups"
    )
    first = next(
        i for i, e in enumerate(trace.events) if isinstance(e, Invoke) and e.request_id == rid
    )
    trace.events = trace.events[:first]
    trace.extras = trace.extras[:first]
    return save(trace, into / "describegroups-cut-before-describe.json")


def test_the_known_deviations_ratchet_on_kfake(tmp_path: Path) -> None:
    known = tmp_path / "known"
    # not the baselines of deviations that kill kfake (a steer's proof): the installed suite
    # replays every baseline on the one broker it is given, and such a replay ends it for the rest
    killers = {Path(s.proof).name for s in STEERS.get("kfake", ())}
    assert killers, "kfake's steers name the baselines that kill it"
    shutil.copytree(KFAKE, known, ignore=lambda _d, names: [n for n in names if n in killers])
    with launched("kfake") as kfake:
        server = ["--kgc-bootstrap-server", kfake.bootstrap_servers]
        traces = ["--kgc-traces", str(tmp_path / "traces")]

        passed = _pytest(*server, *traces, "--kgc-known", str(known), cwd=tmp_path)
        out = passed.stdout + passed.stderr
        assert passed.returncode == 0, out[-4000:]
        assert "stopped at a known deviation" in out
        stopped_at = out.split("stopped at a known deviation: ")[1].split()[0].rstrip(",")
        assert out.count("PASSED") == 1 + len(list(known.glob("*.json"))), out[-4000:]

        # the baseline the search stopped at taken out (the others too: each replay costs time,
        # and the run above replayed them all), one that replays clean put in
        fewer = tmp_path / "fewer"
        fewer.mkdir()
        assert (known / stopped_at).is_file()
        _cut_before_describe(KFAKE / "describegroups-client-host-with-port.json", fewer)
        failed = _pytest(*server, *traces, "--kgc-known", str(fewer), cwd=tmp_path)
        out = failed.stdout + failed.stderr
        assert failed.returncode == 1, out[-4000:]
        assert "a NEW deviation" in out
        assert "FIXED: describegroups-cut-before-describe.json replays clean" in out

        plain = _pytest(*server, *traces, "-k", "known_deviation", cwd=tmp_path)
        assert "deselected" in plain.stdout and "skipped" not in plain.stdout, plain.stdout

    bad = _pytest("--kgc-known", str(tmp_path / "nope"), cwd=tmp_path)
    assert bad.returncode != 0 and "--kgc-known" in bad.stderr and "Traceback" not in bad.stderr
