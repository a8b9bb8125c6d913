"""Genuine Apache Kafka, started on demand from Maven Central jars, with per-node fault control.

``EmbeddedKafka`` runs ``kafka.Kafka`` (Kafka's ``core/src/main/scala/kafka/Kafka.scala``) in one
JVM per node on free 127.0.0.1 ports:

* KRaft (default): every node is a combined ``broker,controller``; all share one static
  ``controller.quorum.voters`` list and one cluster id, and each log dir is formatted first with
  ``kafka.tools.StorageTool format -t <cluster-id> -c <props>``
  (``core/src/main/scala/kafka/tools/StorageTool.scala``; static voters need no ``--standalone``).
* ZooKeeper (3.x only; removed in 4.0 by KIP-833): one ``QuorumPeerMain`` from the same classpath
  plus N brokers with ``zookeeper.connect``.

Ready means: every node answers ApiVersions, every node's Metadata lists all brokers, (KRaft)
DescribeQuorum names a leader, and (unless ``start(warm_up=False)``) every ``__consumer_offsets``
partition has a group coordinator that has loaded it. Defaults are lowered for fast group tests
(``group.initial.rebalance.delay.ms=0``, ``group.min.session.timeout.ms=500``, few offsets
partitions, replication factors = node count); any can be overridden through ``config``.

No JVM outlives its owner: ``stop()`` on exit of the ``with`` block, an ``atexit`` hook,
SIGTERM/SIGINT/SIGHUP handlers that chain to the previous ones, and
``prctl(PR_SET_PDEATHSIG, SIGKILL)`` in every attached JVM so that even a SIGKILL of the Python
process takes the JVMs with it. PDEATHSIG fires when the *thread* that forked exits, so all
attached JVMs are forked by one long-lived daemon thread (``_Spawner``), whichever thread calls
``start``/``restart``. ``detached=True`` (used by
``kgc broker start``) skips PDEATHSIG and records the pids in a state file instead.
A class-data-sharing archive (:class:`ClassDataSharing`) roughly halves each JVM's start-up CPU.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import hashlib
import itertools
import json
import os
import queue
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgc.conformance.artifacts.maven import (
    DEFAULT_KAFKA_VERSION,
    check_version,
    find_java,
    resolve_kafka,
)
from kgc.conformance.artifacts.releases import release_line
from kgc.conformance.brokers import secure
from kgc.conformance.errors import BrokerConfigError, BrokerStartError, PortInUse
from kgc.conformance.wire import probe
from kgc.conformance.wire.security import PLAINTEXT, ClientSecurity, SecurityError

HOST = "127.0.0.1"
IMPLEMENTATION = "apache-kafka"
LOG_TAIL_LINES = 30
# starts of a cluster after a port clash or a lost ZooKeeper session, and restarts of a node
# after a lost session, at most
_START_ATTEMPTS = 3

# Keys kgc derives from node layout; overriding them would break the harness.
RESERVED_KEYS = frozenset(
    {
        "process.roles",
        "node.id",
        "broker.id",
        "controller.quorum.voters",
        "controller.quorum.bootstrap.servers",
        "listeners",
        "advertised.listeners",
        "controller.listener.names",
        "inter.broker.listener.name",
        "listener.security.protocol.map",
        "log.dirs",
        "log.dir",
        "zookeeper.connect",
    }
)


def state_dir() -> Path:
    """Where detached brokers record themselves: ``$KGC_STATE_DIR`` or ``~/.cache/kgc/run``."""
    env = os.environ.get("KGC_STATE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "kgc" / "run"


def _line_at_least(version: str, line: tuple[int, int]) -> bool:
    """Whether Apache Kafka ``version`` (``X.Y…``) is of release line ``line`` or a later one."""
    parts = version.split(".")
    return tuple(int(p) for p in parts[:2] if p.isdigit()) >= line


def default_config(version: str, mode: str, nodes: int, offsets_partitions: int) -> dict[str, str]:
    """Test-friendly broker settings kgc applies unless ``config`` overrides them."""
    cfg = {
        "group.initial.rebalance.delay.ms": "0",
        "group.min.session.timeout.ms": "500",
        "offsets.topic.num.partitions": str(offsets_partitions),
        "offsets.topic.replication.factor": str(nodes),
        "transaction.state.log.replication.factor": str(nodes),
        "transaction.state.log.min.isr": "1",
        "min.insync.replicas": "1",
        "default.replication.factor": "1",
        "num.partitions": "1",
        "auto.create.topics.enable": "true",
        # below the classic search's largest group (``engine/coverage.py`` LARGEST_GROUP), so
        # GROUP_MAX_SIZE_REACHED is reached; no other test runs a larger classic group
        "group.max.size": "3",
        # the periodic cleanup that deletes Empty groups never runs inside a session, so the
        # model allows no group to vanish (``engine/registry.py`` cleanup_may_run)
        "offsets.retention.check.interval.ms": str(24 * 3600 * 1000),
    }
    if int(version.split(".")[0]) >= 4:
        cfg["share.coordinator.state.topic.replication.factor"] = str(nodes)
        cfg["share.coordinator.state.topic.min.isr"] = "1"
        # KIP-848 consumer groups: sessions short enough to expire inside a run, and the target
        # assignment computed in the heartbeat that needs it (4.3 may otherwise batch it for
        # group.consumer.assignment.interval.ms, 1 s, or compute it on another thread)
        cfg["group.consumer.min.session.timeout.ms"] = "500"
        cfg["group.consumer.session.timeout.ms"] = "2000"
        cfg["group.consumer.min.heartbeat.interval.ms"] = "100"
        cfg["group.consumer.heartbeat.interval.ms"] = "500"
        cfg["group.consumer.assignment.interval.ms"] = "0"
        cfg["group.consumer.assignor.offload.enable"] = "false"
        # below the consumer search's largest group (``MAX_CLIENTS``), so GROUP_MAX_SIZE_REACHED
        # is reached; the real-client tests run three consumers at most
        cfg["group.consumer.max.size"] = "3"
        # KIP-932 share groups, as for consumer groups (docs/share-groups.md §1): Apache Kafka
        # defines and checks these from 4.0 (``GroupCoordinatorConfig``: each at least 1, the
        # size 1-1000, heartbeat < session, min <= value <= max; 4.1-4.2's ``ShareGroupConfig``
        # also wants group.share.max.share.sessions, 2000, >= the size)
        cfg["group.share.min.session.timeout.ms"] = "500"
        cfg["group.share.session.timeout.ms"] = "2000"
        cfg["group.share.min.heartbeat.interval.ms"] = "100"
        cfg["group.share.heartbeat.interval.ms"] = "500"
        cfg["group.share.max.size"] = "3"
        if _line_at_least(version, (4, 3)):
            # from 4.3 a share group's target assignment waits this long after the last one
            # (default 1000, 0..15000: ``GroupCoordinatorConfig`` l.440-442, l.638-643); 0:
            # computed in the heartbeat that needs it. 4.0-4.2 have no such setting
            cfg["group.share.assignment.interval.ms"] = "0"
    # How long a killed broker stays registered: until then a restarted one is refused
    # (KRaft: DUPLICATE_BROKER_REGISTRATION; ZooKeeper: its ephemeral /brokers/ids node exists).
    if mode == "zookeeper":
        cfg["zookeeper.session.timeout.ms"] = "6000"
    else:
        cfg["broker.session.timeout.ms"] = "6000"
        cfg["broker.heartbeat.interval.ms"] = "1000"
    return cfg


# --------------------------------------------------------------------------------------------------
# Process spawning: PDEATHSIG from one long-lived thread


# A JVM must die with its owner even when the owner is SIGKILLed. ``prctl(PR_SET_PDEATHSIG,
# SIGKILL)`` does that, and survives ``execve``. Rather than calling it in ``preexec_fn`` (which
# CPython documents as unsafe once threads exist: the forked child may deadlock on a lock another
# thread held), a tiny Python launcher sets it, checks the parent is still the one that spawned it
# (closing the fork/prctl race), and ``exec``s the JVM: same pid, same command line.
_PDEATHSIG_LAUNCHER = (
    "import ctypes, os, sys\n"
    "ctypes.CDLL(None, use_errno=True).prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL\n"
    "if os.getppid() != int(sys.argv[1]):\n"
    "    os._exit(70)\n"
    "os.execv(sys.argv[2], sys.argv[2:])\n"
)


def _with_pdeathsig(cmd: list[str]) -> list[str]:
    return [sys.executable, "-I", "-S", "-c", _PDEATHSIG_LAUNCHER, str(os.getpid()), *cmd]


class _Spawner:
    """One daemon thread that forks every attached JVM, so PDEATHSIG is tied to process death."""

    def __init__(self) -> None:
        self._jobs: queue.Queue[tuple[Callable[[], Any], Future[Any]]] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _loop(self) -> None:
        while True:
            fn, fut = self._jobs.get()
            try:
                fut.set_result(fn())
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                fut.set_exception(exc)

    def run(self, fn: Callable[[], Any]) -> Any:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="kgc-spawner", daemon=True)
                self._thread.start()
        fut: Future[Any] = Future()
        self._jobs.put((fn, fut))
        return fut.result()


_spawner = _Spawner()


def _popen(cmd: list[str], *, log: Path, attached: bool, cwd: Path) -> subprocess.Popen[bytes]:
    argv = _with_pdeathsig(cmd) if attached else cmd

    def spawn() -> subprocess.Popen[bytes]:
        with open(log, "ab") as out:
            return subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=cwd,
                start_new_session=True,  # our signal handlers, not the terminal, stop the JVMs
            )

    return _spawner.run(spawn) if attached else spawn()  # type: ignore[no-any-return]


# --------------------------------------------------------------------------------------------------
# Cleanup of attached instances on exit and on signals

_live: set[EmbeddedKafka] = set()
_live_lock = threading.RLock()  # re-entered by signal handlers running on the main thread
_hooks_installed = False


def _stop_all_live() -> None:
    with _live_lock:
        instances = list(_live)
    for inst in instances:
        with contextlib.suppress(Exception):
            inst._stop(False, 0, train=False)  # exiting: no time to write a class archive


def _chain_handler(signum: int) -> None:
    previous = signal.getsignal(signum)

    def handler(sig: int, frame: Any) -> None:
        _stop_all_live()
        if callable(previous):
            previous(sig, frame)
        elif previous == signal.SIG_DFL:
            signal.signal(sig, signal.SIG_DFL)
            os.kill(os.getpid(), sig)

    signal.signal(signum, handler)


def _install_hooks() -> None:
    global _hooks_installed
    if _hooks_installed:
        return
    _hooks_installed = True
    atexit.register(_stop_all_live)
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            if signal.getsignal(signum) is not signal.SIG_IGN:
                _chain_handler(signum)


# --------------------------------------------------------------------------------------------------
# Ports


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the JVM's server sockets do
        try:
            s.bind((HOST, port))
        except OSError:
            return False
        return True


def free_ports(n: int) -> list[int]:
    """``n`` distinct ports that were free a moment ago (the kernel picks them)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((HOST, 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


# --------------------------------------------------------------------------------------------------
# Nodes


@dataclass(slots=True, kw_only=True)
class _Node:
    """Mutable runtime record of one JVM (internal)."""

    node_id: int
    role: str  # "kafka" | "zookeeper"
    port: int
    controller_port: int | None
    dir: Path
    props: Path
    log: Path
    proc: subprocess.Popen[bytes] | None = None
    log_offset: int = 0
    scan_offset: int = 0
    paused: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


def _tail(path: Path, lines: int = LOG_TAIL_LINES, since: int = 0) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(since)
            data = f.read()
    except OSError as exc:
        return f"(no log at {path}: {exc})"
    text = data.decode("utf-8", "replace").rstrip("\n").splitlines()[-lines:]
    return "\n".join(text) if text else f"(log {path} is empty)"


_LOG4J2 = """status = error
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = OUT
logger.request.name = kafka.request.logger
logger.request.level = WARN
"""

_LOG4J1 = """log4j.rootLogger=INFO, out
log4j.appender.out=org.apache.log4j.ConsoleAppender
log4j.appender.out.layout=org.apache.log4j.PatternLayout
log4j.appender.out.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
"""


def _write_props(path: Path, props: Mapping[str, str]) -> None:
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))


def _random_cluster_id() -> str:
    """A Kafka ``Uuid`` in its base64url form (``Uuid.randomUuid().toString()``)."""
    while True:
        cid = base64.urlsafe_b64encode(secrets.token_bytes(16)).decode().rstrip("=")
        if not cid.startswith("-"):
            return cid


_instance_counter = itertools.count(1)


class EmbeddedKafka:
    """A real Apache Kafka cluster of ``nodes`` JVMs that kgc starts, controls and stops.

    ``EmbeddedKafka(version, nodes=1, mode="kraft"|"zookeeper", config={...}, workdir=None,
    heap_mb=512)``; ``start()`` returns ``self``; use as a context manager to stop on exit.
    """

    can_inject_faults = True

    def __init__(
        self,
        version: str = DEFAULT_KAFKA_VERSION,
        nodes: int = 1,
        mode: str | None = None,
        config: Mapping[str, object] | None = None,
        workdir: str | os.PathLike[str] | None = None,
        heap_mb: int = 512,
        *,
        offsets_partitions: int = 10,
        ports: list[int] | None = None,
        name: str | None = None,
        detached: bool = False,
        security: str | None = None,
    ) -> None:
        check_version(version)
        line = release_line(version)
        mode = mode or line.default_mode
        if mode not in ("kraft", "zookeeper"):
            raise BrokerConfigError(f"unknown mode {mode!r}; use 'kraft' or 'zookeeper'")
        if mode == "zookeeper" and "zookeeper" not in line.modes:
            raise BrokerConfigError(
                f"Kafka {version} has no ZooKeeper mode (removed in 4.0); use --mode kraft or "
                "--kafka-version 3.9.2"
            )
        if mode == "kraft" and "kraft" not in line.modes:
            raise BrokerConfigError(
                f"kgc runs Kafka {version} on ZooKeeper only (KRaft is production-ready from "
                "3.3, KIP-833); use --mode zookeeper or a release from 3.3 on"
            )
        if nodes < 1:
            raise BrokerConfigError(f"nodes must be at least 1, got {nodes}")
        if ports is not None and len(ports) != nodes:
            raise BrokerConfigError(f"give one port per node: {nodes} nodes, {len(ports)} ports")
        overrides = {k: _prop_value(v) for k, v in (config or {}).items()}
        reserved = sorted(RESERVED_KEYS & overrides.keys())
        if reserved:
            raise BrokerConfigError(
                f"kgc sets {', '.join(reserved)} itself; remove them from the config overrides"
            )
        self._security_kind = (
            secure.check_kind(security, version, mode) if security is not None else None
        )
        self._security: secure.SecuritySetup | None = None
        self._version = version
        self._mode = mode
        self._n = nodes
        self._config = default_config(version, mode, nodes, offsets_partitions) | overrides
        self._heap_mb = heap_mb
        self._requested_ports = list(ports) if ports else None
        self._detached = detached
        self._name = name or f"kgc-{os.getpid()}-{next(_instance_counter)}"
        self._user_workdir = Path(workdir) if workdir is not None else None
        self._workdir: Path | None = None
        self._owns_workdir = False
        self._nodes: dict[int, _Node] = {}
        self._zk: _Node | None = None
        self._java: str | None = None
        self._libs: Path | None = None
        self._cluster_id: str | None = None
        self._cds = ClassDataSharing(None, None)
        self._cds_trainer: _Node | None = None
        self._lock = threading.RLock()
        self._started = False
        self.ready_s: float | None = None
        """Seconds from spawning the JVMs to ready (jar resolution and formatting excluded)."""
        self.warm_up_s: float | None = None
        """Seconds spent creating ``__consumer_offsets`` and loading its coordinators."""
        self.start_s: float | None = None
        """Seconds the whole ``start()`` took, including resolution and storage formatting."""

    # ---------------------------------------------------------------- properties

    @property
    def version(self) -> str:
        return self._version

    @property
    def mode(self) -> str:
        return self._mode

    @property
    def name(self) -> str:
        return self._name

    @property
    def node_ids(self) -> list[int]:
        return list(range(1, self._n + 1))

    @property
    def controller_node_ids(self) -> list[int]:
        """Nodes that can act as controller: the KRaft voters, or (ZooKeeper) every broker."""
        return self.node_ids

    @property
    def security(self) -> ClientSecurity:
        """How kgc's own connections to this cluster authenticate: PLAINTEXT, or (``security=``)
        the super user ``kgc-admin``."""
        if self._security is None:
            return PLAINTEXT
        return self._security.client(secure.ADMIN)

    @property
    def security_setup(self) -> secure.SecuritySetup | None:
        """The certificates, principals and client.properties files of a secured cluster."""
        return self._security

    @property
    def bootstrap_servers(self) -> str:
        self._require_started()
        return ",".join(f"{HOST}:{self._nodes[i].port}" for i in self.node_ids)

    @property
    def workdir(self) -> Path:
        self._require_started()
        assert self._workdir is not None
        return self._workdir

    @property
    def zookeeper_address(self) -> tuple[str, int] | None:
        return (HOST, self._zk.port) if self._zk else None

    def broker_address(self, node_id: int) -> tuple[str, int]:
        return (HOST, self._node(node_id).port)

    def log_path(self, node_id: int) -> Path:
        """The one log file of ``node_id`` (JVM stdout/stderr and the broker's log4j output)."""
        return self._node(node_id).log

    def pid(self, node_id: int) -> int | None:
        node = self._node(node_id)
        return node.proc.pid if node.running() and node.proc else None

    def pids(self) -> list[int]:
        """Pids of every running JVM of this cluster (brokers and ZooKeeper)."""
        procs = [n.proc for n in self._all_nodes() if n.running()]
        return [p.pid for p in procs if p is not None]

    def describe(self) -> dict[str, Any]:
        """Self-description for trace manifests."""
        return {
            "implementation": IMPLEMENTATION,
            "version": self._version,
            "mode": self._mode,
            "nodes": self._n,
            "node_ids": self.node_ids,
            "bootstrap_servers": self.bootstrap_servers if self._started else None,
            "heap_mb": self._heap_mb,
            "config": dict(sorted(self._config.items())),
            **(self._security.describe() if self._security is not None else {}),
        }

    # ---------------------------------------------------------------- lifecycle

    def __enter__(self) -> EmbeddedKafka:
        if not self._started:
            self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self, timeout_s: float = 120, *, warm_up: bool = True) -> EmbeddedKafka:
        """Start every node and wait until the cluster is ready; raises BrokerStartError.

        With ``warm_up`` (default) also create ``__consumer_offsets`` and wait until every one of
        its partitions has a loaded group coordinator, so a test's first group request is not
        answered COORDINATOR_NOT_AVAILABLE / COORDINATOR_LOAD_IN_PROGRESS / NOT_COORDINATOR just
        because the cluster is new."""
        with self._lock:
            if self._started:
                return self
            t0 = time.monotonic()
            self._java = find_java()
            if self._requested_ports:  # checked before resolution: a bad port costs no download
                taken = [p for p in self._requested_ports if not _port_free(p)]
                if taken:
                    raise PortInUse(
                        f"port {taken[0]} on {HOST} is already in use; pick another --port "
                        "or omit it to let kgc choose free ports"
                    )
            self._libs = resolve_kafka(self._version)
            self._cds = ClassDataSharing(self._java, self._libs)
            if not self._detached:
                _install_hooks()
                with _live_lock:  # from now on exit and signal handlers stop it
                    _live.add(self)
            try:
                self._prepare_workdir()
                if self._security_kind is not None:
                    assert self._workdir is not None
                    self._security = secure.SecuritySetup.create(
                        self._security_kind, self._workdir / "security"
                    )
                self._launch_with_port_retries(t0 + timeout_s)
                if warm_up:
                    self._warm_up(t0 + timeout_s)
                if self._security is not None and self._mode == "zookeeper":
                    secure.create_scram_users(
                        self._security,
                        ",".join(f"{HOST}:{self._nodes[i].port}" for i in self.node_ids),
                    )
                if self._security is not None:
                    secure.grant_user_acls(
                        self._security,
                        ",".join(f"{HOST}:{self._nodes[i].port}" for i in self.node_ids),
                    )
            except BaseException:
                self._abort_start()
                raise
            self._started = True
            self.start_s = time.monotonic() - t0
            if self._detached:
                self._write_state()
            return self

    def _launch_with_port_retries(self, deadline: float) -> None:
        for attempt in range(_START_ATTEMPTS):
            try:
                self._launch(deadline)
                return
            except _ZkSessionLost as lost:
                self._kill_all()
                if attempt == _START_ATTEMPTS - 1 or time.monotonic() >= deadline:
                    raise BrokerStartError(
                        "a Kafka node's ZooKeeper session expired while it started, "
                        f"{attempt + 1} times; the last log lines:\n{lost}"
                    ) from None
                self._reset_dirs()
            except _PortClash as clash:
                # Someone took a port between our check and the JVM's bind. A port the user
                # chose is their error; one kgc chose is retried with fresh ports.
                self._kill_all()
                user_port = clash.port in (self._requested_ports or [])
                if user_port or attempt == _START_ATTEMPTS - 1:
                    raise PortInUse(
                        f"port {clash.port or '?'} on {HOST} is already in use; pick "
                        "another --port or omit it to let kgc choose free ports"
                    ) from None
                self._reset_dirs()

    def _abort_start(self) -> None:
        self._kill_all()
        self._cds_trainer = None
        self._cds.finish_training(False)
        self._cleanup_workdir()
        with _live_lock:
            _live.discard(self)

    def stop(self, graceful: bool = False, timeout_s: float = 15) -> None:
        """Stop every JVM (SIGKILL, or SIGTERM first if ``graceful``) and remove a temp workdir."""
        self._stop(graceful, timeout_s, train=True)

    def _stop(self, graceful: bool, timeout_s: float, *, train: bool) -> None:
        with self._lock:
            with _live_lock:
                _live.discard(self)
            nodes = list(self._nodes.values())
            trainer, self._cds_trainer = self._cds_trainer, None
            if trainer is not None and not (train and trainer.running() and not trainer.paused):
                self._cds.finish_training(False)
            elif trainer is not None:
                self._signal(trainer, signal.SIGTERM)  # the JVM writes its class archive on exit
                assert trainer.proc is not None
                with contextlib.suppress(subprocess.TimeoutExpired):
                    trainer.proc.wait(30)
                self._cds.finish_training(trainer.proc.poll() is not None)
            if graceful:
                for node in nodes:
                    self._signal(node, signal.SIGCONT)
                    self._signal(node, signal.SIGTERM)
                end = time.monotonic() + timeout_s
                for node in nodes:
                    if node.proc is not None:
                        with contextlib.suppress(subprocess.TimeoutExpired):
                            node.proc.wait(max(0.0, end - time.monotonic()))
            self._kill_all()
            if self._detached and self._started:
                with contextlib.suppress(FileNotFoundError):
                    (state_dir() / f"{self._name}.json").unlink()
            self._cleanup_workdir()
            self._started = False

    # ---------------------------------------------------------------- faults

    def kill(self, node_id: int) -> None:
        """SIGKILL one node's JVM (its data dir stays; ``restart`` brings it back)."""
        with self._lock:
            node = self._node(node_id)
            self._signal(node, signal.SIGKILL)
            if node.proc is not None:
                node.proc.wait()
            if node is self._cds_trainer:  # a killed JVM writes no class archive
                self._cds_trainer = None
                self._cds.finish_training(False)
            node.paused = False

    def pause(self, node_id: int) -> None:
        """SIGSTOP one node: it keeps its sockets but answers nothing until ``resume``."""
        with self._lock:
            node = self._node(node_id)
            self._signal(node, signal.SIGSTOP)
            node.paused = True
            if node.proc is not None:  # SIGSTOP is asynchronous: wait until every thread stops
                _wait_stopped(node.proc.pid, stopped=True)

    def resume(self, node_id: int) -> None:
        """SIGCONT a paused node."""
        with self._lock:
            node = self._node(node_id)
            self._signal(node, signal.SIGCONT)
            node.paused = False
            if node.proc is not None:
                _wait_stopped(node.proc.pid, stopped=False)

    def is_running(self, node_id: int) -> bool:
        """True while the node's JVM exists (paused counts as running)."""
        return self._node(node_id).running()

    def is_paused(self, node_id: int) -> bool:
        node = self._node(node_id)
        return node.running() and node.paused

    def restart(self, node_id: int, timeout_s: float = 90, graceful: bool = False) -> None:
        """Stop the node if it runs, start it on the same ports and data dir, wait until it answers
        ApiVersions and its Metadata lists itself."""
        with self._lock:
            node = self._node(node_id)
            if node.running():
                if graceful:
                    self._signal(node, signal.SIGCONT)
                    self._signal(node, signal.SIGTERM)
                    assert node.proc is not None
                    try:
                        node.proc.wait(timeout_s / 2)
                    except subprocess.TimeoutExpired:
                        self._signal(node, signal.SIGKILL)
                self.kill(node_id)
            deadline = time.monotonic() + timeout_s
            if self._mode == "zookeeper":
                self._wait_unregistered(node_id, deadline)
            lost_sessions = 0
            while True:
                self._spawn(node)
                try:
                    self._wait_node(node, deadline, expect_brokers={node_id})
                    return
                except _StaleZkRegistration:
                    # ZooKeeper still holds the killed broker's ephemeral registration until its
                    # session expires (zookeeper.session.timeout.ms); try again shortly.
                    self.kill(node_id)
                    time.sleep(0.5)
                except _ZkSessionLost as lost:
                    self.kill(node_id)
                    lost_sessions += 1
                    if lost_sessions == _START_ATTEMPTS:
                        raise BrokerStartError(
                            f"Kafka node {node_id}'s ZooKeeper session expired while it "
                            f"restarted, {lost_sessions} times; the last log lines:\n{lost}"
                        ) from None

    def _wait_unregistered(self, node_id: int, deadline: float) -> None:
        """ZooKeeper mode: wait until a live broker stops listing the killed ``node_id`` (its
        ZooKeeper session expired), so the restarted broker can register at the first try."""
        others = [
            n for n in self._nodes.values() if n.node_id != node_id and n.running() and not n.paused
        ]
        while others and time.monotonic() < deadline:
            try:
                listed = {
                    b.node_id
                    for b in probe.metadata(HOST, others[0].port, 1.0, self.security).brokers
                }
            except probe.ProbeError:
                return  # cannot tell: the retry loop in restart() copes
            if node_id not in listed:
                return
            time.sleep(0.2)

    def active_controller_id(self, timeout_s: float = 2.0) -> int:
        """The KRaft quorum leader, or (ZooKeeper) the controller broker, asked over the wire."""
        last: Exception | None = None
        for nid in self.node_ids:
            node = self._nodes[nid]
            if not node.running() or node.paused:
                continue
            try:
                if self._mode == "kraft":
                    return probe.describe_quorum(
                        HOST, node.port, timeout_s, self.security
                    ).leader_id
                return probe.metadata(HOST, node.port, timeout_s, self.security).controller_id
            except probe.ProbeError as exc:
                last = exc
        raise probe.ProbeError(f"no node answered: {last}")

    # ---------------------------------------------------------------- internals

    def _require_started(self) -> None:
        if not self._nodes:
            raise RuntimeError("EmbeddedKafka is not started; call start() first")

    def _node(self, node_id: int) -> _Node:
        self._require_started()
        try:
            return self._nodes[node_id]
        except KeyError:
            raise KeyError(f"no node {node_id}; node ids are {self.node_ids}") from None

    def _all_nodes(self) -> list[_Node]:
        return ([self._zk] if self._zk else []) + list(self._nodes.values())

    @staticmethod
    def _signal(node: _Node, sig: int) -> None:
        if node.proc is not None and node.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(node.proc.pid, sig)

    def _kill_all(self) -> None:
        for node in reversed(self._all_nodes()):  # brokers first, ZooKeeper last
            self._signal(node, signal.SIGKILL)
        for node in self._all_nodes():
            if node.proc is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    node.proc.wait(10)

    def _prepare_workdir(self) -> None:
        if self._user_workdir is not None:
            self._workdir = self._user_workdir
            self._workdir.mkdir(parents=True, exist_ok=True)
        elif self._detached:
            self._workdir = state_dir() / self._name
            if self._workdir.exists():
                shutil.rmtree(self._workdir)
            self._workdir.mkdir(parents=True)
            self._owns_workdir = True
        else:
            _remove_orphaned_workdirs()
            self._workdir = Path(tempfile.mkdtemp(prefix=f"{_TEMP_PREFIX}{os.getpid()}-"))
            self._owns_workdir = True

    def _reset_dirs(self) -> None:
        for node in self._all_nodes():
            shutil.rmtree(node.dir, ignore_errors=True)
        self._nodes.clear()
        self._zk = None

    def _cleanup_workdir(self) -> None:
        if self._owns_workdir and self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)

    def _jvm(
        self,
        main: str,
        args: list[str],
        node_dir: Path,
        heap_mb: int,
        cds: Sequence[str] = (),
    ) -> list[str]:
        assert self._java is not None and self._libs is not None
        major = int(self._version.split(".")[0])
        log_cfg = node_dir / ("log4j2.properties" if major >= 4 else "log4j.properties")
        log_cfg.write_text(_LOG4J2 if major >= 4 else _LOG4J1)
        log_flag = (
            f"-Dlog4j2.configurationFile={log_cfg}"
            if major >= 4
            else f"-Dlog4j.configuration=file:{log_cfg}"
        )
        return [
            self._java,
            f"-Xmx{heap_mb}m",
            "-XX:+UseG1GC",
            "-XX:MaxGCPauseMillis=20",
            "-XX:+ExitOnOutOfMemoryError",
            "-Djava.awt.headless=true",
            # ZooKeeper 3.4 (Kafka < 2.4) registers log4j's JMX beans, which reload4j (the logging
            # backend kgc gives every 3.x and older release) does not ship; Kafka itself does not
            # need them
            "-Dzookeeper.jmx.log4j.disable=true",
            # The ZooKeeper 3.4.13-3.5.7 client (Kafka 2.0-2.5) cannot connect on Java 14+ while
            # client SASL is on: SaslServerPrincipal parses InetSocketAddress.toString(), whose
            # format changed ("127.0.0.1/<unresolved>:port", ZOOKEEPER-3779). kgc never uses SASL.
            "-Dzookeeper.sasl.client=false",
            *cds,
            f"-Dkgc.instance={self._name}",
            f"-Dkgc.owner={0 if self._detached else os.getpid()}",
            # a detached broker's state file is written once it is ready; until then the process
            # starting it (``kgc broker start``) vouches for it, so it is no stray while starting
            *(
                [f"-Dkgc.state={state_dir() / self._name}.json", f"-Dkgc.starter={os.getpid()}"]
                if self._detached
                else []
            ),
            f"-Dkafka.logs.dir={node_dir}",
            log_flag,
            "-cp",
            f"{self._libs}/*",
            main,
            *args,
        ]

    def _layout(self) -> None:
        assert self._workdir is not None
        n = self._n
        kafka_ports = self._requested_ports or free_ports(n)
        extra = free_ports(n + 1)
        self._nodes = {}
        for i, nid in enumerate(self.node_ids):
            d = self._workdir / f"node-{nid}"
            d.mkdir(parents=True, exist_ok=True)
            self._nodes[nid] = _Node(
                node_id=nid,
                role="kafka",
                port=kafka_ports[i],
                controller_port=extra[i] if self._mode == "kraft" else None,
                dir=d,
                props=d / "server.properties",
                log=d / "server.log",
            )
        if self._mode == "zookeeper":
            d = self._workdir / "zookeeper"
            d.mkdir(parents=True, exist_ok=True)
            self._zk = _Node(
                node_id=0,
                role="zookeeper",
                port=extra[n],
                controller_port=None,
                dir=d,
                props=d / "zookeeper.properties",
                log=d / "zookeeper.log",
            )

    def _node_props(self, node: _Node) -> dict[str, str]:
        props: dict[str, str] = {}
        if self._security is not None and self._mode == "kraft":
            listener = self._security.listener
            return (
                {
                    "process.roles": "broker,controller",
                    "node.id": str(node.node_id),
                    "controller.quorum.voters": ",".join(
                        f"{n.node_id}@{HOST}:{n.controller_port}" for n in self._nodes.values()
                    ),
                    "listeners": f"{listener}://{HOST}:{node.port},"
                    f"CONTROLLER://{HOST}:{node.controller_port}",
                    "advertised.listeners": f"{listener}://{HOST}:{node.port}",
                    "log.dirs": str(node.dir / "data"),
                }
                | self._security.broker_props()
                | self._config
            )
        if self._mode == "kraft":
            voters = ",".join(
                f"{n.node_id}@{HOST}:{n.controller_port}" for n in self._nodes.values()
            )
            props |= {
                "process.roles": "broker,controller",
                "node.id": str(node.node_id),
                "controller.quorum.voters": voters,
                "listeners": f"PLAINTEXT://{HOST}:{node.port},CONTROLLER://{HOST}:{node.controller_port}",
                "advertised.listeners": f"PLAINTEXT://{HOST}:{node.port}",
                "controller.listener.names": "CONTROLLER",
                "inter.broker.listener.name": "PLAINTEXT",
                "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            }
        else:
            assert self._zk is not None
            if self._security is not None:
                listener = self._security.listener
                return (
                    {
                        "broker.id": str(node.node_id),
                        "zookeeper.connect": f"{HOST}:{self._zk.port}",
                        "listeners": f"{listener}://{HOST}:{node.port}",
                        "advertised.listeners": f"{listener}://{HOST}:{node.port}",
                        "log.dirs": str(node.dir / "data"),
                    }
                    | self._security.broker_props("zookeeper")
                    | self._config
                )
            props |= {
                "broker.id": str(node.node_id),
                "zookeeper.connect": f"{HOST}:{self._zk.port}",
                "listeners": f"PLAINTEXT://{HOST}:{node.port}",
                "advertised.listeners": f"PLAINTEXT://{HOST}:{node.port}",
                "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT",
                "inter.broker.listener.name": "PLAINTEXT",
            }
        props["log.dirs"] = str(node.dir / "data")
        return props | self._config

    def _launch(self, deadline: float) -> None:
        self._layout()
        for node in self._nodes.values():
            _write_props(node.props, self._node_props(node))
        if self._mode == "kraft":
            self._format_storage(deadline)
        else:
            assert self._zk is not None
            _write_props(
                self._zk.props,
                {
                    "dataDir": str(self._zk.dir / "data"),
                    "clientPort": str(self._zk.port),
                    "clientPortAddress": HOST,
                    "tickTime": "500",
                    "maxClientCnxns": "0",
                    "admin.enableServer": "false",
                    "4lw.commands.whitelist": "ruok,srvr",
                },
            )
            self._spawn(self._zk)
            self._wait_zookeeper(deadline)
        t0 = time.monotonic()
        for node in self._nodes.values():
            self._spawn(node)
        for node in self._nodes.values():
            self._wait_node(
                node, deadline, expect_brokers=set(self.node_ids), watch=self._all_nodes()
            )
        if self._mode == "kraft":
            self._wait_quorum(deadline)
        self.ready_s = time.monotonic() - t0

    def _format_storage(self, deadline: float) -> None:
        self._cluster_id = _random_cluster_id()
        procs = []
        for node in self._nodes.values():
            cmd = self._jvm(
                "kafka.tools.StorageTool",
                [
                    "format",
                    "-t",
                    self._cluster_id,
                    "-c",
                    str(node.props),
                    *(self._security.format_args() if self._security is not None else []),
                ],
                node.dir,
                256,
                self._cds.use_flags(),
            )
            cmd.insert(1, "-XX:TieredStopAtLevel=1")  # a short-lived tool: skip the C2 compiler
            procs.append(
                (node, _popen(cmd, log=node.dir / "format.log", attached=True, cwd=node.dir))
            )
        for node, proc in procs:
            try:
                rc = proc.wait(max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                rc = None
            if rc != 0:
                raise BrokerStartError(
                    f"formatting the KRaft storage of node {node.node_id} failed (exit {rc}); "
                    f"last lines of {node.dir / 'format.log'}:\n{_tail(node.dir / 'format.log')}"
                )

    def _spawn(self, node: _Node) -> None:
        assert self._libs is not None
        if node.role == "zookeeper":
            cmd = self._jvm(
                "org.apache.zookeeper.server.quorum.QuorumPeerMain",
                [str(node.props)],
                node.dir,
                256,
            )
        else:
            cds = self._cds.use_flags()
            if not cds and node.node_id == 1 and self._cds.can_train(self._detached):
                cds = self._cds.train_flags()
                self._cds_trainer = node
            cmd = self._jvm("kafka.Kafka", [str(node.props)], node.dir, self._heap_mb, cds)
        node.log_offset = node.log.stat().st_size if node.log.exists() else 0
        node.scan_offset = node.log_offset
        node.paused = False
        node.proc = _popen(cmd, log=node.log, attached=not self._detached, cwd=node.dir)

    def _check_alive(self, node: _Node) -> None:
        """Raise if the node died or its log shows a fatal start-up error. A JVM that cannot bind
        its port or is refused registration takes many seconds to shut itself down, so the log is
        scanned while it still runs."""
        assert node.proc is not None
        rc = node.proc.poll()
        fresh = self._scan_log(node)
        if any(m in fresh for m in _BIND_FAILURE_MARKERS):
            bound = _BIND_PORT_RE.search(fresh)  # Kafka names the port; ZooKeeper does not
            raise _PortClash(int(bound.group(1)) if bound else node.port)
        if any(m in fresh for m in _STALE_ZK_MARKERS):
            raise _StaleZkRegistration()
        fatal = any(m in fresh for m in _FATAL_MARKERS)
        if fatal and _ZK_SESSION_LOST_MARKER in fresh:
            raise _ZkSessionLost(_tail(node.log, since=node.log_offset))
        if rc is None and not fatal:
            return
        what = "ZooKeeper" if node.role == "zookeeper" else f"Kafka node {node.node_id}"
        status = f"exited with status {rc}" if rc is not None else "failed"
        raise BrokerStartError(
            f"{what} {status} while starting; last lines of {node.log}:\n"
            f"{_tail(node.log, since=node.log_offset)}"
        )

    @staticmethod
    def _scan_log(node: _Node) -> str:
        """Log text written since the last scan (plus a little overlap for markers that straddle
        two scans)."""
        start = max(node.log_offset, node.scan_offset - 512)
        try:
            with open(node.log, "rb") as f:
                f.seek(start)
                data = f.read()
        except OSError:
            return ""
        node.scan_offset = start + len(data)
        return data.decode("utf-8", "replace")

    def _timeout(self, node: _Node, waiting_for: str) -> BrokerStartError:
        what = "ZooKeeper" if node.role == "zookeeper" else f"Kafka node {node.node_id}"
        return BrokerStartError(
            f"{what} was not ready in time (waiting for {waiting_for}); "
            f"last lines of {node.log}:\n{_tail(node.log, since=node.log_offset)}"
        )

    def _wait_zookeeper(self, deadline: float) -> None:
        assert self._zk is not None
        while True:
            self._check_alive(self._zk)
            with (
                contextlib.suppress(OSError),
                socket.create_connection((HOST, self._zk.port), timeout=1) as s,
            ):
                s.sendall(b"ruok")
                if s.recv(4) == b"imok":
                    return
            if time.monotonic() > deadline:
                raise self._timeout(self._zk, "ZooKeeper to answer ruok")
            time.sleep(0.1)

    def _wait_node(
        self,
        node: _Node,
        deadline: float,
        expect_brokers: set[int],
        watch: list[_Node] | None = None,
    ) -> None:
        waiting_for = "ApiVersions"
        while True:
            for watched in watch or [node]:
                self._check_alive(watched)
            try:
                probe.api_versions(HOST, node.port, 1.0, self.security)
                waiting_for = f"Metadata to list brokers {sorted(expect_brokers)}"
                listed = {
                    b.node_id for b in probe.metadata(HOST, node.port, 1.0, self.security).brokers
                }
                if expect_brokers <= listed:
                    return
                waiting_for += f" (lists {sorted(listed)})"
            except probe.ProbeError:
                pass
            except SecurityError as exc:  # a cold JVM's first TLS handshakes can take seconds
                waiting_for = f"ApiVersions over {self.security.protocol} (last: {exc})"
            if time.monotonic() > deadline:
                raise self._timeout(node, waiting_for)
            time.sleep(0.1)

    def _wait_quorum(self, deadline: float) -> None:
        node = self._nodes[1]
        while True:
            with contextlib.suppress(probe.ProbeError, SecurityError):
                if probe.describe_quorum(HOST, node.port, 1.0, self.security).leader_id >= 0:
                    return
            if time.monotonic() > deadline:
                raise self._timeout(node, "DescribeQuorum to name a leader")
            time.sleep(0.1)

    def _warm_up(self, deadline: float) -> None:
        t0 = time.monotonic()
        node = self._nodes[1]
        partitions = int(self._config["offsets.topic.num.partitions"])
        while True:
            with contextlib.suppress(probe.ProbeError, SecurityError):
                if probe.group_coordinators_loaded(HOST, node.port, partitions, 2.0, self.security):
                    self.warm_up_s = time.monotonic() - t0
                    return
            if time.monotonic() > deadline:
                raise self._timeout(node, "every __consumer_offsets partition to be loaded")
            time.sleep(0.1)

    def _write_state(self) -> None:
        state = {
            "name": self._name,
            "version": self._version,
            "mode": self._mode,
            "bootstrap_servers": self.bootstrap_servers,
            "workdir": str(self._workdir),
            **(self._security.describe() if self._security is not None else {}),
            "started_at": time.time(),
            "processes": [
                {
                    "role": n.role,
                    "node_id": n.node_id,
                    "pid": n.proc.pid if n.proc else None,
                    "port": n.port,
                    "controller_port": n.controller_port,
                    "log": str(n.log),
                }
                for n in self._all_nodes()
            ],
        }
        d = state_dir()
        d.mkdir(parents=True, exist_ok=True)
        tmp = d / f".{self._name}.json.tmp"
        tmp.write_text(json.dumps(state, indent=2) + "\n")
        os.replace(tmp, d / f"{self._name}.json")


class ClassDataSharing:
    """A dynamic AppCDS archive of the broker's classes (JDK 13+, JEP 350), kept in the jar cache.

    The first attached broker of a Kafka version runs its node 1 with
    ``-XX:ArchiveClassesAtExit``; when that node is stopped gracefully the JVM writes the archive,
    and every later JVM maps it with ``-XX:SharedArchiveFile``: about half the start-up CPU
    (7.3 -> 4.2 CPU-seconds for one 4.3.1 node on this machine). The archive is keyed by the java
    binary, so another JDK trains its own. A missing or stale archive only costs speed: the JVM
    falls back to loading classes normally (``-Xshare:auto``). ``KGC_CDS=0`` disables it.
    """

    def __init__(self, java: str | None, libs: Path | None) -> None:
        self._archive: Path | None = None
        self._tmp: Path | None = None
        if java is None or libs is None or os.environ.get("KGC_CDS", "1") == "0":
            return
        real = Path(java).resolve()
        try:
            st = real.stat()
        except OSError:
            return
        key = f"{real}:{st.st_size}:{int(st.st_mtime)}"
        digest = hashlib.sha256(key.encode()).hexdigest()[:12]
        self._archive = libs.parent / "cds" / f"java-{digest}.jsa"

    def use_flags(self) -> list[str]:
        if self._archive is not None and self._archive.is_file():
            return [f"-XX:SharedArchiveFile={self._archive}"]
        return []

    def can_train(self, detached: bool) -> bool:
        return self._archive is not None and not detached and self._tmp is None

    def train_flags(self) -> list[str]:
        assert self._archive is not None
        self._archive.parent.mkdir(parents=True, exist_ok=True)
        self._tmp = self._archive.with_name(f"{self._archive.stem}.tmp-{os.getpid()}.jsa")
        return [f"-XX:ArchiveClassesAtExit={self._tmp}"]

    def finish_training(self, exited: bool) -> None:
        tmp, self._tmp = self._tmp, None
        if tmp is None or self._archive is None:
            return
        if exited and tmp.is_file() and tmp.stat().st_size > 0:
            os.replace(tmp, self._archive)
        else:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()


class _PortClash(Exception):
    def __init__(self, port: int) -> None:
        super().__init__(port)
        self.port = port


class _StaleZkRegistration(Exception):
    pass


class _ZkSessionLost(Exception):
    """A broker's ZooKeeper session expired while it started, which ``KafkaServer.startup``
    treats as fatal. On a starved machine a JVM can miss ``zookeeper.session.timeout.ms`` (CI of
    ``c3b708e``: a 3.9.2 node of a 4000 ms session, while two pytest processes ran beside it); the
    start is retried, since nothing in the settings was wrong. Carries the log tail."""


def _thread_states(pid: int) -> list[str]:
    """The scheduler state letter of every thread of ``pid`` (``T`` = stopped), from /proc."""
    states = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError):
                stat = (task / "stat").read_text()
                states.append(stat[stat.rindex(")") + 2])
    return states


def _wait_stopped(pid: int, *, stopped: bool, timeout_s: float = 5.0) -> None:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        states = _thread_states(pid)
        if not states or all((st in "Tt") == stopped for st in states):
            return
        time.sleep(0.005)


_TEMP_PREFIX = "kgc-kafka-"

_BIND_FAILURE_MARKERS = ("Address already in use", "BindException")
_BIND_PORT_RE = re.compile(r"failed to bind to [^\s:]+:(\d+)")
_STALE_ZK_MARKERS = ("already exists and owner", "NodeExistsException")
_FATAL_MARKERS = ("Exiting Kafka due to fatal exception", "Fatal error during KafkaServer startup")
_ZK_SESSION_LOST_MARKER = "KeeperException$SessionExpiredException"


def _remove_orphaned_workdirs() -> None:
    """Delete temp workdirs left by owners that died without cleanup (e.g. SIGKILL of pytest; the
    JVMs died with them through PDEATHSIG). The owner pid is part of the directory name."""
    for d in Path(tempfile.gettempdir()).glob(f"{_TEMP_PREFIX}*-*"):
        owner = d.name[len(_TEMP_PREFIX) :].split("-", 1)[0]
        if not owner.isdigit():
            continue
        try:
            os.kill(int(owner), 0)
        except ProcessLookupError:
            shutil.rmtree(d, ignore_errors=True)
        except PermissionError:
            pass


def _prop_value(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def iter_kgc_jvms() -> Iterator[dict[str, Any]]:
    """Every running JVM whose command line carries kgc's ``-Dkgc.instance=`` marker (via /proc)."""
    proc = Path("/proc")
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        args = [a.decode("utf-8", "replace") for a in argv if a]
        instance = next((a.split("=", 1)[1] for a in args if a.startswith("-Dkgc.instance=")), None)
        if instance is None:
            continue
        owner = next((a.split("=", 1)[1] for a in args if a.startswith("-Dkgc.owner=")), "0")
        state = next((a.split("=", 1)[1] for a in args if a.startswith("-Dkgc.state=")), None)
        starter = next((a.split("=", 1)[1] for a in args if a.startswith("-Dkgc.starter=")), "0")
        main = next((a for a in args if a in ("kafka.Kafka", "kafka.tools.StorageTool")), None)
        main = main or next((a for a in args if "QuorumPeerMain" in a), "?")
        yield {
            "pid": int(entry.name),
            "instance": instance,
            "owner": int(owner) if owner.isdigit() else 0,
            "state_file": state,
            "starter": int(starter) if starter.isdigit() else 0,
            "main": main,
        }
