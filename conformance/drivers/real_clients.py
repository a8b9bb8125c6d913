"""Groups of real consumers (kafka-python and confluent-kafka/librdkafka) against a real broker.

Role: the differential engine drives the group protocol with a raw client; this harness drives it
with the consumers people actually run, each in its own process so it can leave, crash (SIGKILL)
or stall (SIGSTOP) like a real one, and records two views of every rebalance:

* the **coordinator's** — DescribeGroups (``clients/src/main/resources/common/message/
  DescribeGroupsResponse.json``): group state, members (member id, client id) and each member's
  assignment, decoded with the ConsumerProtocol assignment format
  (``ConsumerProtocolAssignment.json``), sampled every ``sample_interval_s``;
* the **consumers'** — each worker prints a JSON line whenever its rebalance listener runs
  (``onPartitionsAssigned`` / ``onPartitionsRevoked`` / ``onPartitionsLost``), with what it now
  owns, its member id and (kafka-python) its generation.

Checks (see :meth:`RealGroup.verify`): every Stable generation's assignment with
``kgc.properties.assignment_z3.check_generation`` (exactly one owner, only subscribers own, the
assignor's balance, stickiness and the cooperative hand-off when the previous generation is known to
be the one just before); for range and round robin, equality with ``kgc.model.assignors``; the
membership of each settled group against what the scenario expects (started minus left, crashed or
stalled past the session timeout); and the consumers' own ownership intervals, which must never
overlap for one partition (:func:`kgc.properties.assignment_z3.check_ownership_timeline`).

Each worker also logs to stderr: kafka-python's group coordinator at INFO, or everything with
``KGC_REAL_CLIENTS_LOG=DEBUG``. The harness keeps the last lines of each worker's log. When a
group does not settle, or a consumer fails, the message shows each consumer's last reports and
log lines on one clock, next to the coordinator's last DescribeGroups answer. kafka-python workers
wait for their topics' metadata before the first poll, let every join finish inside one call,
and report a join they abandoned as an error. All three guard against kafka-python bugs
(``tests/findings/test_kafka_python_orphaned_join.py``).

Times are ``time.monotonic()`` in every process (Linux ``CLOCK_MONOTONIC`` is system-wide), so the
workers' and the harness's timestamps compare directly.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ASSIGNOR_PROTOCOL",
    "ConsumerProcess",
    "GroupSnapshot",
    "RealGroup",
    "Verification",
    "decode_member_assignment",
    "decode_member_subscription",
    "encode_consumer_assignment",
    "encode_consumer_subscription",
]

# "confluent-kafka-848": librdkafka with ``group.protocol=consumer`` (KIP-848; GA in librdkafka
# 2.12): the coordinator assigns (``group.remote.assignor``), the client only heartbeats and
# reconciles.
LIBRARIES = ("kafka-python", "confluent-kafka", "confluent-kafka-848")
STDERR_TAIL_LINES = 60  # kept per consumer for failure messages
DROPPED_JOIN_S = 1.0  # a kafka-python join nothing awaits for this long is reported as an error
ASSIGNOR_PROTOCOL = {
    "range": "eager",
    "roundrobin": "eager",
    "sticky": "eager",
    "cooperative-sticky": "cooperative",
}
# Assignors each library implements (librdkafka has no eager "sticky").
SUPPORTED = {
    "kafka-python": {"range", "roundrobin", "sticky", "cooperative-sticky"},
    "confluent-kafka": {"range", "roundrobin", "cooperative-sticky"},
    "confluent-kafka-848": {"uniform", "range"},  # the broker's assignors (server side)
}


def decode_member_assignment(data: bytes | None) -> dict[str, tuple[int, ...]]:
    """A DescribeGroups ``member_assignment`` (ConsumerProtocolAssignment, version-prefixed) ->
    ``{topic: partitions}``. An empty byte string (no assignment yet) is ``{}``."""
    if not data:
        return {}
    from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

    decoded = ConsumerProtocolAssignment.decode(bytes(data))
    out: dict[str, list[int]] = {}
    for tp in decoded.partitions():
        out.setdefault(tp.topic, []).append(tp.partition)
    return {t: tuple(sorted(ps)) for t, ps in sorted(out.items())}


def decode_member_subscription(data: bytes | None) -> tuple[str, ...]:
    """A DescribeGroups ``member_metadata`` (ConsumerProtocolSubscription) -> subscribed topics."""
    if not data:
        return ()
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

    return tuple(sorted(ConsumerProtocolSubscription.decode(bytes(data)).topics))


def encode_consumer_assignment(assignment: Mapping[str, Iterable[int]]) -> bytes:
    """``{topic: partitions}`` -> ConsumerProtocolAssignment bytes (v0), as a leader sends it."""
    from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

    parts = [
        ConsumerProtocolAssignment.TopicPartition(topic=t, partitions=sorted(ps))
        for t, ps in sorted(assignment.items())
    ]
    value = ConsumerProtocolAssignment(version=0, assigned_partitions=parts, user_data=None)
    return bytes(value.encode())


def encode_consumer_subscription(topics: Iterable[str]) -> bytes:
    """Subscribed topics -> ConsumerProtocolSubscription bytes (version 0)."""
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

    value = ConsumerProtocolSubscription(version=0, topics=sorted(topics), user_data=None)
    return bytes(value.encode())


# ------------------------------------------------------------------------------------- the worker


def _emit(event: str, owned: Iterable[tuple[str, int]], **extra: Any) -> None:
    record = {"t": time.monotonic(), "event": event, "owned": sorted([t, p] for t, p in owned)}
    record.update(extra)
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


class _MonotonicFormatter(logging.Formatter):
    """Stamps each log line with ``time.monotonic()``, the clock of the workers' JSON events, so a
    failure report lines up what the client logged with what it reported."""

    def format(self, record: logging.LogRecord) -> str:
        record.mono = time.monotonic()
        return super().format(record)


def _configure_logging() -> None:
    """kafka-python's group coordinator at INFO (joins, syncs, errors, revoke/assign), the rest at
    WARNING, to stderr; the harness keeps the tail for its failure messages.
    ``KGC_REAL_CLIENTS_LOG=DEBUG`` logs every heartbeat and request as well."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        _MonotonicFormatter("%(mono).3f %(threadName)s %(name)s %(levelname)s %(message)s")
    )
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    level = os.environ.get("KGC_REAL_CLIENTS_LOG", "INFO").upper()
    logging.getLogger("kafka.coordinator").setLevel(level)


def _await_metadata(consumer: Any, partitions: Mapping[str, int], timeout_s: float = 30) -> None:
    """Block until kafka-python's coordinator has the metadata of every subscribed topic, before
    the first poll.

    Without this, a consumer can join before its topics' metadata arrives. If it leads, it assigns
    nothing, and it rejoins when the metadata comes (``need_rejoin``: the assignment snapshot
    differs from the metadata snapshot). kafka-python 3.0.12 can drop exactly that rebalance: if
    ``poll()`` times out between the leader's assignment and its SyncGroup response, nothing waits
    for the join any more. The member then stays out of the group
    (``tests/findings/test_kafka_python_orphaned_join.py``; it failed
    ``test_sticky_eager_leave_and_join`` on a loaded CI machine). With the metadata in place
    before the first join, the snapshots never differ, because these scenarios do not change
    their topics. Every rebalance then starts from ``rejoin_needed``, which the bug does not
    affect."""
    deadline = time.monotonic() + timeout_s
    while True:
        consumer.topics()  # a blocking metadata fetch; the coordinator's listener sees it
        snapshot = consumer._coordinator._metadata_snapshot
        missing = {t: n for t, n in partitions.items() if len(snapshot.get(t) or ()) != n}
        if not missing:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"no metadata for {missing} (topic: partitions) after {timeout_s} s; "
                f"the coordinator's snapshot is {snapshot}"
            )
        time.sleep(0.1)


def _run_kafka_python(cfg: Mapping[str, Any], stop: threading.Event) -> None:
    from kafka import ConsumerRebalanceListener, KafkaConsumer
    from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
    from kafka.structs import MemberState

    classes = {
        "range": RangePartitionAssignor,
        "roundrobin": RoundRobinPartitionAssignor,
        "sticky": StickyPartitionAssignor,
        "cooperative-sticky": CooperativeStickyAssignor,
    }
    consumer = KafkaConsumer(
        bootstrap_servers=cfg["bootstrap"],
        group_id=cfg["group_id"],
        client_id=cfg["client_id"],
        partition_assignment_strategy=[classes[cfg["assignor"]]],
        session_timeout_ms=cfg["session_timeout_ms"],
        heartbeat_interval_ms=cfg["heartbeat_interval_ms"],
        max_poll_interval_ms=cfg["max_poll_interval_ms"],
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    owned: set[tuple[str, int]] = set()

    def meta() -> dict[str, Any]:
        m = consumer.group_metadata()
        return {"member_id": m.member_id, "generation": m.generation_id}

    class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
        def on_partitions_revoked(self, revoked: Any) -> None:
            owned.difference_update((tp.topic, tp.partition) for tp in revoked)
            _emit("revoked", owned, **meta())

        def on_partitions_assigned(self, assigned: Any) -> None:
            owned.update((tp.topic, tp.partition) for tp in assigned)
            _emit("assigned", owned, **meta())

        def on_partitions_lost(self, lost: Any) -> None:
            owned.difference_update((tp.topic, tp.partition) for tp in lost)
            _emit("lost", owned, **meta())

    consumer.subscribe(topics=list(cfg["topics"]), listener=Listener())
    _await_metadata(consumer, cfg["partitions"])
    _emit("started", owned, member_id="", generation=None)
    last_generation = -1
    dropped_since: float | None = None
    coordinator = consumer._coordinator
    # The broker answers a JoinGroup within the rebalance timeout (max.poll.interval.ms).
    join_wait_ms = int(cfg["max_poll_interval_ms"]) + 5000
    while not stop.is_set():
        # Each rebalance runs to the end in one call, as it would under a long poll() timeout.
        # kafka-python 3.0.12 mishandles a join that outlives the poll() that started it. It can
        # drop the join for good (the finding below). If the join completes between two polls,
        # it throws the result away and joins again, so a leader rejoins in Stable and forces
        # another rebalance without the assignment it was just given in its sticky user data.
        if coordinator.need_rejoin():
            coordinator.poll(timeout_ms=join_wait_ms)
        consumer.poll(timeout_ms=0)
        m = consumer.group_metadata()
        if m.generation_id != last_generation and m.state == MemberState.STABLE:
            last_generation = m.generation_id
            _emit("generation", owned, member_id=m.member_id, generation=m.generation_id)
        # A join that nothing waits for any more (the finding below): REBALANCING while the
        # coordinator sees no reason to rejoin. The flags are read without kafka-python's lock,
        # so only a state that lasts counts.
        if m.state == MemberState.REBALANCING and not coordinator.need_rejoin():
            dropped_since = dropped_since or time.monotonic()
            if time.monotonic() - dropped_since > DROPPED_JOIN_S:
                raise RuntimeError(
                    f"kafka-python dropped its join (generation {m.generation_id}): REBALANCING "
                    f"for {DROPPED_JOIN_S} s with need_rejoin() false and heartbeats off, so it "
                    "will never rejoin; see tests/findings/test_kafka_python_orphaned_join.py"
                )
        else:
            dropped_since = None
        stop.wait(0.1)
    consumer.close()  # sends LeaveGroup
    _emit("closed", set(), member_id="", generation=None)


def _run_confluent(cfg: Mapping[str, Any], stop: threading.Event) -> None:
    from confluent_kafka import Consumer

    settings: dict[str, Any] = {
        "bootstrap.servers": cfg["bootstrap"],
        "group.id": cfg["group_id"],
        "client.id": cfg["client_id"],
        "max.poll.interval.ms": cfg["max_poll_interval_ms"],
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "topic.metadata.refresh.interval.ms": 1000,
        "log_level": 3,
    }
    if cfg["lib"] == "confluent-kafka-848":
        # the session and heartbeat interval are the broker's (group.consumer.*): librdkafka
        # refuses session.timeout.ms, heartbeat.interval.ms and partition.assignment.strategy here
        settings.update({"group.protocol": "consumer", "group.remote.assignor": cfg["assignor"]})
    else:
        settings.update(
            {
                "partition.assignment.strategy": cfg["assignor"],
                "session.timeout.ms": cfg["session_timeout_ms"],
                "heartbeat.interval.ms": cfg["heartbeat_interval_ms"],
            }
        )
    consumer = Consumer(settings)
    owned: set[tuple[str, int]] = set()

    def meta() -> dict[str, Any]:
        return {"member_id": consumer.memberid() or "", "generation": None}

    def on_assign(c: Any, partitions: Any) -> None:
        owned.update((tp.topic, tp.partition) for tp in partitions)
        _emit("assigned", owned, **meta())

    def on_revoke(c: Any, partitions: Any) -> None:
        owned.difference_update((tp.topic, tp.partition) for tp in partitions)
        _emit("revoked", owned, **meta())

    def on_lost(c: Any, partitions: Any) -> None:
        owned.difference_update((tp.topic, tp.partition) for tp in partitions)
        _emit("lost", owned, **meta())

    consumer.subscribe(list(cfg["topics"]), on_assign=on_assign, on_revoke=on_revoke,
                       on_lost=on_lost)  # fmt: skip
    _emit("started", owned, member_id="", generation=None)
    while not stop.is_set():
        consumer.poll(0.1)
    consumer.close()  # sends LeaveGroup
    _emit("closed", set(), member_id="", generation=None)


def worker_main(config_json: str) -> int:
    """Entry point of one consumer process (``python -m kgc.conformance.drivers.real_clients
    worker``)."""
    cfg = json.loads(config_json)
    _configure_logging()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    run = _run_kafka_python if cfg["lib"] == "kafka-python" else _run_confluent
    try:
        run(cfg, stop)
    except Exception as exc:  # reported to the harness, which fails the scenario
        _emit("error", set(), message=f"{type(exc).__name__}: {exc}")
        return 1
    return 0


# ------------------------------------------------------------------------------------ the harness


@dataclass(slots=True)
class ConsumerProcess:
    """One consumer process and what it reported."""

    name: str
    lib: str
    assignor: str
    client_id: str
    proc: subprocess.Popen[bytes]
    events: list[dict[str, Any]] = field(default_factory=list)
    state: str = "running"  # running | paused | killed | left
    paused_at: float | None = None
    reader: threading.Thread | None = None
    stderr_tail: deque[str] = field(default_factory=lambda: deque(maxlen=STDERR_TAIL_LINES))

    def owned(self) -> frozenset[tuple[str, int]]:
        for e in reversed(self.events):
            if "owned" in e and e["event"] != "started":
                return frozenset((t, p) for t, p in e["owned"])
        return frozenset()

    def member_id(self) -> str:
        for e in reversed(self.events):
            if e.get("member_id"):
                return str(e["member_id"])
        return ""

    def generation(self) -> int | None:
        for e in reversed(self.events):
            if e.get("generation") is not None:
                return int(e["generation"])
        return None

    def errors(self) -> list[str]:
        return [str(e.get("message")) for e in self.events if e["event"] == "error"]


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupSnapshot:
    """One DescribeGroups answer, decoded."""

    t: float
    state: str
    protocol: str
    members: Mapping[str, str]  # member id -> client id
    assignment: Mapping[str, Mapping[str, tuple[int, ...]]]  # member id -> {topic: partitions}

    def key(self) -> tuple[Any, ...]:
        return (
            self.state,
            tuple(sorted(self.members.items())),
            tuple(sorted((m, tuple(sorted(a.items()))) for m, a in self.assignment.items())),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumerGroupSnapshot:
    """One ConsumerGroupDescribe answer (KIP-848), decoded; partitions as (topic, partition)."""

    t: float
    error: int
    state: str
    group_epoch: int
    assignment_epoch: int
    assignor: str
    members: Mapping[str, str]  # member id -> client id
    subscriptions: Mapping[str, tuple[str, ...]]
    assigned: Mapping[str, frozenset[tuple[str, int]]]
    target: Mapping[str, frozenset[tuple[str, int]]]

    def key(self) -> tuple[Any, ...]:
        return (
            self.state,
            self.assignment_epoch,
            tuple(sorted(self.members.items())),
            tuple(sorted((m, tuple(sorted(t))) for m, t in self.target.items())),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Verification:
    """What :meth:`RealGroup.verify` found: empty ``problems`` means every check passed."""

    generations: int
    checks: tuple[str, ...]
    problems: tuple[str, ...]
    notes: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


class RealGroup:
    """A consumer group of real consumer processes on one broker (a context manager).

    ``topics``: topic -> partition count (created if missing). Every consumer subscribes to all of
    them unless ``start(..., topics=...)`` says otherwise.
    """

    def __init__(
        self,
        bootstrap_servers: str,
        group_id: str,
        topics: Mapping[str, int],
        *,
        session_timeout_ms: int = 3000,
        heartbeat_interval_ms: int = 500,
        max_poll_interval_ms: int = 20_000,
        sample_interval_s: float = 0.05,
    ) -> None:
        from kgc.conformance.wire.client import Cluster

        self.bootstrap = bootstrap_servers
        self.group_id = group_id
        self.topics = dict(topics)
        self.session_timeout_ms = session_timeout_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.max_poll_interval_ms = max_poll_interval_ms
        self.sample_interval_s = sample_interval_s
        self.cluster = Cluster(bootstrap_servers, client_id="kgc-real-clients")
        for topic, n in self.topics.items():
            self.cluster.create_topic(topic, partitions=n)
        self.consumers: dict[str, ConsumerProcess] = {}
        self.subscriptions: dict[str, tuple[str, ...]] = {}
        self.snapshots: list[GroupSnapshot] = []
        self.settled: list[tuple[GroupSnapshot, frozenset[str]]] = []
        self.consumer_settled: list[ConsumerGroupSnapshot] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._describe_lock = threading.Lock()
        self._group_client: Any = None
        self._sampler = threading.Thread(target=self._sample, name="kgc-describe", daemon=True)
        self._sampler.start()

    # lifecycle -----------------------------------------------------------------------------
    def __enter__(self) -> RealGroup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._stop.set()
        for c in self.consumers.values():
            if c.proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(c.proc.pid, signal.SIGCONT)
                    c.proc.terminate()
        for c in self.consumers.values():
            try:
                c.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                c.proc.kill()
                c.proc.wait(timeout=10)
        self._sampler.join(timeout=5)
        with self._describe_lock:
            if self._group_client is not None:
                self._group_client.close()
        self.cluster.close()
        self.cluster.poller.close()

    # consumers -----------------------------------------------------------------------------
    def start(
        self, name: str, lib: str, assignor: str, *, topics: Sequence[str] | None = None
    ) -> ConsumerProcess:
        if lib not in LIBRARIES:
            raise ValueError(f"lib must be one of {LIBRARIES}, got {lib!r}")
        if assignor not in SUPPORTED[lib]:
            raise ValueError(f"{lib} has no {assignor!r} assignor: use one of {SUPPORTED[lib]}")
        client_id = f"{self.group_id}-{name}"
        subscribed = tuple(sorted(topics if topics is not None else self.topics))
        cfg = {
            "lib": lib,
            "bootstrap": self.bootstrap,
            "group_id": self.group_id,
            "client_id": client_id,
            "topics": list(subscribed),
            "partitions": {t: self.topics[t] for t in subscribed if t in self.topics},
            "assignor": assignor,
            "session_timeout_ms": self.session_timeout_ms,
            "heartbeat_interval_ms": self.heartbeat_interval_ms,
            "max_poll_interval_ms": self.max_poll_interval_ms,
        }
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kgc.conformance.drivers.real_clients",
                "worker",
                json.dumps(cfg),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
        )
        consumer = ConsumerProcess(
            name=name, lib=lib, assignor=assignor, client_id=client_id, proc=proc
        )
        consumer.reader = threading.Thread(
            target=self._read, args=(consumer,), name=f"kgc-{name}", daemon=True
        )
        consumer.reader.start()
        threading.Thread(
            target=self._read_stderr, args=(consumer,), name=f"kgc-{name}-stderr", daemon=True
        ).start()
        self.consumers[name] = consumer
        self.subscriptions[name] = subscribed
        return consumer

    def _read(self, consumer: ConsumerProcess) -> None:
        assert consumer.proc.stdout is not None
        for line in consumer.proc.stdout:
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            with self._lock:
                consumer.events.append(event)

    def _read_stderr(self, consumer: ConsumerProcess) -> None:
        assert consumer.proc.stderr is not None
        for line in consumer.proc.stderr:
            with self._lock:
                consumer.stderr_tail.append(line.decode("utf-8", "replace").rstrip())

    def leave(self, name: str, timeout_s: float = 30) -> None:
        """Close the consumer (it sends LeaveGroup) and wait for its process to end."""
        c = self.consumers[name]
        c.proc.terminate()
        c.proc.wait(timeout=timeout_s)
        c.state = "left"

    def kill(self, name: str) -> None:
        """SIGKILL: the consumer vanishes without leaving; the coordinator notices at session
        timeout."""
        c = self.consumers[name]
        c.proc.kill()
        c.proc.wait(timeout=10)
        c.state = "killed"
        with self._lock:
            c.events.append({"t": time.monotonic(), "event": "killed", "owned": []})

    def pause(self, name: str) -> None:
        """SIGSTOP: the consumer stops heartbeating but keeps believing it owns its partitions."""
        c = self.consumers[name]
        os.kill(c.proc.pid, signal.SIGSTOP)
        c.state = "paused"
        c.paused_at = time.monotonic()
        with self._lock:
            c.events.append({"t": c.paused_at, "event": "paused", "owned": sorted(c.owned())})

    def resume(self, name: str) -> None:
        c = self.consumers[name]
        os.kill(c.proc.pid, signal.SIGCONT)
        c.state = "running"
        with self._lock:
            c.events.append({"t": time.monotonic(), "event": "resumed", "owned": []})

    def live(self) -> frozenset[str]:
        return frozenset(n for n, c in self.consumers.items() if c.state == "running")

    # the coordinator's view ----------------------------------------------------------------
    def describe(self) -> GroupSnapshot:
        from kgc.conformance.wire.client import describe_groups

        with self._describe_lock:
            if self._group_client is None:
                self._group_client = self.cluster.group(self.group_id)
            conn = self._group_client.member("describer")
            resp = self.cluster._request(conn, describe_groups(conn, [self.group_id]))
        g = resp.groups[0]
        return GroupSnapshot(
            t=time.monotonic(),
            state=str(g.group_state),
            protocol=str(g.protocol_data or ""),
            members={str(m.member_id): str(m.client_id) for m in g.members},
            assignment={
                str(m.member_id): decode_member_assignment(m.member_assignment) for m in g.members
            },
        )

    def describe_consumer_group(self) -> ConsumerGroupSnapshot:
        """The coordinator's view of a KIP-848 consumer group (ConsumerGroupDescribe)."""
        from kgc.conformance.wire.client import consumer_group_describe

        with self._describe_lock:
            if self._group_client is None:
                self._group_client = self.cluster.group(self.group_id)
            conn = self._group_client.member("describer")
            resp = self.cluster._request(conn, consumer_group_describe(conn, [self.group_id]))
        names = {tid: name for name, tid in self.cluster.topic_ids(list(self.topics)).items()}

        def tps(assignment: Any) -> frozenset[tuple[str, int]]:
            return frozenset(
                (names.get(t.topic_id, f"unknown-topic-{t.topic_id}"), p)
                for t in assignment.topic_partitions
                for p in t.partitions
            )

        (g,) = resp.groups
        return ConsumerGroupSnapshot(
            t=time.monotonic(),
            error=int(g.error_code),
            state=str(g.group_state),
            group_epoch=int(g.group_epoch),
            assignment_epoch=int(g.assignment_epoch),
            assignor=str(g.assignor_name),
            members={str(m.member_id): str(m.client_id) for m in g.members},
            subscriptions={
                str(m.member_id): tuple(sorted(m.subscribed_topic_names or ())) for m in g.members
            },
            assigned={str(m.member_id): tps(m.assignment) for m in g.members},
            target={str(m.member_id): tps(m.target_assignment) for m in g.members},
        )

    def wait_consumer_group_settled(
        self, expected: Iterable[str] | None = None, timeout_s: float = 60
    ) -> ConsumerGroupSnapshot:
        """KIP-848: wait until ConsumerGroupDescribe says Stable with exactly the ``expected``
        consumers (default: every running one), every subscribed partition in the target, each
        member owning its target, and each consumer reporting that it owns just that — twice in a
        row. Raises ``AssertionError`` describing the last state otherwise."""
        want = frozenset(self.live() if expected is None else expected)
        want_clients = {self.consumers[n].client_id: n for n in want}
        total = sum(self.topics.values())
        deadline = time.monotonic() + timeout_s
        last: ConsumerGroupSnapshot | None = None
        why = "no answer yet"
        while time.monotonic() < deadline:
            for c in self.consumers.values():
                if c.errors():
                    raise AssertionError(f"consumer {c.name} failed: {c.errors()[0]}")
            try:
                snap = self.describe_consumer_group()
            except Exception as exc:
                why = f"ConsumerGroupDescribe failed: {exc}"
                time.sleep(0.2)
                continue
            by_client = {client: m for m, client in snap.members.items()}
            if snap.state != "Stable":
                why = f"state {snap.state}"
            elif set(by_client) != set(want_clients):
                why = f"members {sorted(by_client)} != {sorted(want_clients)}"
            elif sum(len(t) for t in snap.target.values()) != total:
                why = "not every partition is in the target"
            elif any(snap.assigned[m] != snap.target[m] for m in snap.members):
                why = "a member does not own its target yet"
            elif any(
                self.consumers[want_clients[c]].owned() != snap.assigned[m]
                for c, m in by_client.items()
            ):
                why = "a consumer does not report owning what the coordinator assigned it"
            else:
                if last is not None and last.key() == snap.key():
                    with self._lock:
                        self.consumer_settled.append(snap)
                    return snap
                last = snap
                time.sleep(0.15)
                continue
            last = None
            time.sleep(0.15)
        raise AssertionError(
            f"consumer group {self.group_id} did not settle with {sorted(want)} in {timeout_s} s: "
            f"{why}\n" + self.diagnose(sorted(self.consumers))
        )

    def verify_consumer_group(self) -> Verification:
        """Z3 on what a KIP-848 group showed: every settled target keeps its assignor's promises
        (``check_generation``: one owner, only subscribers, balance), and the consumers' own
        ownership intervals never overlap for a partition (``check_ownership_timeline``)."""
        from kgc.properties.assignment_z3 import check_generation, check_ownership_timeline

        problems: list[str] = []
        checks: list[str] = []
        for snap in self.consumer_settled:
            assignor = "server-range" if snap.assignor == "range" else snap.assignor
            result = check_generation(
                dict(snap.subscriptions),
                {m: sorted(t) for m, t in snap.target.items()},
                partitions_per_topic=self.topics,
                generation_id=snap.assignment_epoch,
                assignor=assignor,
                check_handoff=False,
            )
            checks.append(f"target at epoch {snap.assignment_epoch}: {result.verdict.value}")
            if str(result.verdict) not in ("PASS", "Verdict.PASS"):
                problems.append(f"target at epoch {snap.assignment_epoch}: {result}")
        timeline = check_ownership_timeline(self.intervals())
        checks.append(f"ownership timeline: {timeline.verdict.value}")
        if str(timeline.verdict) not in ("PASS", "Verdict.PASS"):
            problems.append(f"ownership timeline: {timeline}")
        return Verification(
            generations=len(self.consumer_settled), checks=tuple(checks),
            problems=tuple(problems), notes=(),
        )  # fmt: skip

    def _sample(self) -> None:
        last: tuple[Any, ...] | None = None
        while not self._stop.is_set():
            try:
                snap = self.describe()
            except Exception:  # the coordinator may be moving; the next sample retries
                snap = None
            if snap is not None and snap.key() != last:
                last = snap.key()
                with self._lock:
                    self.snapshots.append(snap)
            self._stop.wait(self.sample_interval_s)

    def wait_settled(
        self, expected: Iterable[str] | None = None, timeout_s: float = 60
    ) -> GroupSnapshot:
        """Wait until the group is Stable with exactly the ``expected`` consumers (default: every
        running one), every subscribed partition assigned, and each consumer reporting that it
        owns exactly what the coordinator assigned it; the answer must hold for two samples in a
        row. Raises ``AssertionError`` describing the last state otherwise."""
        want = frozenset(self.live() if expected is None else expected)
        want_clients = {self.consumers[n].client_id: n for n in want}
        deadline = time.monotonic() + timeout_s
        agreed = 0
        last: GroupSnapshot | None = None
        why = "no answer yet"
        while time.monotonic() < deadline:
            for c in self.consumers.values():
                if c.errors():
                    raise AssertionError(
                        f"consumer {c.name} ({c.lib}) failed: {c.errors()[0]}\n"
                        + self.diagnose([c.name])
                    )
            try:
                snap = self.describe()
            except Exception as exc:
                why = f"DescribeGroups failed: {exc}"
                time.sleep(0.2)
                continue
            ok, why = self._settled(snap, want_clients)
            if ok and last is not None and snap.key() == last.key():
                agreed += 1
                if agreed >= 2:
                    with self._lock:
                        self.settled.append((snap, want))
                    return snap
            elif not ok:
                agreed = 0
            last = snap
            time.sleep(0.15)
        raise AssertionError(
            f"group {self.group_id} did not settle with {sorted(want)} in {timeout_s} s: {why}\n"
            + (f"last DescribeGroups: {_render_snapshot(last)}\n" if last is not None else "")
            + self.diagnose(sorted(self.consumers))
        )

    def diagnose(self, names: Iterable[str], *, events: int = 8, log_lines: int = 25) -> str:
        """Each named consumer's process state, its last ``events`` reports and the last
        ``log_lines`` of its stderr (kafka-python's coordinator log at INFO), times in seconds
        before now on the workers' shared monotonic clock."""
        now = time.monotonic()
        out = []
        with self._lock:
            snapshot = {
                n: (list(self.consumers[n].events), list(self.consumers[n].stderr_tail))
                for n in names
            }
        for name, (evs, tail) in snapshot.items():
            c = self.consumers[name]
            alive = "running" if c.proc.poll() is None else f"exited {c.proc.returncode}"
            out.append(f"-- {name} ({c.lib}, {c.client_id}, {alive}, harness state {c.state}):")
            for e in evs[-events:]:
                member = str(e.get("member_id") or "")
                out.append(
                    f"   {now - e['t']:7.2f} s ago {e['event']:<10} "
                    f"generation={e.get('generation')} member=…{member[-12:]} "
                    f"owned={e.get('owned')}" + (f" {e['message']}" if "message" in e else "")
                )
            if tail:
                out.append(f"   stderr, last {min(log_lines, len(tail))} lines:")
                for line in tail[-log_lines:]:
                    mono, _, rest = line.partition(" ")
                    with contextlib.suppress(ValueError):  # a line kafka-python did not log
                        line = f"{now - float(mono):7.2f} s ago {rest}"
                    out.append(f"     {line}")
        return "\n".join(out)

    def _settled(self, snap: GroupSnapshot, want_clients: Mapping[str, str]) -> tuple[bool, str]:
        if snap.state != "Stable":
            return False, f"state {snap.state}"
        clients = set(snap.members.values())
        if clients != set(want_clients):
            names = sorted(n for c, n in want_clients.items())
            return False, f"members {sorted(clients)}, expected clients of {names}"
        wanted = {
            (t, p)
            for n in want_clients.values()
            for t in self.subscriptions[n]
            for p in range(self.topics.get(t, 0))
        }
        assigned: set[tuple[str, int]] = set()
        for member, client in snap.members.items():
            mine = {(t, p) for t, ps in snap.assignment.get(member, {}).items() for p in ps}
            consumer = self.consumers[want_clients[client]]
            if consumer.owned() != frozenset(mine):
                return False, (
                    f"{consumer.name} reports owning {sorted(consumer.owned())}, the coordinator "
                    f"assigned {sorted(mine)}"
                )
            assigned |= mine
        if not wanted <= assigned:
            return False, f"unassigned partitions {sorted(wanted - assigned)}"
        return True, "settled"

    # verification --------------------------------------------------------------------------
    def name_of_member(self) -> dict[str, str]:
        """Broker member id -> consumer name (from the snapshots' client ids)."""
        by_client = {c.client_id: n for n, c in self.consumers.items()}
        out: dict[str, str] = {}
        for snap in self.snapshots:
            for member, client in snap.members.items():
                if client in by_client:
                    out[member] = by_client[client]
        return out

    def verify(self, assignor: str) -> Verification:
        """Check everything recorded so far (see the module docstring)."""
        from kgc.model.assignors import Subscription, TopicPartition, assign
        from kgc.properties.assignment_codec import partitions_of
        from kgc.properties.assignment_z3 import (
            Generation,
            Verdict,
            check_generation,
            check_ownership_timeline,
        )

        problems: list[str] = []
        notes: list[str] = []
        checks: list[str] = []
        protocol = ASSIGNOR_PROTOCOL[assignor]
        names = self.name_of_member()
        with self._lock:
            snapshots = list(self.snapshots)
        stable: list[GroupSnapshot] = []
        for snap in snapshots:
            if (
                snap.state == "Stable"
                and snap.members
                and (not stable or snap.key() != stable[-1].key())
            ):
                stable.append(snap)
        prev: Generation | None = None
        prev_gen_id: int | None = None
        for snap in stable:
            members = {m: names.get(m, m) for m in snap.members}
            subs = {
                members[m]: self.subscriptions.get(members[m], tuple(self.topics)) for m in members
            }
            assignment = {members[m]: dict(snap.assignment.get(m, {})) for m in members}
            gen_id = self._generation_of(snap)
            label = _label(snap, members, gen_id)
            # Kafka's assignors skip a topic the leader has no metadata for yet
            # (AbstractPartitionAssignor.assign): a topic with no partition assigned at all.
            known = {
                t: n for t, n in self.topics.items() if any(t in a for a in assignment.values())
            }
            for t in sorted(set(self.topics) - set(known)):
                notes.append(f"{label}: no partition of {t} assigned (leader without its metadata)")
            adjacent = (
                prev is not None
                and gen_id is not None
                and prev_gen_id is not None
                and gen_id == prev_gen_id + 1
            )
            result = check_generation(
                subs,
                assignment,
                prev if (adjacent or protocol == "cooperative") else None,
                partitions_per_topic=known,
                generation_id=gen_id,
                assignor=assignor,
                protocol=protocol,
                check_handoff=adjacent,
            )
            checks.append(f"{label}: {result.verdict.value} ({', '.join(result.checked)})")
            if result.verdict is Verdict.FAIL:
                problems.append(f"{label}: {result.summary()}")
            elif result.verdict is Verdict.UNKNOWN:
                problems.append(f"{label}: Z3 could not decide ({result.reason})")
            if (
                prev is not None
                and not adjacent
                and (protocol == "cooperative" or assignor == "sticky")
            ):
                notes.append(
                    f"{label}: previous Stable generation not known to be the one just before, so "
                    "stickiness and the hand-off are checked on the consumers' own timelines only"
                )
            if assignor in ("range", "roundrobin") and known:
                expected = assign(
                    assignor,
                    known,
                    {m: Subscription(topics=subs[members[m]]) for m in snap.members},
                )
                want = {members[m]: tuple(sorted(v)) for m, v in expected.items()}
                actual = {m: tuple(sorted(partitions_of(a))) for m, a in assignment.items()}
                if actual != want:
                    problems.append(
                        f"{label}: the {assignor} assignment differs from the model's: "
                        f"got {_render(actual)}, model {_render(want)}"
                    )
                else:
                    checks.append(f"{label}: equals the model's {assignor} assignment")
            prev = Generation(
                generation_id=gen_id,
                subscriptions={},
                assignment={
                    m: frozenset(TopicPartition(t, p) for t, ps in a.items() for p in ps)
                    for m, a in assignment.items()
                },
            )
            prev_gen_id = gen_id
        # membership of each settled group vs the scenario's expectation
        for snap, expected_members in self.settled:
            got = sorted(names.get(m, m) for m in snap.members)
            if got != sorted(expected_members):
                problems.append(f"settled membership {got}, expected {sorted(expected_members)}")
            else:
                checks.append(f"settled membership {got} as expected")
        # generations only increase, as kafka-python members report them
        for name, c in self.consumers.items():
            gens = [e["generation"] for e in c.events if e.get("generation") is not None]
            gens = [g for g in gens if g >= 0]
            if any(b < a for a, b in zip(gens, gens[1:], strict=False)):
                problems.append(f"{name} saw its generation go backwards: {gens}")
        timeline = check_ownership_timeline(self.intervals())
        checks.append(f"consumer ownership timeline: {timeline.verdict.value}")
        if timeline.verdict is not Verdict.PASS:
            problems.append(f"consumer ownership timeline: {timeline.summary()}")
        return Verification(
            generations=len(stable),
            checks=tuple(checks),
            problems=tuple(problems),
            notes=tuple(notes),
        )

    def _generation_of(self, snap: GroupSnapshot) -> int | None:
        """The generation of a Stable snapshot, from kafka-python members (they know theirs):
        the generations they report, owning what this snapshot assigns them, while it was the
        group's state (from its first sample, less 0.3 s for a report that beat the sampler, to
        the next distinct sample).
        ``None`` unless exactly one generation was reported: then the hand-off between this and
        the previous snapshot is checked on the consumers' timelines only."""
        with self._lock:
            later = [s.t for s in self.snapshots if s.t > snap.t]
            events = {n: list(c.events) for n, c in self.consumers.items()}
        until = min(later) + 0.05 if later else float("inf")
        found: set[int] = set()
        for name, evs in events.items():
            if self.consumers[name].lib != "kafka-python":
                continue
            client = self.consumers[name].client_id
            member = next((m for m, cl in snap.members.items() if cl == client), None)
            if member is None:
                continue
            mine = sorted([t, p] for t, ps in snap.assignment.get(member, {}).items() for p in ps)
            for e in evs:
                g = e.get("generation")
                if (
                    g is not None
                    and g >= 0
                    and e.get("member_id") == member
                    and e.get("owned") == mine
                    and snap.t - 0.3 <= e["t"] <= until
                ):
                    found.add(int(g))
        return found.pop() if len(found) == 1 else None

    def intervals(self) -> list[tuple[str, tuple[str, int], float, float]]:
        """Each consumer's ownership of each partition as (consumer, partition, from, to): from
        its own reports; a killed consumer owns nothing after the kill; a paused one nothing from
        the pause until it reports again after resuming (a stalled consumer's belief that it still
        owns its partitions is the zombie case Kafka fences at commit time, not here)."""
        now = time.monotonic()
        out: list[tuple[str, tuple[str, int], float, float]] = []
        with self._lock:
            events = {n: list(c.events) for n, c in self.consumers.items()}
        for name, evs in events.items():
            owned: dict[tuple[str, int], float] = {}
            stalled = False
            for e in evs:
                kind = e["event"]
                if kind in ("paused", "killed"):
                    for tp, since in owned.items():
                        out.append((name, tp, since, e["t"]))
                    owned.clear()
                    stalled = True
                    continue
                if kind == "resumed":
                    continue
                if kind not in ("assigned", "revoked", "lost", "closed"):
                    continue
                now_owned = {(t, p) for t, p in e.get("owned", [])}
                if stalled:  # the first report after a stall: the zombie window ends here
                    stalled = False
                    owned = {tp: e["t"] for tp in now_owned}
                    continue
                for tp in list(owned):
                    if tp not in now_owned:
                        out.append((name, tp, owned.pop(tp), e["t"]))
                for tp in now_owned:
                    owned.setdefault(tp, e["t"])
            for tp, since in owned.items():
                out.append((name, tp, since, now))
        return out


def _label(snap: GroupSnapshot, members: Mapping[str, str], gen_id: int | None) -> str:
    who = ", ".join(sorted(members.values()))
    g = f"generation {gen_id}" if gen_id is not None else "a generation"
    return f"{g} [{who}]"


def _render_snapshot(snap: GroupSnapshot) -> str:
    members = ", ".join(
        f"…{m[-12:]} ({client}): {dict(snap.assignment.get(m, {}))}"
        for m, client in sorted(snap.members.items(), key=lambda kv: kv[1])
    )
    return f"{snap.state}, members [{members}]"


def _render(assignment: Mapping[str, Sequence[Any]]) -> str:
    return "; ".join(
        f"{m}: {' '.join(str(tp) for tp in tps)}" for m, tps in sorted(assignment.items())
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) == 2 and args[0] == "worker":
        return worker_main(args[1])
    print(
        "usage: python -m kgc.conformance.drivers.real_clients worker CONFIG_JSON", file=sys.stderr
    )
    return 2


if __name__ == "__main__":
    sys.exit(main())
