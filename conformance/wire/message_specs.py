"""Kafka's own JSON message specs, loaded into kafka-python's message framework at run time.

kafka-python 3.0.12 generates its protocol classes from the JSON specs it bundles
(``kafka/protocol/schemas/resources``) but lacks the KIP-848 consumer-group APIs,
ConsumerGroupHeartbeat (68) and ConsumerGroupDescribe (69), and KIP-932's share-group membership
APIs, ShareGroupHeartbeat (76) and ShareGroupDescribe (77): v1 only in 4.3.1, flexible (v0 was
4.0's early access, removed in 4.1: ``ShareGroupHeartbeatRequest.json`` l.21-25,
``ShareGroupDescribeRequest.json`` l.21-24). Apache Kafka publishes the specs it
generates its own classes from (``clients/src/main/resources/common/message/*.json``) inside the
``org.apache.kafka:kafka-clients:<version>:jar:sources`` artifact on Maven Central. This module
fetches that artifact once (Maven, as ``conformance/artifacts/maven.py`` fetches the broker),
extracts the specs into ``<cache>/message-specs/<version>/`` and builds kafka-python ``ApiMessage``
classes from them — the same encoder and decoder every other request uses, no hand-written wire
format.

The specs are versioned (``validVersions``), so those of :data:`SPEC_KAFKA_VERSION` cover every
older broker too. Classes are built once per process: building a response class registers it with
kafka-python's response registry, which is how a ``Connection`` decodes its answers.
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any

from kgc.conformance.artifacts.maven import DEFAULT_KAFKA_VERSION, cache_root, maven_repository
from kgc.conformance.errors import KafkaResolutionError, MavenNotFound, MavenOffline

SPEC_KAFKA_VERSION = DEFAULT_KAFKA_VERSION
APIS = (
    "ConsumerGroupHeartbeat",
    "ConsumerGroupDescribe",
    "ShareGroupHeartbeat",
    "ShareGroupDescribe",
)
_PREFIX = "common/message/"
_MARKER = ".kgc-complete"
_lock = threading.Lock()
_classes: dict[str, tuple[Any, Any]] = {}


def spec_dir(version: str = SPEC_KAFKA_VERSION) -> Path:
    """A folder holding Kafka ``version``'s message specs (``*.json``) and an empty
    ``__init__.py``; fetched and extracted on first use."""
    final = cache_root() / "message-specs" / version
    if (final / _MARKER).is_file():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    with open(final.parent / f".{version}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (final / _MARKER).is_file():
            return final
        jar = _sources_jar(version)
        tmp = Path(tempfile.mkdtemp(prefix=f".{version}.tmp-", dir=final.parent))
        try:
            with zipfile.ZipFile(jar) as z:
                for name in z.namelist():
                    if name.startswith(_PREFIX) and name.endswith(".json"):
                        (tmp / name[len(_PREFIX) :]).write_bytes(z.read(name))
            if not any(tmp.glob("*.json")):
                raise KafkaResolutionError(f"{jar} holds no {_PREFIX}*.json message specs")
            (tmp / "__init__.py").write_text("")
            (tmp / _MARKER).write_text(version + "\n")
            if final.exists():
                shutil.rmtree(final)
            os.rename(tmp, final)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    return final


def _sources_jar(version: str) -> Path:
    """``kafka-clients-<version>-sources.jar`` from the local Maven repository, fetched from
    Maven Central with ``dependency:get`` when missing."""
    jar = (
        maven_repository()
        / "org/apache/kafka/kafka-clients"
        / version
        / f"kafka-clients-{version}-sources.jar"
    )
    if jar.is_file():
        return jar
    mvn = shutil.which("mvn")
    if not mvn:
        raise MavenNotFound(
            "mvn not found on PATH; install Maven (apt-get install maven) so kgc can fetch "
            f"Kafka's message specs (kafka-clients {version} sources)"
        )
    cmd = [
        mvn,
        "-B",
        "-q",
        "-Dstyle.color=never",
        *shlex.split(os.environ.get("KGC_MAVEN_ARGS", "")),
        # the repository this function looks in: Maven's own default follows the account's home
        # (Java's user.home), which need not be $HOME
        f"-Dmaven.repo.local={maven_repository()}",
        "org.apache.maven.plugins:maven-dependency-plugin:3.6.1:get",
        f"-Dartifact=org.apache.kafka:kafka-clients:{version}:jar:sources",
        "-Dtransitive=false",
    ]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    except subprocess.TimeoutExpired as exc:
        raise MavenOffline(
            f"Maven did not fetch kafka-clients {version} sources within 10 minutes"
        ) from exc
    if proc.returncode != 0 or not jar.is_file():
        text = re.sub(r"\x1b\[[0-9;]*m", "", proc.stdout + proc.stderr).strip()
        tail = text.splitlines()[-1] if text else f"Maven said nothing, and {jar} is not there"
        raise MavenOffline(
            f"Maven could not fetch kafka-clients {version} sources (Kafka's message specs): {tail}"
        )
    return jar


def _spec_module(version: str) -> ModuleType:
    """The spec folder as an importable package: kafka-python reads a spec with
    ``importlib.resources`` from the package it is given."""
    name = "_kgc_kafka_message_specs_" + version.replace(".", "_").replace("-", "_")
    if name in sys.modules:
        return sys.modules[name]
    folder = spec_dir(version)
    spec = importlib.util.spec_from_file_location(
        name, folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def message_classes(api: str) -> tuple[Any, Any]:
    """``(RequestClass, ResponseClass)`` for ``api`` (one of :data:`APIS`), built from Kafka's
    specs on first use. ``RequestClass[v](...)`` builds a request as for any kafka-python class."""
    if api not in APIS:
        raise ValueError(f"no message spec loaded for {api!r}; known: {', '.join(APIS)}")
    with _lock:
        if api not in _classes:
            from kafka.protocol.api_message import ApiMessage

            module = _spec_module(SPEC_KAFKA_VERSION)
            request = type(
                f"{api}Request", (ApiMessage,), {"__module__": __name__}, load_json=module
            )
            response = type(
                f"{api}Response", (ApiMessage,), {"__module__": __name__}, load_json=module
            )
            _classes[api] = (request, response)
        return _classes[api]
