"""Apache Kafka release lines: which ones kgc can launch on this machine's Java, and how.

Each line was measured, not assumed: the newest patch of every line from 0.10 to 4.4 was fetched
from Maven Central and started as one node by
:class:`kgc.conformance.brokers.embedded.EmbeddedKafka` on OpenJDK 17.0.15 (2026-11-25). A line
that cannot start says why, in the words of its own log:

* **0.10, 0.11**: the broker dies at start-up with ``NoClassDefFoundError:
  javax/xml/bind/DatatypeConverter``. JAXB left the JDK in Java 11 (JEP 320); these releases use it
  for their ZooKeeper ACL code and do not ship it.
* **2.0 - 2.3**: they ship the ZooKeeper 3.4.13 / 3.4.14 client, whose
  ``StaticHostProvider.getHostString`` parses ``InetSocketAddress.toString()``. From Java 14 that
  string reads ``127.0.0.1/<unresolved>:port``, so the client never resolves the server and the
  broker stops with ``ZooKeeperClientTimeoutException`` (ZOOKEEPER-3779, fixed only in 3.5.8).
  1.0 and 1.1 ship ZooKeeper 3.4.10, from before that code, and 2.4 on ship 3.5.6 or newer.

Lines before 3.3 run on ZooKeeper only as far as kgc is concerned (KRaft is production-ready from
3.3, KIP-833); 3.3 - 3.9 run either way and default to KRaft; 4.x has no ZooKeeper mode.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from kgc.conformance.errors import UnknownKafkaVersion


@dataclass(frozen=True, slots=True, kw_only=True)
class ReleaseLine:
    line: str  # "3.9"
    latest: str  # its newest patch release on Maven Central
    modes: tuple[str, ...]  # the first is the default
    cannot_run: str | None = None  # why the line cannot start here (measured), or None

    @property
    def default_mode(self) -> str:
        return self.modes[0]


_ZK = ("zookeeper",)
_BOTH = ("kraft", "zookeeper")
_KRAFT = ("kraft",)
_JAXB = (
    "its broker dies at start-up on Java 11+ (NoClassDefFoundError: "
    "javax/xml/bind/DatatypeConverter; JAXB left the JDK in Java 11)"
)
_ZK3779 = (
    "its ZooKeeper 3.4.13/3.4.14 client cannot connect on Java 14+ (ZOOKEEPER-3779: it parses "
    "'127.0.0.1/<unresolved>:port'), so the broker stops with ZooKeeperClientTimeoutException"
)

LINES: tuple[ReleaseLine, ...] = (
    ReleaseLine(line="0.10", latest="0.10.2.2", modes=_ZK, cannot_run=_JAXB),
    ReleaseLine(line="0.11", latest="0.11.0.3", modes=_ZK, cannot_run=_JAXB),
    ReleaseLine(line="1.0", latest="1.0.2", modes=_ZK),
    ReleaseLine(line="1.1", latest="1.1.1", modes=_ZK),
    ReleaseLine(line="2.0", latest="2.0.1", modes=_ZK, cannot_run=_ZK3779),
    ReleaseLine(line="2.1", latest="2.1.1", modes=_ZK, cannot_run=_ZK3779),
    ReleaseLine(line="2.2", latest="2.2.2", modes=_ZK, cannot_run=_ZK3779),
    ReleaseLine(line="2.3", latest="2.3.1", modes=_ZK, cannot_run=_ZK3779),
    ReleaseLine(line="2.4", latest="2.4.1", modes=_ZK),
    ReleaseLine(line="2.5", latest="2.5.1", modes=_ZK),
    ReleaseLine(line="2.6", latest="2.6.3", modes=_ZK),
    ReleaseLine(line="2.7", latest="2.7.2", modes=_ZK),
    ReleaseLine(line="2.8", latest="2.8.2", modes=_ZK),
    ReleaseLine(line="3.0", latest="3.0.2", modes=_ZK),
    ReleaseLine(line="3.1", latest="3.1.2", modes=_ZK),
    ReleaseLine(line="3.2", latest="3.2.3", modes=_ZK),
    ReleaseLine(line="3.3", latest="3.3.2", modes=_BOTH),
    ReleaseLine(line="3.4", latest="3.4.1", modes=_BOTH),
    ReleaseLine(line="3.5", latest="3.5.2", modes=_BOTH),
    ReleaseLine(line="3.6", latest="3.6.2", modes=_BOTH),
    ReleaseLine(line="3.7", latest="3.7.2", modes=_BOTH),
    ReleaseLine(line="3.8", latest="3.8.1", modes=_BOTH),
    ReleaseLine(line="3.9", latest="3.9.2", modes=_BOTH),
    ReleaseLine(line="4.0", latest="4.0.2", modes=_KRAFT),
    ReleaseLine(line="4.1", latest="4.1.2", modes=_KRAFT),
    ReleaseLine(line="4.2", latest="4.2.2", modes=_KRAFT),
    ReleaseLine(line="4.3", latest="4.3.1", modes=_KRAFT),
    ReleaseLine(line="4.4", latest="4.4.0", modes=_KRAFT),
)
_BY_LINE = {line.line: line for line in LINES}

SUPPORTED_LINES: tuple[ReleaseLine, ...] = tuple(x for x in LINES if x.cannot_run is None)


def supported_summary() -> str:
    """``1.0 - 1.1, 2.4 - 4.4`` style list of the lines kgc runs."""
    runs: list[list[str]] = []
    previous_ok = False
    for x in LINES:
        if x.cannot_run is None:
            if previous_ok:
                runs[-1].append(x.line)
            else:
                runs.append([x.line])
        previous_ok = x.cannot_run is None
    return ", ".join(r[0] if len(r) == 1 else f"{r[0]} - {r[-1]}" for r in runs)


def line_name(version: str) -> str:
    """``"3.9"`` for ``"3.9.2"``; ``"0.11"`` for ``"0.11.0.3"``."""
    match = re.match(r"(\d+)\.(\d+)", version)
    if match is None:
        raise UnknownKafkaVersion(f"malformed Kafka version {version!r}; use X.Y.Z, e.g. 4.3.1")
    return f"{int(match.group(1))}.{int(match.group(2))}"


def release_line(version: str) -> ReleaseLine:
    """The line of ``version``; raises a one-line :class:`UnknownKafkaVersion` when kgc cannot
    run it here (before anything is downloaded)."""
    name = line_name(version)
    line = _BY_LINE.get(name)
    newer = tuple(map(int, name.split("."))) > tuple(map(int, LINES[-1].line.split(".")))
    if line is None and newer and os.environ.get("KGC_ALLOW_UNLISTED_KAFKA") == "1":
        return ReleaseLine(line=name, latest=version, modes=_KRAFT)
    if line is None:
        raise UnknownKafkaVersion(
            f"Apache Kafka {version} is outside the release lines kgc knows "
            f"({LINES[0].line} - {LINES[-1].line}); it runs {supported_summary()}"
        )
    if line.cannot_run is not None:
        raise UnknownKafkaVersion(
            f"Apache Kafka {name}.x cannot run on this machine's Java: {line.cannot_run}; "
            f"kgc runs {supported_summary()}"
        )
    return line


def default_mode(version: str) -> str:
    """``kraft`` from 3.3 on, ``zookeeper`` before (see the module docstring)."""
    return release_line(version).default_mode
