"""kgc's pytest plugin: brokers and unique names for tests that talk to a real Kafka.

Registered through the ``pytest11`` entry point ``kgc = "kgc.pytest_plugin"``. Importing it loads
nothing heavy (no kafka-python, no broker code): everything is imported inside the fixtures, so a
test run that asks for no broker pays nothing.

Options:

* ``--kgc-bootstrap-server HOST:PORT[,...]`` — use a broker someone else runs
  (``ExternalKafka``); tests marked ``faults`` skip, saying why (kgc cannot kill what it did not
  start), and only ``kgc-``-prefixed groups and topics are touched.
* ``--kgc-command-config FILE`` — how to connect to the ``--kgc-bootstrap-server`` broker: a
  ``client.properties`` as Kafka's tools take it (TLS, SASL; ``conformance/wire/security.py``).
* ``--kgc-kafka-version V`` — the embedded Apache Kafka version (default
  ``kgc.conformance.artifacts.maven.DEFAULT_KAFKA_VERSION``).
* ``--kgc-mode kraft|zookeeper`` — the embedded cluster's metadata mode (default: the release's own,
  KRaft from 3.3 on and ZooKeeper before; ``kgc.conformance.artifacts.releases``).
* ``--kgc-known DIR`` — the implementation's known deviations: a folder of baseline traces, one
  per deviation (as ``traces/known/<implementation>/``). The installed suite then passes while
  only these show, fails on any other, and replays each (``kgc.testsuite``): one that replays
  clean is reported FIXED (a warning), one that fails elsewhere fails.
* ``--kgc-record DIR`` — the differential suite also writes every executed example's trace into
  ``DIR`` (a corpus for ``kgc report``; ``conformance/drivers/suite.py``). Runs against several
  Kafka versions may record into the same folder: files are never replaced.

Fixtures:

* ``kgc_broker`` (session) — a started single-node broker (or the external one), stopped at the
  end of the session. If it cannot be had, every test using it *errors* with the reason (Java,
  Maven, port, unreachable address...); it is never skipped, and a failed start is not retried
  for each test (pytest caches the session fixture's error).
* ``kgc_cluster3`` (session, started only when a test asks) — a 3-node cluster in the
  ``--kgc-mode`` mode (the release's default unless told otherwise). With
  ``--kgc-bootstrap-server`` the external cluster is used if it has at least 3 brokers; otherwise
  the test skips, saying so.
* ``kgc_client`` — a ``kgc.conformance.wire.client.Cluster`` on ``kgc_broker``, closed after the
test.
* ``kgc_group_id`` / ``kgc_topic`` — names unique to one test: ``kgc-<test-name-slug>-<random>``
  (names only; create the topic with ``Cluster.create_topic`` if the test needs it).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Generator, Iterator
from typing import Any

import pytest

NAME_PREFIX = "kgc-"
_SLUG_MAX = 40


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kgc", "kafka-group-conformance")
    group.addoption(
        "--kgc-bootstrap-server",
        metavar="HOST:PORT[,...]",
        default=None,
        help="test against this running Kafka instead of starting an embedded one "
        "(fault-injection tests skip)",
    )
    group.addoption(
        "--kgc-command-config",
        metavar="FILE",
        default=None,
        help="client.properties for --kgc-bootstrap-server: security.protocol, sasl.*, ssl.* "
        "(as kafka-consumer-groups.sh --command-config takes them)",
    )
    group.addoption(
        "--kgc-kafka-version",
        metavar="V",
        default=None,
        help="Apache Kafka version of the embedded broker (default: kgc's DEFAULT_KAFKA_VERSION)",
    )
    group.addoption(
        "--kgc-profile",
        default="ci",
        help="differential suite settings profile: ci (default), thorough, quick",
    )
    group.addoption(
        "--kgc-seed",
        type=int,
        default=20261121,
        help="Hypothesis seed of the differential suite (fixed by default so CI is reproducible)",
    )
    group.addoption(
        "--kgc-traces",
        default="traces",
        help="folder where the differential suite saves shrunk failing traces",
    )
    group.addoption(
        "--kgc-record",
        metavar="DIR",
        default=None,
        help="the differential suite also records every executed example's trace into DIR "
        "(a trace corpus for `kgc report`)",
    )
    group.addoption(
        "--kgc-known",
        metavar="DIR",
        default=None,
        help="the broker's known deviations (a folder of baseline traces): the suite passes while "
        "only these show, fails on a new one, and reports those that replay clean as FIXED",
    )
    group.addoption(
        "--kgc-broker-logs",
        metavar="DIR",
        default=None,
        help="keep the log of every broker node kgc started into DIR when the session ends "
        "(they are otherwise deleted with the broker)",
    )
    group.addoption(
        "--kgc-mode",
        choices=("kraft", "zookeeper"),
        default=None,
        help="metadata mode of the embedded broker (default: kraft from Kafka 3.3 on, "
        "zookeeper before; 4.x has no zookeeper mode)",
    )


def pytest_configure(config: pytest.Config) -> None:
    known = config.getoption("--kgc-known", default=None)
    if known is not None:
        from pathlib import Path

        if not Path(known).is_dir():
            raise pytest.UsageError(f"--kgc-known {known}: not a folder of baseline traces")
        if not any(Path(known).glob("*.json")):
            raise pytest.UsageError(f"--kgc-known {known}: holds no baseline trace (*.json)")
    config.addinivalue_line(
        "markers", "kgc_known: replays one known deviation (only with --kgc-known)"
    )
    # also declared in kgc's pyproject; repeated so the plugin works in other projects
    config.addinivalue_line(
        "markers", "broker: needs a real Kafka broker (embedded or --kgc-bootstrap-server)"
    )
    config.addinivalue_line(
        "markers", "faults: injects faults (kill/pause/restart); needs a broker kgc started itself"
    )
    # kafka-python 3.0.12 loads its message schemas with a deprecated importlib API, hundreds of
    # times a run: silenced where it is raised, so another project's own warnings still show
    for line in (
        "ignore:read_text is deprecated:DeprecationWarning:kafka.protocol.schemas.load_json",
        "ignore:open_text is deprecated:DeprecationWarning:importlib.resources._legacy",
    ):
        config.addinivalue_line("filterwarnings", line)


def pytest_report_header(config: pytest.Config) -> str:
    external = config.getoption("--kgc-bootstrap-server")
    version = config.getoption("--kgc-kafka-version") or "default"
    mode = config.getoption("--kgc-mode") or "its default"
    header = (
        f"kgc: external broker {external} (fault tests skip)"
        if external
        else f"kgc: embedded Apache Kafka {version}, {mode} mode"
    )
    record = config.getoption("--kgc-record")
    return header if record is None else f"{header}; recording traces into {record}"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``kgc_known_trace``: one test per baseline trace in ``--kgc-known``."""
    if "kgc_known_trace" not in metafunc.fixturenames:
        return
    from pathlib import Path

    known = metafunc.config.getoption("--kgc-known")
    paths = sorted(Path(known).glob("*.json")) if known else []
    metafunc.parametrize("kgc_known_trace", paths, ids=[p.stem for p in paths])


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without ``--kgc-known`` the known-deviation replays are deselected (there is nothing to
    replay), not skipped."""
    if config.getoption("--kgc-known"):
        return
    keep = [i for i in items if i.get_closest_marker("kgc_known") is None]
    if len(keep) != len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in keep])
        items[:] = keep


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("faults") is not None and item.config.getoption(
        "--kgc-bootstrap-server"
    ):
        pytest.skip(
            "fault injection needs a broker kgc started itself; "
            "drop --kgc-bootstrap-server to run it on the embedded Kafka"
        )


# ---------------------------------------------------------------------------------------- brokers


def _open(
    config: pytest.Config, nodes: int, settings: dict[str, str] | None = None
) -> Generator[Any, None, None]:
    from kgc.conformance.brokers.session import open_broker

    client_security = None
    command_config = config.getoption("--kgc-command-config")
    if command_config is not None:
        from kgc.conformance.wire.security import load_command_config

        if not config.getoption("--kgc-bootstrap-server"):
            raise pytest.UsageError("--kgc-command-config needs --kgc-bootstrap-server")
        client_security = load_command_config(command_config)
    with open_broker(
        bootstrap_server=config.getoption("--kgc-bootstrap-server"),
        client_security=client_security,
        kafka_version=config.getoption("--kgc-kafka-version"),
        mode=config.getoption("--kgc-mode"),
        nodes=nodes,
        config=settings,
    ) as broker:
        try:
            yield broker
        finally:
            _keep_logs(config.getoption("--kgc-broker-logs"), broker)


def _keep_logs(folder: str | None, broker: Any) -> None:
    """Copy each node's log of an embedded broker into ``folder``, named by version, cluster
    size and node id, never over a log kept before (a number is added instead)."""
    if folder is None or not hasattr(broker, "log_path"):
        return
    import shutil
    from pathlib import Path

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    d = broker.describe()
    for node_id in d.get("node_ids") or []:
        src = broker.log_path(node_id)
        if not src.exists():
            continue
        stem = f"kafka-{d.get('version')}-{d.get('nodes')}n-node{node_id}"
        dest, n = out / f"{stem}.log", 1
        while dest.exists():
            n += 1
            dest = out / f"{stem}-{n}.log"
        shutil.copyfile(src, dest)


@pytest.fixture(scope="session")
def kgc_broker(pytestconfig: pytest.Config) -> Iterator[Any]:
    """A started Kafka (embedded single node, or ``--kgc-bootstrap-server``) for the session."""
    yield from _open(pytestconfig, nodes=1)


@pytest.fixture(scope="module")
def kgc_migration_broker(pytestconfig: pytest.Config) -> Iterator[Any]:
    """A started Kafka for the mixed-protocol suite: embedded with
    ``group.consumer.migration.policy=disabled`` (the policy ``model/consumer/migration.py``
    covers), or the ``--kgc-bootstrap-server`` broker as it is."""
    settings = None
    if not pytestconfig.getoption("--kgc-bootstrap-server"):
        version = str(pytestconfig.getoption("--kgc-kafka-version") or "4")
        if version.split(".")[0].isdigit() and int(version.split(".")[0]) >= 4:
            settings = {"group.consumer.migration.policy": "disabled"}
    yield from _open(pytestconfig, nodes=1, settings=settings)


@pytest.fixture(scope="session")
def kgc_cluster3(pytestconfig: pytest.Config) -> Iterator[Any]:
    """A started 3-node Kafka cluster for the session (started only if a test asks)."""
    external = pytestconfig.getoption("--kgc-bootstrap-server")
    gen = _open(pytestconfig, nodes=3)
    broker = next(gen)
    if external:
        nodes = broker.describe().get("nodes") or 0
        if nodes < 3:
            gen.close()
            pytest.skip(
                f"needs a 3-node cluster; the broker at {external} has {nodes}; "
                "drop --kgc-bootstrap-server to start an embedded 3-node cluster"
            )
    yield broker
    gen.close()


@pytest.fixture
def kgc_client(kgc_broker: Any) -> Iterator[Any]:
    """A :class:`kgc.conformance.wire.client.Cluster` on ``kgc_broker``, closed after the test."""
    from kgc.conformance.wire.client import Cluster

    cluster = Cluster(
        kgc_broker.bootstrap_servers,
        client_id="kgc-test",
        security=getattr(kgc_broker, "security", None),
    )
    try:
        yield cluster
    finally:
        cluster.close()
        cluster.poller.close()


# ------------------------------------------------------------------------------------------ names


def unique_name(test_name: str) -> str:
    """``kgc-<slug of test_name>-<8 hex>``: a legal group id and topic name (``[a-zA-Z0-9._-]``,
    well under Kafka's 249-character topic limit)."""
    slug = re.sub(r"[^a-zA-Z0-9]+", "-", test_name).strip("-").lower()[:_SLUG_MAX].strip("-")
    return f"{NAME_PREFIX}{slug or 'test'}-{secrets.token_hex(4)}"


@pytest.fixture
def kgc_group_id(request: pytest.FixtureRequest) -> str:
    return unique_name(request.node.name)


@pytest.fixture
def kgc_topic(request: pytest.FixtureRequest) -> str:
    return unique_name(request.node.name)
