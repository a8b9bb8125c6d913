"""The embedded Apache Kafka: it starts, is ready when it says so, obeys kill/pause/resume/restart,
and leaves no JVM behind however its owner ends.

Each test observes the broker over the wire (ApiVersions, Metadata, DescribeQuorum), never through
the state EmbeddedKafka keeps about itself. The 3-node KRaft cluster is shared by this module's
tests; a test that disturbs a node restores it before returning.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kafka.protocol.consumer.group import JoinGroupRequest, JoinGroupResponse
from kafka.protocol.metadata import FindCoordinatorRequest, FindCoordinatorResponse
from kgc.conformance.artifacts import maven
from kgc.conformance.artifacts.maven import DEFAULT_KAFKA_VERSION, ZOOKEEPER_KAFKA_VERSION
from kgc.conformance.brokers import embedded as broker_mod
from kgc.conformance.brokers.embedded import EmbeddedKafka
from kgc.conformance.brokers.providers import ExternalKafka
from kgc.conformance.errors import BrokerStartError
from kgc.conformance.wire import probe

pytestmark = pytest.mark.broker


def answers(addr: tuple[str, int], timeout_s: float = 2.0) -> bool:
    try:
        probe.api_versions(*addr, timeout_s=timeout_s)
    except probe.ProbeError:
        return False
    return True


def listed_brokers(addr: tuple[str, int]) -> dict[int, int]:
    """node id -> port, as the node at ``addr`` lists them in Metadata."""
    return {b.node_id: b.port for b in probe.metadata(*addr, timeout_s=5).brokers}


def eventually(predicate, timeout_s: float, what: str) -> None:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"not within {timeout_s} s: {what}")
        time.sleep(0.1)


def pid_gone(pid: int) -> bool:
    """True once ``pid`` no longer exists (or is a zombie nobody reaped yet)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rindex(")") + 2] == "Z"


@pytest.fixture(scope="module")
def cluster3() -> Iterator[EmbeddedKafka]:
    with EmbeddedKafka(DEFAULT_KAFKA_VERSION, nodes=3) as k:
        yield k


# ------------------------------------------------------------------------------ 3-node KRaft


def test_three_node_kraft_every_node_lists_every_broker(cluster3: EmbeddedKafka) -> None:
    assert cluster3.node_ids == [1, 2, 3]
    expected = {nid: cluster3.broker_address(nid)[1] for nid in cluster3.node_ids}
    assert len(set(expected.values())) == 3
    assert cluster3.bootstrap_servers == ",".join(f"127.0.0.1:{p}" for p in expected.values())
    for nid in cluster3.node_ids:
        assert listed_brokers(cluster3.broker_address(nid)) == expected


def test_three_node_kraft_quorum_has_three_voters_and_a_leader(cluster3: EmbeddedKafka) -> None:
    quorum = probe.describe_quorum(*cluster3.broker_address(2))
    assert quorum.voters == (1, 2, 3)
    assert quorum.leader_id in (1, 2, 3)
    assert cluster3.active_controller_id() == quorum.leader_id
    assert cluster3.controller_node_ids == [1, 2, 3]


def test_describe_names_the_real_version_and_group_settings(cluster3: EmbeddedKafka) -> None:
    d = cluster3.describe()
    assert d["implementation"] == "apache-kafka"
    assert (d["version"], d["mode"], d["nodes"]) == (DEFAULT_KAFKA_VERSION, "kraft", 3)
    assert d["config"]["group.initial.rebalance.delay.ms"] == "0"
    assert d["config"]["offsets.topic.replication.factor"] == "3"
    # the running broker reports the same version it was started as
    log = cluster3.log_path(1).read_text(errors="replace")
    assert f"Kafka version: {DEFAULT_KAFKA_VERSION}" in log


def test_external_provider_learns_what_it_can_over_the_wire(cluster3: EmbeddedKafka) -> None:
    ext = ExternalKafka(cluster3.bootstrap_servers).start()
    d = ext.describe()
    assert (d["mode"], d["nodes"], d["version"]) == ("kraft", 3, "unknown")
    assert d["protocol_level"] == ".".join(DEFAULT_KAFKA_VERSION.split(".")[:2])
    assert d["finalized_features"]["group.version"] >= 1
    assert ext.can_inject_faults is False


def test_one_log_file_per_node(cluster3: EmbeddedKafka) -> None:
    logs = [cluster3.log_path(n) for n in cluster3.node_ids]
    assert len(set(logs)) == 3
    for n, log in zip(cluster3.node_ids, logs, strict=True):
        assert f"[KafkaRaftServer nodeId={n}] Kafka Server started" in log.read_text(
            errors="replace"
        )


@pytest.mark.faults
def test_paused_node_does_not_answer_until_resumed(cluster3: EmbeddedKafka) -> None:
    addr = cluster3.broker_address(2)
    cluster3.pause(2)
    try:
        assert cluster3.is_running(2) and cluster3.is_paused(2)
        assert not answers(addr, timeout_s=1.5)
        assert answers(cluster3.broker_address(1))  # the others still serve
    finally:
        cluster3.resume(2)
    assert answers(addr, timeout_s=5)
    assert not cluster3.is_paused(2)


@pytest.mark.faults
def test_killed_node_refuses_then_restart_from_a_thread_brings_it_back(
    cluster3: EmbeddedKafka,
) -> None:
    addr = cluster3.broker_address(3)
    old_pid = cluster3.pid(3)
    cluster3.kill(3)
    assert not cluster3.is_running(3)
    assert old_pid is not None and pid_gone(old_pid)
    with pytest.raises(probe.ProbeError, match="connection refused"):
        probe.api_versions(*addr, timeout_s=1)
    # The other two keep serving and, once the controller fences node 3, stop listing it.
    eventually(
        lambda: 3 not in listed_brokers(cluster3.broker_address(1)),
        15,
        "node 1 stops listing killed node 3",
    )
    # Restart from a worker thread that then ends: the new JVM must outlive that thread
    # (PDEATHSIG is tied to kgc's long-lived spawner thread, not to the caller's).
    errors: list[BaseException] = []

    def restart() -> None:
        try:
            cluster3.restart(3)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    t = threading.Thread(target=restart)
    t.start()
    t.join()
    assert not errors, errors
    time.sleep(1.0)
    assert cluster3.is_running(3) and cluster3.pid(3) != old_pid
    assert answers(addr)
    assert 3 in listed_brokers(addr)
    eventually(
        lambda: 3 in listed_brokers(cluster3.broker_address(1)),
        15,
        "node 1 lists restarted node 3 again",
    )


# ------------------------------------------------------------------------------ single node


def test_single_node_start_stop_leaves_nothing_behind() -> None:
    k = EmbeddedKafka(DEFAULT_KAFKA_VERSION, nodes=1)
    with k:
        addr = k.broker_address(1)
        assert answers(addr)
        assert listed_brokers(addr) == {1: addr[1]}
        assert probe.describe_quorum(*addr).voters == (1,)
        first_join_errors = _first_join_error_codes(addr, partitions=10)
        pids = k.pids()
        workdir = k.workdir
        assert len(pids) == 1 and workdir.is_dir()
    assert all(pid_gone(p) for p in pids)
    assert not workdir.exists()
    with pytest.raises(probe.ProbeError, match="connection refused"):
        probe.api_versions(*addr, timeout_s=1)
    # start() warmed up every __consumer_offsets partition: a brand-new group on any of them is
    # answered at once (MEMBER_ID_REQUIRED, KIP-394), not COORDINATOR_LOAD_IN_PROGRESS (14),
    # COORDINATOR_NOT_AVAILABLE (15) or NOT_COORDINATOR (16).
    assert first_join_errors == [79] * 10


def _first_join_error_codes(addr: tuple[str, int], partitions: int) -> list[int]:
    """FindCoordinator then one JoinGroup for a new group on each offsets partition, no retries."""
    groups: dict[int, str] = {}
    for i in range(1000):
        g = f"kgc-first-join-{os.getpid()}-{i}"
        groups.setdefault(probe.offsets_partition_for(g, partitions), g)
    assert sorted(groups) == list(range(partitions))
    codes = []
    with probe.connect(*addr, timeout_s=10) as sock:
        found = probe.round_trip(
            sock,
            FindCoordinatorRequest(key_type=0, coordinator_keys=list(groups.values())),
            FindCoordinatorResponse,
            4,
        )
        assert [c.error_code for c in found.coordinators] == [0] * partitions
        for p in range(partitions):
            join = JoinGroupRequest(
                group_id=groups[p],
                session_timeout_ms=10_000,
                rebalance_timeout_ms=10_000,
                member_id="",
                protocol_type="consumer",
                protocols=[JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=b"")],
            )
            codes.append(probe.round_trip(sock, join, JoinGroupResponse, 5).error_code)
    return codes


def test_failed_start_raises_with_the_log_tail() -> None:
    k = EmbeddedKafka(config={"offsets.topic.num.partitions": "banana"})
    with pytest.raises(BrokerStartError) as info:
        k.start()
    msg = str(info.value)
    assert "Invalid value banana for configuration offsets.topic.num.partitions" in msg
    assert len(msg.splitlines()) > 2  # the first line says what failed, then the log tail
    assert k.pids() == []


@pytest.mark.parametrize("user_port", [False, True])
def test_auto_ports_retry_when_a_chosen_port_is_taken(
    user_port: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process grabs the controller port kgc picked before the JVM binds it: start picks
    new ports and succeeds, also when the user chose the broker port (that one is kept)."""
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        taken = squatter.getsockname()[1]
        real_free_ports = broker_mod.free_ports
        requested = real_free_ports(1) if user_port else None
        calls = []

        def racy_free_ports(n: int) -> list[int]:
            # _layout asks for the broker ports (unless the user gave them), then the controller
            # ports; the first controller-port request gets the squatted port
            calls.append(n)
            ports = real_free_ports(n)
            first_controller_call = 1 if user_port else 2
            return [taken, *ports[1:]] if len(calls) == first_controller_call else ports

        monkeypatch.setattr(broker_mod, "free_ports", racy_free_ports)
        with EmbeddedKafka(nodes=1, ports=requested) as k:
            addr = k.broker_address(1)
            assert answers(addr)
            if requested:
                assert addr[1] == requested[0]
        assert len(calls) == (2 if user_port else 4)  # a second layout was made after the clash


def test_class_data_sharing_archive_is_trained_once_then_mapped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first broker of a version writes a class archive when stopped; the next JVM maps it."""
    real_libs = maven.resolve_kafka(DEFAULT_KAFKA_VERSION)
    cache = tmp_path / "cache"
    version_dir = cache / "kafka" / DEFAULT_KAFKA_VERSION
    version_dir.mkdir(parents=True)
    (version_dir / "libs").symlink_to(real_libs)  # same jars, fresh place for the archive
    (version_dir / ".kgc-complete").write_text(DEFAULT_KAFKA_VERSION)
    monkeypatch.setenv("KGC_CACHE_DIR", str(cache))
    monkeypatch.delenv("KGC_CDS", raising=False)
    assert maven.resolve_kafka(DEFAULT_KAFKA_VERSION) == version_dir / "libs"

    with EmbeddedKafka(nodes=1) as k:
        cmdline = Path(f"/proc/{k.pid(1)}/cmdline").read_bytes().split(b"\0")
        assert any(a.startswith(b"-XX:ArchiveClassesAtExit=") for a in cmdline)
    archives = list((version_dir / "cds").glob("*.jsa"))
    assert len(archives) == 1 and ".tmp-" not in archives[0].name
    with EmbeddedKafka(nodes=1) as k:
        maps = Path(f"/proc/{k.pid(1)}/maps").read_text()
        assert str(archives[0]) in maps  # the JVM really mapped the archive


# ------------------------------------------------------------------------------ ZooKeeper mode


@pytest.mark.faults
def test_zookeeper_mode_three_brokers_and_restart_after_kill() -> None:
    with EmbeddedKafka(ZOOKEEPER_KAFKA_VERSION, nodes=3, mode="zookeeper") as k:
        assert k.zookeeper_address is not None
        expected = {n: k.broker_address(n)[1] for n in k.node_ids}
        for n in k.node_ids:
            assert listed_brokers(k.broker_address(n)) == expected
        versions = probe.api_versions(*k.broker_address(1))
        assert probe.DESCRIBE_QUORUM_KEY not in versions.api_keys  # really not KRaft
        assert ExternalKafka(k.bootstrap_servers).start().describe()["mode"] == "zookeeper"
        assert k.active_controller_id() in (1, 2, 3)
        assert f"Kafka version: {ZOOKEEPER_KAFKA_VERSION}" in k.log_path(1).read_text(
            errors="replace"
        )
        # A killed broker's ZooKeeper registration lingers until its session expires; restart
        # must get through that.
        k.kill(3)
        k.restart(3)
        assert answers(k.broker_address(3))
        eventually(
            lambda: listed_brokers(k.broker_address(1)) == expected, 20, "node 1 lists node 3 again"
        )


# ------------------------------------------------------------------------------ no JVM left behind

CHILD = textwrap.dedent(
    """
    import sys, threading, time, json
    from kgc.conformance.brokers.embedded import EmbeddedKafka
    k = EmbeddedKafka(nodes=1)
    def go():
        k.start()
    if sys.argv[1] == "thread":  # start from a worker thread that then ends
        t = threading.Thread(target=go); t.start(); t.join()
    else:
        go()
    print(json.dumps({"pids": k.pids(), "workdir": str(k.workdir)}), flush=True)
    time.sleep(600)
    """
)


def _child(how: str) -> tuple[subprocess.Popen[str], list[int], Path]:
    proc = subprocess.Popen([sys.executable, "-c", CHILD, how], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line:
        proc.kill()
        pytest.fail(f"child did not start a broker (exit {proc.wait()})")
    info = json.loads(line)
    return proc, info["pids"], Path(info["workdir"])


def test_sigkill_of_the_owner_kills_its_jvms() -> None:
    proc, pids, _ = _child("thread")
    try:
        time.sleep(1.0)  # the thread that called start() has ended; the JVM must still run
        assert pids and not any(pid_gone(p) for p in pids)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        eventually(lambda: all(pid_gone(p) for p in pids), 10, f"JVMs {pids} die with owner")
    finally:
        for p in pids:  # never leave a JVM behind, even when the assertion failed
            if not pid_gone(p):
                os.kill(p, signal.SIGKILL)


def test_sigterm_of_the_owner_stops_its_jvms_and_cleans_up() -> None:
    proc, pids, workdir = _child("main")
    try:
        os.kill(proc.pid, signal.SIGTERM)
        assert proc.wait(30) == -signal.SIGTERM  # the handler chained to the default action
        eventually(lambda: all(pid_gone(p) for p in pids), 10, f"JVMs {pids} stopped")
        assert not workdir.exists()
    finally:
        for p in pids:
            if not pid_gone(p):
                os.kill(p, signal.SIGKILL)


# ------------------------------------------------------------------------------ detached CLI


def test_cli_start_returns_with_the_broker_running_then_stop_removes_it(tmp_path: Path) -> None:
    env = dict(os.environ, KGC_STATE_DIR=str(tmp_path / "state"))
    name = f"t{os.getpid()}"
    cli = [sys.executable, "-m", "kgc.cli", "broker"]
    started = subprocess.run(
        [*cli, "start", "--name", name], capture_output=True, text=True, env=env, timeout=180
    )
    try:
        assert started.returncode == 0, started.stderr
        lines = started.stdout.splitlines()
        assert len(lines) == 1
        host, port = lines[0].rsplit(":", 1)
        assert answers((host, int(port)))  # still running after the CLI process ended
        status = subprocess.run(
            [*cli, "status", "--json"], capture_output=True, text=True, env=env, timeout=60
        )
        mine = [b for b in json.loads(status.stdout)["brokers"] if b["name"] == name]
        assert len(mine) == 1 and mine[0]["bootstrap_servers"] == lines[0]
        pids = mine[0]["alive_pids"]
        assert pids and not mine[0]["dead_pids"]
        # seen from another state dir, the JVMs are not strays: their state file still exists
        elsewhere = dict(env, KGC_STATE_DIR=str(tmp_path / "other"))
        strays = subprocess.run(
            [*cli, "status", "--strays"], capture_output=True, text=True, env=elsewhere
        )
        assert not any(f"pid {p} " in strays.stdout for p in pids), strays.stdout
    finally:
        stopped = subprocess.run(
            [*cli, "stop", "--name", name], capture_output=True, text=True, env=env, timeout=60
        )
    assert stopped.returncode == 0, stopped.stderr
    assert all(pid_gone(p) for p in pids)
    assert not answers((host, int(port)), timeout_s=1)
    assert not (tmp_path / "state" / f"{name}.json").exists()
    assert not (tmp_path / "state" / name).exists()
