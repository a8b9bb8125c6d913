# ruff: noqa: E501 (the log lines are quoted whole, as Kafka wrote them)
"""A broker start that fails for a reason outside kgc's settings is retried; one that fails for a
reason in them is not. No JVM runs here: the log lines are the ones a real 3.9.2 node wrote in CI
(of ``c3b708e``) when its ZooKeeper session expired while it started, and the launch itself is
replaced, so only the decision is under test (the real launches are ``tests/broker``'s)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from kgc.conformance.brokers import embedded
from kgc.conformance.brokers.embedded import EmbeddedKafka, _Node, _ZkSessionLost
from kgc.conformance.errors import BrokerStartError

# As Kafka 3.9.2 logged them (``KafkaServer.startup`` -> ``FinalizedFeatureChangeListener``)
SESSION_EXPIRED = """\
[2026-11-28 08:24:33,759] INFO [ZooKeeperClient Kafka server] Session expired. (kafka.zookeeper.ZooKeeperClient)
[2026-11-28 08:24:33,855] ERROR [KafkaServer id=1] Fatal error during KafkaServer startup. Prepare to shutdown (kafka.server.KafkaServer)
org.apache.zookeeper.KeeperException$SessionExpiredException: KeeperErrorCode = Session expired for /feature
\tat org.apache.zookeeper.KeeperException.create(KeeperException.java:134)
[2026-11-28 08:24:33,856] INFO [KafkaServer id=1] shutting down (kafka.server.KafkaServer)
"""
# A session that expired and was renewed is no failure: Kafka's client opens a new one
RENEWED = """\
[2026-11-28 08:24:33,759] INFO [ZooKeeperClient Kafka server] Session expired. (kafka.zookeeper.ZooKeeperClient)
[2026-11-28 08:24:33,765] INFO [ZooKeeperClient Kafka server] Initializing a new session to 127.0.0.1:45461. (kafka.zookeeper.ZooKeeperClient)
"""
BAD_SETTING = """\
[2026-11-28 08:24:33,855] ERROR Exiting Kafka due to fatal exception (kafka.Kafka$)
org.apache.kafka.common.config.ConfigException: Invalid value banana for configuration offsets.topic.num.partitions
"""


def _node(tmp_path: Path, log: str) -> _Node:
    path = tmp_path / "server.log"
    path.write_text(log)
    proc = subprocess.Popen(["sleep", "30"])  # a JVM still shutting itself down
    return _Node(
        node_id=1,
        role="kafka",
        port=1,
        controller_port=None,
        dir=tmp_path,
        props=tmp_path / "server.properties",
        log=path,
        proc=proc,
    )


@pytest.mark.parametrize(
    ("log", "raised"),
    [(SESSION_EXPIRED, _ZkSessionLost), (RENEWED, None), (BAD_SETTING, BrokerStartError)],
    ids=["session-lost", "session-renewed", "bad-setting"],
)
def test_a_lost_zookeeper_session_is_told_apart_from_a_bad_setting(
    tmp_path: Path, log: str, raised: type[Exception] | None
) -> None:
    node = _node(tmp_path, log)
    try:
        if raised is None:
            EmbeddedKafka("3.9.2", mode="zookeeper")._check_alive(node)
        else:
            with pytest.raises(raised):
                EmbeddedKafka("3.9.2", mode="zookeeper")._check_alive(node)
    finally:
        assert node.proc is not None
        node.proc.kill()
        node.proc.wait()


@pytest.mark.parametrize("losses", [1, 2, 3])
def test_a_start_whose_session_was_lost_is_retried_a_bounded_number_of_times(
    losses: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    k = EmbeddedKafka("3.9.2", mode="zookeeper", nodes=3)
    launches: list[int] = []

    def launch(deadline: float) -> None:
        launches.append(1)
        if len(launches) <= losses:
            raise _ZkSessionLost(SESSION_EXPIRED)

    monkeypatch.setattr(k, "_launch", launch)
    if losses < embedded._START_ATTEMPTS:
        k._launch_with_port_retries(time.monotonic() + 60)
        assert len(launches) == losses + 1
        return
    with pytest.raises(BrokerStartError) as info:
        k._launch_with_port_retries(time.monotonic() + 60)
    first, *tail = str(info.value).splitlines()
    assert first == (
        "a Kafka node's ZooKeeper session expired while it started, 3 times; the last log lines:"
    )
    assert "SessionExpiredException" in "\n".join(tail)
    assert len(launches) == embedded._START_ATTEMPTS
