"""Observing and poking Kafka's control plane: controller epochs, the KRaft quorum, broker fencing.

Role: the I/O half of :mod:`kgc.model.controller`. Each helper turns one thing a test can see on a
live cluster into the model's records:

* :func:`read_zk_controller` — ``/controller`` and ``/controller_epoch`` from ZooKeeper (kazoo),
  as :class:`~kgc.model.controller.ZkReading`.
* :func:`update_metadata` — an UpdateMetadata control request (api key 6) stamped with a chosen
  controller epoch, sent as a controller would (``ControllerChannelManager``), answered by the
  broker's ``ReplicaManager.maybeUpdateMetadataCache``. kafka-python has no class for it, so
  :class:`UpdateMetadataRequest` loads Kafka 3.9's published message schema
  (``clients/src/main/resources/common/message/UpdateMetadataRequest.json``, shipped verbatim with
  its Apache license header in ``resources/``) into kafka-python's ``ApiMessage``.
  The request *replaces* the receiver's live-broker list (``ZkMetadataCache.updateMetadata``), so
  callers pass the cluster's real brokers and endpoints; ``BrokerEpoch = -1`` skips the
  broker-epoch check, so only the controller epoch decides.
* :func:`quorum_transitions` — every ``QuorumState`` transition a KRaft node logged ("Completed
  transition to Leader(... epoch=N ...)", ``raft/.../QuorumState.java``), as
  :class:`~kgc.model.controller.QuorumObservation`; :func:`describe_quorum_leader` the leader and
  epoch DescribeQuorum reports.
* :func:`fenced_brokers` — DescribeCluster v2 with ``IncludeFencedBrokers`` (KIP-1073): broker id ->
  fenced, from one broker's metadata image.

Times are wall-clock milliseconds (``time.time()``) because broker log lines carry wall-clock
timestamps; only the order per node matters to the checkers.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from kafka.protocol.admin.cluster import DescribeClusterRequest
from kafka.protocol.api_message import ApiMessage
from kgc.conformance.wire.client import (
    ClientError,
    Connection,
    describe_quorum,
    error_name,
)
from kgc.model.controller import QuorumObservation, ZkReading

RESOURCES = "kgc.conformance.resources"
SECURITY_PROTOCOL_PLAINTEXT = 0  # SecurityProtocol.PLAINTEXT.id


class UpdateMetadataRequest(ApiMessage, load_json=RESOURCES):  # type: ignore[call-arg,misc]
    """UpdateMetadata (api key 6, v0-8) from Kafka 3.9's schema.

    One rename: the v8 tagged field ``Type`` becomes ``UpdateType``, because a field named ``type``
    would shadow kafka-python's ``ApiMessage.type`` ("request"/"response"). Tagged fields are
    identified by tag number on the wire, so the encoding is unchanged.
    """

    @classmethod
    def json_patch(cls, json: dict[str, Any]) -> dict[str, Any]:
        for f in json["fields"]:
            if f["name"] == "Type":
                f["name"] = "UpdateType"
        return json


class UpdateMetadataResponse(ApiMessage, load_json=RESOURCES):  # type: ignore[call-arg,misc]
    """UpdateMetadata response: one ``ErrorCode``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerEndpoint:
    """One live broker as UpdateMetadata lists it."""

    node_id: int
    host: str
    port: int
    listener: str = "PLAINTEXT"
    security_protocol: int = SECURITY_PROTOCOL_PLAINTEXT
    rack: str | None = None


def update_metadata_request(
    *,
    controller_id: int,
    controller_epoch: int,
    live_brokers: Sequence[BrokerEndpoint],
) -> Any:
    """An UpdateMetadata carrying no partition states and the given live brokers."""
    broker_cls = UpdateMetadataRequest.UpdateMetadataBroker
    endpoint_cls = broker_cls.UpdateMetadataEndpoint
    return UpdateMetadataRequest(
        controller_id=controller_id,
        controller_epoch=controller_epoch,
        broker_epoch=-1,
        ungrouped_partition_states=[],
        topic_states=[],
        live_brokers=[
            broker_cls(
                id=b.node_id,
                v0_host=b.host,
                v0_port=b.port,
                endpoints=[
                    endpoint_cls(
                        port=b.port,
                        host=b.host,
                        listener=b.listener,
                        security_protocol=b.security_protocol,
                    )
                ],
                rack=b.rack,
            )
            for b in live_brokers
        ],
    )


def update_metadata(
    host: str,
    port: int,
    *,
    controller_id: int,
    controller_epoch: int,
    live_brokers: Sequence[BrokerEndpoint],
    version: int | None = None,
    timeout_s: float = 5.0,
) -> str:
    """Send one UpdateMetadata to ``host:port`` and return the error name it answers."""
    with Connection(host, port, "kgc-controlplane", timeout_s=timeout_s) as conn:
        req = update_metadata_request(
            controller_id=controller_id,
            controller_epoch=controller_epoch,
            live_brokers=live_brokers,
        )
        resp = conn.request(req, version, timeout_s=timeout_s)
        return error_name(resp.error_code)


# ------------------------------------------------------------------------------------- ZooKeeper


def read_zk_controller(zk: Any) -> ZkReading:
    """``/controller`` and ``/controller_epoch`` through a started ``kazoo.client.KazooClient``."""
    import json

    from kazoo.exceptions import NoNodeError

    at = time.time() * 1000.0
    try:
        raw, _ = zk.get("/controller")
        controller: int | None = int(json.loads(raw.decode())["brokerid"])
    except NoNodeError:
        controller = None
    try:
        raw, _ = zk.get("/controller_epoch")
        epoch = int(raw.decode())
    except NoNodeError:
        epoch = 0
    return ZkReading(at_ms=at, controller=controller, controller_epoch=epoch)


# ------------------------------------------------------------------------------------------ KRaft

_TRANSITION = re.compile(
    r"^\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] INFO \[RaftManager id=(?P<node>\d+)\] "
    r"Completed transition to (?P<state>\w+)\((?P<body>.*?)\) from "
)
_EPOCH = re.compile(r"(?:^|, )epoch=(\d+)")
_FOLLOWER_LEADER = re.compile(r"(?:^|, )leader=(\d+)")
_LEADER_ID = re.compile(r"(?:^|, )leaderId=OptionalInt\[(\d+)\]")


def _wall_ms(stamp: str) -> float:
    return datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").timestamp() * 1000.0


def quorum_transitions(log_text: str) -> list[QuorumObservation]:
    """Each logged ``QuorumState`` transition, as the node's own claim of (epoch, leader).

    Leader and Resigned claim leadership of their epoch; Follower names its leader; Unattached and
    Prospective name a leader only when they know one; Candidate names none.
    """
    out: list[QuorumObservation] = []
    for line in log_text.splitlines():
        m = _TRANSITION.match(line)
        if m is None:
            continue
        node = int(m["node"])
        state, body = m["state"], m["body"]
        epoch_m = _EPOCH.search(body)
        if epoch_m is None:
            continue
        leader: int | None = None
        if state in ("Leader", "ResignedState"):
            leader = node
        elif state == "FollowerState":
            fm = _FOLLOWER_LEADER.search(body)
            leader = int(fm.group(1)) if fm else None
        elif state in ("UnattachedState", "ProspectiveState"):
            lm = _LEADER_ID.search(body)
            leader = int(lm.group(1)) if lm else None
        out.append(
            QuorumObservation(
                at_ms=_wall_ms(m["ts"]),
                node=node,
                epoch=int(epoch_m.group(1)),
                leader=leader,
                source=f"log:{state}",
            )
        )
    return out


def quorum_transitions_of(paths: Iterable[Path]) -> list[QuorumObservation]:
    out: list[QuorumObservation] = []
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        out.extend(quorum_transitions(text))
    return out


def controller_address(cluster: Any, node_id: int) -> tuple[str, int]:
    """The CONTROLLER listener of a KRaft node of an embedded cluster, read from the node's
    ``server.properties`` beside its log (where ``EmbeddedKafka`` writes it)."""
    props = Path(cluster.log_path(node_id)).parent / "server.properties"
    for line in props.read_text(encoding="utf-8").splitlines():
        key, _, value = line.partition("=")
        if key.strip() != "listeners":
            continue
        for listener in value.split(","):
            name, _, rest = listener.strip().partition("://")
            if name == "CONTROLLER":
                host, _, port = rest.rpartition(":")
                return host, int(port)
    raise ClientError(f"node {node_id} has no CONTROLLER listener in {props}")


def describe_quorum_leader(conn: Connection, timeout_s: float = 3.0) -> QuorumObservation:
    """Leader id and epoch from DescribeQuorum. On a CONTROLLER listener only the leader answers
    (``KafkaRaftClient.handleDescribeQuorumRequest``; others say ``NOT_LEADER_OR_FOLLOWER``), so
    an answer is that node's own claim; a broker listener forwards to the active controller.
    Raises :class:`ClientError` on an error answer or no answer."""
    handle = describe_quorum(conn)
    conn.poller.wait([handle], timeout_s)
    if not handle.done:
        conn.close()
        raise ClientError(f"DescribeQuorum on {conn}: no answer in {timeout_s} s")
    resp = handle.result()
    if resp.error_code != 0:
        raise ClientError(f"DescribeQuorum: {error_name(resp.error_code)}")
    part = resp.topics[0].partitions[0]
    if part.error_code != 0:
        raise ClientError(f"DescribeQuorum: {error_name(part.error_code)}")
    return QuorumObservation(
        at_ms=time.time() * 1000.0,
        node=part.leader_id,
        epoch=part.leader_epoch,
        leader=part.leader_id,
        source=f"DescribeQuorum via {conn.host}:{conn.port}",
    )


def fenced_brokers(conn: Connection, timeout_s: float = 3.0) -> dict[int, bool]:
    """Broker id -> fenced, from DescribeCluster v2 ``IncludeFencedBrokers`` on ``conn``. A broker
    without v2 (KIP-1073 came in 4.0; a 3.x KRaft broker offers v0-v1) lists its unfenced
    brokers only: each listed one is ``False``, and a fenced broker is missing."""
    offered = conn.broker_versions.get(DescribeClusterRequest.API_KEY, (0, 0))[1]
    if offered >= 2:
        version = 2
        req = DescribeClusterRequest(
            include_cluster_authorized_operations=False,
            endpoint_type=1,
            include_fenced_brokers=True,
        )
    else:
        version = offered
        req = DescribeClusterRequest(include_cluster_authorized_operations=False)
    handle = conn.send(req, version)
    conn.poller.wait([handle], timeout_s)
    if not handle.done:
        conn.close()
        raise ClientError(f"DescribeCluster on {conn}: no answer in {timeout_s} s")
    resp = handle.result()
    if resp.error_code != 0:
        raise ClientError(f"DescribeCluster: {error_name(resp.error_code)}")
    return {b.broker_id: bool(getattr(b, "is_fenced", False)) for b in resp.brokers}
