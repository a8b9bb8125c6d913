"""The differential suite against a real broker: the one engine behind ``kgc check`` and pytest.

A run is ``run_workload(workload, broker, search=…, output=…)``: a
:class:`~kgc.conformance.drivers.workloads.Workload` (what is driven: the classic, the KIP-848
consumer, the migration or the fault-mixed protocol, ``workloads.py``), where and how to reach the
broker (:class:`BrokerAccess`), how Hypothesis searches (:class:`Search`) and what is kept
(:class:`Output`). It goes in three parts, and asks the workload, never a protocol's name, for
everything that differs between protocols:

1. :func:`configure` opens a cluster connection, reads the broker's facts, negotiates request
   versions, scales time as the workload says, creates the suite's topic (with the ``kgc-``
   prefix) and has the workload build its harness: targets, model, machine class, nemesis.
2. :func:`search_examples` lets Hypothesis drive the harness's machine
   (:class:`~kgc.properties.machine.GroupMachine` for the classic protocol) with a fresh group id
   per example, every command sent both to the model (through the checker) and to the broker.
   Every example ends with ``Engine.finish`` (answers still arriving are checked before its target
   closes); a nemesis is healed when the search ends.
3. :func:`save_findings`: a failure is shrunk by Hypothesis (each replay on a fresh group), and the
   minimal trace is saved to ``traces/<scenario>_<check>_<fingerprint>.json``. A failure that
   does not reproduce on replay is reported as *flaky*, with both traces saved, never dropped,
   unless its trace, replayed on fresh groups, fails again there (``_observed_again``): then it
   is a divergence, minimised (a failure that turns on two close requests or timers).

:func:`run_suite` takes the same as keywords (``protocol="consumer"``, ``seed=…``,
``traces_dir=…``; :func:`suite_parts`); the fault-mixed suite (``fault_suite.run_fault_suite``)
passes its own workload — targets that follow the coordinator, the cluster-aware model, the machine
with nemesis rules, the nemesis — through this same driver. :func:`replay_on_broker` replays a
saved trace (``kgc.engine.replay``).

With ``Output.record_dir`` every executed example — generated, replayed or shrunk, passing or
not — is also written as its own JSONL trace (format v1, ``engine/traces.py``): the manifest
(target implementation/version/mode, seed, profile, model, checker tolerances), every recorded
event with the broker's measured ``latency_ms``, and the verdict. The layout is a trace corpus as
``kgc report`` / ``pipeline/convert.py`` read it::

    <record_dir>/<implementation>-<version>-<mode>/<group id>_<trace id>.jsonl

Each file is written atomically (temporary file, then rename) and never replaces a different
existing file (``traces.save`` picks ``…-2.jsonl`` instead), so several runs — say one per Kafka
version — can record into one folder. The recorded ``manifest.model`` is the model record the
broker's facts gave; a workload's custom ``model_factory`` (quality tests) is not named in it, so
re-checking such a recording with the real model may rightly disagree with its recorded verdict.

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
from kgc.conformance.drivers.workloads import (
    CLASSIC,
    Harness,
    ModelFactory,
    Workload,
    workload_named,
)

# the builders, where scripted scenarios (``tests/scripted.py``) have always found them
from kgc.conformance.drivers.workloads import consumer_workload as consumer_workload
from kgc.conformance.drivers.workloads import migration_workload as migration_workload
from kgc.conformance.errors import FaultsUnavailable, KgcError
from kgc.engine.allowances import allowances_used
from kgc.engine.loop import EngineConfig
from kgc.engine.replay import Replay, replay, topic_of
from kgc.engine.traces import Trace, save, save_failure
from kgc.model.checker import CheckerConfig
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
)

if TYPE_CHECKING:
    from kgc.conformance.wire.client import Cluster
    from kgc.conformance.wire.security import ClientSecurity


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
    acls: int = 0  # ACL actions (``AuthorizingGroupMachine``)
    wall_s: float = 0.0
    # "divergence" | "invariant" | "connection" (a request the target did not carry out) |
    # "flaky" | None
    failure: str | None = None
    message: str = ""
    saved: list[Path] = field(default_factory=list)
    coverage: dict[tuple[str, str, str], int] = field(default_factory=dict)
    # request × version × field class cells reached (``engine/coverage.py`` input cells)
    input_coverage: dict[tuple[str, int, str], int] = field(default_factory=dict)
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
    # examples that passed, and of those how many passed only through each of the model's
    # allowances (``engine/allowances.py``: with it switched off alone, the history diverges)
    passed: int = 0
    allowances: dict[str, int] = field(default_factory=dict)
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
class BrokerAccess:
    """The broker under test, what the run knows of it, and how the run names and reaches what it
    makes there."""

    bootstrap_servers: str
    description: dict[str, Any]  # ``session.description_of``: implementation, version, mode, …
    # group settings the user gives (``--broker-config``), which win over what the broker says
    # and fill in what it does not (``brokerconfig.facts``)
    broker_config: dict[str, int] | None = None
    group_prefix: str = "kgc-"  # the run's topic and every group it makes start with it
    reuse_connections: bool = True  # examples reuse idle member connections (``BrokerTarget``)
    # how every connection of the run authenticates (``--command-config``); None: PLAINTEXT
    security: ClientSecurity | None = None
    # the super user of a secured broker kgc started, when the run's principal is its limited
    # one: it reads the broker's settings (``brokerconfig.facts``; the limited principal may not
    # DescribeConfigs) and carries out the search's ACL actions (``conformance/wire/acls.py``)
    admin_security: ClientSecurity | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Search:
    """How Hypothesis searches: the profile's settings (or ``search_settings`` in their place),
    the seed (None: a random one), the example database, how long a failure may shrink, the
    checker's and the engine's settings, and request versions that replace the negotiated ones."""

    profile: str = "ci"
    seed: int | None = None
    search_settings: settings | None = None
    database: Any = None
    shrink_budget_s: float | None = SHRINK_BUDGET_S
    checker_config: CheckerConfig | None = None
    engine_config: EngineConfig | None = None
    versions: dict[str, tuple[int, ...]] | None = None
    # request types drawn only when asked (``model/requests.py`` ``OPT_IN_REQUESTS``): negotiated
    # and given their rules (``properties.machine.machine_for``); ``kgc check --opt-in``
    opt_in: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Output:
    """What a run keeps: failures' traces in ``traces_dir`` (a divergence's first through the
    deletion pass for at most ``minimize_budget_s``), with ``record_dir`` every example's trace
    (module docstring); given a list, ``example_traces`` receives every example's trace, passing
    or not, in run order; ``on_example(machine)`` is called as each example ends."""

    traces_dir: str | Path = "traces"
    record_dir: str | Path | None = None
    minimize_budget_s: float | None = MINIMIZE_BUDGET_S
    example_traces: list[Trace] | None = None
    on_example: Callable[[GroupMachine], None] | None = None


def run_workload(
    workload: Workload,
    broker: BrokerAccess,
    *,
    search: Search = Search(),  # noqa: B008 - frozen: one shared default is safe
    output: Output = Output(),  # noqa: B008
) -> SuiteResult:
    """Run the differential suite once on ``workload``: :func:`configure`, then
    :func:`search_examples`, then :func:`save_findings`. Never raises for a divergence: it is in
    the result. A recording folder that cannot be used raises :class:`RecordError` before any
    broker work; a write that fails later stops recording and is reported in
    ``result.record_error``. A workload the broker cannot run raises before any example (the
    consumer protocol's :class:`ProtocolUnsupported`)."""
    from kgc.conformance.wire.client import Cluster

    record_to = None if output.record_dir is None else prepare_record_dir(output.record_dir)
    seed = secrets.randbits(32) if search.seed is None else search.seed
    cluster = Cluster(broker.bootstrap_servers, client_id="kgc-suite", security=broker.security)
    try:
        setup = configure(workload, broker, cluster, opt_in=search.opt_in)
        result = SuiteResult(profile=search.profile, seed=seed, target=setup.description)
        seen = search_examples(setup, search, output, result, record_to=record_to)
        save_findings(result, seen, setup, output)
    finally:
        cluster.close()
    return result


@dataclass(frozen=True, slots=True, kw_only=True)
class Setup:
    """What :func:`configure` made ready for one run."""

    workload: Workload
    harness: Harness
    description: dict[str, Any]  # the broker's facts, the versions, the time scale (the target)
    versions: dict[str, tuple[int, ...]]  # the exercised versions, by request type
    unsupported: frozenset[str]  # request types the broker cannot be sent
    run_id: str
    group_prefix: str
    topic: str
    time_scale: int
    wait_when_parked: bool


def configure(
    workload: Workload, broker: BrokerAccess, cluster: Cluster, *, opt_in: tuple[str, ...] = ()
) -> Setup:
    """Read the broker's facts (``brokerconfig.facts``, ``broker.broker_config`` over them),
    negotiate the classic request versions (and the ``opt_in`` ones) with the rules those facts
    give, scale time as the
    workload says, create the run's ``<group prefix>suite-<run id>`` topic and build the workload's
    harness (which may negotiate its own request types, and refuse a broker that cannot run it)."""
    from kgc.conformance.wire.brokerconfig import facts
    from kgc.conformance.wire.client import Cluster
    from kgc.conformance.wire.negotiate import negotiate_with
    from kgc.engine.registry import model_manifest
    from kgc.model import PROFILES
    from kgc.properties.machine import capped_versions

    profile = broker.description.get("implementation_settings")
    if broker.admin_security is None:
        read = facts(cluster, broker.broker_config, profile=profile)
    else:
        with Cluster(
            broker.bootstrap_servers,
            client_id="kgc-facts",
            poller=cluster.poller,
            security=broker.admin_security,
        ) as admin:
            read = facts(admin, broker.broker_config, profile=profile)
            read["fact_notes"].append(
                f"settings read as {broker.admin_security.principal}, the checks run as "
                f"{(broker.security or admin.security).principal}"
            )
    description = {**broker.description, **read}
    acting = broker.admin_security is not None and broker.security is not None
    if acting:
        assert broker.security is not None
        # the run's principal holds the prefixed ACLs of a secured broker kgc started: requests
        # naming another group are refused, and the search denies and allows operations
        # (``model/classic/authorization.py``)
        description["authorization"] = {
            "principal": broker.security.principal,
            "foreign_group_refused": True,
            "acl_actions": True,
        }
    elif broker.security is not None and broker.security.protocol != "PLAINTEXT":
        # a principal whose permissions the run does not know: asked whether it may name a group
        # outside its prefix (the empty group id), which decides A0
        from kgc.conformance.wire.brokerconfig import probe_foreign_group_refused
        from kgc.conformance.wire.client import ClientError

        with contextlib.suppress(ClientError):
            refused = probe_foreign_group_refused(cluster)
            if refused is not None:
                description["authorization"] = {
                    "principal": broker.security.principal,
                    "foreign_group_refused": refused,
                    "acl_actions": False,
                }
    negotiated = negotiate_with(cluster, PROFILES[model_manifest(description)["profile"]], opt_in)
    # a steer that caps a request type's versions (``machine.STEER_VERSION_CAPS``): the run draws
    # none above it, and its input cells count only what it sends
    steered = capped_versions(negotiated.versions, description.get("implementation_steers") or ())
    description["request_versions"] = {k: list(v) for k, v in steered.items()}
    if negotiated.unsupported:
        description["unsupported_requests"] = dict(negotiated.unsupported)
    time_scale = workload.time_scale(description["group_config"])
    if time_scale > 1:
        description["time_scale"] = time_scale
    run_id = secrets.token_hex(3)
    topic = f"{broker.group_prefix}suite-{run_id}"
    cluster.create_topic(topic, partitions=TOPIC_PARTITIONS)
    if acting:
        from kgc.conformance.wire.acls import AclAdmin

        assert broker.admin_security is not None and broker.security is not None
        cluster.acl_admin = AclAdmin(
            broker.bootstrap_servers,
            admin=broker.admin_security,
            principal=broker.security.principal,
            topic=topic,
            poller=cluster.poller,
        )
    harness = workload.harness(
        cluster, description, topic=topic, reuse_connections=broker.reuse_connections
    )
    own = {
        api: tuple(vs)
        for api, vs in description["request_versions"].items()
        if api in workload.negotiates
    }
    return Setup(
        workload=workload,
        harness=harness,
        description=description,
        versions={**steered, **own},
        unsupported=frozenset(negotiated.unsupported),
        run_id=run_id,
        group_prefix=broker.group_prefix,
        topic=topic,
        time_scale=time_scale,
        wait_when_parked=workload.wait_when_parked(description["group_config"]),
    )


@dataclass(slots=True)
class Seen:
    """What a search's examples left for :func:`save_findings`."""

    failures: list[tuple[str, Trace, bool]] = field(default_factory=list)  # (check, trace, final?)
    known: dict[str, Trace] = field(default_factory=dict)  # first example at each known Kafka bug
    lost_target: bool = False  # the broker went away: every failure is kept, unshrunk


def search_examples(
    setup: Setup,
    search: Search,
    output: Output,
    result: SuiteResult,
    *,
    record_to: Path | None,
) -> Seen:
    """Let Hypothesis drive the harness's machine, a fresh group per example, and put the
    verdict and the tallies into ``result``; the nemesis is healed when it ends."""
    seen = Seen()
    ctx = _context(setup, search, seed=result.seed)
    ctx.on_example_end = _example_end(ctx, result, seen, output, record_to)
    machine_cls = setup.harness.machine(ctx)
    machine_cls._hypothesis_internal_use_seed = result.seed  # type: ignore[attr-defined]
    chosen = search.search_settings or hypothesis_settings(search.profile, database=search.database)
    start = time.monotonic()
    try:
        with _shrink_budget(search.shrink_budget_s):
            run_state_machine_as_test(machine_cls, settings=chosen)
    except (Flaky, DivergenceError, InvariantError, ConnectionFailure, TargetLost) as exc:
        _verdict(result, seen, exc)
    finally:
        _tally(result, ctx, start)
        if setup.harness.nemesis is not None:
            setup.harness.nemesis.heal()
    return seen


def _context(setup: Setup, search: Search, *, seed: int) -> SuiteContext:
    """The machine's context: the harness's targets and models, the run's versions and clock,
    each example's group id ``<prefix><run id>-<n>``."""
    harness = setup.harness
    manifest_extra: dict[str, Any] = {"seed": seed}
    if harness.model_record is not None:
        manifest_extra["model"] = harness.model_record
    ctx = SuiteContext(
        open_target=harness.open_target,
        new_model=harness.new_model,
        group_prefix=setup.group_prefix,
        scenario=setup.workload.scenario,
        profile=search.profile,
        checker_config=search.checker_config or CheckerConfig(),
        engine_config=search.engine_config or EngineConfig(),
        versions={**setup.versions, **(search.versions or {})},
        unsupported=setup.unsupported,
        opt_in=frozenset(search.opt_in),
        steers=frozenset(setup.description.get("implementation_steers") or ()),
        manifest_extra=manifest_extra,
        topic=setup.topic,
        time_scale=setup.time_scale,
        wait_when_parked=setup.wait_when_parked,
        acl_actions=bool((setup.description.get("authorization") or {}).get("acl_actions")),
    )
    counter = iter(range(1_000_000))
    ctx.new_group_id = lambda: f"{setup.group_prefix}{setup.run_id}-{next(counter)}"
    return ctx


def _verdict(result: SuiteResult, seen: Seen, exc: BaseException) -> None:
    """What the search raised, as ``result.failure`` and ``result.message``."""
    if isinstance(exc, Flaky):
        result.failure = "flaky"
        notes = " ".join(getattr(exc, "__notes__", ()))
        result.message = f"a failure did not reproduce on replay: {exc} {notes}".strip()
    elif isinstance(exc, DivergenceError | InvariantError):
        result.failure = "divergence" if isinstance(exc, DivergenceError) else "invariant"
        result.message = str(exc)
    elif isinstance(exc, ConnectionFailure):
        result.failure = "connection"
        result.message = str(exc).split("\n", 1)[0]
    else:
        # TargetLost: the broker went away after a connection closed on a request: the example
        # that saw it is the finding, saved unshrunk (nothing can be replayed), with the first
        # other failure seen before it, if any
        result.failure = "divergence"
        result.message = (
            f"{exc}: the broker crashed or was stopped. The example that was running is "
            "saved unshrunk, but the cause may be any earlier example: the groups they left "
            "behind still run their timers in the broker"
        )
        failures = seen.failures
        failures[:] = failures[-1:] + [f for f in failures[:1] if f is not failures[-1]]
        seen.lost_target = True


def _example_end(
    ctx: SuiteContext,
    result: SuiteResult,
    seen: Seen,
    output: Output,
    record_to: Path | None,
) -> Callable[[GroupMachine], None]:
    """What happens as each example ends: its tail checked, its trace kept (``output``), its
    failure or known bug noted in ``seen``."""

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
        if output.example_traces is not None:
            output.example_traces.append(trace)
        if record_to is not None and result.record_error is None:
            try:
                result.recorded.append(record_trace(trace, record_to))
            except OSError as exc:  # never fail the example (Hypothesis would shrink it)
                result.record_error = f"cannot write a trace into {record_to}: {exc}"
        check = machine.failed_check
        if check is None:
            result.passed += 1
            for name in allowances_used(trace):
                result.allowances[name] = result.allowances.get(name, 0) + 1
        if check == KNOWN_BUG:
            hit = machine.engine.known_bug
            if hit is not None:
                seen.known.setdefault(hit.world.key, trace)
        elif check is not None:
            if ctx.first_failure_at is None:
                ctx.first_failure_at = time.monotonic()
            final = bool(current_build_context().is_final)
            seen.failures.append((check, trace, final))
        if output.on_example is not None:
            output.on_example(machine)

    return on_example_end


def _tally(result: SuiteResult, ctx: SuiteContext, start: float) -> None:
    """Copy what the examples counted in ``ctx`` into ``result``."""
    result.wall_s = time.monotonic() - start
    result.examples = ctx.examples
    result.commands = ctx.commands
    result.ticks = ctx.ticks
    result.acls = ctx.acls
    result.coverage = dict(ctx.coverage)
    result.input_coverage = dict(ctx.input_coverage)
    result.assignment_checks = ctx.assignment_checks
    result.tick_ms = ctx.tick_ms
    result.known_bugs = dict(ctx.known_bugs)
    if ctx.first_failure_at is not None:
        result.first_failure_s = ctx.first_failure_at - start


def save_findings(result: SuiteResult, seen: Seen, setup: Setup, output: Output) -> None:
    """Save what the search found into ``output.traces_dir``: the first example of each known
    Kafka bug (unshrunk: not failures), and the failing trace — a failure Hypothesis dropped is
    still reported; a flaky one keeps the replay that passed beside it; a divergence is
    minimised first (``conformance/drivers/minimize.py``)."""
    scenario = setup.workload.scenario
    for key in sorted(seen.known):
        result.known_bug_saved.append(
            save_failure(
                seen.known[key], output.traces_dir, scenario=scenario, check=f"known-bug-{key}"
            )
        )
    failures = seen.failures
    if result.failure is None and failures:
        # Hypothesis may drop a failing example (one that ran out of its data budget is
        # discarded as an overrun); the failure was still seen on real answers, so it is
        # reported, never lost
        check = failures[0][0]
        result.failure = "divergence" if check == "divergence" else "invariant"
        result.message = (
            f"{check}: seen in an example that Hypothesis did not report (saved below, not shrunk)"
        )
        failures = failures[:1]
    if result.failure is None or not failures:
        return
    if result.failure == "flaky" and not seen.lost_target and output.minimize_budget_s:
        again = _observed_again(failures, setup, output.minimize_budget_s)
        if again is not None:
            result.failure = "divergence"
            result.message = (
                "the failure Hypothesis could not replay (timing: two requests or timers close "
                "together) was seen again on a fresh group and minimised: "
                + str((again.result or {}).get("divergence", {}).get("reason", ""))
            )
            result.saved.append(
                save_failure(
                    again, output.traces_dir, scenario=setup.workload.scenario, check="divergence"
                )
            )
            return
    for check, trace, _ in _chosen(result, failures, lost_target=seen.lost_target):
        name = "flaky" if result.failure == "flaky" else check
        if output.minimize_budget_s and result.failure == "divergence" and not seen.lost_target:
            trace = minimize(
                trace,
                open_target=setup.harness.open_target,
                model_factory=setup.harness.new_model,
                budget_s=output.minimize_budget_s,
            )
        result.saved.append(save_failure(trace, output.traces_dir, scenario=scenario, check=name))


def _observed_again(
    failures: list[tuple[str, Trace, bool]], setup: Setup, budget_s: float
) -> Trace | None:
    """A flaky failure's divergence, seen again: the deletion pass (``minimize``) replays the
    failing trace's commands on fresh groups and returns a trace only if a replay failed again at
    a request of the same type, and once more on another fresh group; None if none did. A failure
    that depends on two close requests or timers falling one way reproduces only now and then,
    which is what Hypothesis calls flaky; it is a divergence all the same."""
    failing = next(
        (t for check, t, _ in reversed(failures) if check == "divergence" and t.result), None
    )
    if failing is None:
        return None
    small = minimize(
        failing,
        open_target=setup.harness.open_target,
        model_factory=setup.harness.new_model,
        budget_s=budget_s,
    )
    return small if small.manifest.get("minimized_from") else None


def _chosen(
    result: SuiteResult, failures: list[tuple[str, Trace, bool]], *, lost_target: bool
) -> list[tuple[str, Trace, bool]]:
    """The failures worth saving: all of them when the broker was lost; for a flaky failure the
    failing trace and the replay that did not fail; else Hypothesis's final (shrunk) one."""
    finals = [f for f in failures if f[2]]
    if lost_target:
        return list(failures)
    if result.failure == "flaky":
        return [failures[-1]] + [f for f in finals if f is not failures[-1]][:1]
    return finals[-1:] or failures[-1:]


_RECORDS = (BrokerAccess, Search, Output)
_KEYWORDS = {f.name: record for record in _RECORDS for f in dataclasses.fields(record)}


def suite_parts(
    *,
    protocol: str = "classic",
    scenario: str = "classic",
    model_factory: ModelFactory | None = None,
    workload: Workload | None = None,
    **options: Any,
) -> tuple[Workload, BrokerAccess, Search, Output]:
    """:func:`run_suite`'s keywords as :func:`run_workload`'s parts: ``workload`` (else the one
    ``protocol`` names), its scenario replaced by a ``scenario`` other than ``"classic"`` and its
    model by ``model_factory``; every other keyword is a field of :class:`BrokerAccess`,
    :class:`Search` or :class:`Output`."""
    unknown = sorted(set(options) - set(_KEYWORDS))
    if unknown:
        raise TypeError(
            f"run_suite() got unexpected keyword arguments {', '.join(unknown)}; it takes "
            f"protocol, scenario, model_factory, workload and {', '.join(sorted(_KEYWORDS))}"
        )
    chosen = workload or workload_named(protocol)
    if model_factory is not None:
        chosen = dataclasses.replace(chosen, model_factory=model_factory)
    if scenario != "classic":
        chosen = dataclasses.replace(chosen, scenario=scenario)
    broker, search, output = (
        record(**{k: v for k, v in options.items() if _KEYWORDS[k] is record})
        for record in _RECORDS
    )
    return chosen, broker, search, output


def run_suite(**options: Any) -> SuiteResult:
    """:func:`run_workload` with everything as keywords (``kgc check``'s workers pass them to
    another process; the tests and benches that predate the parts call it so):
    ``bootstrap_servers=…, description=…, protocol="consumer", seed=7, traces_dir=…`` and so on
    (:func:`suite_parts`). The model is configured from facts read off the broker
    (``brokerconfig.facts``); ``model_factory(model_record, group_id)`` replaces how it is built
    (quality tests pass broken variants here). ``protocol="consumer"``: the KIP-848 consumer
    group (``ConsumerGroupModel``, ``properties/consumer_machine.py``) instead of the classic
    one; a broker that does not offer ConsumerGroupHeartbeat raises
    :class:`ProtocolUnsupported` before any example."""
    workload, broker, search, output = suite_parts(**options)
    return run_workload(workload, broker, search=search, output=output)


@dataclasses.dataclass
class SeedsResult:
    """What :func:`run_seeds` folded over its seeds."""

    results: list[SuiteResult]
    requests: int = 0
    reached: dict[tuple[str, str, str], int] = dataclasses.field(default_factory=dict)
    unsupported: set[str] = dataclasses.field(default_factory=set)


def run_seeds(
    broker: Any,
    description: dict[str, Any],
    *,
    seeds: int,
    workload: Workload = CLASSIC,
    search: Search = Search(),  # noqa: B008 - frozen: one shared default is safe
    output: Output = Output(),  # noqa: B008
) -> SeedsResult:
    """:func:`run_workload` on one started ``broker`` with seeds 1..``seeds`` (``search``'s own
    seed is replaced), folding requests, reached cells and unsupported request types
    (``kgc lines --sweep``, ``kgc matrix``)."""
    out = SeedsResult(results=[])
    access = BrokerAccess(bootstrap_servers=broker.bootstrap_servers, description=description)
    for seed in range(1, seeds + 1):
        result = run_workload(
            workload, access, search=dataclasses.replace(search, seed=seed), output=output
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
    performed on the broker only if kgc started it (``session.fault_runner``); ACL actions
    through ``cluster.acl_admin`` (a secured broker kgc started), which then names the topic."""
    from kgc.conformance.brokers.session import description_of, fault_runner
    from kgc.conformance.wire.broker_target import BrokerTarget
    from kgc.model.classic.authorization import acl_change

    topic = topic_of(trace)
    model = trace.manifest.get("model") or {}
    if topic:
        cluster.create_topic(topic, partitions=TOPIC_PARTITIONS)
        if cluster.acl_admin is not None:
            cluster.acl_admin.topic = topic
        if model.get("name") == "ShareGroupModel":
            # as before the run's first example: on a fresh broker the share coordinator's
            # first initialization (its state topic made) outlasts the model's bound
            # (SHARE_INITIALIZATION_MS), and the replay would diverge on the broker's warm-up
            from kgc.conformance.drivers.workloads import prepare_share

            prepare_share(cluster, {}, topic=topic)
    group_id = f"{group_prefix}{secrets.token_hex(4)}"
    target = BrokerTarget(cluster, group_id, description=description_of(broker))
    nemesis = fault_runner(broker)

    def perform(action: str, node: int) -> int | None:
        if acl_change(action) is not None:
            target.alter_acl(action)
            return None
        if nemesis is None:
            raise FaultsUnavailable(
                f"{action} on node {node}: kgc injects faults only into a cluster it starts"
            )
        result: int | None = nemesis(action, node)
        return result

    acting = nemesis is not None or cluster.acl_admin is not None
    try:
        return replay(trace, target, group_id=group_id, faults=perform if acting else None)
    finally:
        target.close()


def describe_result(result: SuiteResult) -> dict[str, Any]:
    out = dataclasses.asdict(result)
    out["coverage"] = {"|".join(k): v for k, v in result.coverage.items()}
    out["input_coverage"] = {
        f"{api}|{version}|{cls}": n for (api, version, cls), n in result.input_coverage.items()
    }
    out["saved"] = [str(p) for p in result.saved]
    out["recorded"] = [str(p) for p in result.recorded]
    return out
