"""Clusters and a nemesis for the fault scenarios; every test leaves the cluster whole and running.

* ``kraft3`` (session scope, started when first asked): three combined broker+controller nodes of
  Kafka ``KGC_FAULTS_KRAFT_VERSION`` (default 4.3.1), with short broker sessions
  (``broker.session.timeout.ms=3000``, heartbeat 500 ms) so fencing shows within seconds.
* ``zk3``: three brokers of Kafka ``KGC_FAULTS_ZK_VERSION`` (default 3.9.2) and one ZooKeeper, with
  ``zookeeper.session.timeout.ms=4000`` so a paused controller loses its session quickly, and no
  preferred-leader elections of their own.
* ``kraft_nemesis`` / ``zk_nemesis``: a :class:`~kgc.conformance.faults.nemesis.Nemesis` on that
cluster.
  Its finalizer runs even when the test fails: it resumes every paused node, restarts every killed
  one, and waits until the cluster is whole again (all brokers listed and unfenced), so a failing
  test neither leaves a stopped JVM behind nor hands a broken cluster to the next test. The
  clusters themselves are stopped (SIGKILL of every JVM) when the session ends.

All of it is started only when a test asks; ``--kgc-bootstrap-server`` runs skip these tests
(kgc can only fault a cluster it started).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

KRAFT_VERSION = os.environ.get("KGC_FAULTS_KRAFT_VERSION", "4.3.1")
NODES = int(os.environ.get("KGC_FAULTS_NODES", "3"))  # the cleanup test runs itself on one node
ZK_VERSION = os.environ.get("KGC_FAULTS_ZK_VERSION", "3.9.2")

KRAFT_CONFIG = {
    "broker.session.timeout.ms": 3000,
    "broker.heartbeat.interval.ms": 500,
    # no preferred-leader elections in the middle of a run: a group's coordinator moves only when
    # the nemesis makes it (ClusterGroupModel counts on that: test_fault_suite.py,
    # test_coordinator_failover.py)
    "auto.leader.rebalance.enable": "false",
}
ZK_CONFIG = {
    "zookeeper.session.timeout.ms": 4000,
    "auto.leader.rebalance.enable": "false",  # as on KRaft, for test_coordinator_failover.py
}


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _start(version: str, mode: str, config: dict[str, Any]) -> Any:
    from kgc.conformance.brokers.embedded import EmbeddedKafka

    cluster = EmbeddedKafka(version, nodes=NODES, mode=mode, config=config)
    t0 = time.monotonic()
    cluster.start(timeout_s=240)
    log(f"{mode} {version} cluster ready in {time.monotonic() - t0:.1f} s")
    return cluster


@pytest.fixture(scope="session")
def kraft_config() -> dict[str, Any]:
    return dict(KRAFT_CONFIG)


@pytest.fixture(scope="session")
def say() -> Any:
    """Progress lines on stderr (shown with ``-s`` or on failure)."""
    return log


@pytest.fixture(scope="session")
def kraft3() -> Iterator[Any]:
    cluster = _start(KRAFT_VERSION, "kraft", KRAFT_CONFIG)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def zk3() -> Iterator[Any]:
    cluster = _start(ZK_VERSION, "zookeeper", ZK_CONFIG)
    try:
        yield cluster
    finally:
        cluster.stop()


def wait_whole(cluster: Any, timeout_s: float = 90.0) -> None:
    """Every node answers Metadata listing all brokers, and (KRaft) none is fenced."""
    from kgc.conformance.faults.controlplane import fenced_brokers
    from kgc.conformance.wire import probe
    from kgc.conformance.wire.client import Connection

    want = set(cluster.node_ids)
    end = time.monotonic() + timeout_s
    last = ""
    while time.monotonic() < end:
        try:
            ok = True
            for node in cluster.node_ids:
                host, port = cluster.broker_address(node)
                listed = {b.node_id for b in probe.metadata(host, port, 2.0).brokers}
                if listed != want:
                    ok, last = False, f"node {node} lists {sorted(listed)}"
                    break
                if cluster.mode == "kraft":
                    with Connection(host, port, "kgc-heal", timeout_s=2.0) as conn:
                        fenced = fenced_brokers(conn)
                    if any(fenced.values()):
                        ok, last = False, f"node {node} sees fenced {fenced}"
                        break
            if ok:
                return
        except Exception as exc:  # noqa: BLE001 - keep waiting, report the last reason
            last = repr(exc)
        time.sleep(0.5)
    raise AssertionError(f"cluster not whole after {timeout_s} s: {last}")


def _nemesis(cluster: Any) -> Iterator[Any]:
    from kgc.conformance.faults.nemesis import Nemesis

    nemesis = Nemesis(cluster)
    try:
        yield nemesis
    finally:
        nemesis.heal()
        wait_whole(cluster)


@pytest.fixture
def kraft_nemesis(kraft3: Any) -> Iterator[Any]:
    yield from _nemesis(kraft3)


@pytest.fixture
def zk_nemesis(zk3: Any) -> Iterator[Any]:
    yield from _nemesis(zk3)
