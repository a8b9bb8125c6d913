"""Bad input and a broken environment give one line naming the fix and exit status 2 — no broker,
no network (Maven is forced offline or replaced by a stub)."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from kgc.conformance.artifacts import maven
from kgc.conformance.brokers.embedded import EmbeddedKafka
from kgc.conformance.brokers.providers import ContainerKafka, ExternalKafka, open_target
from kgc.conformance.errors import (
    BrokerConfigError,
    BrokerUnreachable,
    DockerUnavailable,
    MavenNotFound,
    UnknownKafkaVersion,
)


def kgc(
    *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kgc.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    """Assert the CLI failed with status 2 and exactly one line on stderr; return that line."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout == ""
    lines = proc.stderr.strip("\n").splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """Environment with an empty kgc cache and state dir."""
    e = dict(os.environ)
    e["KGC_CACHE_DIR"] = str(tmp_path / "cache")
    e["KGC_STATE_DIR"] = str(tmp_path / "state")
    e.pop("KGC_MAVEN_ARGS", None)
    e.pop("KGC_ALLOW_UNLISTED_KAFKA", None)
    return e


def bin_dir_with(tmp_path: Path, *tools: str) -> str:
    """A directory holding symlinks to only the named tools (a PATH without the others)."""
    d = tmp_path / "bin"
    d.mkdir(exist_ok=True)
    for tool in tools:
        target = shutil.which(tool)
        assert target, f"{tool} is needed for this test"
        (d / tool).symlink_to(target)
    return str(d)


def test_unknown_version_is_one_line_listing_known_versions(env: dict[str, str]) -> None:
    line = one_line_error(kgc("broker", "start", "--kafka-version", "3.9.9", env=env))
    assert "unknown Kafka version 3.9.9" in line
    assert maven.DEFAULT_KAFKA_VERSION in line and "3.9.2" in line
    # a line kgc does not know: the lines it runs are named instead
    line = one_line_error(kgc("broker", "start", "--kafka-version", "9.9.9", env=env))
    assert "9.9.9 is outside the release lines kgc knows" in line and "2.4 - 4.4" in line


def test_malformed_version(env: dict[str, str]) -> None:
    line = one_line_error(kgc("broker", "start", "--kafka-version", "latest", env=env))
    assert "malformed Kafka version 'latest'" in line


def test_no_java_on_path(env: dict[str, str], tmp_path: Path) -> None:
    env["PATH"] = bin_dir_with(tmp_path)  # nothing on PATH: no java (and no mvn)
    env.pop("JAVA_HOME", None)
    line = one_line_error(kgc("broker", "start", env=env))
    assert "java not found" in line and "JDK" in line


def test_no_maven_with_empty_cache(env: dict[str, str], tmp_path: Path) -> None:
    env["PATH"] = bin_dir_with(tmp_path, "java")
    env.pop("JAVA_HOME", None)
    line = one_line_error(kgc("broker", "start", env=env))
    assert "mvn not found" in line and "install Maven" in line


def test_maven_offline_with_empty_cache(env: dict[str, str], tmp_path: Path) -> None:
    empty_repo = tmp_path / "m2"
    empty_repo.mkdir()
    env["KGC_MAVEN_ARGS"] = f"-o -Dmaven.repo.local={empty_repo}"
    line = one_line_error(kgc("broker", "start", env=env))
    assert line.endswith(
        f"Maven could not reach Maven Central and no cached jars for {maven.DEFAULT_KAFKA_VERSION}"
        f" exist in {tmp_path / 'cache' / 'kafka' / maven.DEFAULT_KAFKA_VERSION}; "
        "connect once or copy a cache"
    ), line
    # nothing half-resolved is left where the next run would mistake it for a cache
    assert not (tmp_path / "cache" / "kafka" / maven.DEFAULT_KAFKA_VERSION).exists()


def test_requested_port_in_use(env: dict[str, str]) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        line = one_line_error(kgc("broker", "start", "--port", str(port), env=env))
    assert f"port {port} on 127.0.0.1 is already in use" in line


def test_zookeeper_mode_refused_for_4x(env: dict[str, str]) -> None:
    line = one_line_error(
        kgc("broker", "start", "--mode", "zookeeper", "--kafka-version", "4.3.1", env=env)
    )
    assert "no ZooKeeper mode" in line and "3.9.2" in line


def test_stop_unknown_name(env: dict[str, str]) -> None:
    line = one_line_error(kgc("broker", "stop", "--name", "nope", env=env))
    assert "no broker named 'nope'" in line


def test_status_with_nothing_running(env: dict[str, str]) -> None:
    proc = kgc("broker", "status", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    assert '"brokers": []' in proc.stdout


def test_unreachable_bootstrap_server_cli(env: dict[str, str]) -> None:
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    line = one_line_error(kgc("check", "--bootstrap-server", f"127.0.0.1:{port}", env=env))
    assert f"cannot reach Kafka at 127.0.0.1:{port}: connection refused" in line
    assert "check --bootstrap-server" in line


def test_unreachable_bootstrap_server_provider() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(BrokerUnreachable, match=rf"127\.0\.0\.1:{port}: connection refused"):
        ExternalKafka(f"127.0.0.1:{port}", timeout_s=1).start()


def test_malformed_bootstrap_server() -> None:
    with pytest.raises(BrokerConfigError, match="bad bootstrap server 'localhost'"):
        ExternalKafka("localhost")


def test_external_refuses_faults() -> None:
    ext = ExternalKafka("127.0.0.1:9")
    assert ext.can_inject_faults is False
    for action in (ext.kill, ext.pause, ext.resume, ext.restart):
        with pytest.raises(Exception, match="started by someone else; fault tests skip"):
            action(1)


def test_container_without_docker_engine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-docker.sock")
    with pytest.raises(DockerUnavailable) as info:
        ContainerKafka().start()
    msg = str(info.value)
    assert msg.startswith("no Docker engine answers (")
    assert msg.endswith("use the embedded broker (default) or --bootstrap-server")
    assert "\n" not in msg


def test_open_target_kinds() -> None:
    assert isinstance(open_target("embedded", nodes=3), EmbeddedKafka)
    assert isinstance(open_target("external", bootstrap_servers="h:1"), ExternalKafka)
    with pytest.raises(BrokerConfigError, match="unknown target kind"):
        open_target("cloud")


def test_reserved_config_key_rejected() -> None:
    with pytest.raises(BrokerConfigError, match="kgc sets listeners itself"):
        EmbeddedKafka(config={"listeners": "PLAINTEXT://:9092"})


# ------------------------------------------------------------------ the jar cache, with a stub mvn

STUB_MVN = """#!/bin/sh
# stub Maven: counts its runs, then behaves as $STUB_MODE says
echo run >> "$STUB_COUNT"
sleep 0.5
out=""
for a in "$@"; do case "$a" in -DoutputDirectory=*) out="${a#-DoutputDirectory=}";; esac; done
v="$STUB_VERSION"
if [ "$STUB_MODE" = ok ]; then
  mkdir -p "$out" && touch "$out/kafka_2.13-$v.jar" "$out/kafka-clients-$v.jar"
else
  echo "[ERROR] Failed to execute goal on project kafka-runtime: Could not resolve" \\
    "dependencies: Could not find artifact org.apache.kafka:kafka_2.13:jar:$v in central"
  exit 1
fi
"""


@pytest.fixture
def stub_mvn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "stubbin"
    d.mkdir()
    mvn = d / "mvn"
    mvn.write_text(STUB_MVN)
    mvn.chmod(mvn.stat().st_mode | stat.S_IEXEC)
    count = tmp_path / "mvn-runs"
    monkeypatch.setenv("PATH", f"{d}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("KGC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("STUB_COUNT", str(count))
    monkeypatch.delenv("KGC_MAVEN_ARGS", raising=False)
    return count


def test_concurrent_resolution_runs_maven_once_and_caches(
    stub_mvn: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STUB_MODE", "ok")
    monkeypatch.setenv("STUB_VERSION", "3.9.2")
    results: list[Path] = []
    threads = [
        threading.Thread(target=lambda: results.append(maven.resolve_kafka("3.9.2")))
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(results)) == 1 and len(results) == 4
    libs = results[0]
    assert (libs / "kafka_2.13-3.9.2.jar").is_file()
    assert stub_mvn.read_text().count("run") == 1
    maven.resolve_kafka("3.9.2")  # cached: no Maven run
    assert stub_mvn.read_text().count("run") == 1
    pom = (libs.parent / "pom.xml").read_text()
    assert "<artifactId>slf4j-reload4j</artifactId>" in pom  # 3.x logging backend
    assert "log4j-slf4j-impl" not in pom


def test_maven_not_finding_kafka_is_unknown_version(
    stub_mvn: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STUB_MODE", "missing")
    monkeypatch.setenv("STUB_VERSION", "9.9.9")
    monkeypatch.setenv("KGC_ALLOW_UNLISTED_KAFKA", "1")
    with pytest.raises(UnknownKafkaVersion, match="Kafka 9.9.9 is not on Maven Central"):
        maven.resolve_kafka("9.9.9")
    assert not maven.is_cached("9.9.9")


def test_logging_backend_per_major() -> None:
    assert maven.logging_backend("4.3.1") == [
        ("org.apache.logging.log4j", "log4j-slf4j-impl", "2.24.3")
    ]
    assert ("ch.qos.reload4j", "reload4j", "1.2.25") in maven.logging_backend("3.9.2")


def test_maven_missing_error_names_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("KGC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(MavenNotFound, match=r"copy a cache into .*4\.3\.1"):
        maven.resolve_kafka("4.3.1")


def test_fetch_prints_the_jar_folder_and_caches(stub_mvn: Path, tmp_path: Path) -> None:
    env = dict(os.environ, STUB_MODE="ok", STUB_VERSION="3.9.2")
    fetch = ["broker", "fetch", "--kafka-version", "3.9.2"]
    for _ in range(2):
        proc = kgc(*fetch, env=env)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == f"{tmp_path / 'cache' / 'kafka' / '3.9.2' / 'libs'}\n"
    assert stub_mvn.read_text().count("run") == 1


def test_fetch_unknown_version(env: dict[str, str]) -> None:
    line = one_line_error(kgc("broker", "fetch", "--kafka-version", "3.9.9", env=env))
    assert "unknown Kafka version 3.9.9" in line
