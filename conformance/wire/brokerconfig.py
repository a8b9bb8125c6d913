"""What the model needs to know about a broker, read from the broker itself.

The model's answers depend on broker settings (``group.min.session.timeout.ms`` decides
INVALID_SESSION_TIMEOUT, ``group.initial.rebalance.delay.ms`` when a new group's first join
completes, ``offsets.topic.num.partitions`` where a group lives) and on who leads each
``__consumer_offsets`` partition (FindCoordinator's answer). Reading them with DescribeConfigs
(resource type BROKER, ``DescribeConfigsRequest.json``) and Metadata means the same suite is right
for the embedded broker and for a broker someone else configured — nothing is assumed.
"""

from __future__ import annotations

import secrets
from typing import Any

from kafka.protocol.admin.configs import DescribeConfigsRequest, DescribeConfigsResponse
from kgc.conformance.errors import KgcError
from kgc.conformance.wire.client import ClientError, Cluster, error_name, join_group
from kgc.engine.registry import CONSUMER_SETTINGS, SETTINGS
from kgc.model.apis import KEYS
from kgc.model.consumer.group import ConsumerGroupConfig
from kgc.model.errors import (
    GROUP_AUTHORIZATION_FAILED,
    INVALID_GROUP_ID,
    INVALID_SESSION_TIMEOUT,
    MEMBER_ID_REQUIRED,
    NONE,
)
from kgc.model.profiles import GroupConfig

BROKER_RESOURCE = 4  # ConfigResource.Type.BROKER

GROUP_SETTINGS = (
    "group.min.session.timeout.ms",
    "group.max.session.timeout.ms",
    "group.initial.rebalance.delay.ms",
    "group.max.size",
    "offsets.topic.num.partitions",
    "offset.metadata.max.bytes",
    "offsets.commit.timeout.ms",
    "offsets.retention.check.interval.ms",
)
# KIP-932's share group: the broker settings its model reads (``engine/registry.py``
# ``share_manifest``), with Kafka's defaults for a broker that does not say
# (``GroupCoordinatorConfig.java`` l.264-309, 4.3.1; docs/share-groups.md §1). Apache Kafka has
# the first three from 4.0 and ``group.share.assignment.interval.ms`` from 4.3 only.
SHARE_SESSION = "group.share.session.timeout.ms"
SHARE_HEARTBEAT = "group.share.heartbeat.interval.ms"
SHARE_MAX_SIZE = "group.share.max.size"
SHARE_ASSIGNMENT_INTERVAL = "group.share.assignment.interval.ms"
SHARE_DEFAULTS: dict[str, int] = {
    SHARE_SESSION: 45000,
    SHARE_HEARTBEAT: 5000,
    SHARE_MAX_SIZE: 200,
    SHARE_ASSIGNMENT_INTERVAL: 1000,
}
# KIP-848's consumer group reads these (``engine/registry.py`` CONSUMER_SETTINGS), the share
# group these (:data:`SHARE_DEFAULTS`)
GROUP_SETTINGS = tuple(
    dict.fromkeys(GROUP_SETTINGS + tuple(CONSUMER_SETTINGS) + tuple(SHARE_DEFAULTS))
)
# What the model assumes of a broker that says nothing else (and says so): Kafka's defaults, as
# ``GroupConfig`` and ``ConsumerGroupConfig`` hold them (``GroupCoordinatorConfig.java``)
ASSUMED = {
    **{key: getattr(GroupConfig(), field) for key, field in SETTINGS.items()},
    **{key: getattr(ConsumerGroupConfig(), field) for key, field in CONSUMER_SETTINGS.items()},
    **SHARE_DEFAULTS,
}


class BrokerConfigUnreadable(Exception):
    pass


class BrokerFactsDisagree(KgcError):
    """What the broker's settings say (read, or given with ``--broker-config``) contradicts what
    it shows (its ``__consumer_offsets`` partitions in Metadata), or itself (a minimum session
    timeout above the maximum, a group size below 1, …)."""


def settings_problem(config: dict[str, int]) -> str | None:
    """Why the group settings ``config`` (broker setting -> value) cannot describe a broker, in
    the settings' own names; None when the model can take them."""
    names = {**{f: k for k, f in SETTINGS.items()}, **{f: k for k, f in CONSUMER_SETTINGS.items()}}
    try:
        GroupConfig(**{f: config[k] for k, f in SETTINGS.items() if k in config})
        ConsumerGroupConfig(**{f: config[k] for k, f in CONSUMER_SETTINGS.items() if k in config})
    except ValueError as exc:
        text = str(exc)
        for field_name, key in sorted(names.items(), key=lambda x: -len(x[0])):
            text = text.replace(field_name, key)
        return text
    return share_settings_problem(config)


def share_settings_problem(config: dict[str, int]) -> str | None:
    """Why the share-group settings in ``config`` cannot describe an Apache Kafka broker: the
    checks ``GroupCoordinatorConfig`` makes at start-up (4.3.1 l.438, l.628-631, l.638-643) on the
    settings kgc reads; None when they hold."""
    session = config.get(SHARE_SESSION, SHARE_DEFAULTS[SHARE_SESSION])
    heartbeat = config.get(SHARE_HEARTBEAT, SHARE_DEFAULTS[SHARE_HEARTBEAT])
    size = config.get(SHARE_MAX_SIZE, SHARE_DEFAULTS[SHARE_MAX_SIZE])
    interval = config.get(SHARE_ASSIGNMENT_INTERVAL, 0)
    if not heartbeat < session:
        return f"{SHARE_HEARTBEAT} ({heartbeat}) must be less than {SHARE_SESSION} ({session})"
    if not 1 <= size <= 1000:
        return f"{SHARE_MAX_SIZE} must be between 1 and 1000, not {size}"
    if interval < 0:
        return f"{SHARE_ASSIGNMENT_INTERVAL} must be at least 0, not {interval}"
    return None


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
    out = _settings_in(conn.request(req), node_id)
    if not out:
        # Kafka 2.7.0 answers a request naming two or more keys with none of them (KAFKA-12235,
        # fixed in 2.7.1): ask for every setting and pick ours
        req.resources[0].configuration_keys = None
        out = _settings_in(conn.request(req), node_id)
    return out


def migration_policy(cluster: Cluster) -> str | None:
    """The broker's ``group.consumer.migration.policy`` (lower case), or None if it does not
    say (not Apache Kafka 4.x, or DescribeConfigs refused)."""
    cluster.refresh_metadata()
    node_id = min(b.node_id for b in cluster.metadata().brokers)
    req = DescribeConfigsRequest(
        resources=[
            DescribeConfigsRequest.DescribeConfigsResource(
                resource_type=BROKER_RESOURCE,
                resource_name=str(node_id),
                configuration_keys=None,
            )
        ],
        include_synonyms=False,
        include_documentation=False,
    )
    try:
        resp = cluster.connection(node_id).request(req)
    except Exception:  # noqa: BLE001 - a broker that cannot say is assumed at Kafka's default
        return None
    for result in resp.results:
        if result.error_code != 0:
            return None
        for entry in result.configs:
            if entry.name == "group.consumer.migration.policy" and entry.value is not None:
                return str(entry.value).lower()
    return None


def _settings_in(resp: DescribeConfigsResponse, node_id: int) -> dict[str, int]:
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


# A session timeout no broker needs refuse (the suite's own are 1-2 s) and the largest int32.
_PROBE_LOW_MS, _PROBE_HIGH_MS = 1, 2**31 - 1


def probe_foreign_group_refused(cluster: Cluster) -> bool | None:
    """Whether the run's principal is refused a group outside its prefix, asked with a JoinGroup
    naming the empty group id: ``GROUP_AUTHORIZATION_FAILED`` (the authorizer, first:
    ``KafkaApis.handleJoinGroupRequest``) or ``INVALID_GROUP_ID`` (the coordinator; nothing is
    created either way: ``model/classic/empty_group.py``). None when it answers otherwise."""
    conn = cluster.connection(min(cluster.brokers))
    handle = join_group(
        conn,
        "",
        session_timeout_ms=10_000,
        rebalance_timeout_ms=10_000,
        protocols=[("range", b"")],
        version=min((conn.broker_versions or {}).get(KEYS["JoinGroup"], (0, 3))[1], 5),
    )
    error = error_name(cluster._request(conn, handle).error_code)
    return {GROUP_AUTHORIZATION_FAILED: True, INVALID_GROUP_ID: False}.get(error)


def probe_session_bounds(cluster: Cluster) -> tuple[int, int] | None:
    """``(group.min.session.timeout.ms, group.max.session.timeout.ms)`` found by asking: a
    JoinGroup whose session timeout is outside the bounds is refused ``INVALID_SESSION_TIMEOUT``
    before anything else (``GroupMetadataManager.classicGroupJoin``; ``GroupCoordinator
    .handleJoinGroup`` in 3.x), and one inside them, sent as a new member at v4+, is answered
    ``MEMBER_ID_REQUIRED`` at once (KIP-394) — so a binary search over JoinGroups to a throwaway
    ``kgc-probe-…`` group finds each bound. None when the broker cannot be asked that way (no
    JoinGroup v4+); :class:`BrokerConfigUnreadable` when it answers otherwise (e.g. a new
    member joined at once, with no handshake)."""
    group_id = f"kgc-probe-{secrets.token_hex(4)}"
    node = cluster.find_coordinator(group_id).node_id
    conn = cluster.connection(node)
    top = (conn.broker_versions or {}).get(KEYS["JoinGroup"], (0, -1))[1]
    version = min(top, 5)
    if version < 4:
        return None

    def answer(session_ms: int) -> str:
        handle = join_group(
            conn,
            group_id,
            session_timeout_ms=session_ms,
            rebalance_timeout_ms=session_ms,
            protocols=[("range", b"")],
            version=version,
        )
        error = error_name(cluster._request(conn, handle).error_code)
        if error not in (INVALID_SESSION_TIMEOUT, MEMBER_ID_REQUIRED, NONE):
            raise BrokerConfigUnreadable(f"JoinGroup probe answered {error}")
        return error

    def refused(session_ms: int) -> bool:
        return answer(session_ms) == INVALID_SESSION_TIMEOUT

    def first_accepted(lo: int, hi: int) -> int:  # refused(lo - 1) or lo == 1; hi accepted
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (mid + 1, hi) if refused(mid) else (lo, mid)
        return lo

    def last_accepted(lo: int, hi: int) -> int:  # lo accepted; refused(hi + 1) or hi is the top
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if not refused(mid) else (lo, mid - 1)
        return lo

    if answer(6000) == NONE:  # Kafka's default minimum, so most brokers accept it
        raise BrokerConfigUnreadable(
            "a new member's JoinGroup v4+ was answered NONE, with no KIP-394 MEMBER_ID_REQUIRED "
            "handshake, so each probe would be a whole join phase: not probed"
        )
    accepted = 6000 if not refused(6000) else None
    if accepted is None:
        accepted = next((ms for ms in (60_000, 300_000, 1_800_000) if not refused(ms)), None)
        if accepted is None:
            return None
    low = _PROBE_LOW_MS if not refused(_PROBE_LOW_MS) else first_accepted(1, accepted)
    top = _PROBE_HIGH_MS
    high = top if not refused(top) else last_accepted(accepted, top)
    return low, high


def facts(
    cluster: Cluster,
    given: dict[str, int] | None = None,
    *,
    profile: dict[str, int] | None = None,
) -> dict[str, Any]:
    """What the model needs to know, as one JSON-ready dict for the trace manifest's ``target``,
    with where each fact came from (``fact_sources``): ``given`` (``--broker-config``),
    ``profile`` (the launched implementation's settings profile: how it behaves where that is
    only a Kafka setting, ``conformance/brokers/implementations.py`` ``SETTINGS``), ``read``
    (DescribeConfigs), ``probed`` (asked with requests: the session-timeout bounds), ``metadata``
    (``offsets.topic.num.partitions`` counted in Metadata when nothing said it), ``assumed``
    (Kafka's default: nothing else said) — never a silent guess; a read or given partition count
    that Metadata contradicts is :class:`BrokerFactsDisagree`. ``notes`` says what could not be
    had and what was switched off for it (a broker with no ``__consumer_offsets`` in Metadata:
    coordinators are found with FindCoordinator only, and where a group lives is not checked)."""
    given = dict(given or {})
    notes: list[str] = []
    read: dict[str, int] = {}
    advertised = cluster.connection(_first_node(cluster)).broker_versions or {}
    if KEYS["DescribeConfigs"] not in advertised:
        notes.append("DescribeConfigs: not offered by the broker")
    else:
        try:
            read = group_settings(cluster)
        except (ClientError, BrokerConfigUnreadable) as exc:
            notes.append(f"DescribeConfigs refused ({exc})")
    config: dict[str, int] = {}
    sources: dict[str, str] = {}
    for key in GROUP_SETTINGS:
        if key in given:
            config[key], sources[key] = given[key], "given"
        elif key in (profile or {}):
            config[key], sources[key] = int((profile or {})[key]), "profile"
        elif key in read:
            config[key], sources[key] = read[key], "read"
    bounds = ("group.min.session.timeout.ms", "group.max.session.timeout.ms")
    if any(k not in config for k in bounds):
        try:
            probed = probe_session_bounds(cluster)
        except (ClientError, BrokerConfigUnreadable) as exc:
            probed = None
            notes.append(f"session-timeout probe failed ({exc})")
        if probed is not None:
            for key, value in zip(bounds, probed, strict=True):
                if key not in config:
                    config[key], sources[key] = value, "probed"
    for key in GROUP_SETTINGS:
        if key not in config:
            config[key], sources[key] = ASSUMED[key], "assumed"
    try:
        leaders = offsets_partition_leaders(cluster)
    except ClientError as exc:
        leaders = None
        notes.append(
            f"no __consumer_offsets metadata ({exc}): coordinators found with FindCoordinator "
            "only; which node coordinates a group is not checked"
        )
    key = "offsets.topic.num.partitions"
    if leaders is not None and config[key] != len(leaders):
        if sources[key] == "assumed":  # the topic itself says how many partitions it has
            config[key], sources[key] = len(leaders), "metadata"
        else:
            raise BrokerFactsDisagree(
                f"{key} is {config[key]} ({sources[key]}), but the broker's __consumer_offsets "
                f"has {len(leaders)} partitions in Metadata; "
                + (
                    "give the right value with --broker-config"
                    if sources[key] == "given"
                    else "the broker contradicts itself"
                )
            )
    problem = settings_problem(config)
    if problem is not None:
        named = ", ".join(f"{k}={config[k]} ({sources[k]})" for k in GROUP_SETTINGS if k in problem)
        raise BrokerFactsDisagree(
            f"the broker's group settings cannot hold together: {problem} ({named}); "
            "give values that can with --broker-config KEY=VALUE"
        )
    out = {
        "group_config": config,
        "fact_sources": sources,
        "fact_notes": notes,
        "offsets_partition_leaders": leaders,
        "node_ids": sorted(b.node_id for b in cluster.metadata().brokers),
    }
    address = getattr(cluster.connection(_first_node(cluster)), "local_address", None)
    if address is not None:  # a stand-in connection (tests) has none: the model's default holds
        out["client_host"] = kafka_client_host(address)
    return out


def kafka_client_host(ip: str) -> str:
    """How Kafka writes the address of a client connecting from ``ip``: Java's
    ``InetAddress.toString`` of an address with no host name, ``"/" + getHostAddress()``
    (``/127.0.0.1``; IPv6 in full, groups without leading zeros: ``/0:0:0:0:0:0:0:1``; an
    IPv4-mapped IPv6 address is the IPv4 one). 4.x ``RequestContext.clientAddress``, 3.9 and
    older ``request.session.clientAddress``, stored as the member's ``clientHost`` at JoinGroup and
    shown by DescribeGroups (``GroupConfig.client_host``)."""
    import ipaddress

    addr = ipaddress.ip_address(ip.split("%", 1)[0])
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    if isinstance(addr, ipaddress.IPv4Address):
        return f"/{addr}"
    return "/" + ":".join(format(int(g, 16), "x") for g in addr.exploded.split(":"))


def _first_node(cluster: Cluster) -> int:
    cluster.refresh_metadata()
    return min(b.node_id for b in cluster.metadata().brokers)
