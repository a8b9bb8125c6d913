"""What the model needs to know about a broker, read from the broker itself.

The model's answers depend on broker settings (``group.min.session.timeout.ms`` decides
INVALID_SESSION_TIMEOUT, ``group.initial.rebalance.delay.ms`` when a new group's first join
completes, ``offsets.topic.num.partitions`` where a group lives) and on who leads each
``__consumer_offsets`` partition (FindCoordinator's answer). Reading them with DescribeConfigs
(resource type BROKER, ``DescribeConfigsRequest.json``) and Metadata means the same suite is right
for the embedded broker and for a broker someone else configured — nothing is assumed.
"""

from __future__ import annotations

from typing import Any

from kafka.protocol.admin.configs import DescribeConfigsRequest, DescribeConfigsResponse
from kgc.conformance.client import Cluster, error_name

BROKER_RESOURCE = 4  # ConfigResource.Type.BROKER

GROUP_SETTINGS = (
    "group.min.session.timeout.ms",
    "group.max.session.timeout.ms",
    "group.initial.rebalance.delay.ms",
    "group.max.size",
    "offsets.topic.num.partitions",
    "offset.metadata.max.bytes",
)


class BrokerConfigUnreadable(Exception):
    pass


def group_settings(cluster: Cluster, node_id: int | None = None) -> dict[str, int]:
    """The group-related settings of one broker (the first one if ``node_id`` is None)."""
    if node_id is None:
        cluster.refresh_metadata()
        node_id = min(b.node_id for b in cluster.metadata().brokers)
    conn = cluster.connection(node_id)
    req = DescribeConfigsRequest(
        resources=[
            DescribeConfigsRequest.DescribeConfigsResource(
                resource_type=BROKER_RESOURCE,
                resource_name=str(node_id),
                configuration_keys=list(GROUP_SETTINGS),
            )
        ],
        include_synonyms=False,
        include_documentation=False,
    )
    resp: DescribeConfigsResponse = conn.request(req)
    out: dict[str, int] = {}
    for result in resp.results:
        if result.error_code != 0:
            raise BrokerConfigUnreadable(
                f"DescribeConfigs on broker {node_id}: {error_name(result.error_code)}"
            )
        for entry in result.configs:
            if entry.name in GROUP_SETTINGS and entry.value is not None:
                out[entry.name] = int(entry.value)
    return out


def offsets_partition_leaders(cluster: Cluster) -> list[int] | None:
    """Leader node of every ``__consumer_offsets`` partition, or None if the topic has no leader
    yet for some partition."""
    leaders = cluster.partition_leaders("__consumer_offsets")
    if not leaders or any(v is None or v < 0 for v in leaders.values()):
        return None
    return [leaders[p] for p in sorted(leaders)]


def facts(cluster: Cluster) -> dict[str, Any]:
    """Everything above, as one JSON-ready dict for the trace manifest's ``target``."""
    return {
        "group_config": group_settings(cluster),
        "offsets_partition_leaders": offsets_partition_leaders(cluster),
        "node_ids": sorted(b.node_id for b in cluster.metadata().brokers),
    }
