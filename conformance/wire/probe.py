"""Small blocking probes of a Kafka broker: ApiVersions, Metadata, DescribeQuorum.

Used to decide when an embedded broker is ready and whether an external one is reachable. The wire
encoding comes from kafka-python's classes generated from Kafka's JSON message specs
(``clients/src/main/resources/common/message/*.json``); framing is Kafka's 4-byte big-endian size
prefix. One short-lived socket per probe, one request in flight, no retries: the caller decides
what a failure means. The differential engine's own client lives in ``client.py``/``wire.py``.
"""

from __future__ import annotations

import itertools
import socket
import struct
from dataclasses import dataclass, field
from typing import Any

from kafka.protocol.admin import DescribeQuorumRequest, DescribeQuorumResponse
from kafka.protocol.metadata import (
    ApiVersionsRequest,
    ApiVersionsResponse,
    MetadataRequest,
    MetadataResponse,
)
from kgc.conformance.wire.security import ClientSecurity, open_socket
from kgc.model.apis import KEYS

DESCRIBE_QUORUM_KEY = KEYS["DescribeQuorum"]  # its presence tells a KRaft broker
CLUSTER_METADATA_TOPIC = "__cluster_metadata"
UNSUPPORTED_VERSION_CODE = 35

_correlation = itertools.count(1)


class ProbeError(OSError):
    """The broker did not answer (refused, timed out, closed) or answered with an error code."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiVersionsInfo:
    """What ApiVersions says: supported (min, max) per api key and finalized feature levels."""

    api_keys: dict[int, tuple[int, int]]
    finalized_features: dict[str, int] = field(default_factory=dict)

    def max_version(self, api_key: int, client_max: int) -> int:
        """Highest version both sides speak; raises ProbeError if none."""
        lo, hi = self.api_keys.get(api_key, (0, -1))
        v = min(hi, client_max)
        if v < lo:
            raise ProbeError(f"broker speaks no common version of api key {api_key}")
        return v


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerInfo:
    node_id: int
    host: str
    port: int


@dataclass(frozen=True, slots=True, kw_only=True)
class MetadataInfo:
    cluster_id: str | None
    controller_id: int
    brokers: tuple[BrokerInfo, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class QuorumInfo:
    leader_id: int
    leader_epoch: int
    voters: tuple[int, ...]


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ProbeError("connection closed by broker")
        buf += chunk
    return bytes(buf)


def round_trip(sock: socket.socket, request: Any, response_cls: Any, version: int) -> Any:
    """Send ``request`` at ``version`` on ``sock`` and decode the matching response."""
    correlation_id, body = _exchange(sock, request, version)
    return _decode(response_cls, body, version, correlation_id)


def _exchange(sock: socket.socket, request: Any, version: int) -> tuple[int, bytes]:
    request.API_VERSION = version
    correlation_id = next(_correlation) & 0x7FFFFFFF
    request.with_header(correlation_id=correlation_id, client_id="kgc-probe")
    sock.sendall(request.encode(header=True, framed=True))
    (size,) = struct.unpack(">i", _recv_exact(sock, 4))
    return correlation_id, _recv_exact(sock, size)


def _decode(response_cls: Any, body: bytes, version: int, correlation_id: int) -> Any:
    try:
        response = response_cls.decode(body, version=version, header=True)
    except Exception as exc:  # kafka-python raises struct.error, ValueError, …
        raise ProbeError(
            f"{response_cls.__name__} v{version} does not decode ({len(body)} bytes): {exc}"
        ) from None
    got = response.header.correlation_id if response.header is not None else correlation_id
    if got != correlation_id:
        raise ProbeError(f"correlation id mismatch: sent {correlation_id}, got {got}")
    return response


def connect(
    host: str, port: int, timeout_s: float, security: ClientSecurity | None = None
) -> socket.socket:
    """A blocking socket, authenticated as ``security`` says (``security.open_socket``): an
    unreachable broker is a :class:`ProbeError`, refused credentials a ``SecurityError``."""
    try:
        return open_socket(host, port, timeout_s, security)
    except OSError as exc:
        raise ProbeError(_reason(exc)) from exc


def _reason(exc: BaseException) -> str:
    if isinstance(exc, socket.timeout | TimeoutError):
        return "timed out"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    return str(exc) or type(exc).__name__


def _api_versions_on(sock: socket.socket) -> ApiVersionsInfo:
    """ApiVersions at v3, else the newest version the broker answers without error. A broker that
    does not speak a version answers ``UNSUPPORTED_VERSION`` in an older layout (Kafka: v0,
    ``ApiVersionsRequest.getErrorResponse``; librdkafka's mock cluster: a short form kafka-python
    cannot decode), so such an answer means "ask again lower": v2, v1, v0 on the same connection."""
    resp, problems = None, []
    for version in (3, 2, 1, 0):
        req = (
            ApiVersionsRequest(client_software_name="kgc", client_software_version="0.1.0")
            if version >= 3
            else ApiVersionsRequest()
        )
        correlation_id, body = _exchange(sock, req, version)
        try:
            resp = _decode(ApiVersionsResponse, body, version, correlation_id)
        except ProbeError as exc:
            problems.append(str(exc))
            continue
        if resp.error_code != UNSUPPORTED_VERSION_CODE:
            break
        problems.append(f"ApiVersions v{version}: UNSUPPORTED_VERSION")
    if resp is None or resp.error_code != 0:
        raise ProbeError("; ".join(problems) or f"ApiVersions error code {resp.error_code}")
    keys = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
    if not keys:
        raise ProbeError("ApiVersions lists no API")
    finalized = getattr(resp, "finalized_features", None) or []
    features = {f.name: f.max_version_level for f in finalized}
    return ApiVersionsInfo(api_keys=keys, finalized_features=features)


def _metadata_on(sock: socket.socket, versions: ApiVersionsInfo) -> MetadataInfo:
    v = versions.max_version(KEYS["Metadata"], min(12, MetadataRequest.max_version))
    req = MetadataRequest(topics=[], allow_auto_topic_creation=False)
    resp = round_trip(sock, req, MetadataResponse, v)
    brokers = tuple(
        sorted(
            (BrokerInfo(node_id=b.node_id, host=b.host, port=b.port) for b in resp.brokers),
            key=lambda b: b.node_id,
        )
    )
    return MetadataInfo(
        cluster_id=getattr(resp, "cluster_id", None),
        controller_id=getattr(resp, "controller_id", -1),
        brokers=brokers,
    )


def _describe_quorum_on(sock: socket.socket, versions: ApiVersionsInfo) -> QuorumInfo:
    v = versions.max_version(DESCRIBE_QUORUM_KEY, min(1, DescribeQuorumRequest.max_version))
    part = DescribeQuorumRequest.TopicData.PartitionData(partition_index=0)
    req = DescribeQuorumRequest(
        topics=[
            DescribeQuorumRequest.TopicData(topic_name=CLUSTER_METADATA_TOPIC, partitions=[part])
        ]
    )
    resp = round_trip(sock, req, DescribeQuorumResponse, v)
    if resp.error_code != 0:
        raise ProbeError(f"DescribeQuorum error code {resp.error_code}")
    p = resp.topics[0].partitions[0]
    if p.error_code != 0:
        raise ProbeError(f"DescribeQuorum partition error code {p.error_code}")
    return QuorumInfo(
        leader_id=p.leader_id,
        leader_epoch=p.leader_epoch,
        voters=tuple(sorted(r.replica_id for r in p.current_voters)),
    )


def _with_socket(
    host: str, port: int, timeout_s: float, fn: Any, security: ClientSecurity | None = None
) -> Any:
    sock = connect(host, port, timeout_s, security)
    try:
        return fn(sock)
    except ProbeError:
        raise
    except (OSError, ValueError, struct.error, EOFError) as exc:
        raise ProbeError(_reason(exc)) from exc
    finally:
        sock.close()


def api_versions(
    host: str, port: int, timeout_s: float = 2.0, security: ClientSecurity | None = None
) -> ApiVersionsInfo:
    """ApiVersions on a fresh connection; raises ProbeError if no answer within ``timeout_s``."""
    return _with_socket(  # type: ignore[no-any-return]
        host, port, timeout_s, _api_versions_on, security
    )


def metadata(
    host: str, port: int, timeout_s: float = 2.0, security: ClientSecurity | None = None
) -> MetadataInfo:
    """Metadata (no topics) on a fresh connection: which brokers this node knows are alive."""
    return _with_socket(  # type: ignore[no-any-return]
        host, port, timeout_s, lambda s: _metadata_on(s, _api_versions_on(s)), security
    )


def describe_quorum(
    host: str, port: int, timeout_s: float = 2.0, security: ClientSecurity | None = None
) -> QuorumInfo:
    """DescribeQuorum of ``__cluster_metadata`` (KRaft only; a broker forwards it to the quorum)."""
    return _with_socket(  # type: ignore[no-any-return]
        host, port, timeout_s, lambda s: _describe_quorum_on(s, _api_versions_on(s)), security
    )


# ------------------------------------------------------------------ group coordinator readiness

_LOADED_CODES = (0, 69)  # NONE, GROUP_ID_NOT_FOUND (newer coordinators, for an unknown group)
_RETRIABLE_CODES = (14, 15, 16)  # COORDINATOR_LOAD_IN_PROGRESS, _NOT_AVAILABLE, NOT_COORDINATOR


def java_string_hash(s: str) -> int:
    """Java's ``String.hashCode()`` (UTF-16 code units, 32-bit signed overflow)."""
    h = 0
    for unit in s.encode("utf-16-be").hex(" ", 2).split():
        h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def offsets_partition_for(group_id: str, partitions: int) -> int:
    """``__consumer_offsets`` partition of ``group_id``: ``Utils.abs(groupId.hashCode()) % n``
    (``GroupCoordinatorService.partitionFor``; ``Utils.abs(Integer.MIN_VALUE)`` is 0)."""
    h = java_string_hash(group_id)
    return (0 if h == -(1 << 31) else abs(h)) % partitions


def group_ids_covering(partitions: int, prefix: str = "kgc-warmup-") -> list[str]:
    """One group id per ``__consumer_offsets`` partition, in partition order."""
    found: dict[int, str] = {}
    for i in itertools.count():
        p = offsets_partition_for(f"{prefix}{i}", partitions)
        found.setdefault(p, f"{prefix}{i}")
        if len(found) == partitions:
            return [found[p] for p in range(partitions)]
    raise AssertionError("unreachable")


def group_coordinators_loaded(
    host: str,
    port: int,
    partitions: int,
    timeout_s: float = 2.0,
    security: ClientSecurity | None = None,
) -> bool:
    """True when every ``__consumer_offsets`` partition has a coordinator that has loaded it:
    FindCoordinator succeeds for a group id of each partition and DescribeGroups, sent to that
    coordinator, answers without COORDINATOR_LOAD_IN_PROGRESS / NOT_COORDINATOR. The first call
    on a fresh cluster also makes the broker create ``__consumer_offsets``."""
    from kafka.protocol.admin import DescribeGroupsRequest, DescribeGroupsResponse
    from kafka.protocol.metadata import FindCoordinatorRequest, FindCoordinatorResponse

    names = group_ids_covering(partitions)

    def find(sock: socket.socket) -> dict[tuple[str, int], list[str]] | None:
        versions = _api_versions_on(sock)
        v = versions.max_version(
            KEYS["FindCoordinator"], min(4, FindCoordinatorRequest.max_version)
        )
        by_node: dict[tuple[str, int], list[str]] = {}
        if v < 4:  # before Kafka 3.0 (KIP-699): one key per request
            for name in names:
                one = round_trip(sock, FindCoordinatorRequest(key=name), FindCoordinatorResponse, v)
                if one.error_code != 0:
                    return None
                by_node.setdefault((one.host, one.port), []).append(name)
            return by_node
        req = FindCoordinatorRequest(key_type=0, coordinator_keys=names)
        resp = round_trip(sock, req, FindCoordinatorResponse, v)
        for c in resp.coordinators:
            if c.error_code != 0:
                return None
            by_node.setdefault((c.host, c.port), []).append(c.key)
        return by_node

    by_node = _with_socket(host, port, timeout_s, find, security)
    if by_node is None:
        return False

    def describe(groups: list[str]) -> Any:
        def on(sock: socket.socket) -> bool:
            versions = _api_versions_on(sock)
            v = versions.max_version(
                KEYS["DescribeGroups"], min(5, DescribeGroupsRequest.max_version)
            )
            resp = round_trip(sock, DescribeGroupsRequest(groups=groups), DescribeGroupsResponse, v)
            return all(g.error_code in _LOADED_CODES for g in resp.groups)

        return on

    return all(
        _with_socket(h, p, timeout_s, describe(groups), security)
        for (h, p), groups in by_node.items()
    )
