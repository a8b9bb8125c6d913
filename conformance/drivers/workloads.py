"""Workloads: what one run of the suite drives, one per protocol.

A :class:`Workload` is everything about a protocol the driver (``suite.py``) must not decide by
name: the scenario its saved traces are named by, the request types whose versions it negotiates
itself, how much slower its search runs against a broker that refuses short sessions, whether a
rule waits while a first join is parked, and how it builds a run's :class:`Harness` — the targets,
the model, the machine class and the nemesis — once the run's cluster connection is open and its
topic exists. A new protocol or target is a new ``Workload``, never a branch in the driver.

* :data:`CLASSIC` — JoinGroup/SyncGroup (``GroupMachine``, ``ClassicGroupModel``).
* :data:`CONSUMER` — KIP-848's ConsumerGroupHeartbeat (``properties/consumer_machine.py``,
  ``ConsumerGroupModel``); a broker that does not run it raises :class:`ProtocolUnsupported`
  before any example.
* :data:`MIGRATION` — both on one group id (``properties/migration_machine.py``,
  ``MigratingGroupModel``), by the broker's ``group.consumer.migration.policy``.
* :data:`SHARE` — KIP-932's ShareGroupHeartbeat and ShareGroupDescribe
  (``properties/share_machine.py``); a broker without share groups raises
  :class:`ProtocolUnsupported` before any example, and a throwaway share group first waits until
  the share coordinator has initialized the run's topic (docs/share-groups.md §2, step 8).
* the fault-mixed classic workload on a cluster kgc started: ``fault_suite.fault_workload``.

:data:`WORKLOADS` names the first four as ``kgc check --protocol`` does.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from kgc.model.apis import CONSUMER_GROUP_APIS, KEYS, OFFSET_APIS, SHARE_GROUP_APIS, keys_of
from kgc.model.checker import Model
from kgc.model.client_view import CONSUMER_VERSIONS
from kgc.properties.machine import (
    TOPIC_PARTITIONS,
    GroupMachine,
    SuiteContext,
    machine_for,
    time_scale_for,
)

if TYPE_CHECKING:
    from kgc.conformance.faults.nemesis import Nemesis
    from kgc.conformance.wire.client import Cluster
    from kgc.engine.target import Target

ModelFactory = Callable[[dict[str, Any], str], Model[Any]]  # (model record, group id) -> model

CONSUMER_API_KEYS = keys_of(CONSUMER_GROUP_APIS)
# the versions negotiated, lowest first, out of the consumer's one table (model/client_view.py)
CONSUMER_SPEC_VERSIONS = tuple(sorted(CONSUMER_VERSIONS["ConsumerGroupHeartbeat"]))
OFFSET_API_KEYS = keys_of(OFFSET_APIS)
CONSUMER_OFFSET_VERSIONS = tuple(sorted(CONSUMER_VERSIONS["OffsetCommit"]))
SHARE_API_KEYS = keys_of(SHARE_GROUP_APIS)
# the group-admin requests the share machine sends beside its own (``properties/share_machine.py``)
SHARE_ADMIN_APIS = ("ListGroups", "DeleteGroups")
# how long the share workload's throwaway group may wait for its partitions: the first
# initialization on a fresh broker also creates the share coordinator's state topic
SHARE_WARM_UP_S = 60.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Harness:
    """What a workload builds for one run, once the run's cluster connection is open: per
    example a target and a model for a fresh group, the state machine class bound to the run's
    context, and the nemesis whose faults are healed when the run ends (None: no faults)."""

    open_target: Callable[[str], Target]  # group id -> a fresh target for that group
    new_model: Callable[[str], Model[Any]]  # group id -> a fresh model for that group
    machine: Callable[[SuiteContext], type[GroupMachine]] = machine_for
    nemesis: Nemesis | None = None
    model_record: dict[str, Any] | None = None  # the manifest's model record, one for the run


class BuildHarness(Protocol):
    """How a workload builds its :class:`Harness`: ``description`` holds the broker's facts and
    the classic negotiation's ``request_versions`` (a builder that negotiates more writes them
    there); ``topic`` exists; ``factory`` replaces how the model is built (None: the workload's
    own); ``reuse_connections`` is ``BrokerTarget``'s."""

    def __call__(
        self,
        cluster: Cluster,
        description: dict[str, Any],
        *,
        topic: str,
        factory: ModelFactory | None = None,
        reuse_connections: bool = True,
    ) -> Harness: ...


def first_join_parks(group_config: dict[str, Any]) -> bool:
    """Classic members' first join parks for ``group.initial.rebalance.delay.ms`` (Kafka's
    default: 3 s): the machine lets time pass instead of doing nothing (``wait_when_parked``)."""
    return int(group_config.get("group.initial.rebalance.delay.ms") or 0) > 0


def unscaled(group_config: dict[str, Any]) -> int:
    """The KIP-848 session is the broker's own setting, not drawn: nothing to scale."""
    return 1


def never_parks(group_config: dict[str, Any]) -> bool:
    """KIP-848 members join by heartbeat: no join parks."""
    return False


@dataclass(frozen=True, slots=True, kw_only=True)
class Workload:
    """One protocol the suite drives (module docstring)."""

    name: str  # as ``kgc check --protocol`` names it
    scenario: str  # saved traces are ``traces/<scenario>_<check>_<fingerprint>.json``
    build: BuildHarness
    # request types whose versions ``build`` negotiates (into ``description["request_versions"]``)
    # over the classic negotiation's
    negotiates: frozenset[str] = frozenset()
    # group config -> the factor drawn sessions, rebalance timeouts and ticks are multiplied by
    time_scale: Callable[[dict[str, Any]], int] = time_scale_for
    # group config -> whether a rule drawn for a waiting client lets time pass
    wait_when_parked: Callable[[dict[str, Any]], bool] = first_join_parks
    model_factory: ModelFactory | None = None  # replaces how the model is built (quality tests)

    def harness(
        self,
        cluster: Cluster,
        description: dict[str, Any],
        *,
        topic: str,
        reuse_connections: bool = True,
    ) -> Harness:
        return self.build(
            cluster,
            description,
            topic=topic,
            factory=self.model_factory,
            reuse_connections=reuse_connections,
        )


# ------------------------------------------------------------------------------------ builders


def classic_workload(
    cluster: Cluster,
    description: dict[str, Any],
    *,
    topic: str,
    factory: ModelFactory | None = None,
    reuse_connections: bool = True,
) -> Harness:
    """The classic machine on ``BrokerTarget`` targets, checked by the model the broker's facts
    give (``registry.model_manifest``)."""
    from kgc.engine.registry import build, model_manifest

    return _broker_harness(
        cluster,
        description,
        model_manifest(description),
        factory or build,
        machine_for,
        reuse_connections=reuse_connections,
    )


def consumer_workload(
    cluster: Cluster,
    description: dict[str, Any],
    *,
    topic: str,
    factory: ModelFactory | None = None,
    reuse_connections: bool = True,
) -> Harness:
    """The KIP-848 consumer group on ``BrokerTarget`` targets: the versions both sides speak go
    into ``description["request_versions"]`` (and so into the model record and every trace)."""
    from kgc.conformance.errors import ProtocolUnsupported
    from kgc.engine.registry import build_consumer, consumer_manifest
    from kgc.properties.consumer_machine import consumer_machine_for

    cluster.refresh_metadata()
    first = min(b.node_id for b in cluster.metadata().brokers)
    advertised = cluster.connection(first).broker_versions or {}
    versions = description.setdefault("request_versions", {})
    for api, key in CONSUMER_API_KEYS.items():
        if key not in advertised:
            offered = [a for a, k in CONSUMER_API_KEYS.items() if k in advertised]
            why = (
                f"it offers {', '.join(offered)} but kgc needs both to check KIP-848's "
                "consumer protocol"
                if offered
                else "it does not run KIP-848's consumer protocol (Apache Kafka offers it from "
                "4.0 in KRaft mode)"
            )
            raise ProtocolUnsupported(
                f"the broker does not offer {api} (API key {key}): {why}; check it with "
                "--protocol classic"
            )
        low, high = advertised[key]
        both = [v for v in CONSUMER_SPEC_VERSIONS if low <= v <= high]
        if not both:
            raise ProtocolUnsupported(
                f"the broker offers {api} v{low}-{high}, kgc speaks "
                f"v{CONSUMER_SPEC_VERSIONS[0]}-{CONSUMER_SPEC_VERSIONS[-1]}"
            )
        versions[api] = both
    # offsets with member epochs: v8 (before KIP-848: UNSUPPORTED_VERSION from a consumer
    # member's commit), v9 (member id and epoch), v10 (topic ids)
    for api, key in OFFSET_API_KEYS.items():
        low, high = advertised.get(key, (0, -1))
        versions[api] = [v for v in CONSUMER_OFFSET_VERSIONS if low <= v <= high]
    _probe_consumer_protocol(cluster, first, versions["ConsumerGroupHeartbeat"][-1])
    _await_topic_in_group_coordinator(cluster, topic, versions["ConsumerGroupHeartbeat"][-1])
    record = consumer_manifest(description, {topic: TOPIC_PARTITIONS})
    return _broker_harness(
        cluster,
        description,
        record,
        factory or build_consumer,
        consumer_machine_for,
        reuse_connections=reuse_connections,
    )


def _broker_harness(
    cluster: Cluster,
    description: dict[str, Any],
    record: dict[str, Any],
    build: ModelFactory,
    machine: Callable[[SuiteContext], type[Any]],
    *,
    reuse_connections: bool,
) -> Harness:
    """``machine``'s examples on ``BrokerTarget`` targets, checked by ``build(record, gid)``."""
    from kgc.conformance.wire.broker_target import BrokerTarget

    return Harness(
        open_target=lambda gid: BrokerTarget(
            cluster, gid, description=description, reuse_connections=reuse_connections
        ),
        new_model=lambda gid: build(record, gid),
        machine=machine,
        model_record=record,
    )


def migration_workload(
    cluster: Cluster,
    description: dict[str, Any],
    *,
    topic: str,
    factory: ModelFactory | None = None,
    reuse_connections: bool = True,
) -> Harness:
    """Classic clients and KIP-848 consumers on one group id (``MigratingGroupModel``,
    ``properties/migration_machine.py``). The broker must run the consumer protocol (as for
    :func:`consumer_workload`), else :class:`ProtocolUnsupported` before any example; its
    ``group.consumer.migration.policy`` is read (Kafka's default, ``bidirectional``, if it does
    not say)."""
    from kgc.conformance.wire.brokerconfig import migration_policy
    from kgc.engine.registry import MIGRATION_POLICY, build_migration, migration_manifest
    from kgc.properties.migration_machine import migration_machine_for

    classic_versions = dict(description.get("request_versions") or {})
    consumer_workload(cluster, description, topic=topic)  # checks and negotiates the protocol
    # the classic clients commit and fetch with the classic machine's versions
    for api in OFFSET_API_KEYS:
        if api in classic_versions:
            description["request_versions"][api] = classic_versions[api]
    group_config = description.setdefault("group_config", {})
    sources = description.setdefault("fact_sources", {})
    if MIGRATION_POLICY not in group_config:
        read = migration_policy(cluster)
        group_config[MIGRATION_POLICY] = read or "bidirectional"
        sources[MIGRATION_POLICY] = "read" if read else "assumed"
    record = migration_manifest(description, {topic: TOPIC_PARTITIONS})
    return _broker_harness(
        cluster,
        description,
        record,
        factory or build_migration,
        migration_machine_for,
        reuse_connections=reuse_connections,
    )


def _probe_consumer_protocol(cluster: Cluster, node: int, version: int) -> None:
    """A broker may list ConsumerGroupHeartbeat with the protocol switched off (Kafka 3.7-3.9
    unless ``group.coordinator.rebalance.protocols`` names ``consumer``): it then answers every
    one ``UNSUPPORTED_VERSION``. Asked with epoch 1 for a ``kgc-probe-`` group that does not
    exist, a broker running the protocol answers ``GROUP_ID_NOT_FOUND`` and creates nothing."""
    from kgc.conformance.errors import ProtocolUnsupported
    from kgc.conformance.wire.client import consumer_group_heartbeat, error_name

    conn = cluster.connection(node)
    probe = f"kgc-probe-{secrets.token_hex(4)}"
    answer = cluster._request(
        conn, consumer_group_heartbeat(conn, probe, probe, 1, version=version)
    )
    if error_name(answer.error_code) == "UNSUPPORTED_VERSION":
        raise ProtocolUnsupported(
            "the broker lists ConsumerGroupHeartbeat but answers UNSUPPORTED_VERSION: its KIP-848 "
            "consumer protocol is switched off (Kafka 3.7-3.9: group.coordinator.rebalance."
            "protocols=classic,consumer turns it on); check it with --protocol classic"
        )


def _await_topic_in_group_coordinator(
    cluster: Cluster, topic: str, version: int, *, timeout_s: float = 15.0
) -> None:
    """Wait until the group coordinator assigns every partition of the run's new ``topic``.

    The coordinator reads topics from its own metadata image, which can trail the broker's
    metadata cache that CreateTopics and Metadata answer from: a group created in between gets a
    target without the topic (seen on 4.3.1: the first member of a group, joined a few hundred ms
    after the topic was created, was given epoch 2 and no partitions). So a throwaway
    ``kgc-probe-`` group joins until its member is given the whole topic, then leaves; the
    group, Empty and without offsets, is left to the coordinator's cleanup."""
    from kgc.conformance.errors import KgcError
    from kgc.conformance.wire.client import consumer_group_heartbeat, error_name

    deadline = time.monotonic() + timeout_s
    while True:
        group = f"kgc-probe-{secrets.token_hex(4)}"
        member = f"kgc-probe-{secrets.token_hex(8)}"
        conn = cluster.connection(cluster.await_coordinator(group))
        answer = cluster._request(
            conn,
            consumer_group_heartbeat(
                conn,
                group,
                member,
                0,
                rebalance_timeout_ms=1000,
                subscribed_topic_names=[topic],
                topic_partitions=[],
                version=version,
            ),
        )
        error = error_name(answer.error_code)
        given = (
            sum(len(t.partitions) for t in (answer.assignment.topic_partitions or ()))
            if (error == "NONE" and answer.assignment is not None)
            else 0
        )
        if error == "NONE":
            cluster._request(
                conn, consumer_group_heartbeat(conn, group, member, -1, version=version)
            )
        if given == TOPIC_PARTITIONS:
            return
        if time.monotonic() > deadline:
            raise KgcError(
                f"the group coordinator still does not assign topic {topic!r} "
                f"{timeout_s:.0f} s after it was created (last answer: {error}, "
                f"{given} of {TOPIC_PARTITIONS} partitions)"
            )
        time.sleep(0.1)


def share_workload(
    cluster: Cluster,
    description: dict[str, Any],
    *,
    topic: str,
    factory: ModelFactory | None = None,
    reuse_connections: bool = True,
) -> Harness:
    """KIP-932's share group on ``BrokerTarget`` targets (:func:`prepare_share` first: the
    versions, the probe, the warm-up), checked by the share-group model
    (``registry.share_manifest``)."""
    partitions = prepare_share(cluster, description, topic=topic)[1]
    from kgc.conformance.errors import ProtocolUnsupported
    from kgc.engine.registry import build_share, share_manifest
    from kgc.model.commands import NotModelled
    from kgc.properties.share_machine import share_machine_for

    try:
        record = share_manifest(description, {topic: partitions})
    except NotModelled as exc:  # judged by a line without share groups (its API versions' line)
        raise ProtocolUnsupported(
            f"{exc}: judge its share groups by a line kgc models, e.g. --rules kafka-4.3"
        ) from None
    key = "group.share.assignment.interval.ms"
    interval = int((description.get("group_config") or {}).get(key) or 0)
    if interval:  # the model computes targets at once (``ShareGroupConfig``)
        source = (description.get("fact_sources") or {}).get(key, "assumed")
        raise ProtocolUnsupported(
            f"the broker's {key} is {interval} ({source}): kgc models share-group targets "
            f"computed at once (0); if the broker computes them so, say --broker-config {key}=0"
        )
    return _broker_harness(
        cluster,
        description,
        record,
        factory or build_share,
        share_machine_for,
        reuse_connections=reuse_connections,
    )


def prepare_share(
    cluster: Cluster, description: dict[str, Any], *, topic: str, timeout_s: float = SHARE_WARM_UP_S
) -> tuple[float, int]:
    """Everything the share workload needs of the broker before its first example: the
    ShareGroupHeartbeat and ShareGroupDescribe versions both sides speak go into
    ``description["request_versions"]``; a broker without share groups is
    :class:`ProtocolUnsupported` (:func:`_share_versions`, :func:`_probe_share_groups`); then the
    share coordinator is warmed up on ``topic`` (:func:`_warm_up_share_groups`). Returns how long
    the warm-up took, in seconds, and how many partitions ``topic`` has: as many as Metadata
    lists, which is not always what was asked (librdkafka's mock cluster, with no CreateTopics,
    makes it on a Metadata request with its default of 4)."""
    cluster.refresh_metadata()
    first = min(b.node_id for b in cluster.metadata().brokers)
    versions = description.setdefault("request_versions", {})
    advertised = cluster.connection(first).broker_versions or {}
    offered, missing = _share_versions(advertised)
    admin, admin_missing = _share_admin_versions(advertised)
    versions.update(offered)
    versions.update(admin)
    description.setdefault("unsupported_requests", {}).update({**missing, **admin_missing})
    heartbeat = versions["ShareGroupHeartbeat"][-1]
    _probe_share_groups(cluster, first, heartbeat)
    partitions = len(cluster.partition_leaders(topic)) or TOPIC_PARTITIONS
    took, left = _warm_up_share_groups(
        cluster, topic, heartbeat, partitions=partitions, timeout_s=timeout_s
    )
    if left is not None:
        description.setdefault("fact_notes", []).append(left)
    return took, partitions


def _share_versions(
    advertised: dict[int, tuple[int, int]],
) -> tuple[dict[str, list[int]], dict[str, str]]:
    """The versions of each share-group API that the broker offers (ApiVersions) and kgc speaks
    (what Kafka's spec defines: v1 alone in 4.3.1, ``message_specs.py``), and the APIs it goes
    without (name -> why). ShareGroupHeartbeat is the protocol: without it, or with no version
    in common, :class:`ProtocolUnsupported` in one line. ShareGroupDescribe is not: a broker
    without it (librdkafka's mock cluster) is searched with heartbeats alone, its describe
    cells left out of the count as for any request type a target cannot be sent."""
    from kgc.conformance.errors import ProtocolUnsupported
    from kgc.conformance.wire.message_specs import message_classes

    out: dict[str, list[int]] = {}
    missing: dict[str, str] = {}
    for api, key in SHARE_API_KEYS.items():
        ours_low, ours_high = message_classes(api)[0].valid_versions
        out[api], why = _in_common(api, range(ours_low, ours_high + 1), advertised, "speaks")
        if why is None:
            continue
        if key in advertised:
            why += " (v0 was Kafka 4.0's early access of share groups)"
        if api != "ShareGroupHeartbeat":
            missing[api] = why
            continue
        offered = [a for a, k in SHARE_API_KEYS.items() if k in advertised]
        if key not in advertised and not offered:
            why += (
                ": it does not run KIP-932's share groups (Apache Kafka offers them from 4.1, on "
                "by default from 4.2)"
            )
        raise ProtocolUnsupported(f"{why}; check it with --protocol classic or consumer")
    return out, missing


def _share_admin_versions(
    advertised: dict[int, tuple[int, int]],
) -> tuple[dict[str, list[int]], dict[str, str]]:
    """The versions of ListGroups and DeleteGroups the share machine may send: those it draws
    that the broker offers, and the ones the broker goes without (name -> why), whose requests
    are then never sent and whose cells are not counted (librdkafka's mock cluster offers
    neither, and closes the connection on a request it does not offer)."""
    from kgc.model.requests import CLASSIC_REQUESTS

    out: dict[str, list[int]] = {}
    missing: dict[str, str] = {}
    for api in SHARE_ADMIN_APIS:
        drawn = CLASSIC_REQUESTS[api].drawn_versions
        out[api], why = _in_common(api, drawn, advertised, "sends")
        if why is not None:
            missing[api] = why
    return out, missing


def _in_common(
    api: str, ours: Iterable[int], advertised: dict[int, tuple[int, int]], verb: str
) -> tuple[list[int], str | None]:
    """The versions of ``api`` in ``ours`` that the broker offers (ApiVersions), sorted; with
    none, why not in a phrase (``verb``: what kgc does with ``ours``)."""
    key = KEYS[api]
    low, high = advertised.get(key, (0, -1))
    mine = sorted(ours)
    both = [v for v in mine if low <= v <= high]
    if both:
        return both, None
    if key not in advertised:
        return [], f"the broker does not offer {api} (API key {key})"
    return [], f"the broker offers {api} v{low}-{high}, kgc {verb} v{mine[0]}-{mine[-1]}"


def _probe_share_groups(cluster: Cluster, node: int, version: int) -> None:
    """A broker lists ShareGroupHeartbeat even while its feature ``share.version`` is 0 (Kafka
    4.1's default format), and then answers every share request ``UNSUPPORTED_VERSION``
    (``KafkaApis.scala`` l.3049-3051, docs/share-groups.md §1). Asked with epoch 1 for a
    ``kgc-probe-`` group that does not exist, a broker with share groups on answers
    ``GROUP_ID_NOT_FOUND`` and creates nothing (§2, validation rule 11)."""
    from kgc.conformance.errors import ProtocolUnsupported
    from kgc.conformance.wire.client import error_name, share_group_heartbeat

    conn = cluster.connection(node)
    probe = f"kgc-probe-{secrets.token_hex(4)}"
    answer = cluster._request(conn, share_group_heartbeat(conn, probe, probe, 1, version=version))
    if error_name(answer.error_code) == "UNSUPPORTED_VERSION":
        raise ProtocolUnsupported(
            "the broker lists ShareGroupHeartbeat but answers UNSUPPORTED_VERSION: its share "
            "groups are switched off (feature share.version=0, Kafka 4.1's default; kgc's "
            "share model describes 4.2 and later, where they are on); check it with --protocol "
            "classic or consumer"
        )


def _warm_up_share_groups(
    cluster: Cluster,
    topic: str,
    version: int,
    *,
    partitions: int = TOPIC_PARTITIONS,
    timeout_s: float = SHARE_WARM_UP_S,
) -> tuple[float, str | None]:
    """Wait until a share group is assigned every partition (``partitions``) of the run's new
    ``topic``; return
    how long that took, in seconds, and a note if the throwaway group could not be deleted.

    A share group's member is assigned only partitions the share coordinator has initialized
    for the group, asynchronously after the heartbeat that subscribed to them
    (docs/share-groups.md §2, step 8); on a fresh broker the first initialization also creates
    the share coordinator's state topic. And the group coordinator reads topics from its own
    metadata image, which can trail Metadata (``_await_topic_in_group_coordinator``). So a
    throwaway ``kgc-probe-`` share group joins with ``topic`` and heartbeats until its member
    holds every partition, then leaves and is deleted: share groups never expire (§2, "Share
    groups never expire")."""
    from kgc.conformance.errors import KgcError
    from kgc.conformance.wire.client import delete_groups, error_name, share_group_heartbeat

    start = time.monotonic()
    deadline = start + timeout_s
    group = f"kgc-probe-{secrets.token_hex(4)}"
    member = f"kgc-probe-{secrets.token_hex(8)}"
    conn = cluster.connection(cluster.await_coordinator(group))
    epoch, given, error = 0, 0, "NONE"
    topics: list[str] | None = [topic]
    while given < partitions:
        if time.monotonic() > deadline:
            raise KgcError(
                f"no share group is assigned topic {topic!r} {timeout_s:.0f} s after it was "
                f"created (last answer: {error}, {given} of {partitions} partitions): the "
                "share coordinator did not initialize its partitions"
            )
        if epoch or error != "NONE":
            time.sleep(0.1)
        answer = cluster._request(
            conn,
            share_group_heartbeat(
                conn, group, member, epoch, subscribed_topic_names=topics, version=version
            ),
        )
        error = error_name(answer.error_code)
        if error != "NONE":  # a coordinator still loading: join again
            epoch, topics = 0, [topic]
            continue
        epoch, topics = answer.member_epoch, None
        if answer.assignment is not None:
            given = sum(len(t.partitions) for t in answer.assignment.topic_partitions or ())
    took = time.monotonic() - start
    cluster._request(conn, share_group_heartbeat(conn, group, member, -1, version=version))
    if KEYS["DeleteGroups"] not in (conn.broker_versions or {}):  # librdkafka's mock cluster
        return took, f"the warm-up's share group {group} is left: the broker offers no DeleteGroups"
    while True:  # an Empty share group with initialized partitions: its state is deleted first
        results = cluster._request(conn, delete_groups(conn, [group])).results
        error = error_name(results[0].error_code) if results else "no result"
        if error in ("NONE", "GROUP_ID_NOT_FOUND"):
            return took, None
        if time.monotonic() > deadline:
            return took, f"the warm-up's share group {group} is left: DeleteGroups answered {error}"
        time.sleep(0.1)


# ----------------------------------------------------------------------------------- workloads

# a broker that refuses the suite's short sessions gets the same classic search, slower
# (``time_scale_for``); the consumer protocol's session is the broker's own setting, not drawn
CLASSIC = Workload(name="classic", scenario="classic", build=classic_workload)
CONSUMER = Workload(
    name="consumer",
    scenario="consumer",
    build=consumer_workload,
    negotiates=frozenset(CONSUMER_API_KEYS) | frozenset(OFFSET_API_KEYS),
    time_scale=unscaled,
    wait_when_parked=never_parks,
)
# the classic clients keep the classic negotiation's offset versions (``migration_workload``)
MIGRATION = Workload(
    name="migration",
    scenario="migration",
    build=migration_workload,
    negotiates=frozenset(CONSUMER_API_KEYS),
)
# KIP-932 share groups: sessions and heartbeat intervals are the broker's settings, nothing parks
SHARE = Workload(
    name="share",
    scenario="share",
    build=share_workload,
    negotiates=frozenset(SHARE_API_KEYS) | frozenset(SHARE_ADMIN_APIS),
    time_scale=unscaled,
    wait_when_parked=never_parks,
)
WORKLOADS: dict[str, Workload] = {w.name: w for w in (CLASSIC, CONSUMER, MIGRATION, SHARE)}


def workload_named(protocol: str) -> Workload:
    """The workload ``kgc check --protocol`` names."""
    if protocol not in WORKLOADS:
        raise ValueError(f"unknown protocol {protocol!r}; choose one of {', '.join(WORKLOADS)}")
    return WORKLOADS[protocol]
