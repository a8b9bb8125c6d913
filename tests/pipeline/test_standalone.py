"""The report job runs unchanged under ``spark-submit --master spark://…`` on a real standalone
cluster: one master and two workers started here with Spark's launcher (``spark-class``; the PyPI
package carries ``bin/`` but not necessarily ``sbin/``), on free ports, stopped afterwards."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data"

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def _state(webui: int) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{webui}/json/", timeout=3) as r:
        return json.load(r)


def _spawn(cmd: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """Start a daemon that dies with this process even if it is SIGKILLed: the embedded broker's
    PDEATHSIG launcher and spawner thread (``conformance/brokers/embedded.py``), then our own
    cleanup."""
    from kgc.conformance.brokers.embedded import _spawner, _with_pdeathsig

    def spawn() -> subprocess.Popen[bytes]:
        with open(log, "wb") as out:
            return subprocess.Popen(
                _with_pdeathsig(cmd),
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    return _spawner.run(spawn)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[dict[str, Any]]:
    from kgc.conformance.brokers.embedded import free_ports

    home = _spark_home()
    work = tmp_path_factory.mktemp("standalone")
    port, webui, w1, w2 = free_ports(4)
    env = dict(
        os.environ,
        SPARK_HOME=str(home),
        SPARK_DAEMON_MEMORY="256m",
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_LOG_DIR=str(work / "logs"),
        PYSPARK_PYTHON=sys.executable,
    )
    launcher = str(home / "bin" / "spark-class")
    commands = [
        [
            launcher,
            "org.apache.spark.deploy.master.Master",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--webui-port",
            str(webui),
        ],
        *[
            [
                launcher,
                "org.apache.spark.deploy.worker.Worker",
                "--host",
                "127.0.0.1",
                "--cores",
                "1",
                "--memory",
                "1g",
                "--webui-port",
                str(ui),
                "--work-dir",
                str(work / f"worker-{ui}"),
                f"spark://127.0.0.1:{port}",
            ]
            for ui in (w1, w2)
        ],
    ]
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for i, cmd in enumerate(commands):
            procs.append(_spawn(cmd, env, work / f"daemon-{i}.log"))
        deadline = time.monotonic() + 180
        while True:
            assert all(p.poll() is None for p in procs), "a Spark daemon exited; see " + str(work)
            try:
                if _state(webui).get("aliveworkers") == 2:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "the standalone cluster did not come up in 180 s"
            time.sleep(1)
        yield {"url": f"spark://127.0.0.1:{port}", "webui": webui, "env": env, "work": work}
    finally:
        for p in procs:  # only the daemons started here, by their own process group
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(10)


def test_report_job_on_a_two_worker_cluster(cluster, tmp_path):
    out = tmp_path / "report"
    cmd = [
        str(_spark_home() / "bin" / "spark-submit"),
        "--master",
        cluster["url"],
        "--driver-memory",
        "1g",
        "--executor-memory",
        "512m",
        "--conf",
        "spark.driver.host=127.0.0.1",
        "--conf",
        "spark.driver.bindAddress=127.0.0.1",
        "--conf",
        "spark.ui.enabled=false",
        "--conf",
        "spark.ui.showConsoleProgress=false",
        str(ROOT / "pipeline" / "report.py"),
        str(DATA),
        "--out",
        str(out),
    ]
    from kgc.conformance.brokers.embedded import _with_pdeathsig  # the driver dies with us too

    proc = subprocess.run(
        _with_pdeathsig(cmd), env=cluster["env"], capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    data = json.loads((out / "report.json").read_text())
    s = data["summary"]
    assert (s["traces"], s["pass"], s["divergence"], s["incomplete"], s["problems"]) == (
        7,
        4,
        2,
        1,
        3,
    )
    assert s["recheck_ran"] is True
    # it really ran on the cluster: the master saw the application finish with both workers' cores
    apps = [a for a in _state(cluster["webui"])["completedapps"] if a["name"] == "kgc-report"]
    assert apps and apps[-1]["state"] == "FINISHED" and apps[-1]["cores"] == 2
