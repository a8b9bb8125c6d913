"""Which model, configured how, for a target — and the same model again from a trace's manifest.

``model_for(description)`` picks the model profile for the target's Kafka version and configures
it from the facts the conformance layer read off the broker (group settings, ``__consumer_offsets``
leaders). The chosen profile and configuration go into every trace's manifest, so
``model_from_manifest`` rebuilds exactly the model a trace was checked with (``kgc analyze``,
``kgc replay``, the Spark re-check) with no broker.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields, replace
from functools import cache
from types import UnionType
from typing import Any, Union, get_args, get_origin, get_type_hints

from kgc.model import PROFILES, ClassicGroupModel, GroupConfig, profile_for_version
from kgc.model.consumer.group import ConsumerGroupConfig, ConsumerGroupModel
from kgc.model.profiles import (
    IMPLEMENTATION_SWITCHES,
    KAFKA_4_X,
    PROFILE_NAMES,
    SHARE_SWITCHES,
    consumer_line_rules,
    share_line_rules,
)
from kgc.model.share.group import ShareGroupConfig, ShareGroupModel

# broker setting -> GroupConfig field
SETTINGS = {
    "group.min.session.timeout.ms": "group_min_session_timeout_ms",
    "group.max.session.timeout.ms": "group_max_session_timeout_ms",
    "group.initial.rebalance.delay.ms": "group_initial_rebalance_delay_ms",
    "group.max.size": "group_max_size",
    "offsets.topic.num.partitions": "offsets_topic_num_partitions",
    "offset.metadata.max.bytes": "offset_metadata_max_bytes",
    "offsets.commit.timeout.ms": "offsets_commit_timeout_ms",
    "offsets.retention.check.interval.ms": "cleanup_interval_ms",
}


# broker setting -> ConsumerGroupConfig field (the KIP-848 consumer group)
CONSUMER_SETTINGS = {
    "group.consumer.session.timeout.ms": "session_timeout_ms",
    "group.consumer.heartbeat.interval.ms": "heartbeat_interval_ms",
    "group.consumer.max.size": "max_size",
    "offset.metadata.max.bytes": "offset_metadata_max_bytes",
    "offsets.retention.check.interval.ms": "cleanup_interval_ms",
}


# broker setting -> ShareGroupConfig field (the KIP-932 share group); only an assignment interval
# of 0 is modelled (``ShareGroupConfig`` refuses another)
SHARE_SETTINGS = {
    "group.share.session.timeout.ms": "session_timeout_ms",
    "group.share.heartbeat.interval.ms": "heartbeat_interval_ms",
    "group.share.max.size": "max_size",
    "group.share.assignment.interval.ms": "assignment_interval_ms",
}
# a setting some lines lack -> the ``share_line_rules`` switch that says whether a line has it:
# a line without it takes no value for it (a broker of that line does not say it, so the fact is
# only 4.3's default, assumed; 4.2 behaves as an interval of 0)
SHARE_SETTING_SINCE = {"group.share.assignment.interval.ms": "has_assignment_interval"}

# How long after the heartbeat that subscribed a share group to a topic its partitions may still
# be uninitialized (rule 8 of ``model/share/group.py``). Kafka waits for nothing on purpose: the
# heartbeat schedules a zero-delay timer task that asks the share coordinator to initialize the
# partitions (``GroupCoordinatorService.shareGroupHeartbeat`` →
# ``GroupMetadataManager.shareGroupInitializeState``, one write to ``__share_group_state``), and
# the result is written back at once. Measured on 4.3.1 once the share workload has warmed the
# share coordinator up (``workloads._warm_up_share_groups``): a new group's member holds every
# partition at its second heartbeat, 0.16 s after joining. 2 s leaves an order of magnitude for
# a loaded machine. A failed initialization is retried only after
# ``group.share.initialize.retry.interval.ms`` (30 s): the bound does not cover it, and a run
# that meets one reports it as a divergence naming the initialization timer.
SHARE_INITIALIZATION_MS = 2000.0


def _profile_name(description: dict[str, Any]) -> str:
    if description.get("model_profile"):
        return str(description["model_profile"])
    version = str(description.get("version") or "unknown")
    if version == "unknown":
        return KAFKA_4_X.name  # an unknown broker is held to the newest Kafka's rules
    return profile_for_version(version).name


# Requests of two clients sent less than this apart may be handled by the broker in either order
# (``GroupConfig.reorder_window_ms``); the engine spaces such requests by ``settle_ms`` (20 ms), so
# the window covers a heavily loaded broker. Measured, and why 100 ms: docs/design-notes.md,
# "Order at the broker".
REORDER_WINDOW_MS = 100.0


# A cleanup interval no kgc session lasts (``conformance/brokers/embedded.py`` sets it).
NO_CLEANUP_MS = 24 * 3600 * 1000


def cleanup_may_run(description: dict[str, Any]) -> bool:
    """Whether the coordinator's periodic cleanup may delete an Empty group during a run on the
    broker ``description`` describes. Not on an Apache Kafka broker kgc launched with an
    ``offsets.retention.check.interval.ms`` of :data:`NO_CLEANUP_MS` or more: 4.x runs the cleanup
    first one interval after a ``__consumer_offsets`` partition loads
    (``GroupCoordinatorShard.scheduleGroupMetadataExpiration``), 3.9 and older at start-up, before
    any partition is loaded, and then one interval later (``GroupMetadataManager.startup``).
    Anywhere else (a broker kgc did not start, another implementation, a shorter interval) it runs
    on a clock the client cannot see: at most once per interval (``GroupConfig``)."""
    key = "offsets.retention.check.interval.ms"
    profile = description.get("implementation_settings") or {}
    if int(profile.get(key) or 0) >= NO_CLEANUP_MS:  # an implementation with no cleanup at all
        return False
    if description.get("implementation") != "apache-kafka":
        return True
    launched = description.get("config") or {}
    value = launched.get("offsets.retention.check.interval.ms")
    return value is None or int(value) < NO_CLEANUP_MS


@cache
def _profile_switches() -> dict[str, type]:
    """Every rule of ``Profile`` a switch may set, with its type: the on/off release-line and
    implementation switches, and the numbers (``timers_unordered_within_ms``)."""
    from kgc.model.profiles import Profile

    hints = get_type_hints(Profile)
    return {name: kind for name, kind in hints.items() if kind in (bool, int)}


def with_switches(profile: Any, switches: Any) -> Any:
    """``profile`` with an implementation's switches (``manifest.model.switches``: name -> value,
    each a switch of ``Profile``: one of ``IMPLEMENTATION_SWITCHES``, or a release-line rule the
    implementation follows another way) in force; a ValueError names a bad one."""
    if not switches:
        return profile
    if not isinstance(switches, dict):
        raise ValueError(
            f"field 'manifest.model.switches': expected names -> values, got {switches!r}"
        )
    for name, value in switches.items():
        if name not in _profile_switches():
            raise ValueError(
                f"field 'manifest.model.switches.{name}': not a switch of the model's profile "
                f"(implementation switches: {', '.join(IMPLEMENTATION_SWITCHES)})"
            )
        kind = _profile_switches()[name]
        if kind is bool and not isinstance(value, bool):
            raise ValueError(f"field 'manifest.model.switches.{name}': expected true or false")
        if kind is int and type(value) is not int:
            raise ValueError(f"field 'manifest.model.switches.{name}': expected a whole number")
    return replace(profile, **switches)


def model_manifest(description: dict[str, Any], *, reorder: bool = True) -> dict[str, Any]:
    """The manifest's ``model`` record: profile name and every GroupConfig setting but group_id.
    ``reorder``: allow two clients' close requests in either order (:data:`REORDER_WINDOW_MS`)."""
    config: dict[str, Any] = {"empty_group_may_vanish": cleanup_may_run(description)}
    if reorder:
        config["reorder_window_ms"] = REORDER_WINDOW_MS
    for setting, field_name in SETTINGS.items():
        value = (description.get("group_config") or {}).get(setting)
        if value is not None:
            config[field_name] = int(value)
    leaders = description.get("offsets_partition_leaders")
    if leaders:
        config["offsets_partition_leaders"] = list(leaders)
    if description.get("node_ids"):
        config["node_ids"] = list(description["node_ids"])
    if description.get("client_host"):  # as the broker sees the suite's connections
        config["client_host"] = str(description["client_host"])
    if (description.get("authorization") or {}).get("foreign_group_refused"):
        config["foreign_group_refused"] = True  # ``classic/authorization.py`` A0
    name = _profile_name(description)
    record = {"name": "ClassicGroupModel", "profile": name, "config": config}
    # the implementation's switches of ``Profile``; those of the share group's model
    # (``SHARE_SWITCHES``) go to its record (:func:`share_manifest`)
    switches = {
        k: v
        for k, v in (description.get("implementation_switches") or {}).items()
        if k not in SHARE_SWITCHES
    }
    if not_apache(description) and name in PROFILES:
        # Kafka's own bugs are Apache Kafka's (``model/known_bugs.py``): another implementation
        # judged by a line that has one is held to the protocol's contract there instead
        for field_name, contract in KNOWN_BUG_SWITCHES.items():
            if getattr(PROFILES[name], field_name) != contract:
                switches.setdefault(field_name, contract)
    if switches:  # the implementation's named deviations (``implementations.SWITCHES``)
        record["switches"] = switches
    return record


# The Profile rules that make a line's known Kafka bug (``model/known_bugs.py``), each with the
# value that is the protocol's contract: 2.5 - 3.2 cannot write a leader's JoinGroup answer below
# v5 that lists a static member (``join-answered-twice``); 2.7 - 4.1 and 4.3 let some unreadable
# subscriptions escape ``computeSubscribedTopics`` (``join-stalled-by-subscription``).
KNOWN_BUG_SWITCHES = {
    "join_response_instance_ids_ignorable": True,
    "subscription_failures_wrapped": True,
}


def not_apache(description: dict[str, Any]) -> bool:
    """Whether the target is known not to be Apache Kafka: an implementation kgc launched, or a
    broker judged by one's profile (``kgc check --implementation-profile``). A broker kgc did not
    launch is not known, and may be any Apache release."""
    from kgc.engine.traces import LAUNCHED_OTHERS

    named = (description.get("implementation"), description.get("implementation_profile"))
    return any(n in LAUNCHED_OTHERS for n in named)


def build(model: dict[str, Any], group_id: str) -> ClassicGroupModel:
    """The classic model a ``model`` record describes (other keys of the record are ignored)."""
    profile_name = model.get("profile", KAFKA_4_X.name)
    if profile_name not in PROFILES:
        raise ValueError(
            f"field 'manifest.model.profile': unknown model profile {profile_name!r} "
            f"(known: {', '.join(PROFILE_NAMES)})"
        )
    known = {f.name for f in fields(GroupConfig)}
    kwargs: dict[str, Any] = {}
    for key, value in (model.get("config") or {}).items():
        if key not in known:
            raise ValueError(f"field 'manifest.model.config.{key}': not a GroupConfig setting")
        value = _config_value(GroupConfig, key, value)
        kwargs[key] = tuple(value) if isinstance(value, list) else value
    try:
        profile = with_switches(PROFILES[profile_name], model.get("switches"))
        config = GroupConfig(profile=profile, group_id=group_id, **kwargs)
    except ValueError as exc:
        raise ValueError(f"field 'manifest.model.config': {exc}") from exc
    return ClassicGroupModel(config)


@cache
def _hints(cls: type) -> dict[str, Any]:
    """A config class's declared field types (resolved once: every model a run builds asks)."""
    return get_type_hints(cls)


def _config_value(cls: type, key: str, value: Any) -> Any:
    """``value`` of ``cls``'s setting ``key`` as a manifest holds it, if it is of the kind the
    setting is declared (a whole number, a number, a switch, each maybe None); else a ValueError
    naming it. Other kinds (tuples, profiles) are checked where the config is made."""
    hint = _hints(cls)[key]
    kinds = set(get_args(hint)) if get_origin(hint) in (Union, UnionType) else {hint}
    if value is None and type(None) in kinds:
        return value
    if bool in kinds:
        ok, kind = isinstance(value, bool), "true or false"
    elif int in kinds:
        ok, kind = isinstance(value, int) and not isinstance(value, bool), "a whole number"
    elif float in kinds:
        ok, kind = isinstance(value, int | float) and not isinstance(value, bool), "a number"
    else:
        ok, kind = True, ""
    if not ok:
        raise ValueError(f"field 'manifest.model.config.{key}': expected {kind}, got {value!r}")
    return value


def model_for(
    description: dict[str, Any],
) -> tuple[Callable[[str], ClassicGroupModel], dict[str, Any]]:
    """``(new_model(group_id), manifest record)`` for a target described by ``description``."""
    record = model_manifest(description)
    return (lambda group_id: build(record, group_id)), record


def model_from_manifest(manifest: dict[str, Any]) -> Any:
    """The model a trace was checked with, rebuilt from its manifest: ``ClassicGroupModel`` or
    ``ClusterGroupModel`` (traces with faults), by the ``model.name`` the trace recorded."""
    record = manifest.get("model") or {}
    if not record:
        record = model_manifest(manifest.get("target") or {}, reorder=False)
    group_id = str(manifest.get("group_id", "kgc-group"))
    name = record.get("name", "ClassicGroupModel")
    if name == "ClusterGroupModel":
        return build_cluster(record, group_id)
    if name == "ConsumerGroupModel":
        return build_consumer(record, group_id)
    if name == "MigratingGroupModel":
        return build_migration(record, group_id)
    if name == "ShareGroupModel":
        return build_share(record, group_id)
    if name != "ClassicGroupModel":
        raise ValueError(
            f"field 'manifest.model.name': unknown model {name!r} "
            "(known: ClassicGroupModel, ClusterGroupModel, ConsumerGroupModel, "
            "MigratingGroupModel, ShareGroupModel)"
        )
    return build(record, group_id)


def consumer_manifest(
    description: dict[str, Any], topics: dict[str, int], *, reorder: bool = True
) -> dict[str, Any]:
    """The manifest's ``model`` record for the KIP-848 consumer group: the broker's
    ``group.consumer.*`` facts and the topics (name -> partitions) the run created."""
    config: dict[str, Any] = {"topics": [[t, n] for t, n in sorted(topics.items())]}
    config["empty_group_may_vanish"] = cleanup_may_run(description)
    if reorder:
        config["reorder_window_ms"] = REORDER_WINDOW_MS
    for setting, field_name in CONSUMER_SETTINGS.items():
        value = (description.get("group_config") or {}).get(setting)
        if value is not None:
            config[field_name] = int(value)
    versions = (description.get("request_versions") or {}).get("ConsumerGroupHeartbeat")
    if versions:
        config["max_version"] = max(int(v) for v in versions)
    # the rules of the line the run is judged by: the broker's release's, or --rules', or (a
    # broker that does not say) the default profile's
    profile = _profile_name(description)
    config.update(consumer_line_rules(release_line(profile.removeprefix("kafka-"))))
    # a broker kgc started has no other clients: only the suite makes topics on it, before its
    # groups, so no resolution of regexes starts for another's new topic (rule 12); unless
    # several searches share it (``kgc check --workers``), each making its topic as it starts
    started_by_kgc = description.get("implementation") not in (None, "unknown")
    if started_by_kgc and int(description.get("searches") or 1) == 1:
        config["topics_may_appear"] = False
    return {"name": "ConsumerGroupModel", "profile": profile, "config": config}


def release_line(version: str) -> tuple[int, int] | None:
    """``(major, minor)`` of a release named ``X.Y…``; None for anything else."""
    parts = version.split(".")
    if len(parts) < 2 or not (parts[0].isdigit() and parts[1].isdigit()):
        return None
    return int(parts[0]), int(parts[1])


def build_consumer(model: dict[str, Any], group_id: str) -> ConsumerGroupModel:
    """The consumer-group model a ``ConsumerGroupModel`` record describes."""
    known = {f.name for f in fields(ConsumerGroupConfig)}
    # a record written before a switch existed says nothing of it: its line's rule, by the
    # profile it was judged by (``kafka-X.Y``), not the newest line's default
    profile = str(model.get("profile") or "")
    kwargs: dict[str, Any] = dict(
        consumer_line_rules(release_line(profile.removeprefix("kafka-")))
        if profile.startswith("kafka-")
        else {}
    )
    for key, value in (model.get("config") or {}).items():
        if key not in known:
            raise ValueError(
                f"field 'manifest.model.config.{key}': not a ConsumerGroupConfig setting"
            )
        value = _config_value(ConsumerGroupConfig, key, value)
        if key == "topics":
            value = tuple((str(t), int(n)) for t, n in value)
        elif isinstance(value, list):
            value = tuple(value)
        kwargs[key] = value
    try:
        config = ConsumerGroupConfig(group_id=group_id, **kwargs)
    except ValueError as exc:
        raise ValueError(f"field 'manifest.model.config': {exc}") from exc
    return ConsumerGroupModel(config)


def share_manifest(
    description: dict[str, Any], topics: dict[str, int], *, reorder: bool = True
) -> dict[str, Any]:
    """The manifest's ``model`` record for a KIP-932 share group: the broker's ``group.share.*``
    facts (:data:`SHARE_SETTINGS`), the topics (name -> partitions) the run created, and the
    rules of the release line the run is judged by (``profiles.share_line_rules``; a line the
    share model does not cover raises ``NotModelled``; a setting the line lacks,
    :data:`SHARE_SETTING_SINCE`, is not read). ``initialization_ms`` is
    :data:`SHARE_INITIALIZATION_MS`: the share coordinator has that long to initialize a topic a
    heartbeat subscribed to (rule 8 of ``model/share/group.py``)."""
    config: dict[str, Any] = {"topics": [[t, n] for t, n in sorted(topics.items())]}
    if reorder:
        config["reorder_window_ms"] = REORDER_WINDOW_MS
    config["initialization_ms"] = SHARE_INITIALIZATION_MS
    profile = _profile_name(description)
    rules = share_line_rules(release_line(profile.removeprefix("kafka-")))
    for setting, field_name in SHARE_SETTINGS.items():
        value = (description.get("group_config") or {}).get(setting)
        if value is not None and rules.get(SHARE_SETTING_SINCE.get(setting, ""), True):
            config[field_name] = int(value)
    config.update(rules)
    record: dict[str, Any] = {"name": "ShareGroupModel", "profile": profile, "config": config}
    # the implementation's named deviations in the share group (``implementations.SWITCHES``)
    switches = {
        k: v
        for k, v in (description.get("implementation_switches") or {}).items()
        if k in SHARE_SWITCHES
    }
    if switches:
        record["switches"] = switches
    return record


def build_share(model: dict[str, Any], group_id: str) -> ShareGroupModel:
    """The share-group model a ``ShareGroupModel`` record describes; a switch the record does not
    name follows the line of the profile it was judged by (``kafka-X.Y``)."""
    known = {f.name for f in fields(ShareGroupConfig)}
    profile = str(model.get("profile") or "")
    kwargs: dict[str, Any] = dict(
        share_line_rules(release_line(profile.removeprefix("kafka-")))
        if profile.startswith("kafka-")
        else {}
    )
    for key, value in (model.get("config") or {}).items():
        if key not in known or key == "group_id":
            raise ValueError(f"field 'manifest.model.config.{key}': not a ShareGroupConfig setting")
        value = _config_value(ShareGroupConfig, key, value)
        if key == "topics":
            value = tuple((str(t), int(n)) for t, n in value)
        kwargs[key] = value
    kwargs.update(_share_switches(model.get("switches")))
    try:
        config = ShareGroupConfig(group_id=group_id, **kwargs)
    except ValueError as exc:
        raise ValueError(f"field 'manifest.model.config': {exc}") from exc
    return ShareGroupModel(config)


def _share_switches(switches: Any) -> dict[str, Any]:
    """An implementation's switches of the share group's model (``manifest.model.switches``:
    name -> value, each one of ``SHARE_SWITCHES``: an implementation switch, or a release-line
    rule the implementation follows as another line does), checked; a ValueError names a bad
    one."""
    if not switches:
        return {}
    if not isinstance(switches, dict):
        raise ValueError(
            f"field 'manifest.model.switches': expected names -> values, got {switches!r}"
        )
    for name, value in switches.items():
        if name not in SHARE_SWITCHES:
            raise ValueError(
                f"field 'manifest.model.switches.{name}': not a switch of the share group's "
                f"model (switches: {', '.join(sorted(SHARE_SWITCHES))})"
            )
        try:
            _config_value(ShareGroupConfig, name, value)
        except ValueError as exc:
            raise ValueError(str(exc).replace(".config.", ".switches.")) from None
    return dict(switches)


def cluster_manifest(description: dict[str, Any], coordinator: int) -> dict[str, Any]:
    """The manifest's ``model`` record for
    :class:`~kgc.model.classic.cluster_group.ClusterGroupModel`: the classic record plus the
    group's coordinator when the run started."""
    # without reordering: a request held back across a coordinator move is not modelled
    record = model_manifest(description, reorder=False)
    return {**record, "name": "ClusterGroupModel", "coordinator": coordinator}


def build_cluster(model: dict[str, Any], group_id: str) -> Any:
    from kgc.model.classic.cluster_group import ClusterGroupModel

    classic = build(model, group_id)
    coordinator = model.get("coordinator")
    if coordinator is not None and not isinstance(coordinator, int):
        raise ValueError(
            f"field 'manifest.model.coordinator': expected a node id, got {coordinator!r}"
        )
    return ClusterGroupModel(classic.config, coordinator=coordinator)


def migration_manifest(
    description: dict[str, Any], topics: dict[str, int], *, reorder: bool = True
) -> dict[str, Any]:
    """The manifest's ``model`` record for one group id used by both protocols
    (:class:`~kgc.model.consumer.migration.MigratingGroupModel`): the classic and the consumer
    records (each without a reorder window: the mixed model holds requests back itself) and the
    broker's ``group.consumer.migration.policy`` (Kafka's default when it does not say)."""
    classic = model_manifest(description, reorder=False)
    consumer = consumer_manifest(description, topics, reorder=False)
    policy = (description.get("group_config") or {}).get(MIGRATION_POLICY) or "bidirectional"
    record: dict[str, Any] = {
        "name": "MigratingGroupModel",
        "profile": classic["profile"],
        "classic": classic["config"],
        "consumer": consumer["config"],
        "migration_policy": str(policy),
    }
    if reorder:
        record["reorder_window_ms"] = REORDER_WINDOW_MS
    return record


MIGRATION_POLICY = "group.consumer.migration.policy"


def build_migration(model: dict[str, Any], group_id: str) -> Any:
    """The model a ``MigratingGroupModel`` record describes; a policy the model does not cover
    raises :class:`~kgc.model.consumer.migration.PolicyNotModelled` (a ``ValueError``)."""
    from kgc.model.consumer.migration import MigratingGroupModel, MigrationConfig

    classic = build(
        {"profile": model.get("profile", KAFKA_4_X.name), "config": model.get("classic")}, group_id
    )
    consumer = build_consumer({"config": model.get("consumer")}, group_id)
    window = model.get("reorder_window_ms", 0.0)
    if not isinstance(window, int | float):
        raise ValueError(f"field 'manifest.model.reorder_window_ms': expected ms, got {window!r}")
    return MigratingGroupModel(
        MigrationConfig(
            classic=classic.config,
            consumer=consumer.config,
            migration_policy=str(model.get("migration_policy", "bidirectional")),
            reorder_window_ms=float(window),
        )
    )
