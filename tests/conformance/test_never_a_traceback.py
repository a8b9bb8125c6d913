"""In front of a broker that misbehaves, ``kgc check`` ends in one line naming what the broker did
and what to try, with exit status 2, never a traceback (a divergence would be exit 1).

Each broker here is the scripted fake of ``fake_broker.py``: it closes the connection on a
request, answers bytes that do not decode, lacks an API, or refuses DescribeConfigs.
"""

from __future__ import annotations

import subprocess
import sys
import time

from fake_broker import CLOSE, DEFAULT_APIS, GARBAGE, METADATA, FakeBroker


def check(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kgc.cli", "check", "--profile", "quick", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def one_line_error(run: subprocess.CompletedProcess[str]) -> str:
    """The run failed with status 2 and one error line, no traceback; returns that line."""
    assert run.returncode == 2, (run.returncode, run.stdout[-2000:], run.stderr[-2000:])
    assert "Traceback" not in run.stderr, run.stderr
    errors = [line for line in run.stderr.splitlines() if line.startswith("kgc check: error:")]
    assert len(errors) == 1, run.stderr
    assert run.stderr.rstrip().splitlines()[-1] == errors[0], run.stderr
    return errors[0]


def test_apiversions_that_do_not_decode() -> None:
    with FakeBroker(lambda key, v: GARBAGE if key == 18 else None) as broker:
        line = one_line_error(check("--bootstrap-server", broker.bootstrap))
    assert "cannot reach Kafka" in line and "ApiVersions" in line


def test_connection_closed_on_metadata() -> None:
    with FakeBroker(lambda key, v: CLOSE if key == METADATA else None) as broker:
        line = one_line_error(check("--bootstrap-server", broker.bootstrap))
    assert "Metadata" in line and "closed" in line


def test_metadata_answer_that_does_not_decode() -> None:
    with FakeBroker(lambda key, v: GARBAGE if key == METADATA else None) as broker:
        line = one_line_error(check("--bootstrap-server", broker.bootstrap))
    assert "Metadata" in line and "decode" in line


def test_a_missing_api() -> None:
    apis = {k: r for k, r in DEFAULT_APIS.items() if k != METADATA}
    with FakeBroker(lambda key, v: None, apis=apis) as broker:
        line = one_line_error(check("--bootstrap-server", broker.bootstrap))
    assert "does not advertise Metadata" in line


def test_describe_configs_refused_is_no_failure_and_the_next_failure_is_one_line() -> None:
    """DescribeConfigs closing the connection is no failure (the facts are probed or assumed);
    the broker then closes the connection on every request it has no script for (here the
    suite's CreateTopics), and that is the one line."""
    with FakeBroker(lambda key, v: CLOSE if key == 32 else None) as broker:
        line = one_line_error(check("--bootstrap-server", broker.bootstrap))
        assert any(key == 32 for key, _ in broker.seen)
    assert "DescribeConfigs" not in line and "CreateTopics" in line and "closed" in line


def test_an_unsupported_kafka_version_is_refused_before_anything_starts() -> None:
    started = time.monotonic()
    # 2.2.x is published but cannot run on Java 17 (ZOOKEEPER-3779,
    # conformance/artifacts/releases.py)
    line = one_line_error(check("--kafka-version", "2.2.2"))
    assert "2.2.x cannot run" in line and "ZOOKEEPER-3779" in line and "2.4 - 4.4" in line
    line = one_line_error(check("--kafka-version", "0.9.0.1"))
    assert "outside the release lines kgc knows" in line
    assert time.monotonic() - started < 30  # nothing was downloaded or started


def test_a_bad_broker_config_is_refused() -> None:
    line = one_line_error(check("--broker-config", "group.min.session.timeout.ms=soon"))
    assert "--broker-config" in line and "KEY=VALUE" in line


def test_broker_settings_that_cannot_hold_together_are_refused_by_name() -> None:
    # each value is a whole number; together (or against the broker's) they describe no broker
    with FakeBroker(lambda key, v: None) as broker:
        bounds = ("group.min.session.timeout.ms=9000", "group.max.session.timeout.ms=100")
        line = one_line_error(
            check(
                "--bootstrap-server",
                broker.bootstrap,
                *(x for b in bounds for x in ("--broker-config", b)),
            )
        )
        assert "cannot hold together" in line and "(got 9000 > 100)" in line, line
        assert all(f"{b} (given)" in line for b in bounds), line
        line = one_line_error(
            check("--bootstrap-server", broker.bootstrap, "--broker-config", "group.max.size=0")
        )
        assert "group.max.size must be >= 1" in line and "group.max.size=0 (given)" in line, line


def test_an_empty_bootstrap_server_is_a_bad_address_not_a_request_to_start_one() -> None:
    for command in (["check"], ["replay", "traces/known/tansu"]):
        run = subprocess.run(
            [sys.executable, "-m", "kgc.cli", *command, "--bootstrap-server", ""],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
        assert "empty --bootstrap-server" in run.stderr.strip().splitlines()[-1], run.stderr


def test_unknown_rules_are_refused() -> None:
    line = one_line_error(check("--rules", "kafka-2.0"))
    assert "kafka-4.3" in line and "kafka-1.0" in line


def test_rules_older_than_the_consumer_protocol_are_refused_for_it() -> None:
    # refused before any broker is reached (nothing listens on port 1)
    for protocol in ("consumer", "migration"):
        line = one_line_error(
            check(
                "--protocol", protocol, "--rules", "kafka-3.9", "--bootstrap-server", "127.0.0.1:1"
            )
        )
        assert f"--rules kafka-3.9 has no consumer protocol to judge --protocol {protocol}" in line


# What librdkafka's mock cluster (confluent-kafka 2.16.1) answers to ApiVersions v3, which it does
# not speak: UNSUPPORTED_VERSION in a short form of its own that no ApiVersions layout decodes.
RDKAFKA_MOCK_V3_ANSWER = bytes.fromhex("00230100120000000200000000")


def _rdkafka_like(key: int, version: int) -> bytes | None:
    return RDKAFKA_MOCK_V3_ANSWER if key == 18 and version == 3 else None


def test_apiversions_short_fallback_form_is_read_as_ask_lower() -> None:
    from kgc.conformance.wire import probe
    from kgc.conformance.wire.client import Connection

    with FakeBroker(_rdkafka_like) as broker:
        info = probe.api_versions("127.0.0.1", broker.port, 5)
        assert info.api_keys[METADATA] == DEFAULT_APIS[METADATA]
        conn = Connection("127.0.0.1", broker.port, "kgc-c1", timeout_s=5)
        try:
            assert conn.versions["ApiVersions"] == 2
            assert conn.broker_versions[METADATA] == DEFAULT_APIS[METADATA]
        finally:
            conn.close()
