"""Fetch genuine Apache Kafka jars from Maven Central into a per-version cache.

The broker artifact is ``org.apache.kafka:kafka_<scala>:<version>`` (Kafka's ``core`` Gradle
project), built for Scala 2.13 from Kafka 2.4.0 on and for Scala 2.12 before (:func:`scala_binary`);
its runtime closure carries clients, server, raft, metadata, storage and group-coordinator. What the
release tarball adds through other projects is the logging backend, so we add it here:

* 4.x logs through log4j2 but its slf4j-api is 1.7.x, so the bridge is ``log4j-slf4j-impl`` 2.24.3
  (not the slf4j2 bridge);
* 3.x logs through reload4j: ``slf4j-reload4j`` 1.7.36 + ``reload4j`` 1.2.25.

A tiny POM is written into ``<cache>/kafka/<version>/`` and Maven copies the runtime closure into
``libs/``. A marker file makes the second call offline; a file lock plus an atomic rename of a
temporary directory keeps concurrent calls from corrupting the cache. ``<cache>`` is
``$KGC_CACHE_DIR`` or ``~/.cache/kgc``. Extra Maven arguments (e.g. ``-o`` or
``-Dmaven.repo.local=...``) can be passed in ``$KGC_MAVEN_ARGS``.
"""

from __future__ import annotations

import fcntl
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

from kgc.conformance.errors import (
    JavaNotFound,
    KafkaResolutionError,
    MavenNotFound,
    MavenOffline,
    UnknownKafkaVersion,
)

DEFAULT_KAFKA_VERSION = "4.3.1"
"""Newest 4.x whose POM resolves completely from Maven Central (4.4.0 references a missing
kafka-tools-api 4.4.0)."""

ZOOKEEPER_KAFKA_VERSION = "3.9.2"
"""Newest release line that still runs brokers on ZooKeeper (removed in 4.0)."""

# Versions of Apache Kafka's broker published on Maven Central (the maven-metadata.xml of
# org.apache.kafka:kafka_2.13 from 2.4.0 and of kafka_2.12 before, read 2026-11-25). Used to reject
# a typo without a network round trip; a release newer than this list is still tried when
# KGC_ALLOW_UNLISTED_KAFKA=1.
PUBLISHED_KAFKA_VERSIONS: tuple[str, ...] = (
    "1.0.0", "1.0.1", "1.0.2", "1.1.0", "1.1.1",
    "2.0.0", "2.0.1", "2.1.0", "2.1.1", "2.2.0", "2.2.1", "2.2.2", "2.3.0", "2.3.1",
    "2.4.0", "2.4.1", "2.5.0", "2.5.1", "2.6.0", "2.6.1", "2.6.2", "2.6.3",
    "2.7.0", "2.7.1", "2.7.2", "2.8.0", "2.8.1", "2.8.2",
    "3.0.0", "3.0.1", "3.0.2", "3.1.0", "3.1.1", "3.1.2", "3.2.0", "3.2.1", "3.2.2", "3.2.3",
    "3.3.0", "3.3.1", "3.3.2", "3.4.0", "3.4.1", "3.5.0", "3.5.1", "3.5.2",
    "3.6.0", "3.6.1", "3.6.2", "3.7.0", "3.7.1", "3.7.2", "3.8.0", "3.8.1",
    "3.9.0", "3.9.1", "3.9.2",
    "4.0.0", "4.0.1", "4.0.2", "4.1.0", "4.1.1", "4.1.2", "4.2.0", "4.2.1", "4.2.2",
    "4.3.0", "4.3.1", "4.4.0",
)  # fmt: skip


def scala_binary(version: str) -> str:
    """The Scala binary version of the broker artifact: ``kafka_2.13`` exists from 2.4.0 on, older
    releases are published as ``kafka_2.12`` (and ``kafka_2.11``)."""
    parts = tuple(int(p) for p in re.findall(r"\d+", version)[:2])
    return "2.13" if parts >= (2, 4) else "2.12"


def broker_artifact(version: str) -> str:
    return f"kafka_{scala_binary(version)}"


MIN_JAVA_MAJOR = 17
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.6.1"
"""Pinned, so resolution does not depend on the Maven installation's default plugin version."""
_COMPLETE_MARKER = ".kgc-complete"
_VERSION_RE = re.compile(r"^\d+\.\d+\.\d+(?:\.\d+)?(?:-[A-Za-z0-9.]+)?$")


def cache_root() -> Path:
    """``$KGC_CACHE_DIR`` or ``~/.cache/kgc``."""
    env = os.environ.get("KGC_CACHE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "kgc"


def maven_repository() -> Path:
    """Maven's local repository: ``-Dmaven.repo.local=`` in ``$KGC_MAVEN_ARGS``, else
    ``~/.m2/repository``."""
    for arg in shlex.split(os.environ.get("KGC_MAVEN_ARGS", "")):
        if arg.startswith("-Dmaven.repo.local="):
            return Path(arg.split("=", 1)[1]).expanduser()
    return Path.home() / ".m2" / "repository"


def logging_backend(version: str) -> list[tuple[str, str, str]]:
    """(groupId, artifactId, version) of the SLF4J backend the release tarball would carry."""
    if _major(version) >= 4:
        return [("org.apache.logging.log4j", "log4j-slf4j-impl", "2.24.3")]
    return [("org.slf4j", "slf4j-reload4j", "1.7.36"), ("ch.qos.reload4j", "reload4j", "1.2.25")]


def _major(version: str) -> int:
    return int(version.split(".", 1)[0])


def check_version(version: str) -> None:
    """Reject a malformed or unpublished version without touching the network."""
    if not _VERSION_RE.match(version):
        raise UnknownKafkaVersion(
            f"malformed Kafka version {version!r}; use X.Y.Z, e.g. {DEFAULT_KAFKA_VERSION}"
        )
    from kgc.conformance.artifacts.releases import release_line

    release_line(version)  # a line that cannot run here fails before any download
    if version in PUBLISHED_KAFKA_VERSIONS or os.environ.get("KGC_ALLOW_UNLISTED_KAFKA") == "1":
        return
    listed = ", ".join(PUBLISHED_KAFKA_VERSIONS)
    raise UnknownKafkaVersion(
        f"unknown Kafka version {version}; known: {listed} "
        "(for a newer release set KGC_ALLOW_UNLISTED_KAFKA=1)"
    )


def _pom(version: str) -> str:
    deps = [("org.apache.kafka", broker_artifact(version), version), *logging_backend(version)]
    dep_xml = "\n".join(
        f"    <dependency><groupId>{g}</groupId><artifactId>{a}</artifactId>"
        f"<version>{v}</version></dependency>"
        for g, a, v in deps
    )
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<!-- written by kgc: the runtime closure of Apache Kafka {version} plus its logging backend -->
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>kgc</groupId>
  <artifactId>kafka-runtime</artifactId>
  <version>{version}</version>
  <packaging>pom</packaging>
  <dependencies>
{dep_xml}
  </dependencies>
</project>
"""


def find_java() -> str:
    """Path of a ``java`` >= :data:`MIN_JAVA_MAJOR`: ``$JAVA_HOME/bin/java``, else PATH."""
    home = os.environ.get("JAVA_HOME")
    candidate = str(Path(home) / "bin" / "java") if home else None
    if not (candidate and os.access(candidate, os.X_OK)):
        candidate = shutil.which("java")
    if not candidate:
        raise JavaNotFound(
            f"java not found on PATH (or JAVA_HOME); install a JDK >= {MIN_JAVA_MAJOR}, "
            "e.g. apt-get install openjdk-17-jre-headless"
        )
    major = _java_major(candidate)
    if major < MIN_JAVA_MAJOR:
        raise JavaNotFound(
            f"{candidate} is Java {major}; Kafka needs Java >= {MIN_JAVA_MAJOR}: "
            "install a newer JDK or point JAVA_HOME at one"
        )
    return candidate


_java_majors: dict[str, int] = {}


def _java_major(java: str) -> int:
    if java not in _java_majors:
        try:
            out = subprocess.run(
                [java, "-version"], capture_output=True, text=True, timeout=30, check=False
            )
        except OSError as exc:
            raise JavaNotFound(f"cannot run {java}: {exc}; install a JDK >= 17") from exc
        match = re.search(r'version "([^"]+)"', out.stderr + out.stdout)
        if not match:
            raise JavaNotFound(f"cannot tell the version of {java}; install a JDK >= 17")
        parts = match.group(1).split(".")
        _java_majors[java] = (
            int(parts[1]) if parts[0] == "1" else int(re.sub(r"\D.*", "", parts[0]))
        )
    return _java_majors[java]


def kafka_dir(version: str) -> Path:
    """Where the jars of ``version`` live (or will live): ``<cache>/kafka/<version>``."""
    return cache_root() / "kafka" / version


def is_cached(version: str) -> bool:
    return (kafka_dir(version) / _COMPLETE_MARKER).is_file()


def resolve_kafka(version: str, *, offline_ok: bool = True) -> Path:
    """Return a directory holding every runtime jar of Kafka ``version`` (a ``libs/`` equivalent).

    The first call runs Maven; later calls return the cached directory without any network.
    ``offline_ok`` is kept for API stability: a complete cache is always used as is.
    """
    check_version(version)
    final = kafka_dir(version)
    libs = final / "libs"
    if (final / _COMPLETE_MARKER).is_file():
        return libs
    final.parent.mkdir(parents=True, exist_ok=True)
    lock_path = final.parent / f".{version}.lock"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be resolving the same version
        if (final / _COMPLETE_MARKER).is_file():
            return libs
        mvn = shutil.which("mvn")
        if not mvn:
            raise MavenNotFound(
                f"mvn not found on PATH; install Maven (apt-get install maven) so kgc can fetch "
                f"Kafka {version}, or copy a cache into {final}"
            )
        tmp = Path(tempfile.mkdtemp(prefix=f".{version}.tmp-", dir=final.parent))
        try:
            _run_maven(mvn, version, tmp, final)
            (tmp / _COMPLETE_MARKER).write_text(version + "\n")
            if final.exists():  # an incomplete leftover from a killed run
                shutil.rmtree(final)
            os.rename(tmp, final)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    return libs


_OFFLINE_PATTERNS = (
    "offline mode",
    "No plugin found for prefix",
    "Could not transfer",
    "UnknownHostException",
    "Unknown host",
    "Connection refused",
    "Network is unreachable",
    "Connect timed out",
    "connect timed out",
    "No route to host",
    "Temporary failure in name resolution",
)


def _run_maven(mvn: str, version: str, work: Path, final: Path) -> None:
    (work / "pom.xml").write_text(_pom(version))
    cmd = [
        mvn,
        "-B",
        "-q",
        "-Dstyle.color=never",
        *shlex.split(os.environ.get("KGC_MAVEN_ARGS", "")),
        "-f",
        str(work / "pom.xml"),
        f"{DEPENDENCY_PLUGIN}:copy-dependencies",
        "-DincludeScope=runtime",
        f"-DoutputDirectory={work / 'libs'}",
    ]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, check=False)
    except subprocess.TimeoutExpired as exc:
        raise MavenOffline(
            f"Maven did not finish resolving Kafka {version} within 30 minutes; "
            "check the connection to Maven Central"
        ) from exc
    output = proc.stdout + proc.stderr
    (work / "mvn.log").write_text(output)
    if proc.returncode == 0 and any(
        (work / "libs").glob(f"{broker_artifact(version)}-{version}.jar")
    ):
        return
    not_found = f"org.apache.kafka:{broker_artifact(version)}:(jar|pom):{re.escape(version)}"
    if re.search(rf"(Could not find artifact|Failure to find) {not_found}", output):
        raise UnknownKafkaVersion(
            f"Kafka {version} is not on Maven Central; known versions: "
            f"{', '.join(PUBLISHED_KAFKA_VERSIONS)}"
        )
    if any(p in output for p in _OFFLINE_PATTERNS):
        raise MavenOffline(
            f"Maven could not reach Maven Central and no cached jars for {version} exist in "
            f"{final}; connect once or copy a cache"
        )
    raise KafkaResolutionError(
        f"Maven could not resolve Kafka {version}: {_first_error(output)}; "
        f"try another --kafka-version (default {DEFAULT_KAFKA_VERSION})"
    )


def _first_error(output: str) -> str:
    for line in output.splitlines():
        if "[ERROR]" in line and line.strip() != "[ERROR]":
            return line.replace("[ERROR]", "").strip()[:300]
    return (output.strip().splitlines() or ["no output"])[-1][:300]
