"""librdkafka's mock cluster as a broker kgc can start, run against and tear down
(``kgc check --implementation librdkafka-mock``).

The mock cluster lives inside librdkafka (and so inside the ``confluent-kafka`` wheel): a client
configured with ``test.mock.num.brokers`` and no ``bootstrap.servers`` starts one on a random
loopback port and names it in its metadata. It runs in a process of its own (``python -m
kgc.conformance.rdkafka_mock``), because the mock aborts the whole process on some requests (an
``rd_assert`` in its group code), and kgc must see that as a broker that went away, not die with it.

:class:`RdKafkaMock` starts that process, reads the address it prints, and keeps its stderr, where
librdkafka writes the failed assertion, for the report.
"""

from __future__ import annotations

import contextlib
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import Any

from kgc.conformance.errors import KgcError

IMPLEMENTATION = "librdkafka-mock"
READY_PREFIX = "kgc-rdkafka-mock listening on "


class MockUnavailable(KgcError):
    """The mock cluster could not be started (message: why, and what to install)."""


class RdKafkaMock:
    """A started librdkafka mock cluster of ``brokers`` brokers (``with`` or ``start``/``stop``)."""

    can_inject_faults = False  # kgc's nemesis acts on JVMs it started; the mock has none

    def __init__(self, brokers: int = 1, *, timeout_s: float = 30.0) -> None:
        self._brokers = brokers
        self._timeout_s = timeout_s
        self._proc: subprocess.Popen[str] | None = None
        self._stderr: Any = None
        self._bootstrap: str | None = None
        self._version = "unknown"

    @property
    def bootstrap_servers(self) -> str:
        if self._bootstrap is None:
            raise MockUnavailable("the librdkafka mock cluster is not started")
        return self._bootstrap

    @property
    def version(self) -> str:
        return self._version

    def start(self) -> RdKafkaMock:
        self._stderr = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 - closed in stop()
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "kgc.conformance.rdkafka_mock", str(self._brokers)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
        )
        assert self._proc.stdout is not None
        deadline = time.monotonic() + self._timeout_s
        line = ""
        while time.monotonic() < deadline and self._proc.poll() is None:
            line = self._proc.stdout.readline()
            if line.startswith(READY_PREFIX):
                break
        if not line.startswith(READY_PREFIX):
            why = self.stderr_tail() or "no output"
            self.stop()
            raise MockUnavailable(
                f"librdkafka's mock cluster did not start ({why}); it comes with "
                "confluent-kafka: pip install 'kafka-group-conformance[clients]'"
            )
        version, _, address = line[len(READY_PREFIX) :].strip().partition(" ")
        self._version, self._bootstrap = version, address
        return self

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def exit_status(self) -> int | None:
        """The mock process's exit status once it ended (``-6``: SIGABRT, a failed assertion)."""
        return None if self._proc is None else self._proc.poll()

    def stderr_tail(self, lines: int = 3) -> str:
        """The last lines the mock process wrote to stderr (librdkafka's failed assertion)."""
        if self._stderr is None:
            return ""
        with contextlib.suppress(ValueError, OSError):
            self._stderr.flush()
            self._stderr.seek(0)
            text = [x for x in self._stderr.read().splitlines() if x.strip()]
            return " | ".join(text[-lines:])
        return ""

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            with contextlib.suppress(OSError):
                self._proc.send_signal(signal.SIGTERM)
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(10)
        if self._proc is not None:
            for stream in (self._proc.stdin, self._proc.stdout):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()

    def close(self) -> None:
        self.stop()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def __enter__(self) -> RdKafkaMock:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def describe(self) -> dict[str, Any]:
        return {
            "implementation": IMPLEMENTATION,
            "version": self._version,
            "mode": "mock",
            "nodes": self._brokers,
            "bootstrap_servers": self._bootstrap,
        }


IMPLEMENTATIONS = ("apache-kafka", IMPLEMENTATION)  # what ``kgc check --implementation`` takes


class Launched:
    """A broker kgc launched that is not Apache Kafka: the launcher's own description (name and
    version) over what probing it as any Kafka-protocol broker learns (``ExternalKafka``: the
    rules that judge it, chosen from ApiVersions). kgc never injects faults into it."""

    can_inject_faults = False

    def __init__(self, launcher: RdKafkaMock, probed: Any) -> None:
        self.launcher = launcher
        self._probed = probed

    @property
    def bootstrap_servers(self) -> str:
        return self.launcher.bootstrap_servers

    @property
    def version(self) -> str:
        return self.launcher.version

    def describe(self) -> dict[str, Any]:
        return {**self._probed.describe(), **self.launcher.describe()}

    def ended(self) -> str | None:
        """How the broker's process ended during the run, if it did: its exit status and the
        last words it wrote (librdkafka's failed assertion); None while it runs."""
        status = self.launcher.exit_status()
        if status is None:
            return None
        how = f"signal {signal.Signals(-status).name}" if status < 0 else f"exit status {status}"
        tail = self.launcher.stderr_tail()
        return f"the {IMPLEMENTATION} process ended ({how})" + (f": {tail}" if tail else "")


@contextlib.contextmanager
def launched(implementation: str, *, nodes: int = 1) -> Iterator[Launched]:
    """Start ``implementation`` on loopback, probe it, yield it, and stop it after."""
    from kgc.conformance.providers import ExternalKafka

    if implementation != IMPLEMENTATION:
        raise MockUnavailable(
            f"unknown implementation {implementation!r}; kgc launches "
            f"{', '.join(IMPLEMENTATIONS)} (any other broker: --bootstrap-server HOST:PORT)"
        )
    with RdKafkaMock(nodes) as mock:
        yield Launched(mock, ExternalKafka(mock.bootstrap_servers).start())


def _serve(brokers: int) -> None:
    """The mock process: start the cluster, print its address, serve until SIGTERM or stdin
    closes (the parent went away)."""
    import confluent_kafka

    producer = confluent_kafka.Producer(
        {"test.mock.num.brokers": brokers, "bootstrap.servers": "", "log_level": 3}
    )
    metadata = producer.list_topics(timeout=10)
    first = min(metadata.brokers.values(), key=lambda b: b.id)
    stop: list[int] = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    version = confluent_kafka.libversion()[0]
    print(f"{READY_PREFIX}{version} {first.host}:{first.port}", flush=True)
    while not stop:
        producer.poll(0.2)
        ready, _, _ = select.select([sys.stdin], [], [], 0)
        if ready and not sys.stdin.read(1):
            return  # stdin closed: the parent is gone


if __name__ == "__main__":
    _serve(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
