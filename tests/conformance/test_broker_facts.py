"""Reading a broker's group settings (``conformance/wire/brokerconfig.py``) when it gets them wrong.

Found by running ``kgc check`` on every published patch: Kafka 2.7.0 answers a DescribeConfigs
that names two or more keys with none of them (KAFKA-12235, fixed in 2.7.1), so every setting was
assumed, ``offsets.topic.num.partitions`` among them (50, where the broker has 10), and the run
stopped with "unexpected ValueError … (a kgc bug …)".
"""

from __future__ import annotations

from typing import Any

import pytest
from fake_broker import DEFAULT_APIS, FakeBroker
from kafka.protocol.admin.configs import DescribeConfigsResponse
from kgc.conformance.wire import brokerconfig
from kgc.conformance.wire.client import Cluster

DESCRIBE_CONFIGS = 32


def _describe_configs_body(values: dict[str, int], version: int) -> bytes:
    entry = DescribeConfigsResponse.DescribeConfigsResult.DescribeConfigsResourceResult
    configs = [
        entry(
            name=k, value=str(v), read_only=True, config_source=5, is_sensitive=False, synonyms=[]
        )
        for k, v in values.items()
    ]
    result = DescribeConfigsResponse.DescribeConfigsResult(
        error_code=0, error_message=None, resource_type=4, resource_name="1", configs=configs
    )
    response = DescribeConfigsResponse(throttle_time_ms=0, results=[result])
    return bytes(response.encode(version=version))


def test_a_broker_that_answers_named_keys_with_nothing_is_asked_for_all() -> None:
    # as 2.7.0: the request naming our keys gets an empty list, the one naming none gets all
    answers = iter([{}, {"group.min.session.timeout.ms": 700, "offsets.topic.num.partitions": 10}])

    def script(key: int, version: int) -> Any:
        return _describe_configs_body(next(answers), version) if key == DESCRIBE_CONFIGS else None

    with FakeBroker(script, apis=DEFAULT_APIS) as broker:
        cluster = Cluster(broker.bootstrap, client_id="kgc-test")
        try:
            read = brokerconfig.group_settings(cluster)
        finally:
            cluster.close()
    assert read == {"group.min.session.timeout.ms": 700, "offsets.topic.num.partitions": 10}
    assert [k for k, _ in broker.seen].count(DESCRIBE_CONFIGS) == 2


class _Cluster:
    """Enough of a ``Cluster`` for ``facts``: one node offering no DescribeConfigs."""

    class _Conn:
        broker_versions: dict[int, tuple[int, int]] = {}

    class _Node:
        node_id = 1

    def refresh_metadata(self) -> None:
        return None

    def metadata(self) -> Any:
        return type("M", (), {"brokers": [self._Node()]})()

    def connection(self, node_id: int) -> Any:
        return self._Conn()


@pytest.fixture
def ten_partitions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(brokerconfig, "offsets_partition_leaders", lambda cluster: [1] * 10)
    monkeypatch.setattr(brokerconfig, "probe_session_bounds", lambda cluster: (500, 1_800_000))


@pytest.mark.usefixtures("ten_partitions")
def test_an_unsaid_partition_count_is_counted_in_metadata() -> None:
    got = brokerconfig.facts(_Cluster())  # type: ignore[arg-type]
    assert got["group_config"]["offsets.topic.num.partitions"] == 10
    assert got["fact_sources"]["offsets.topic.num.partitions"] == "metadata"


@pytest.mark.usefixtures("ten_partitions")
def test_a_given_partition_count_that_metadata_contradicts_is_one_clear_error() -> None:
    with pytest.raises(brokerconfig.BrokerFactsDisagree, match="has 10 partitions"):
        brokerconfig.facts(_Cluster(), {"offsets.topic.num.partitions": 7})  # type: ignore[arg-type]
