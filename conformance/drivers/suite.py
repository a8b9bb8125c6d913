"""The differential suite against a real broker: the one engine behind ``kgc check`` and pytest.

``run_suite(target, …)`` opens a cluster connection, creates the suite's topic (with the ``kgc-``
prefix), and lets Hypothesis drive :class:`~kgc.properties.machine.GroupMachine` with a fresh
group id per example, every command sent both to the model (through the checker) and to the broker.
A failure is shrunk by Hypothesis (each replay on a fresh group), and the minimal trace is saved to
``traces/<scenario>_<check>_<fingerprint>.json``. A failure that does not reproduce on replay is
reported as *flaky*, with both traces saved, never dropped. Every example ends with
``Engine.finish`` (answers still arriving are checked before its target closes).

What a run drives is a :class:`Workload`: by default the classic machine on ``BrokerTarget``
targets and the model the broker's facts give; the fault-mixed suite
(``fault_suite.run_fault_suite``) passes its own — targets that follow the coordinator, the
cluster-aware model, the machine with nemesis rules, the nemesis (healed when the run ends) —
through this same driver. :func:`replay_on_broker` replays a saved trace (``kgc.engine.replay``).

With ``record_dir`` every executed example — generated, replayed or shrunk, passing or not — is
also written as its own JSONL trace (format v1, ``engine/traces.py``): the manifest (target
implementation/version/mode, seed, profile, model, checker tolerances), every recorded event with
the broker's measured ``latency_ms``, and the verdict. The layout is a trace corpus as
``kgc report`` / ``pipeline/convert.py`` read it::

    <record_dir>/<implementation>-<version>-<mode>/<group id>_<trace id>.jsonl

Each file is written atomically (temporary file, then rename) and never replaces a different
existing file (``traces.save`` picks ``…-2.jsonl`` instead), so several runs — say one per Kafka
version — can record into one folder. The recorded ``manifest.model`` is the model record the
broker's facts gave; a custom ``model_factory`` (quality tests) is not named in it, so re-checking
such a recording with the real model may rightly disagree with its recorded verdict.

Settings profiles (docs/design-notes.md, "Hypothesis against a live system"): steps are slow next to
pure code, so ``deadline=None``, a bounded ``stateful_step_count``, and the too-slow health checks
relaxed — for broker runs only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis.control import current_build_context
from hypothesis.errors import Flaky
from hypothesis.stateful import run_state_machine_as_test
from kgc.conformance.drivers.budgets import MINIMIZE_BUDGET_S, SHRINK_BUDGET_S
from kgc.conformance.drivers.minimize import minimize
from kgc.conformance.errors import KgcError
from kgc.engine.loop import EngineConfig
from kgc.engine.replay import Replay, replay, topic_of
from kgc.engine.traces import Trace, save, save_failure
from kgc.model.apis import CONSUMER_GROUP_APIS, OFFSET_APIS, keys_of
from kgc.model.checker import CheckerConfig, Model
from kgc.model.history import Fault
from kgc.properties.machine import (
    KNOWN_BUG,
    TOPIC_PARTITIONS,
    ConnectionFailure,
    DivergenceError,
    GroupMachine,
    InvariantError,
    SuiteContext,
    TargetLost,
    machine_for,
    time_scale_for,
)

if TYPE_CHECKING:
    from kgc.conformance.faults.nemesis import Nemesis
    from kgc.conformance.wire.client import Cluster
    from kgc.engine.target import Target

SEARCH_PROFILES: dict[str, dict[str, Any]] = {
    # fast enough for every CI run; still reaches every group state
    "ci": {"max_examples": 24, "stateful_step_count": 24},
    # for a release or a new implementation: longer sequences, many more examples
    "thorough": {"max_examples": 200, "stateful_step_count": 60},
    # a smoke run
    "quick": {"max_examples": 3, "stateful_step_count": 10},
    # quality tests: short sequences, so a planted bug shrinks fast to a few commands
    "quality": {"max_examples": 200, "stateful_step_count": 10},
    "quality-deep": {"max_examples": 300, "stateful_step_count": 16},
}


def hypothesis_settings(profile: str, *, database: Any = None) -> settings:
    if profile not in SEARCH_PROFILES:
        raise ValueError(f"unknown profile {profile!r}; choose one of {', '.join(SEARCH_PROFILES)}")
    return settings(
        deadline=None,
        database=database,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.filter_too_much,
            HealthCheck.data_too_large,
        ],
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
        verbosity=Verbosity.quiet,
        report_multiple_bugs=False,
        **SEARCH_PROFILES[profile],
    )


@dataclass(slots=True)
class SuiteResult:
    profile: str
    seed: int
    examples: int = 0
    commands: int = 0
    ticks: int = 0
    wall_s: float = 0.0
    # "divergence" | "invariant" | "connection" (a request the target did not carry out) |
    # "flaky" | None
    failure: str | None = None
    message: str = ""
    saved: list[Path] = field(default_factory=list)
    coverage: dict[tuple[str, str, str], int] = field(default_factory=dict)
    peak_states: int = 0
    assignment_checks: int = 0  # leader assignments checked with Z3
    tick_ms: int = 0  # time the suite spent letting time pass on purpose
    target: dict[str, Any] = field(default_factory=dict)
    recorded: list[Path] = field(default_factory=list)  # with record_dir: one trace per example
    # examples that stopped at a known Kafka bug, by its key (``model/known_bugs.py``), and the
    # first such example's trace of each, saved unshrunk (they are not failures)
    known_bugs: dict[str, int] = field(default_factory=dict)
    known_bug_saved: list[Path] = field(default_factory=list)
    # with ``kgc check --workers N`` (``conformance/drivers/workers.py``): each worker's seed,
    # examples, requests, wall time and failure; empty for a single search
    workers: list[dict[str, Any]] = field(default_factory=list)
    first_failure_s: float | None = None  # search start to the first failure seen (then: shrink)
    record_error: str | None = None  # recording stopped at this error (the run went on)

    @property
    def ok(self) -> bool:
        return self.failure is None


class RecordError(KgcError):
    """The recording folder cannot be used (message names the folder and the fix)."""


_UNSAFE = re.compile(r"[^A-Za-z0-9._]+")  # "-" too: runs of either become one "-"


def _slug(text: str) -> str:
    return _UNSAFE.sub("-", text).strip("-.") or "unknown"


def prepare_record_dir(record_dir: str | Path) -> Path:
    """Create ``record_dir`` if needed; raise :class:`RecordError` if it cannot hold traces."""
    p = Path(record_dir)
    if p.exists() and not p.is_dir():
        raise RecordError(f"cannot record into {p}: it is a file; give a folder (new or existing)")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RecordError(f"cannot create the recording folder {p}: {exc.strerror}") from None
    return p


def record_trace(trace: Trace, record_dir: str | Path) -> Path:
    """Write one example's trace into the corpus folder (atomic, never over a different file)."""
    target = trace.manifest.get("target") or {}
    folder = _slug(
        f"{target.get('implementation', 'unknown')}-{target.get('version', 'unknown')}"
        f"-{target.get('mode', 'unknown')}"
    )
    name = _slug(f"{trace.manifest.get('group_id', 'group')}_{trace.manifest['trace_id']}")
    return save(trace, Path(record_dir) / folder / f"{name}.jsonl")


@contextlib.contextmanager
def _shrink_budget(seconds: float | None) -> Iterator[None]:
    """Bound the time Hypothesis spends shrinking (each candidate replays against a live broker).

    Hypothesis caps shrinking at ``engine.MAX_SHRINKING_SECONDS`` (5 minutes), read when shrinking
    starts; quality tests lower it. An internal knob: if a Hypothesis release drops it, the budget
    is simply not applied (shrinking still ends at Hypothesis's own limits)."""
    from hypothesis.internal.conjecture import engine

    if seconds is None or not hasattr(engine, "MAX_SHRINKING_SECONDS"):
        yield
        return
    saved = engine.MAX_SHRINKING_SECONDS
    engine.MAX_SHRINKING_SECONDS = int(seconds)
    try:
        yield
    finally:
        engine.MAX_SHRINKING_SECONDS = saved


@dataclass(frozen=True, slots=True, kw_only=True)
class Workload:
    """What one run of the suite drives, built once the run's cluster connection is open: per
    example a target and a model for a fresh group, the state machine class bound to the run's
    context, and the nemesis whose faults are healed when the run ends (None: no faults)."""

    open_target: Callable[[str], Target]  # group id -> a fresh target for that group
    new_model: Callable[[str], Model[Any]]  # group id -> a fresh model for that group
    machine: Callable[[SuiteContext], type[GroupMachine]] = machine_for
    nemesis: Nemesis | None = None
    model_record: dict[str, Any] | None = None  # the manifest's model record, one for the run


def run_suite(
    *,
    bootstrap_servers: str,
    description: dict[str, Any],
    model_factory: Callable[[dict[str, Any], str], Model[Any]] | None = None,
    profile: str = "ci",
    seed: int | None = None,
    traces_dir: str | Path = "traces",
    scenario: str = "classic",
    checker_config: CheckerConfig | None = None,
    engine_config: EngineConfig | None = None,
    versions: dict[str, tuple[int, ...]] | None = None,
    on_example: Callable[[GroupMachine], None] | None = None,
    database: Any = None,
    group_prefix: str = "kgc-",
    shrink_budget_s: float | None = SHRINK_BUDGET_S,
    record_dir: str | Path | None = None,
    reuse_connections: bool = True,
    minimize_budget_s: float | None = MINIMIZE_BUDGET_S,
    workload: Callable[[Cluster, dict[str, Any]], Workload] | None = None,
    search_settings: settings | None = None,
    example_traces: list[Trace] | None = None,
    broker_config: dict[str, int] | None = None,
    protocol: str = "classic",
) -> SuiteResult:
    """Run the differential suite once. Never raises for a divergence: it is in the result.

    The model is configured from facts read off the broker (``brokerconfig.facts``);
    ``model_factory(model_record, group_id)`` replaces how it is built (quality tests pass broken
    variants here). ``workload(cluster, description)`` replaces what is driven (targets, model,
    machine, nemesis: the fault-mixed suite, ``fault_suite.run_fault_suite``); by default the
    classic machine on ``BrokerTarget`` targets. ``record_dir``: write every executed example's
    trace there (module docstring); a folder that cannot be used raises :class:`RecordError`
    before any broker work, a write that fails later stops recording and is reported in
    ``result.record_error``. ``reuse_connections``: examples reuse idle member connections
    (``BrokerTarget``). ``minimize_budget_s``: after shrinking, a divergence's trace goes through
    the command-deletion pass of ``conformance/drivers/minimize.py`` for at most that long before
    it is saved. ``protocol="consumer"``: the KIP-848 consumer group (``ConsumerGroupModel``,
    ``properties/consumer_machine.py``) instead of the classic one; a broker that does not offer
    ConsumerGroupHeartbeat raises :class:`ProtocolUnsupported` before any example.
    ``search_settings`` replaces the profile's Hypothesis settings; given a list,
    ``example_traces`` receives every example's trace, passing or not, in run order.
    ``broker_config``: group settings the user gives (``--broker-config``), which win over what
    the broker says and fill in what it does not (``brokerconfig.facts``)."""
    from kgc.conformance.wire.broker_target import BrokerTarget
    from kgc.conformance.wire.brokerconfig import facts
    from kgc.conformance.wire.client import Cluster
    from kgc.conformance.wire.negotiate import negotiate_with
    from kgc.engine.registry import build, model_manifest
    from kgc.model import PROFILES

    record_to = None if record_dir is None else prepare_record_dir(record_dir)
    seed = secrets.randbits(32) if seed is None else seed
    run_id = secrets.token_hex(3)
    cluster = Cluster(bootstrap_servers, client_id="kgc-suite")
    try:
        description = {**description, **facts(cluster, broker_config)}
        profile_name = model_manifest(description)["profile"]
        negotiated = negotiate_with(cluster, PROFILES[profile_name])
        description["request_versions"] = {k: list(v) for k, v in negotiated.versions.items()}
        if negotiated.unsupported:
            description["unsupported_requests"] = dict(negotiated.unsupported)
        # a broker that refuses the suite's short sessions gets the same search, slower; the
        # consumer protocol's session is the broker's own setting, not drawn, so not scaled
        time_scale = (
            time_scale_for(description["group_config"])
            if protocol in ("classic", "migration")
            else 1
        )
        if time_scale > 1:
            description["time_scale"] = time_scale
        result = SuiteResult(profile=profile, seed=seed, target=description)
        topic = f"{group_prefix}suite-{run_id}"
        cluster.create_topic(topic, partitions=TOPIC_PARTITIONS)
        if protocol == "consumer":
            driven = consumer_workload(
                cluster,
                description,
                topic=topic,
                factory=model_factory,
                reuse_connections=reuse_connections,
            )
            scenario = "consumer" if scenario == "classic" else scenario
        elif protocol == "migration":
            driven = migration_workload(
                cluster,
                description,
                topic=topic,
                factory=model_factory,
                reuse_connections=reuse_connections,
            )
            scenario = "migration" if scenario == "classic" else scenario
        elif workload is None:
            record = model_manifest(description)
            factory = model_factory or build
            driven = Workload(
                open_target=lambda gid: BrokerTarget(
                    cluster, gid, description=description, reuse_connections=reuse_connections
                ),
                new_model=lambda gid: factory(record, gid),
                model_record=record,
            )
        else:
            driven = workload(cluster, description)
        counter = iter(range(1_000_000))
        failures: list[tuple[str, Trace, bool]] = []  # (check, trace, final?)
        known: dict[str, Trace] = {}  # the first example that stopped at each known Kafka bug

        def on_example_end(machine: GroupMachine) -> None:
            if machine.failed_check == "lost":
                return  # no target was opened: nothing ran, nothing to record
            # answers still arriving after the last step are checked too, before the target
            # closes (not after a connection failure: the target cannot be read any more)
            if machine.failed_check != "connection":
                machine.engine.finish()
            if machine.engine.divergence is not None and machine.failed_check in (None, KNOWN_BUG):
                machine.failed_check = "divergence"  # a known bug refuted by a late answer, too
            result.peak_states = max(result.peak_states, machine.engine.checker.peak_states)
            for e in machine.engine.events:  # coverage cells for the faults this example injected
                if isinstance(e, Fault):
                    cell = ("Fault", e.action, "injected")
                    ctx.coverage[cell] = ctx.coverage.get(cell, 0) + 1
            trace = machine.trace()  # once: the recorded and the saved copy share a trace id
            if example_traces is not None:
                example_traces.append(trace)
            if record_to is not None and result.record_error is None:
                try:
                    result.recorded.append(record_trace(trace, record_to))
                except OSError as exc:  # never fail the example (Hypothesis would shrink it)
                    result.record_error = f"cannot write a trace into {record_to}: {exc}"
            check = machine.failed_check
            if check == KNOWN_BUG:
                hit = machine.engine.known_bug
                if hit is not None:
                    known.setdefault(hit.world.key, trace)
            elif check is not None:
                if ctx.first_failure_at is None:
                    ctx.first_failure_at = time.monotonic()
                final = bool(current_build_context().is_final)
                failures.append((check, trace, final))
            if on_example is not None:
                on_example(machine)

        manifest_extra: dict[str, Any] = {"seed": seed}
        if driven.model_record is not None:
            manifest_extra["model"] = driven.model_record
        ctx = SuiteContext(
            open_target=driven.open_target,
            new_model=driven.new_model,
            group_prefix=group_prefix,
            scenario=scenario,
            profile=profile,
            checker_config=checker_config or CheckerConfig(),
            engine_config=engine_config or EngineConfig(),
            versions={
                **negotiated.versions,
                **{
                    api: tuple(vs)
                    for api, vs in description["request_versions"].items()
                    if (
                        protocol == "consumer"
                        and (api in CONSUMER_API_KEYS or api in OFFSET_API_KEYS)
                    )
                    or (protocol == "migration" and api in CONSUMER_API_KEYS)
                },
                **(versions or {}),
            },
            unsupported=frozenset(negotiated.unsupported),
            manifest_extra=manifest_extra,
            on_example_end=on_example_end,
            topic=topic,
            time_scale=time_scale,
            wait_when_parked=protocol in ("classic", "migration")
            and int(description["group_config"].get("group.initial.rebalance.delay.ms") or 0) > 0,
        )
        ctx.new_group_id = lambda: f"{group_prefix}{run_id}-{next(counter)}"
        machine_cls = driven.machine(ctx)
        machine_cls._hypothesis_internal_use_seed = seed  # type: ignore[attr-defined]
        chosen_settings = search_settings or hypothesis_settings(profile, database=database)
        start = time.monotonic()
        lost_target = False
        try:
            with _shrink_budget(shrink_budget_s):
                run_state_machine_as_test(machine_cls, settings=chosen_settings)
        except Flaky as exc:
            result.failure = "flaky"
            notes = " ".join(getattr(exc, "__notes__", ()))
            result.message = f"a failure did not reproduce on replay: {exc} {notes}".strip()
        except (DivergenceError, InvariantError) as exc:
            result.failure = "divergence" if isinstance(exc, DivergenceError) else "invariant"
            result.message = str(exc)
        except ConnectionFailure as exc:
            result.failure = "connection"
            result.message = str(exc).split("\n", 1)[0]
        except TargetLost as exc:
            # the broker went away after a connection closed on a request: the example that saw
            # it is the finding, saved unshrunk (nothing can be replayed), with the first other
            # failure seen before it, if any
            result.failure = "divergence"
            result.message = (
                f"{exc}: the broker crashed or was stopped. The example that was running is "
                "saved unshrunk, but the cause may be any earlier example: the groups they left "
                "behind still run their timers in the broker"
            )
            failures[:] = failures[-1:] + [f for f in failures[:1] if f is not failures[-1]]
            lost_target = True
        finally:
            result.wall_s = time.monotonic() - start
            result.examples = ctx.examples
            result.commands = ctx.commands
            result.ticks = ctx.ticks
            result.coverage = dict(ctx.coverage)
            result.assignment_checks = ctx.assignment_checks
            result.tick_ms = ctx.tick_ms
            result.known_bugs = dict(ctx.known_bugs)
            if ctx.first_failure_at is not None:
                result.first_failure_s = ctx.first_failure_at - start
            if driven.nemesis is not None:
                driven.nemesis.heal()
        for key in sorted(known):
            result.known_bug_saved.append(
                save_failure(known[key], traces_dir, scenario=scenario, check=f"known-bug-{key}")
            )
        if result.failure is None and failures:
            # Hypothesis may drop a failing example (one that ran out of its data budget is
            # discarded as an overrun); the failure was still seen on real answers, so it is
            # reported, never lost
            check = failures[0][0]
            result.failure = "divergence" if check == "divergence" else "invariant"
            result.message = (
                f"{check}: seen in an example that Hypothesis did not report (saved below, not "
                "shrunk)"
            )
            failures = failures[:1]
        if result.failure is not None and failures:
            finals = [f for f in failures if f[2]]
            if lost_target:
                chosen = list(failures)
            elif result.failure == "flaky":
                # the failing trace and the replay that did not fail, both kept
                chosen = [failures[-1]] + [f for f in finals if f is not failures[-1]][:1]
            else:
                chosen = finals[-1:] or failures[-1:]
            for check, trace, _ in chosen:
                name = "flaky" if result.failure == "flaky" else check
                if minimize_budget_s and result.failure == "divergence" and not lost_target:
                    trace = minimize(
                        trace,
                        open_target=driven.open_target,
                        model_factory=driven.new_model,
                        budget_s=minimize_budget_s,
                    )
                result.saved.append(save_failure(trace, traces_dir, scenario=scenario, check=name))
    finally:
        cluster.close()
    return result


CONSUMER_API_KEYS = keys_of(CONSUMER_GROUP_APIS)
CONSUMER_SPEC_VERSIONS = (0, 1)  # what Kafka's message specs (and so kgc) can encode
OFFSET_API_KEYS = keys_of(OFFSET_APIS)
CONSUMER_OFFSET_VERSIONS = (8, 9, 10)


def consumer_workload(
    cluster: Cluster,
    description: dict[str, Any],
    *,
    topic: str,
    factory: Callable[[dict[str, Any], str], Model[Any]] | None = None,
    reuse_connections: bool = True,
) -> Workload:
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
    return _broker_workload(
        cluster,
        description,
        record,
        factory or build_consumer,
        consumer_machine_for,
        reuse_connections=reuse_connections,
    )


def _broker_workload(
    cluster: Cluster,
    description: dict[str, Any],
    record: dict[str, Any],
    build: Callable[[dict[str, Any], str], Model[Any]],
    machine: Callable[[SuiteContext], type[Any]],
    *,
    reuse_connections: bool,
) -> Workload:
    """``machine``'s examples on ``BrokerTarget`` targets, checked by ``build(record, gid)``."""
    from kgc.conformance.wire.broker_target import BrokerTarget

    return Workload(
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
    factory: Callable[[dict[str, Any], str], Model[Any]] | None = None,
    reuse_connections: bool = True,
) -> Workload:
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
    return _broker_workload(
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


@dataclasses.dataclass
class SeedsResult:
    """What :func:`run_seeds` folded over its seeds."""

    results: list[SuiteResult]
    requests: int = 0
    reached: dict[tuple[str, str, str], int] = dataclasses.field(default_factory=dict)
    unsupported: set[str] = dataclasses.field(default_factory=set)


def run_seeds(
    broker: Any, description: dict[str, Any], *, seeds: int, **suite_args: Any
) -> SeedsResult:
    """:func:`run_suite` on one started ``broker`` with seeds 1..``seeds`` (the other arguments
    are :func:`run_suite`'s), folding requests, reached cells and unsupported request types
    (``kgc lines --sweep``, ``kgc matrix``)."""
    out = SeedsResult(results=[])
    for seed in range(1, seeds + 1):
        result = run_suite(
            bootstrap_servers=broker.bootstrap_servers,
            description=description,
            seed=seed,
            **suite_args,
        )
        out.results.append(result)
        out.requests += result.commands
        for cell, n in result.coverage.items():
            out.reached[cell] = out.reached.get(cell, 0) + n
        out.unsupported |= set((result.target.get("unsupported_requests") or {}).keys())
    return out


def replay_with_own_client(broker: Any, trace: Trace, *, client_id: str = "kgc-replay") -> Replay:
    """:func:`replay_on_broker` through a :class:`Cluster` of its own, closed after (one replay on
    a broker that nothing else talks to: ``kgc matrix``, the release-line tests)."""
    from kgc.conformance.wire.client import Cluster

    cluster = Cluster(broker.bootstrap_servers, client_id=client_id)
    try:
        return replay_on_broker(broker, cluster, trace)
    finally:
        cluster.close()
        cluster.poller.close()


def replay_on_broker(
    broker: Any, cluster: Cluster, trace: Trace, *, group_prefix: str = "kgc-replay-"
) -> Replay:
    """Replay ``trace`` (``kgc.engine.replay``) on ``broker`` through ``cluster``, on a fresh
    ``group_prefix…`` group, after creating the topic its commands name. Faults in it are
    performed on the broker only if kgc started it (``session.fault_runner``)."""
    from kgc.conformance.brokers.session import description_of, fault_runner
    from kgc.conformance.wire.broker_target import BrokerTarget

    topic = topic_of(trace)
    if topic:
        cluster.create_topic(topic, partitions=TOPIC_PARTITIONS)
    group_id = f"{group_prefix}{secrets.token_hex(4)}"
    target = BrokerTarget(cluster, group_id, description=description_of(broker))
    try:
        return replay(trace, target, group_id=group_id, faults=fault_runner(broker))
    finally:
        target.close()


def describe_result(result: SuiteResult) -> dict[str, Any]:
    out = dataclasses.asdict(result)
    out["coverage"] = {"|".join(k): v for k, v in result.coverage.items()}
    out["saved"] = [str(p) for p in result.saved]
    out["recorded"] = [str(p) for p in result.recorded]
    return out
