"""The differential state machine: Hypothesis generates group-protocol command sequences.

Each rule builds one command from what the sending client knows (its member id, its generation,
whether it leads — exactly what a real client would know from the responses it got), sometimes
deliberately wrong (a stale generation, a stranger's member id), and hands it to the
:class:`~kgc.engine.loop.Engine`, which sends it to the target and checks every response
against
the reference model. Invariants after each step hold on the *target's* observations alone, so they
catch a broker bug even where the model has none to compare.

The machine is independent of any broker: a front end supplies a :class:`SuiteContext` that opens a
fresh target for each example (a fresh group id on a real broker; a :class:`ModelTarget` in the
model-only tests). See ``kgc.conformance.drivers.suite`` for the broker front end.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from kgc.engine.coverage import (
    AUTHORIZATION_CELLS,
    Cell,
    InputCell,
    cells_of,
    error_of,
    input_cells_of,
    input_universe,
    universe,
)
from kgc.engine.loop import Engine, EngineConfig, FaultStep, StepResult
from kgc.engine.registry import REORDER_WINDOW_MS
from kgc.engine.target import ModelTarget, Target, TargetError
from kgc.engine.traces import Trace, new_manifest, render, result_of
from kgc.model.checker import CheckerConfig, Model
from kgc.model.classic.authorization import DENIABLE, AclChange
from kgc.model.classic.inputs import PENDING_MEMBER
from kgc.model.client_view import (
    INSTANCE_ID_SINCE,
    LEAVERS,
    STRANGER,
    SYNC_PROTOCOL_SINCE,
    ZOMBIE_APIS,
    ClientView,
    ProducerView,
    subscription,
)
from kgc.model.commands import (
    NO_GENERATION,
    NO_MEMBER_ID,
    Assignment,
    ConnectionClosed,
    JoinGroup,
    JoinGroupResponse,
    OffsetFetch,
    Request,
    Response,
    Tick,
    TopicPartition,
    TopicPartitionOffset,
)
from kgc.model.errors import (
    CONCURRENT_TRANSACTIONS,
    INCONSISTENT_GROUP_PROTOCOL,
    NONE,
)
from kgc.model.requests import CLASSIC_REQUESTS, DEFAULT_REQUESTS, TRANSACTIONAL_REQUESTS

# what ``aim`` steers to: the universe but the cells a plain run cannot reach (a fault, a setting)
CLASSIC_UNIVERSE = frozenset(universe())
AIM_REQUEST = 10**9  # the request id ``_predicted`` gives a command it only asks the model about
AIM_STATES = 4  # live model states ``_predicted`` asks (they rarely disagree on the answer)
AIM_ANY = 3  # ``_aim``'s score of a candidate that neither reaches a new cell nor moves towards one
AIM_INPUT = 1  # ``_aim``'s score of one that reaches a new input cell only (a new state cell: 0)
AIM_TOWARDS = 2  # ``_aim``'s score of one that moves the group towards a state with a new cell
KNOWN_MEMBER_ID_SINCE = 4  # the first JoinGroup version of KIP-394's member-id handshake
AIM_VERSIONS = 3  # version indices ``aim`` tries for each misuse (each api has at most 3)
# requests one ``aim`` sends at most, while each serves coverage: drawn, mostly 8, shrinking to 1
# (measured on the model, 10 seeds of ``ci``: median coverage 88 % with these; 80 % with
# (1, 2, 4, 8); 77.5 % with one request per rule, the rule drawn three times as often; 70 % with
# each of 8 requests switched by a draw of its own). Hypothesis shrinks such a rule as one step,
# so a failing example may keep up to 8 requests of it; ``conformance/drivers/minimize.py`` then
# takes out, one by one, those the failure does not need.
AIM_STEPS = (1, 8, 8, 8)


@dataclass(frozen=True, slots=True)
class AimGoal:
    """Something ``aim`` steers to that is no answer's cell: ``cell`` is (kind, what), counted
    with the group state it happens in. :data:`AIM_GOALS` names the kinds."""

    cell: tuple[str, str]


@dataclass(frozen=True, slots=True)
class AimInput:
    """A step ``aim`` takes for an input cell no one request reaches from where the group is:
    ``cell`` is the input cell its last request reaches, for ``client``. A pending member's
    rejoin or leave (KIP-394) needs the member-id handshake first: ``_as_pending``."""

    cell: InputCell
    client: str


# what ``aim`` can do: send a request, reach an :class:`AimGoal`, or take an :class:`AimInput`
Aimed = Request | AimGoal | AimInput

# what the answers' cells cannot show: time passing a member's session deadline while its
# JoinGroup or SyncGroup waits at the coordinator (Kafka keeps it: ``hasSatisfiedHeartbeat``;
# a broker that expires it instead was found only by this, ``engine/broken.py``
# ``pending-join-not-alive``)
AIM_GOALS = ("Tick",)
FIRST_GENERATION = 1  # a new classic group's first completed join (generation 0 is Empty)
# ``failed_check`` of an example that stopped at a known Kafka bug (not a failure)
KNOWN_BUG = "known-bug"
MAX_CLIENTS = 4
VERSION_INDEX = st.integers(min_value=0, max_value=11)
TOPIC_PARTITIONS = 3  # partitions of the suite's topic, created by the front end

# Ticks either stay well inside every timeout or clear it; deadlines fall in the tolerance window
# rarely, and the checker allows both outcomes there.
TICKS_MS = (5, 60, 250, 700, 1300, 2600)
SETTLE_MS = 20  # least pause after a parked request before another client's (``_run``)
MAX_DEADLINE_TICK_MS = 3000  # tick_to_deadline never waits longer (timeouts here are <= 2000)
SESSION_TIMEOUTS_MS = (1000, 2000)
# timer kinds tick_to_deadline can aim at (names as ``ClassicGroupModel.timers`` reports them)
DEADLINE_KINDS = ("any", "heartbeat", "join phase", "sync deadline")
REBALANCE_TIMEOUTS_MS = (1000, 2000)
PROTOCOL_SETS: tuple[tuple[str, ...], ...] = (("range",), ("range", "roundrobin"), ("roundrobin",))
PROTOCOL_CHANGES = ("add", "swap", "same")  # how ``rejoin`` changes a client's protocol list


def time_scale_for(group_config: dict[str, Any]) -> int:
    """How much slower the classic search runs against a broker that refuses the suite's short
    sessions: the smallest whole factor that lifts the shortest drawn session
    (``SESSION_TIMEOUTS_MS[0]``) to ``group.min.session.timeout.ms``. Every drawn session,
    rebalance timeout and tick, and the deadline horizon, is multiplied by it (the draws
    themselves, and so what a seed explores, stay the same); the pauses that order requests
    (``SETTLE_MS``) and the checker's tolerances are not, since they measure the network and the
    broker's threads, not its timers. Kafka's default minimum, 6000 ms, gives 6."""
    low = int(group_config.get("group.min.session.timeout.ms") or 0)
    return max(1, -(-low // SESSION_TIMEOUTS_MS[0]))


def first_protocols_agree(command: JoinGroup) -> JoinGroup:
    """``command`` with ``range`` first among its protocols (added, with the same metadata, when
    it lacks it): the steer ``first_protocols_agree``."""
    rest = tuple(p for p in command.protocols if p.name != "range")
    if len(rest) == len(command.protocols):
        first = replace(command.protocols[0], name="range")
    else:
        first = next(p for p in command.protocols if p.name == "range")
    return replace(command, protocols=(first, *rest))


def join_names_a_protocol(command: JoinGroup) -> JoinGroup:
    """The steer ``join_names_a_protocol``: a JoinGroup the search builds always names its
    protocols; the steer takes the misuse that sends none (``join-no-protocols``) out of the
    search (``GroupMachine._misuse_command``)."""
    return command


def group_id_never_empty(command: JoinGroup) -> JoinGroup:
    """The steer ``group_id_never_empty``: the search sends no request naming the group id ""
    (the ``empty-group-*`` misuses, ``GroupMachine._empty_group_command``) to an implementation
    that takes it for a group of its own, which the model, holding the run's group alone, cannot
    judge past."""
    return command


def steered_elsewhere(command: JoinGroup) -> JoinGroup:
    """A steer that changes no JoinGroup the search builds, because it acts where its requests
    are made: ``session_timeout_in_bounds`` (the rule ``join_invalid_session`` and ``aim``'s
    candidates send no out-of-bounds session timeout), and the version caps
    ``join_group_below_v6``, ``sync_group_below_v4`` and ``leave_group_below_v3``
    (:data:`STEER_VERSION_CAPS`, applied where the versions are negotiated,
    ``conformance/drivers/suite.py`` ``configure``)."""
    return command


# Steers that cap a request type's versions: steer -> request type -> the highest version a
# search sends (an implementation that mis-reads the newer layout closes the connection).
STEER_VERSION_CAPS: dict[str, dict[str, int]] = {
    "join_group_below_v6": {"JoinGroup": 5},
    "leave_group_below_v3": {"LeaveGroup": 2},
    "sync_group_below_v4": {"SyncGroup": 3},
}


def capped_versions(
    versions: dict[str, tuple[int, ...]], steers: Iterable[str]
) -> dict[str, tuple[int, ...]]:
    """``versions`` without those above a cap of one of ``steers`` (:data:`STEER_VERSION_CAPS`).
    A request type the broker offers only above the cap keeps its versions: the steer cannot
    apply, and the run meets the deviation as a baseline."""
    out = dict(versions)
    for steer in steers:
        for api, top in STEER_VERSION_CAPS.get(steer, {}).items():
            if api in out:
                out[api] = tuple(v for v in out[api] if v <= top) or out[api]
    return out


# Steers (``SuiteContext.steers``): what a search never sends to an implementation whose process
# the request would kill, or whose answer leaves the run's group for another the model does not
# hold; each a function of the command the search would send.
STEERS: dict[str, Callable[[JoinGroup], JoinGroup]] = {
    "first_protocols_agree": first_protocols_agree,
    "join_names_a_protocol": join_names_a_protocol,
    "group_id_never_empty": group_id_never_empty,
    "join_group_below_v6": steered_elsewhere,
    "leave_group_below_v3": steered_elsewhere,
    "session_timeout_in_bounds": steered_elsewhere,
    "sync_group_below_v4": steered_elsewhere,
}


def changed_protocols(protocols: tuple[str, ...], change: str) -> tuple[str, ...]:
    """``add``: append a protocol the list lacks, or reverse a list that has them all (still
    shares every protocol it had); ``swap``: the next set of :data:`PROTOCOL_SETS` (may share
    none with the group); ``same``: unchanged."""
    if change == "add":
        missing = [p for p in ("range", "roundrobin") if p not in protocols]
        return protocols + tuple(missing[:1]) if missing else tuple(reversed(protocols))
    if change == "swap":
        i = PROTOCOL_SETS.index(protocols) if protocols in PROTOCOL_SETS else -1
        return PROTOCOL_SETS[(i + 1) % len(PROTOCOL_SETS)]
    return protocols


class DivergenceError(AssertionError):
    """The target answered something the model does not allow (message: the readable trace)."""


class InvariantError(AssertionError):
    """The target's own answers contradict each other (no model involved)."""


class ConnectionFailure(AssertionError):
    """The target did not carry a request out: a connection closed on it or refused
    (:class:`~kgc.engine.target.TargetError`). Kafka answers every request it offers, so this is a
    failure of the target, shrunk and saved like a divergence."""


class TargetLost(BaseException):  # noqa: N818 - not an error of the example: the end of the search
    """The target stopped accepting connections after an example failed on one: every further
    example, and every replay a shrink would run, could only be refused. A ``BaseException``
    because Hypothesis turns every ``Exception`` of an example into a failure to shrink, and this
    must stop the search at once instead; ``run_suite`` reports it with the example that broke."""


@dataclass(slots=True)
class SuiteContext:
    """What a front end provides. ``open_target(group_id)`` returns a fresh :class:`Target`."""

    open_target: Callable[[str], Target]
    new_model: Callable[[str], Model[Any]]  # group id -> a fresh model for that group
    group_prefix: str = "kgc-"
    scenario: str = "classic"
    profile: str = "ci"
    checker_config: CheckerConfig = field(default_factory=CheckerConfig)
    engine_config: EngineConfig = field(default_factory=EngineConfig)
    versions: dict[str, tuple[int, ...]] = field(default_factory=dict)
    # request types the target cannot be sent (``conformance/wire/negotiate.py``): their rules send
    # none
    unsupported: frozenset[str] = frozenset()
    # request types drawn only when asked (``RequestType.opt_in``, ``model/requests.py``): the
    # classic machine has their rules only when they are named here (``machine_for``)
    opt_in: frozenset[str] = frozenset()
    # what the search never sends to this target (:data:`STEERS`; an implementation's profile,
    # ``conformance/brokers/implementations.py`` ``STEERS``)
    steers: frozenset[str] = frozenset()
    manifest_extra: dict[str, Any] = field(default_factory=dict)
    on_example_end: Callable[[Any], None] | None = None
    # filled as examples run
    examples: int = 0
    commands: int = 0
    ticks: int = 0
    coverage: dict[tuple[str, str, str], int] = field(default_factory=dict)
    # request × version × field class cells reached (``engine/coverage.py`` input cells)
    input_coverage: dict[InputCell, int] = field(default_factory=dict)
    new_group_id: Callable[[], str] | None = None
    topic: str = "kgc-suite"  # created by the front end with TOPIC_PARTITIONS partitions
    first_failure_at: float | None = None
    connection_failure: str | None = None  # the first ``ConnectionFailure`` seen, if any
    assignment_checks: int = 0
    tick_ms: int = 0
    # drawn sessions, rebalance timeouts and ticks are multiplied by this (``time_scale_for``)
    time_scale: int = 1
    # examples that stopped at a known Kafka bug, by its key (``model/known_bugs.py``)
    known_bugs: dict[str, int] = field(default_factory=dict)
    # the cells some ``aim`` candidate was predicted to reach, in any example so far
    aim_predictable: set[Cell] = field(default_factory=set)
    # ``AimGoal`` cells reached so far (they are no coverage cells: counted here)
    aim_goals: Counter[Cell] = field(default_factory=Counter)
    # what ``aim`` steered by in the first failing example (the coverage before it, and the
    # predictable cells): Hypothesis's replays and shrinks of it must steer as it did
    aim_frozen: tuple[dict[Cell, int], frozenset[Cell]] | None = None
    # the input cells reached before the first failing example, frozen with ``aim_frozen``
    aim_inputs_frozen: dict[InputCell, int] | None = None
    # a rule drawn for a client that waits for an answer lets time pass instead of doing
    # nothing (``GroupMachine._busy``): on for a broker whose every first join parks for
    # ``group.initial.rebalance.delay.ms`` (Kafka's default: 3 s), where most steps were lost
    wait_when_parked: bool = False
    # the run may deny and allow its principal operations on its group and topic (a secured
    # broker kgc started: ``conformance/wire/acls.py``): the machine gets the ``acl`` rule
    # (:class:`AuthorizingGroupMachine`), each action done through ``Target.alter_acl``
    acl_actions: bool = False
    acls: int = 0  # ACL actions carried out so far

    def version(self, api: str, index: int) -> int:
        """The ``index``-th exercised version of ``api`` (wrapping). Versions are drawn as plain
        rule arguments, never inside a rule, so what Hypothesis draws cannot depend on what the
        broker answered (that would make replays "flaky" in the strategy, not in the broker)."""
        choices = self.versions.get(api) or drawn_versions(api)
        return choices[index % len(choices)]

    def version_from(self, api: str, minimum: int, index: int) -> int | None:
        """Like :meth:`version`, among the exercised versions of ``api`` that are at least
        ``minimum`` (a field that only those carry); ``None`` when the broker offers none (a
        release before the field: such a request cannot be sent to it)."""
        choices = [v for v in self.versions.get(api) or drawn_versions(api) if v >= minimum]
        return choices[index % len(choices)] if choices else None


# Versions drawn, where the broker and its line's rules accept them (``conformance/wire/
# negotiate.py``; KIP-896 removed the oldest ones in 4.0): every version kafka-python speaks
# (``model/requests.py``, which says what each version changes), for the types every search
# draws. Oldest first: a version index shrinks towards the oldest, simplest version.
DEFAULT_VERSIONS: dict[str, tuple[int, ...]] = {
    name: CLASSIC_REQUESTS[name].drawn_versions for name in DEFAULT_REQUESTS
}
# What real clients get wrong (``GroupMachine.misuse``): a SyncGroup naming another protocol, or
# none (v5+); a JoinGroup with no protocols, or no protocol type, or a member id the group never
# gave (a consumer whose member was removed long ago), or one of OVERSIZED_MEMBER_ID characters;
# commit metadata longer than ``offset.metadata.max.bytes`` (Kafka's default, 4096 bytes:
# OVERSIZED_METADATA is longer); a commit naming a generation the group has not reached (a client
# that kept a generation across the group's deletion, or made one up)
MISUSES = (
    "sync-other-protocol",
    "sync-no-protocol",
    "join-no-protocols",
    "join-no-protocol-type",
    "join-unknown-member",
    "join-oversized-member-id",
    "commit-oversized-metadata",
    "commit-future-generation",
    "join-unreadable-subscription",  # after the others: the kinds before it keep their draws
    # a group request naming the group id "" (``model/classic/empty_group.py``), last likewise
    *(f"empty-group-{api}" for api in ("JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup")),
)
OVERSIZED_METADATA = 4097
# Subscriptions a coordinator cannot read, each failing its own way (``model/classic/subscription
# .py``): a topic count past the end, a topic name past the end, user data past the end. Counts
# stay small: 2.7 allocates the claimed count first, and a huge one ends the broker.
UNREADABLE_SUBSCRIPTIONS = (
    "\x00\x00\x00\x00\x00\x10",
    "\x00\x00\x00\x00\x00\x01\x00\x05ab",
    "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x09",
)
OVERSIZED_MEMBER_ID = 1024


def drawn_versions(api: str) -> tuple[int, ...]:
    """The versions of ``api`` a search draws by default: :data:`DEFAULT_VERSIONS`, or for an
    opt-in request type its own (``model/requests.py``)."""
    return DEFAULT_VERSIONS.get(api) or CLASSIC_REQUESTS[api].drawn_versions


@functools.lru_cache(maxsize=8)
def _input_universe_cached(
    versions: tuple[tuple[str, tuple[int, ...]], ...],
) -> frozenset[InputCell]:
    return frozenset(input_universe({"request_versions": dict(versions)}))


def _input_universe_for(versions: dict[str, tuple[int, ...]]) -> frozenset[InputCell]:
    """The input cells a search sending ``versions`` counts (``engine/coverage.py``)."""
    return _input_universe_cached(tuple(sorted((k, tuple(v)) for k, v in versions.items())))


def line_versions(
    model: Model[Any], opt_in: frozenset[str] = frozenset()
) -> dict[str, tuple[int, ...]]:
    """:data:`DEFAULT_VERSIONS` within the versions the ``model``'s release line accepts
    (``Profile.api_ranges``): every version both sides speak, for a search no broker negotiated
    versions for (a model-only one); empty for a model without a line."""
    profile = getattr(getattr(model, "config", None), "profile", None)
    if profile is None or not hasattr(profile, "api_range"):
        return {}
    out: dict[str, tuple[int, ...]] = {}
    drawn = {**DEFAULT_VERSIONS, **{api: drawn_versions(api) for api in sorted(opt_in)}}
    for api, versions in drawn.items():
        try:
            r = profile.api_range(api)
        except KeyError:
            continue
        kept = tuple(v for v in versions if r.min_version <= v <= r.max_version)
        out[api] = kept or (r.max_version,)
    return out


def _looks_up_empty_group(model: Model[Any]) -> bool:
    """Whether the ``model``'s release line looks the group "" up for a SyncGroup, Heartbeat or
    LeaveGroup (``Profile.empty_group_id_checked_by_join_only``; a migration model's classic
    part's line)."""
    config = getattr(model, "config", None)
    profile = getattr(config, "profile", None)
    if profile is None:
        profile = getattr(getattr(config, "classic", None), "profile", None)
    return bool(getattr(profile, "empty_group_id_checked_by_join_only", False))


def assignment_for(members: tuple[str, ...], topic: str) -> tuple[Assignment, ...]:
    """The test leader's assignment: partitions of ``topic`` round-robin over sorted members."""
    ordered = sorted(members)
    parts: dict[str, list[int]] = {m: [] for m in ordered}
    for p in range(TOPIC_PARTITIONS):
        parts[ordered[p % len(ordered)]].append(p)
    return tuple(
        Assignment(member_id=m, assignment=json.dumps({topic: parts[m]}, sort_keys=True))
        for m in ordered
    )


class EngineMachine(RuleBasedStateMachine):
    """What every group-protocol machine shares, whatever its protocol: one fresh group and target
    per example, the engine that sends each command and checks each answer against the model,
    the spacing of two clients' requests, time passing (``tick``), the trace and the teardown
    that reports a divergence. A protocol's machine adds its rules and what its clients learn
    from an answer (``_learn``). Subclassed with a concrete :class:`SuiteContext`."""

    context: SuiteContext

    def __init__(self) -> None:
        super().__init__()
        ctx = self.context
        ctx.examples += 1
        self.group_id = ctx.new_group_id() if ctx.new_group_id else f"{ctx.group_prefix}example"
        self.topic = ctx.topic
        self.failed_check: str | None = None
        self.failure_message = ""
        self.target: Target
        try:
            self.target = ctx.open_target(self.group_id)
        except Exception as exc:
            if ctx.connection_failure is None:
                raise
            # gone for good: this example still draws all its data (a shorter draw would make
            # Hypothesis call the strategy flaky), sends nothing, and stops the search in teardown
            self.failed_check = "lost"
            self.failure_message = (
                f"{ctx.connection_failure}; after that the target could not be opened again "
                f"({' '.join(str(exc).split())})"
            )
            self.target = ModelTarget(ctx.new_model(self.group_id))
        self.engine = Engine(
            self.target,
            ctx.new_model(self.group_id),
            checker_config=ctx.checker_config,
            config=ctx.engine_config,
        )
        if not ctx.versions:  # no broker negotiated them: the versions the model's line accepts
            ctx.versions = line_versions(self.engine.model, ctx.opt_in)
        self._last_sender: str | None = None  # client of the last command, if a request
        # what ``aim`` steers by: the cells reached before this example, and those it knows a
        # candidate can reach (``SuiteContext``)
        self.aim_basis, self.aim_known = ctx.aim_frozen or (
            {**ctx.coverage, **ctx.aim_goals},
            frozenset(ctx.aim_predictable),
        )
        self.aim_goals_here: list[Cell] = []  # ``AimGoal`` cells ``aim`` reached in this example
        # the input cells reached before this example, and those ``aim`` may steer to: the
        # universe for the versions this run sends
        self.aim_inputs_basis = (
            ctx.aim_inputs_frozen if ctx.aim_inputs_frozen is not None else dict(ctx.input_coverage)
        )
        self.aim_inputs_known = _input_universe_for(ctx.versions)
        # requests ``aim`` sent in this example: one sent again counts as reaching nothing new
        # (the model may predict a cell for one world, e.g. the group deleted, that the broker
        # is not in; sending it again and again would only find out the same)
        self.aim_sent: set[Request] = set()
        self.aim_seen_here: set[Cell] = set()  # predicted in this example

    # ------------------------------------------------------------------ plumbing
    def _run(self, command: Any) -> StepResult | None:
        """Execute one command. After a failure the rest of the sequence is not executed (its
        arguments are still drawn), and the failure is raised in ``teardown``: where in the
        sequence a live broker first disagrees must not change how much data Hypothesis draws,
        or every replay would look like a flaky *strategy*."""
        if self.failed_check is not None:
            return None
        if not isinstance(command, Tick) and command.type in self.context.unsupported:
            return None  # the target cannot be sent this request type: the rule sends nothing
        if isinstance(command, Tick):
            self._last_sender = None
        else:
            last, self._last_sender = self._last_sender, command.client
            if last is not None and last != command.client and not self._idle(last):
                # The previous request, another client's, is parked: nothing to wait for says the
                # broker has handled it, and requests on two connections can be handled in either
                # order while the model takes them in send order. So let ``SETTLE_MS`` pass first,
                # recorded as a Tick so a replay keeps the spacing; the reorders left are the
                # model's to allow (``REORDER_WINDOW_MS``). Measurements, and why 20 ms and not
                # 100 ms: docs/design-notes.md, "Order at the broker".
                self._run(Tick(ms=SETTLE_MS))
                self._last_sender = command.client
                if self.failed_check is not None:
                    return None  # the wait itself ended the example
        ctx = self.context
        if isinstance(command, Tick):
            ctx.ticks += 1
            ctx.tick_ms += command.ms
        else:
            ctx.commands += 1
        try:
            result = self.engine.execute(command)
        except TargetError as exc:
            self.failed_check = "connection"
            self.failure_message = f"the target did not carry out a request: {exc}"
            if ctx.connection_failure is None:
                ctx.connection_failure = self.failure_message
            return None
        for rid, response in result.received:
            if isinstance(response, ConnectionClosed) and ctx.connection_failure is None:
                sent = self.engine.requests[rid]
                ctx.connection_failure = (
                    f"the broker closed the connection on {sent.type} from {sent.client} "
                    f"({response.reason})"
                )
        self._judge(result)
        return result

    def _judge(self, result: StepResult) -> None:
        """What the answers ``result`` brought teach their clients (and the invariants on
        them), and whether the example stops: a divergence, or a known Kafka bug."""
        try:
            for rid, response in result.received:
                self._learn(self.engine.requests[rid], response)
        except InvariantError as exc:
            self.failure_message = str(exc)
        if result.divergence is not None and self.failed_check is None:
            self.failed_check = "divergence"
        if self.engine.known_bug is not None and self.failed_check is None:
            # only a known Kafka bug explains the broker now (``model/known_bugs.py``): nothing
            # after it can be judged, so the example stops here, counted but not a failure
            self.failed_check = KNOWN_BUG

    def _learn(self, request: Any, response: Response) -> None:
        """What ``request``'s client learns from ``response`` (and invariants on the target's own
        answers: raise :class:`InvariantError`). Default: nothing."""
        return None

    def trace(self) -> Trace:
        """This example's history as a trace (manifest, events, verdict)."""
        ctx = self.context
        manifest = new_manifest(
            target=self.target.describe(),
            group_id=self.group_id,
            seed=ctx.manifest_extra.get("seed"),
            profile=ctx.profile,
            scenario=ctx.scenario,
            model=ctx.manifest_extra.get("model", {}),
            checker=dataclasses.asdict(ctx.checker_config),
        )
        return Trace(
            manifest=manifest,
            events=list(self.engine.events),
            extras=list(self.engine.extras),
            result=result_of(self.engine),
        )

    def report(self) -> str:
        return render(self.trace())

    def _idle(self, client: str) -> bool:
        return not self.target.in_flight(client)

    def _busy(self, client: str) -> bool:
        """Whether ``client`` still waits for an answer, so a rule drawn for it sends nothing.
        With ``SuiteContext.wait_when_parked`` the rule lets time run to just past the next
        deadline instead, as the client itself would wait."""
        if self._idle(client):
            return False
        if self.context.wait_when_parked:
            self._tick_to(kind="any", which=0, side="after")
        return True

    @rule(ms=st.sampled_from(("next-deadline", *TICKS_MS)))
    def tick(self, ms: int | str) -> None:
        """Let time pass: a fixed amount, or — the first choice, which Hypothesis draws most
        often and shrinks towards — until just after the next deadline the model has pending
        within 3 s (a session, the join phase, the sync deadline), so liveness is exercised
        all the time and not only by the rarer ``tick_to_deadline``."""
        if isinstance(ms, str):
            self._tick_to(kind="any", which=0, side="after")
        else:
            self._run(Tick(ms=ms * self.context.time_scale))

    def _tick_to(self, *, kind: str, which: int, side: str) -> None:
        if self.failed_check is not None:
            return
        timers = self.engine.model.timers
        now = self.target.now_ms()
        # only deadlines the suite's own timeouts produce: Kafka's 5-minute new-member join
        # timeout is a deadline too, and waiting it out would stall the run for minutes
        horizon = now + MAX_DEADLINE_TICK_MS * self.context.time_scale
        deadlines = sorted(
            {
                d
                for st_ in self.engine.checker.states
                for d, name, _ in timers(st_)
                if now < d <= horizon and kind in ("any", name)
            }
        )
        if not deadlines:
            return
        cfg = self.engine.checker.config
        target = deadlines[which % len(deadlines)]
        if side == "after":
            ms = target + cfg.late_ms + 60 - now
        else:
            ms = target - cfg.early_ms - 60 - now
        if ms >= 5:
            self._run(Tick(ms=int(ms)))

    # ------------------------------------------------------------------ steering
    def aim_universe(self) -> frozenset[Cell]:
        """The cells ``_aim`` steers to: the classic group's here; the consumer and migration
        machines name their protocol's own (``engine/coverage.py``)."""
        return CLASSIC_UNIVERSE

    def _predicted(self, command: Aimed) -> tuple[set[Cell], set[str]]:
        """What ``command`` would do if sent now, by the model: the cells it reaches (for each
        live state, its group state and the error of the answer the model gives at once: ``NONE``
        for an answer it holds back, as a parked JoinGroup's mostly is) and the group states it
        leaves the group in. An :class:`AimGoal` says its cell itself; an :class:`AimInput`
        predicts no cell (it is taken for its input cell)."""
        if isinstance(command, AimInput):
            return set(), set()
        if isinstance(command, AimGoal):
            here = self.engine._group_state()
            return {(here, *command.cell)}, {here}
        model = self.engine.model
        live = [s for s in self.engine.checker.states if not model.provisional(s)]
        now = self.target.now_ms()
        cells: set[Cell] = set()
        states: set[str] = set()
        for state in (live or list(self.engine.checker.states))[:AIM_STATES]:
            group_state = model.group_state(state) or "?"
            try:
                after = list(
                    model.invoke(state, request_id=AIM_REQUEST, command=command, at_ms=now)
                )
            except Exception:  # noqa: BLE001 - a command the model refuses predicts nothing
                continue
            for succ in after:
                answer = model.outbox(succ).get(AIM_REQUEST)
                error = error_of(answer[0]) if answer is not None else NONE
                cells.add((group_state, command.type, error))
                states.add(model.group_state(succ) or "?")
        return cells, states

    def _input_cell(self, command: Aimed) -> InputCell | None:
        """The input cell ``command`` would reach if sent now (``Engine.input_class``)."""
        if isinstance(command, AimInput):
            return command.cell
        if isinstance(command, AimGoal):
            return None
        cls = self.engine.input_class(command).get("input_class")
        if cls is None or cls == "?":
            return None
        return (command.type, int(command.version), cls)

    def _aim(
        self,
        candidates: list[tuple[Aimed, Callable[[], object]]],
        pick: int,
        variants: Callable[[], Sequence[tuple[Aimed, Callable[[], object]]]] = tuple,
    ) -> bool:
        """Carry out a candidate that serves coverage, by the model's prediction
        (:meth:`_predicted`): first one that reaches a cell not reached yet (in the run before
        this example, or in this example so far); else one that reaches an input cell not
        reached yet (``engine/coverage.py``: request × version × field class), among the
        candidates and, when none of them does, their ``variants()`` (the same requests at the
        other versions, classed but not predicted; built only then); else one that moves the
        group to another state where a candidate was once predicted to reach such a cell (a
        leader's SyncGroup that makes the group Stable); else any. ``pick`` chooses among
        equals. Cells reached once count as done: balancing how often each was reached spends
        the steps on the cells of the state the group is in."""
        if self.failed_check is not None or not candidates:
            return False
        local = cells_of(self.engine.events, self.engine.extras)
        local_inputs = input_cells_of(self.engine.events, self.engine.extras)

        def new_input(command: Aimed) -> bool:
            cell = self._input_cell(command)
            return (
                cell is not None
                and cell in self.aim_inputs_known
                and not (self.aim_inputs_basis.get(cell, 0) or local_inputs.get(cell, 0))
            )

        known = self.aim_universe()

        for cell in self.aim_goals_here:
            local[cell] += 1

        def new(cell: Cell) -> bool:
            goal = cell[1] in AIM_GOALS
            if not (cell in known or goal):
                return False
            return not (self.aim_basis.get(cell, 0) or local.get(cell, 0))

        predicted = [self._predicted(command) for command, _ in candidates]
        for cells, _ in predicted:
            self.aim_seen_here |= cells
            self.context.aim_predictable |= cells
        waiting = {cell[0] for cell in self.aim_known | self.aim_seen_here if new(cell)}

        def score(command: Aimed, cells: set[Cell], states: set[str]) -> int:
            if command in self.aim_sent:
                return AIM_ANY
            if any(new(c) for c in cells):
                return 0
            if new_input(command):
                return AIM_INPUT
            if (states - {c[0] for c in cells}) & waiting:
                return AIM_TOWARDS
            return AIM_ANY

        scores = [
            score(command, cells, states)
            for (command, _), (cells, states) in zip(candidates, predicted, strict=True)
        ]
        pool = list(candidates)
        if min(scores) > AIM_INPUT:  # none reaches a new cell: a version variant may
            seen = {c for c, _ in candidates}
            for variant in variants():
                command = variant[0]
                if command not in seen and command not in self.aim_sent and new_input(command):
                    seen.add(command)
                    pool.append(variant)
                    scores.append(AIM_INPUT)
        least = min(scores)
        best = [c for c, n in zip(pool, scores, strict=True) if n == least]
        command, action = best[pick % len(best)]
        if isinstance(command, AimGoal):  # a goal is reached by doing it: count it now
            cells, _ = self._predicted(command)
            self.aim_goals_here.extend(cells)
            self.context.aim_goals.update(cells)
        else:
            self.aim_sent.add(command)
        action()
        return least < AIM_ANY

    # ------------------------------------------------------------------ invariants
    @invariant()
    def model_agrees(self) -> None:
        if self.engine.divergence is not None and self.failed_check is None:
            self.failed_check = "divergence"

    def teardown(self) -> None:
        for cell, n in cells_of(self.engine.events, self.engine.extras).items():
            self.context.coverage[cell] = self.context.coverage.get(cell, 0) + n
        inputs = self.context.input_coverage
        for input_cell, n in input_cells_of(self.engine.events, self.engine.extras).items():
            inputs[input_cell] = inputs.get(input_cell, 0) + n
        try:
            if self.context.on_example_end is not None:
                self.context.on_example_end(self)  # may find a divergence after the bug, too
        finally:
            hit = self.engine.known_bug if self.failed_check == KNOWN_BUG else None
            if hit is not None:
                key = hit.world.key
                self.context.known_bugs[key] = self.context.known_bugs.get(key, 0) + 1
                # the broker may still answer old requests: keep that from later examples
                self.target.discard_connections()
            self.target.close()
        if hit is not None:
            return
        if self.failed_check is not None and self.context.aim_frozen is None:
            # Hypothesis now replays and shrinks this example: let every replay steer as it did
            self.context.aim_frozen = (self.aim_basis, self.aim_known)
            self.context.aim_inputs_frozen = self.aim_inputs_basis
        if self.failed_check == "divergence":
            raise DivergenceError(self.report())
        if self.failed_check == "lost":
            raise TargetLost(self.failure_message)
        if self.failed_check == "connection":
            raise ConnectionFailure(f"{self.failure_message}\n{self.report()}")
        if self.failed_check is not None:
            raise InvariantError(f"{self.failure_message}")


class GroupMachine(EngineMachine):
    """The classic protocol's machine (JoinGroup, SyncGroup, Heartbeat, …). Subclassed by
    :func:`machine_for` with a concrete :class:`SuiteContext`."""

    clients = Bundle("clients")

    def __init__(self) -> None:
        super().__init__()
        self.views: dict[str, ClientView] = {}
        # clients the drawn rules added (``aim``'s newcomers not counted): ``new_client``'s
        # precondition must not depend on what ``aim`` did, or Hypothesis's draws would (a
        # "flaky strategy")
        self.drawn_clients = 0
        self.leaders: dict[int, str] = {}  # generation -> leader, as observed
        self.max_generation = NO_GENERATION

    def _learn(self, request: Any, response: Response) -> None:
        view = self.views.get(request.client)
        if view is None:
            return
        view.learn(response)
        if isinstance(response, JoinGroupResponse) and response.error == NONE:
            if (
                response.generation_id == FIRST_GENERATION <= self.max_generation
                and self.engine.divergence is None
            ):
                # the model allowed a first generation again: the group was deleted while Empty
                # (the coordinator's cleanup; ``GroupConfig.empty_group_may_vanish``) and made
                # anew, so its generations start over (seen on 4.3.1 behind the fair proxy)
                self.leaders, self.max_generation = {}, NO_GENERATION
            # the leader as named to the members that do not lead, when every member may be told
            # it leads (``_every_member_may_lead``); else as named to every member
            if not (response.leader == response.member_id and self._every_member_may_lead()):
                seen = self.leaders.setdefault(response.generation_id, response.leader)
                if seen != response.leader and self._same_static_member(seen, response.leader):
                    self.leaders[response.generation_id] = seen = response.leader
                if seen != response.leader:
                    self.failed_check = "two-leaders"
                    raise InvariantError(
                        f"generation {response.generation_id} has two leaders: {seen} and "
                        f"{response.leader}\n" + self.report()
                    )
            if response.generation_id < self.max_generation:
                self.failed_check = "generation-backwards"
                raise InvariantError(
                    f"generation went backwards: {response.generation_id} after "
                    f"{self.max_generation}\n" + self.report()
                )
            self.max_generation = response.generation_id

    def _every_member_may_lead(self) -> bool:
        """Whether the rules the run is judged by answer every member of a generation as its
        leader when the named leader is gone (``Profile.join_leader_elected_once`` off: kfake's
        profile): then an answer that names its own member is no second leader, and the one
        invariant left is that every member not told it leads is told the same leader (the
        model pins down each answer)."""
        profile = getattr(getattr(self.engine.model, "config", None), "profile", None)
        return not getattr(profile, "join_leader_elected_once", True)

    def _same_static_member(self, a: str, b: str) -> bool:
        """Whether member ids ``a`` and ``b`` are one static member under its old and new id: a
        static member that rejoins with an empty id is *replaced* — same generation, and a
        leader stays the leader under its new id (KIP-345, ``ClassicGroup.replaceStaticMember``).
        Ids are symbolic, ``cK-n`` for the n-th id client ``cK`` got."""
        client_a, client_b = a.rpartition("-")[0], b.rpartition("-")[0]
        view = self.views.get(client_a)
        return client_a == client_b and view is not None and view.group_instance_id is not None

    def _check_assignment(self, v: ClientView, assignments: tuple[Assignment, ...]) -> None:
        """Z3: the leader's assignment for this generation gives every subscribed partition
        exactly one owner, and only to subscribers (issue: "every SyncGroup assignment is checked
        at each step"). A FAIL or an UNKNOWN stops the example as an invariant failure."""
        from kgc.properties.assignment_codec import decode_subscription
        from kgc.properties.assignment_z3 import check_generation

        subscriptions = dict(v.subscriptions)
        try:
            for sub in subscriptions.values():
                if isinstance(sub, str):
                    decode_subscription(sub)
        except ValueError:
            return  # a subscription no leader can read (``join-unreadable-subscription``)
        result = check_generation(
            subscriptions,
            {a.member_id: a.assignment for a in assignments},
            partitions_per_topic={self.topic: TOPIC_PARTITIONS},
            generation_id=v.generation_id,
            check_handoff=False,
        )
        self.context.assignment_checks += 1
        if str(result.verdict) not in ("PASS", "Verdict.PASS") and self.failed_check is None:
            self.failed_check = "assignment"
            self.failure_message = f"generation {v.generation_id}: {result}"

    # ------------------------------------------------------------------ rules
    def _add_client(
        self, session: int, rebalance: int, static: bool, protocols: tuple[str, ...]
    ) -> str:
        name = f"c{len(self.views) + 1}"
        self.drawn_clients += 1
        scale = self.context.time_scale
        self.views[name] = ClientView(
            client=name,
            session_timeout_ms=session * scale,
            rebalance_timeout_ms=max(rebalance, session) * scale,
            group_instance_id=f"{name}-instance" if static else None,
            protocols=protocols,
            metadata=subscription([self.topic]),
        )
        return name

    client_settings = {
        "session": st.sampled_from(SESSION_TIMEOUTS_MS),
        "rebalance": st.sampled_from(REBALANCE_TIMEOUTS_MS),
        "static": st.booleans(),
        "protocols": st.sampled_from(PROTOCOL_SETS),
    }

    @initialize(target=clients, **client_settings)
    def first_client(
        self, session: int, rebalance: int, static: bool, protocols: tuple[str, ...]
    ) -> str:
        return self._add_client(session, rebalance, static, protocols)

    @initialize(target=clients, **client_settings)
    def second_client(
        self, session: int, rebalance: int, static: bool, protocols: tuple[str, ...]
    ) -> str:
        """Two clients from the start, so multi-member situations (a group of two formed by
        ``form_group``, one member rejoining while the other stays) need no extra step."""
        return self._add_client(session, rebalance, static, protocols)

    @rule(target=clients, **client_settings)
    @precondition(lambda self: self.drawn_clients < MAX_CLIENTS)
    def new_client(
        self, session: int, rebalance: int, static: bool, protocols: tuple[str, ...]
    ) -> str:
        return self._add_client(session, rebalance, static, protocols)

    def _join_command(
        self, client: str, version: int, member_id: str, *, session_timeout_ms: int | None = None
    ) -> JoinGroup:
        """A static client joins with a version that carries its ``group.instance.id`` (v5+,
        KIP-345) where the broker has one: with an older one it would join as a dynamic member,
        which the dynamic clients already do, and the static member every FENCED_INSTANCE_ID
        cell needs would be rarer (measured: missing in 6 of 10 seeds of the ``ci`` profile)."""
        v = self.views[client]
        if v.group_instance_id is not None and version < INSTANCE_ID_SINCE["JoinGroup"]:
            version = (
                self.context.version_from("JoinGroup", INSTANCE_ID_SINCE["JoinGroup"], version)
                or version
            )
        command = v.join_group(
            version=version, member_id=member_id, session_timeout_ms=session_timeout_ms
        )
        for steer in sorted(self.context.steers):
            command = STEERS[steer](command)
        return command

    def _enter(self, client: str, version: int) -> None:
        """JoinGroup with what the client knows, and once more after ``MEMBER_ID_REQUIRED``
        (KIP-394), as a real consumer does. Each JoinGroup is a recorded command of its own."""
        for _ in range(2):
            if not self._idle(client):
                return
            before = self.views[client].member_id
            self._run(self._join_command(client, version, before))
            after = self.views[client]
            if not (
                self._idle(client) and before == "" and after.member_id and after.generation_id < 0
            ):
                return  # answered with a generation, parked, or refused: not a handshake

    @rule(client=clients, vi=VERSION_INDEX, fresh=st.booleans())
    def join(self, client: str, vi: int, fresh: bool) -> None:
        if self._busy(client):
            return
        v = self.views[client]
        version = self.context.version("JoinGroup", vi)
        member_id = NO_MEMBER_ID if (fresh and v.generation_id < 0) else v.member_id
        self._run(self._join_command(client, version, member_id))

    @rule(client=clients, vi=VERSION_INDEX)
    def join_and_sync(self, client: str, vi: int) -> None:
        """What a real consumer does to (re)enter the group: JoinGroup (again after
        MEMBER_ID_REQUIRED), then SyncGroup — each step a recorded command of its own."""
        version = self.context.version("JoinGroup", vi)
        for _ in range(2):
            if not self._idle(client):
                return
            before = self.views[client].generation_id
            self._run(self._join_command(client, version, self.views[client].member_id))
            if self.views[client].generation_id != before or not self._idle(client):
                break
        v = self.views[client]
        if self._idle(client) and v.generation_id >= 0:
            self._sync(client, version=self.context.version("SyncGroup", vi // 3), stale=False)

    @rule(
        plan=st.tuples(
            st.lists(clients, min_size=2, max_size=MAX_CLIENTS, unique=True),
            VERSION_INDEX,
            st.booleans(),
            st.sampled_from(("reconfigure", "stay", "use")),
        )
    )
    def form_group(self, plan: tuple[list[str], int, bool, str]) -> None:
        """A macro: the listed clients join until they share one generation, as consumers
        starting together do — every client joins (with the KIP-394 handshake); while some of
        them wait in the join phase, the others rejoin; then, if ``stable``, the leader and then
        every follower sync. With ``then="reconfigure"`` the last listed member then rejoins
        with one more protocol (a rolling reconfiguration that has reached one consumer: see
        ``rejoin``), so the group rebalances while the others do not rejoin yet, and learn of it
        from their heartbeats (REBALANCE_IN_PROGRESS: sent once the reorder window has passed,
        so the model cannot take them as handled before the rejoin). With ``then="use"`` the
        group is put to work in whatever state it reached (Stable, or CompletingRebalance
        without the syncs):
        every member heartbeats, the first commits an offset and reads it back, the last
        describes the group. Measured (``kgc bench mutants``, seed 1): without these, a broker
        whose Heartbeat never says REBALANCE_IN_PROGRESS, one that names Stable
        CompletingRebalance, and one that loses committed offsets all passed the default search.

        Each request is a recorded command of its own, so the trace replays and shrinks like
        any other; only the drawing is done once. Without this rule a group of two in a known
        generation costs a random search five or more well-ordered rules, and the parked
        rejoin of an existing member (whose session must not expire while it waits: Kafka's
        ``hasSatisfiedHeartbeat``) was out of reach of a 300-example search.

        The arguments come as one tuple on purpose: Hypothesis orders rules by (bundles written,
        number of arguments, name) and draws the first ones far more often (measured: with four
        arguments this rule ran in under 2 % of steps, the one-argument ``tick`` in 26 %); a
        group forming is the common case of real consumers, so it is drawn often."""
        members, vi, stable, then = plan
        names = list(dict.fromkeys(members))
        version = self.context.version("JoinGroup", vi)
        for c in names:
            self._enter(c, version)
        for _ in range(2):  # a rejoin may itself start another rebalance: at most two rounds
            for c in names:
                if all(self._idle(x) for x in names):
                    break  # the join phase completed: nobody is left waiting
                if self._idle(c) and self.views[c].member_id:
                    self._run(self._join_command(c, version, self.views[c].member_id))
        if stable:
            newest = max(self.views[c].generation_id for c in names)
            current = [c for c in names if self.views[c].generation_id == newest >= 0]
            current.sort(key=lambda c: not self.views[c].leader)  # the leader first
            sync_version = self.context.version("SyncGroup", vi // 3)
            for c in current:
                if self._idle(c):
                    self._sync(c, version=sync_version, stale=False)
        if then == "reconfigure":
            self._rejoin(names[-1], version, "add")
            # past the reorder window, so the heartbeats cannot have come before the rejoin
            self._run(Tick(ms=int(REORDER_WINDOW_MS) + 50))
            for c in names[:-1]:
                self._heartbeat_if_idle(c, vi)
        elif then == "use":
            self._use(names, vi)

    def _heartbeat_if_idle(self, client: str, vi: int) -> None:
        v = self.views[client]
        if self._idle(client) and v.member_id:
            version = self.context.version("Heartbeat", vi)
            self._run(v.heartbeat(version=version, generation="current"))

    def _use(self, names: list[str], vi: int) -> None:
        """``form_group``'s ``use``: heartbeats, a commit read back, a describe (docstring)."""
        for c in names:
            self._heartbeat_if_idle(c, vi)
        first, last = names[0], names[-1]
        if self._idle(first) and self.views[first].member_id:
            offsets = (TopicPartitionOffset(topic=self.topic, partition=0, offset=vi + 1),)
            version = self.context.version("OffsetCommit", vi)
            self._run(
                self.views[first].offset_commit(
                    version=version, offsets=offsets, generation="current"
                )
            )
        if self._idle(first):
            version = self.context.version("OffsetFetch", vi)
            partitions = (TopicPartition(topic=self.topic, partition=0),)
            self._run(self.views[first].offset_fetch(version=version, partitions=partitions))
        if self._idle(last):
            self._run(
                self.views[last].describe_groups(version=self.context.version("DescribeGroups", vi))
            )

    @rule(client=clients, vi=VERSION_INDEX, change=st.sampled_from(PROTOCOL_CHANGES))
    def rejoin(self, client: str, vi: int, change: str) -> None:
        """A member rejoins with its member id, its protocol list changed or not (a consumer
        whose assignors changed): ``add`` appends a protocol it lacks (or reverses its list),
        ``swap`` switches to another protocol set, ``same`` keeps it. In Kafka a changed list
        rebalances a CompletingRebalance or Stable group (``ClassicGroupMember.matches`` /
        ``classicGroupJoinExistingMember``; a Stable leader rebalances anyway), and the member's
        JoinGroup stays parked until the others rejoin or the rebalance timeout passes, while the
        members that do not rejoin keep heartbeating. If no protocol is shared with the group any
        more, the answer is ``INCONSISTENT_GROUP_PROTOCOL`` and the client keeps its old list."""
        self._rejoin(client, self.context.version("JoinGroup", vi), change)

    def _rejoin(self, client: str, version: int, change: str) -> None:
        if self._busy(client):
            return
        v = self.views[client]
        if not v.member_id:
            return
        old = v.protocols
        v.protocols = changed_protocols(old, change)
        result = self._run(self._join_command(client, version, v.member_id))
        if result is not None and any(
            r.error == INCONSISTENT_GROUP_PROTOCOL for _, r in result.received
        ):
            v.protocols = old

    @rule(client=clients, vi=VERSION_INDEX)
    def restart(self, client: str, vi: int) -> None:
        """The client process restarts: it forgets its member id and joins anew. A static member
        (JoinGroup v5+ with its ``group.instance.id``) *replaces* its old member id (KIP-345); the
        old id, remembered, is what ``zombie`` sends. A dynamic member becomes a second member
        while its old id lives on until its session expires."""
        if self._busy(client):
            return
        self.views[client].restart()
        self._enter(client, self.context.version("JoinGroup", vi))

    @rule(
        client=clients,
        vi=VERSION_INDEX,
        api=st.sampled_from(("Heartbeat", "SyncGroup", "OffsetCommit", "JoinGroup", "LeaveGroup")),
    )
    def zombie(self, client: str, vi: int, api: str) -> None:
        """A request carrying this client's ``group.instance.id`` with a member id that is not the
        instance's current one — the id it had before it restarted, else a stranger's: a fenced
        zombie (KIP-345). Kafka answers ``FENCED_INSTANCE_ID`` while the instance is a member, and
        ``UNKNOWN_MEMBER_ID`` when it is not (``ClassicGroup.validateMember``; LeaveGroup per
        member)."""
        if self._busy(client):
            return
        version = self.context.version_from(api, INSTANCE_ID_SINCE[api], vi)
        if version is None:  # the broker's release has no static membership for this request
            return
        command = self.views[client].zombie(
            api,
            version=version,
            offsets=(TopicPartitionOffset(topic=self.topic, partition=0, offset=vi),),
        )
        if command is not None:
            self._run(command)

    @rule(client=clients, vi=VERSION_INDEX, high=st.booleans())
    def join_invalid_session(self, client: str, vi: int, high: bool) -> None:
        """A JoinGroup whose session timeout is outside the broker's
        ``group.{min,max}.session.timeout.ms`` (1 ms, or Integer.MAX_VALUE ms): Kafka refuses it
        ``INVALID_SESSION_TIMEOUT`` before anything else. The model is configured from the
        broker's own bounds, so a broker whose bounds do admit it is still predicted."""
        if self._busy(client) or "session_timeout_in_bounds" in self.context.steers:
            return
        version = self.context.version("JoinGroup", vi)
        session = 2**31 - 1 if high else 1
        self._run(
            self._join_command(
                client, version, self.views[client].member_id, session_timeout_ms=session
            )
        )

    @rule(client=clients, vi=VERSION_INDEX, stale=st.booleans())
    def sync(self, client: str, vi: int, stale: bool) -> None:
        if self._busy(client):
            return
        if self.views[client].generation_id < 0 and not stale:
            return
        self._sync(client, version=self.context.version("SyncGroup", vi), stale=stale)

    def _sync(self, client: str, *, version: int, stale: bool) -> None:
        v = self.views[client]
        assignments = v.assignments(lambda members: assignment_for(members, self.topic))
        if assignments and not stale:
            self._check_assignment(v, assignments)
        generation = "stale" if stale else "current"
        self._run(v.sync_group(version=version, generation=generation, assignments=assignments))

    @rule(
        client=clients, vi=VERSION_INDEX, generation=st.sampled_from(("current", "stale", "none"))
    )
    def heartbeat(self, client: str, vi: int, generation: str) -> None:
        if self._busy(client):
            return
        version = self.context.version("Heartbeat", vi)
        self._run(self.views[client].heartbeat(version=version, generation=generation))

    @rule(client=clients, vi=VERSION_INDEX, who=st.sampled_from(("self", "stranger", "instance")))
    def leave(self, client: str, vi: int, who: str) -> None:
        """LeaveGroup for the client itself, for a stranger's member id, or — a static client
        only — by ``group.instance.id`` alone with an empty member id (KIP-345's admin removal:
        the instance's current member is removed)."""
        if self._busy(client):
            return
        version: int | None = self.context.version("LeaveGroup", vi)
        if who == "instance":  # by group.instance.id alone: LeaveGroup v3+ (KIP-345)
            version = self.context.version_from("LeaveGroup", INSTANCE_ID_SINCE["LeaveGroup"], vi)
        if version is None:
            return
        command = self.views[client].leave_group(version=version, who=who)
        if command is not None:
            self._run(command)

    @rule(
        client=clients,
        vi=VERSION_INDEX,
        generation=st.sampled_from(("current", "stale", "simple")),
        offset=st.integers(0, 1000),
    )
    def commit(self, client: str, vi: int, generation: str, offset: int) -> None:
        if self._busy(client):
            return
        offsets = (TopicPartitionOffset(topic=self.topic, partition=0, offset=offset),)
        version = self.context.version("OffsetCommit", vi)
        self._run(
            self.views[client].offset_commit(
                version=version, offsets=offsets, generation=generation
            )
        )

    @rule(client=clients, vi=VERSION_INDEX)
    def fetch(self, client: str, vi: int) -> None:
        if self._busy(client):
            return
        version = self.context.version("OffsetFetch", vi)
        partitions = (TopicPartition(topic=self.topic, partition=0),)
        self._run(self.views[client].offset_fetch(version=version, partitions=partitions))

    @rule(client=clients, vi=VERSION_INDEX)
    def describe(self, client: str, vi: int) -> None:
        if self._busy(client):
            return
        version = self.context.version("DescribeGroups", vi)
        self._run(self.views[client].describe_groups(version=version))

    @rule(client=clients, vi=VERSION_INDEX)
    def find_coordinator(self, client: str, vi: int) -> None:
        if self._busy(client):
            return
        version = self.context.version("FindCoordinator", vi)
        self._run(self.views[client].find_coordinator(version=version))

    @rule(
        kind=st.sampled_from(DEADLINE_KINDS),
        which=st.integers(min_value=0, max_value=3),
        side=st.sampled_from(("after", "before")),
    )
    def tick_to_deadline(self, kind: str, which: int, side: str) -> None:
        """Let time run to just before or just after a deadline the model has pending — of any
        kind, or of one kind: a member's session (``heartbeat``), the join phase, the sync
        deadline. Liveness rules are exercised on purpose, while the tick still lands clearly
        outside the checker's tolerance window (docs/design-notes.md, "Time")."""
        self._tick_to(kind=kind, which=which, side=side)

    @rule(client=clients, vi=VERSION_INDEX, kind=st.sampled_from(MISUSES))
    def misuse(self, client: str, vi: int, kind: str) -> None:
        """A request a buggy client sends (:data:`MISUSES`); Kafka's answers are the model's
        (``sync.py`` rules 1 and 3, ``join.py`` rule 4, ``offsets.py`` rule 3)."""
        if self._busy(client):
            return
        command = self._misuse_command(client, vi, kind)
        if command is not None:
            self._run(command)

    def _misuse_command(self, client: str, vi: int, kind: str) -> Request | None:
        v = self.views[client]
        ctx = self.context
        if kind.startswith("empty-group-"):
            return self._empty_group_command(client, vi, kind.removeprefix("empty-group-"))
        if kind.startswith("sync-"):
            version = ctx.version_from("SyncGroup", SYNC_PROTOCOL_SINCE, vi)
            if version is None:  # the broker's release has no SyncGroup v5
                return None
            sync = v.sync_group(version=version)
            if kind == "sync-no-protocol":
                return dataclasses.replace(sync, protocol_type=None, protocol_name=None)
            other = "roundrobin" if v.protocol_name == "range" else "range"
            return dataclasses.replace(sync, protocol_name=other)
        if kind.startswith("join-"):
            join = self._join_command(client, ctx.version("JoinGroup", vi), v.member_id)
            if kind == "join-no-protocols":
                if "join_names_a_protocol" in self.context.steers:
                    return None  # the steer: this implementation dies of it
                return dataclasses.replace(join, protocols=())
            if kind == "join-unknown-member":
                return dataclasses.replace(join, member_id=STRANGER)
            if kind == "join-oversized-member-id":  # Kafka bounds no member id's length
                return dataclasses.replace(join, member_id="m" * OVERSIZED_MEMBER_ID)
            if kind == "join-unreadable-subscription":  # the known bug of 2.7 - 4.1 and 4.3
                metadata = UNREADABLE_SUBSCRIPTIONS[vi % len(UNREADABLE_SUBSCRIPTIONS)]
                protocols = tuple(dataclasses.replace(p, metadata=metadata) for p in join.protocols)
                return dataclasses.replace(join, protocols=protocols)
            return dataclasses.replace(join, protocol_type="")
        if kind == "commit-future-generation":
            offsets = (TopicPartitionOffset(topic=self.topic, partition=0, offset=vi),)
            commit = v.offset_commit(
                version=ctx.version("OffsetCommit", vi), offsets=offsets, generation="current"
            )
            return dataclasses.replace(commit, generation_id=max(v.generation_id, 0) + 1)
        # with a second partition that commits: a simple commit whose every partition fails
        # creates its group in Kafka 4.x without writing a record, so the group is there for the
        # next write and not for a read (DescribeGroups v6: GROUP_ID_NOT_FOUND, then a commit:
        # UNKNOWN_MEMBER_ID; found by ``kgc bench workers``, seed 12, on 4.3.1); not modelled
        offsets = (
            TopicPartitionOffset(
                topic=self.topic, partition=0, offset=vi, metadata="m" * OVERSIZED_METADATA
            ),
            TopicPartitionOffset(topic=self.topic, partition=1, offset=vi),
        )
        return v.offset_commit(
            version=ctx.version("OffsetCommit", vi), offsets=offsets, generation="current"
        )

    @rule(
        plan=st.tuples(
            VERSION_INDEX, st.integers(min_value=0, max_value=7), st.sampled_from(AIM_STEPS)
        )
    )
    def aim(self, plan: tuple[int, int, int]) -> None:
        """Coverage-guided: of the requests the other rules could send now, send the one whose
        group-state × request × error cell the model predicts has been reached least (see
        ``EngineMachine._aim``). The candidates are exactly what those rules would build, with
        their guards, so this steers the search without sending anything new; and again, up to
        :data:`AIM_STEPS` requests while each serves coverage. One tuple argument, like
        ``form_group``, so Hypothesis draws it often."""
        vi, pick, steps = plan
        for _ in range(steps):
            if self.failed_check is not None:  # the example is over: build no more candidates
                break
            if not self._aim(self._candidates(vi), pick, lambda: self._version_variants(vi)):
                break

    def _version_variants(self, vi: int) -> list[tuple[Aimed, Callable[[], object]]]:
        """The candidates at every other version index: the same requests at the other
        versions the run sends, for the input cells ``_aim`` steers to."""
        most = max((len(v) for v in self.context.versions.values()), default=1)
        return [c for k in range(1, most) for c in self._candidates(vi + k)]

    def _empty_group_command(self, client: str, vi: int, api: str) -> Request | None:
        """The client's own ``api`` request, sent with the group id "" (at every version the
        target speaks). Only JoinGroup goes to a line whose other requests would look the group
        "" up (``empty_group.py`` rule 3): not a group the suite may touch."""
        if "group_id_never_empty" in self.context.steers:
            return None  # the steer: this implementation takes "" for a group of its own
        if api != "JoinGroup" and _looks_up_empty_group(self.engine.model):
            return None
        v = self.views[client]
        version = self.context.version(api, vi)
        command: Request | None
        if api == "JoinGroup":
            command = v.join_group(version=version, member_id=v.member_id)
            for steer in sorted(self.context.steers):
                command = STEERS[steer](command)
        elif api == "SyncGroup":
            command = v.sync_group(version=version)
        elif api == "Heartbeat":
            command = v.heartbeat(version=version)
        else:
            command = v.leave_group(version=version)
        return None if command is None else dataclasses.replace(command, empty_group_id=True)

    def _candidates(self, vi: int) -> list[tuple[Aimed, Callable[[], object]]]:
        out: list[tuple[Aimed, Callable[[], object]]] = []
        ctx = self.context

        def send(command: Request | None) -> None:
            if command is not None:
                out.append((command, lambda: self._run(command)))

        offsets = (TopicPartitionOffset(topic=self.topic, partition=0, offset=vi),)
        for c, v in self.views.items():
            if not self._idle(c):
                continue
            join = ctx.version("JoinGroup", vi)
            send(self._join_command(c, join, v.member_id))
            if v.generation_id < 0 and v.member_id:
                send(self._join_command(c, join, NO_MEMBER_ID))
            if "session_timeout_in_bounds" not in ctx.steers:
                send(self._join_command(c, join, v.member_id, session_timeout_ms=1))
            if v.member_id:
                for change in ("add", "swap"):
                    old = v.protocols
                    v.protocols = changed_protocols(old, change)
                    command = self._join_command(c, join, v.member_id)
                    v.protocols = old
                    out.append(
                        (command, lambda c=c, change=change, j=join: self._rejoin(c, j, change))
                    )
            sync = ctx.version("SyncGroup", vi)
            if v.generation_id >= 0:
                assignments = v.assignments(lambda members: assignment_for(members, self.topic))
                out.append(
                    (
                        v.sync_group(version=sync, assignments=assignments),
                        lambda c=c, v_=sync: self._sync(c, version=v_, stale=False),
                    )
                )
            send(v.sync_group(version=sync, generation="stale"))
            for generation in ("current", "stale", "none"):
                send(v.heartbeat(version=ctx.version("Heartbeat", vi), generation=generation))
            for who in LEAVERS:
                version = ctx.version("LeaveGroup", vi)
                if who == "instance":
                    version = ctx.version_from("LeaveGroup", INSTANCE_ID_SINCE["LeaveGroup"], vi)
                if version is not None:
                    send(v.leave_group(version=version, who=who))
            for generation in ("current", "stale", "simple"):
                send(
                    v.offset_commit(
                        version=ctx.version("OffsetCommit", vi),
                        offsets=offsets,
                        generation=generation,
                    )
                )
            partitions = (TopicPartition(topic=self.topic, partition=0),)
            send(v.offset_fetch(version=ctx.version("OffsetFetch", vi), partitions=partitions))
            for version in ctx.versions.get("DescribeGroups") or DEFAULT_VERSIONS["DescribeGroups"]:
                send(v.describe_groups(version=version))
            send(v.find_coordinator(version=ctx.version("FindCoordinator", vi)))
            for api in ZOMBIE_APIS:
                version = ctx.version_from(api, INSTANCE_ID_SINCE[api], vi)
                if version is not None:
                    send(v.zombie(api, version=version, offsets=offsets))
            for kind in MISUSES:
                for i in range(AIM_VERSIONS):
                    send(self._misuse_command(c, vi + i, kind))
            out.extend(self._pending_candidates(c, vi))
        out.extend(self._parked_past_session())
        if len(self.views) < MAX_CLIENTS:
            # a consumer more: what its first JoinGroup would reach (GROUP_MAX_SIZE_REACHED in a
            # full group, MEMBER_ID_REQUIRED in any other); it is the ``aim`` rule's own client
            newcomer = ClientView(
                client=f"c{len(self.views) + 1}",
                session_timeout_ms=SESSION_TIMEOUTS_MS[-1] * ctx.time_scale,
                rebalance_timeout_ms=REBALANCE_TIMEOUTS_MS[-1] * ctx.time_scale,
                group_instance_id=None,
                protocols=PROTOCOL_SETS[0],
                metadata=subscription([self.topic]),
            )
            join = ctx.version("JoinGroup", vi)
            out.append((newcomer.join_group(version=join), lambda: self._newcomer(join)))
        return out

    def _pending_candidates(self, client: str, vi: int) -> list[tuple[Aimed, Callable[[], object]]]:
        """A dynamic client outside the group becomes a pending member (a JoinGroup v4+ with no
        member id: MEMBER_ID_REQUIRED) and then rejoins or leaves under that id at the drawn
        version: the input cells ``pending member`` (``model/classic/inputs.py``), which no one
        request reaches (``_enter`` rejoins at once, as a consumer does)."""
        v = self.views[client]
        ctx = self.context
        handshake = ctx.version_from("JoinGroup", KNOWN_MEMBER_ID_SINCE, vi)
        if v.group_instance_id is not None or v.generation_id >= 0 or handshake is None:
            return []
        out: list[tuple[Aimed, Callable[[], object]]] = []
        for api in ("JoinGroup", "LeaveGroup"):
            version = ctx.version(api, vi)
            step = AimInput(cell=(api, version, PENDING_MEMBER), client=client)
            out.append((step, lambda a=api, v_=version: self._as_pending(client, a, handshake, v_)))
        return out

    def _as_pending(self, client: str, api: str, handshake: int, version: int) -> None:
        """``_pending_candidates``' step: the handshake at ``handshake``, then ``api``."""
        self._run(self._join_command(client, handshake, NO_MEMBER_ID))
        v = self.views[client]
        if not (self._idle(client) and v.member_id and v.generation_id < 0):
            return  # not made pending (a full group, a broker without the handshake)
        if api == "JoinGroup":
            self._run(self._join_command(client, version, v.member_id))
            return
        command = v.leave_group(version=version, who="self")
        if command is not None:
            self._run(command)

    def _parked_past_session(self) -> list[tuple[AimGoal, Callable[[], object]]]:
        """Let time run past the session deadline of a member whose request is parked (each
        such client's first deadline within the tick horizon), to see it kept alive. The goal
        names the parked request's type and how many other clients are idle members, so each
        situation is aimed at once: one of them alone rarely exposes a broker that expires a
        parked member (the rejoin of one member while another does not rejoin does)."""
        waiting = [c for c in self.views if not self._idle(c)]
        if not waiting:
            return []
        now = self.target.now_ms()
        horizon = now + MAX_DEADLINE_TICK_MS * self.context.time_scale
        unanswered = {
            r.client: r.type
            for rid, r in self.engine.requests.items()
            if rid not in self.engine.answered
        }
        idle_members = sum(1 for c, v in self.views.items() if self._idle(c) and v.member_id)
        late = self.engine.checker.config.late_ms
        out: list[tuple[AimGoal, Callable[[], object]]] = []
        for client in waiting:
            deadlines = sorted(
                d
                for state in self.engine.checker.states
                for d, kind, key in self.engine.model.timers(state)
                if kind == "heartbeat" and key.rpartition("-")[0] == client and now < d <= horizon
            )
            if not deadlines:
                continue
            goal = AimGoal(
                (
                    "Tick",
                    f"past the session of a member whose {unanswered.get(client, 'request')} "
                    f"waits, {idle_members} other member(s) idle",
                )
            )
            ms = int(deadlines[0] + late + 60 - now)
            out.append((goal, lambda ms=ms: self._run(Tick(ms=ms))))
        return out

    def _newcomer(self, version: int) -> None:
        self.drawn_clients -= 1  # ``_add_client`` counts it; ``aim`` is not a drawn client
        name = self._add_client(
            SESSION_TIMEOUTS_MS[-1], REBALANCE_TIMEOUTS_MS[-1], False, PROTOCOL_SETS[0]
        )
        self._enter(name, version)


# ListGroups filters the rule draws (states v4+, types v5+; Kafka compares them ignoring case)
LIST_STATE_FILTERS: tuple[tuple[str, ...], ...] = (
    (),
    ("Stable",),
    ("empty", "PreparingRebalance"),
    ("CompletingRebalance",),
)
LIST_TYPE_FILTERS: tuple[tuple[str, ...], ...] = ((), ("classic",), ("Consumer",))


class ListingGroupMachine(GroupMachine):
    """:class:`GroupMachine` with the opt-in ListGroups rule (``model/requests.py``). A rule of
    its own class, not of ``GroupMachine``: Hypothesis draws a rule by its index among all the
    machine's rules, so one more rule would change every seeded search's draws (the quality
    tests and ``tests/properties/test_search_reach.py`` depend on them)."""

    @rule(
        client=GroupMachine.clients,
        vi=VERSION_INDEX,
        states=st.sampled_from(LIST_STATE_FILTERS),
        types=st.sampled_from(LIST_TYPE_FILTERS),
    )
    def list_groups(
        self, client: str, vi: int, states: tuple[str, ...], types: tuple[str, ...]
    ) -> None:
        """ListGroups, filtered or not; the answer is checked for the run's own group
        (``model/classic/list_groups.py``)."""
        if self._busy(client):
            return
        version = self.context.version("ListGroups", vi)
        command = self.views[client].list_groups(
            version=version, states_filter=states, types_filter=types
        )
        self._run(command)


# which partitions of the run's topic ``delete`` names (by its version index): one, two, all
OFFSET_DELETE_PARTITIONS: tuple[tuple[int, ...], ...] = (
    (0,),
    (0, 1),
    tuple(range(TOPIC_PARTITIONS)),
)
# what ``delete`` deletes
DELETIONS = ("group", "offsets", "both")
# how ``vacate`` ends once every idle member has left: OffsetDelete of every partition then
# DeleteGroups (first: ``sampled_from`` draws it most, and it is the likeliest way to an
# OffsetDelete on an existing Empty group), DeleteGroups alone, then an OffsetFetch, or twice
VACATE_ENDINGS = (
    "delete-offsets-then-group",
    "delete",
    "delete-then-fetch",
    "delete-twice",
)


class DeletingGroupMachine(GroupMachine):
    """:class:`GroupMachine` with the opt-in DeleteGroups and OffsetDelete rules
    (``model/requests.py``; the model's ``classic/delete.py``), each sent only where
    ``context.opt_in`` names its type. A class of its own for the reason
    :class:`ListingGroupMachine` is one: the default search's draws stay as they are.

    Where the answers differ: DeleteGroups succeeds only on an Empty group (``vacate`` makes it
    so: every idle member leaves first), is ``NON_EMPTY_GROUP`` while members remain (``delete``
    drawn in a live group, ``vacate``'s early tries, a member whose join is parked) and
    ``GROUP_ID_NOT_FOUND`` before the group exists or after it was deleted (``delete-twice``).
    OffsetDelete is ``GROUP_SUBSCRIBED_TO_TOPIC`` for the run's topic while members exist (every
    client subscribes to it), ``NONE`` on an Empty group (``delete-offsets-then-group``), and
    ``GROUP_ID_NOT_FOUND`` with no group."""

    def _opted(self, api: str) -> bool:
        return api in self.context.opt_in

    def _delete_group(self, client: str, vi: int) -> None:
        if self._opted("DeleteGroups") and self._idle(client):
            version = self.context.version("DeleteGroups", vi)
            self._run(self.views[client].delete_groups(version=version))

    def _delete_offsets(self, client: str, which: tuple[int, ...]) -> None:
        if self._opted("OffsetDelete") and self._idle(client):
            partitions = tuple(TopicPartition(topic=self.topic, partition=p) for p in which)
            version = self.context.version("OffsetDelete", 0)
            self._run(self.views[client].offset_delete(version=version, partitions=partitions))

    @rule(plan=st.tuples(VERSION_INDEX, st.sampled_from(DELETIONS)))
    def delete(self, plan: tuple[int, str]) -> None:
        """An admin (the first idle client) deletes, whatever the group's state: the group
        (``DeleteGroups``), the offsets of one, two or every partition of the run's topic
        (``OffsetDelete``), or both. One tuple argument so it is drawn often (``form_group``)."""
        vi, what = plan
        admin = self._admin()
        if admin is None:
            return
        if what != "group":
            self._delete_offsets(
                admin, OFFSET_DELETE_PARTITIONS[vi % len(OFFSET_DELETE_PARTITIONS)]
            )
        if what != "offsets":
            self._delete_group(admin, vi)

    def _admin(self) -> str | None:
        return next((c for c in sorted(self.views) if self._idle(c)), None)

    @rule(plan=st.tuples(VERSION_INDEX, st.booleans(), st.sampled_from(VACATE_ENDINGS)))
    def vacate(self, plan: tuple[int, bool, str]) -> None:
        """A macro: if ``early``, an admin first tries to delete the group's offsets and the
        group while its members are still there (as an operator who did not stop the consumers
        does); then every idle member leaves (as consumers shutting down do), and the admin
        deletes the group (``VACATE_ENDINGS``: its offsets first, the offsets read back after, or
        the delete sent twice). One tuple argument so it is drawn often (``form_group``)."""
        vi, early, ending = plan
        if early:
            admin = self._admin()
            if admin is not None:
                self._delete_offsets(admin, OFFSET_DELETE_PARTITIONS[-1])
                self._delete_group(admin, vi)
        for name in sorted(self.views):
            view = self.views[name]
            if self._idle(name) and view.member_id:
                version = self.context.version("LeaveGroup", vi)
                command = view.leave_group(version=version, who="self")
                if command is not None:
                    self._run(command)
        admin = self._admin()
        if admin is None:
            return
        if ending == "delete-offsets-then-group":
            self._delete_offsets(admin, OFFSET_DELETE_PARTITIONS[-1])
        self._delete_group(admin, vi)
        if ending == "delete-then-fetch" and self._idle(admin):
            version = self.context.version("OffsetFetch", vi)
            partitions = (TopicPartition(topic=self.topic, partition=0),)
            self._run(self.views[admin].offset_fetch(version=version, partitions=partitions))
        if ending == "delete-twice":
            self._delete_group(admin, vi + 1)


# whose member fields ``transact`` puts in a TxnOffsetCommit: the member's real generation, a stale
# one, an unknown member at the real generation, none (a producer outside the group: generation -1)
TXN_COMMITTERS = ("current", "stale", "unknown", "none")
# how ``transact`` ends its transaction: EndTxn commit or abort, or a new InitProducerId (a
# restarted producer) that fences the old epoch, whose requests then follow as a zombie's
TXN_ENDINGS = ("commit", "abort", "reinit")
# one step of a transaction on its own (``txn_step``), in any order the search draws
TXN_STEPS = (
    "commit-current",
    "fetch-stable",
    "init",
    "add",
    "commit-stale",
    "commit-unknown",
    "commit-none",
    "end-commit",
    "end-abort",
    "fetch",
    "zombie",
)
TXN_RETRIES = 10  # InitProducerId retries after CONCURRENT_TRANSACTIONS, TXN_BACKOFF_MS apart
TXN_BACKOFF_MS = 100


class TransactionalMachine(GroupMachine):
    """:class:`GroupMachine` with the opt-in transactional offsets path (``model/requests.py``;
    the model's ``classic/transactions.py``): one transactional producer (client ``p1``,
    transactional id ``t1``) commits offsets for the run's group in transactions, with the member
    fields of one of the group's consumers, as an exactly-once consume-transform-produce loop
    does, while the consumers keep joining, syncing and committing. A class of its own for the
    reason :class:`ListingGroupMachine` is one.

    Where the answers differ: a TxnOffsetCommit with the member's generation is ``NONE`` in
    CompletingRebalance too (a plain commit is ``REBALANCE_IN_PROGRESS``), a stale one
    ``ILLEGAL_GENERATION``, an unknown member ``UNKNOWN_MEMBER_ID``; before AddOffsetsToTxn below
    v5 ``INVALID_TXN_STATE``/``TRANSACTION_ABORTABLE``; an OffsetFetch with ``require_stable``
    ``UNSTABLE_OFFSET_COMMIT`` until the marker, which EndTxn's answer comes before; a new
    InitProducerId during a transaction ``CONCURRENT_TRANSACTIONS``, then the old epoch
    ``PRODUCER_FENCED``/``INVALID_PRODUCER_EPOCH``."""

    def __init__(self) -> None:
        super().__init__()
        self.producer = ProducerView(client="p1", transactional_id="t1")

    def _learn(self, request: Any, response: Response) -> None:
        if request.client == self.producer.client:
            self.producer.learn(response)
            return
        super()._learn(request, response)

    def _send(self, command: Request) -> list[Response]:
        """Run one of the producer's commands; its answers."""
        if not self._idle(self.producer.client):
            return []
        result = self._run(command)
        return [] if result is None else [r for _, r in result.received]

    def _init(self, vi: int) -> None:
        """InitProducerId, retried as a producer retries CONCURRENT_TRANSACTIONS."""
        version = self.context.version("InitProducerId", vi)
        for _ in range(TXN_RETRIES):
            answers = self._send(self.producer.init_producer_id(version=version))
            if not any(a.error == CONCURRENT_TRANSACTIONS for a in answers):
                return
            self._run(Tick(ms=TXN_BACKOFF_MS))

    def _add(self, vi: int, epoch: str = "current") -> None:
        version = self.context.version("AddOffsetsToTxn", vi)
        self._send(self.producer.add_offsets_to_txn(version=version, epoch=epoch))

    def _committer(self, who: str) -> tuple[str, int, str | None]:
        """The member fields ``who`` (:data:`TXN_COMMITTERS`) names: a consumer of the group
        that has a generation, or none."""
        member = next(
            (v for _, v in sorted(self.views.items()) if v.member_id and v.generation_id >= 0),
            None,
        )
        if member is None or who == "none":
            return NO_MEMBER_ID, NO_GENERATION, None
        instance = member.group_instance_id
        if who == "stale":
            return member.member_id, member.generation_id + 1, instance
        if who == "unknown":
            return f"{member.client}-99", member.generation_id, None
        return member.member_id, member.generation_id, instance

    def _txn_commit(self, vi: int, who: str, epoch: str = "current") -> None:
        member_id, generation, instance = self._committer(who)
        offsets = (TopicPartitionOffset(topic=self.topic, partition=0, offset=100 + vi),)
        command = self.producer.txn_offset_commit(
            version=self.context.version("TxnOffsetCommit", vi),
            offsets=offsets,
            member_id=member_id,
            generation_id=generation,
            group_instance_id=instance,
            epoch=epoch,
        )
        self._send(command)

    def _fetch(self, vi: int, stable: bool) -> None:
        """OffsetFetch of partition 0 by the producer's client, ``require_stable`` at v7+."""
        version = self.context.version_from("OffsetFetch", 7, vi) if stable else None
        if version is None:
            version = self.context.version("OffsetFetch", vi)
        partitions = (TopicPartition(topic=self.topic, partition=0),)
        self._send(
            OffsetFetch(
                client=self.producer.client,
                partitions=partitions,
                version=version,
                require_stable=stable and version >= 7,
            )
        )

    def _end(self, vi: int, committed: bool, epoch: str = "current") -> None:
        version = self.context.version("EndTxn", vi)
        self._send(self.producer.end_txn(version=version, committed=committed, epoch=epoch))

    def _zombie(self, vi: int) -> None:
        """The fenced epoch's requests, as the old producer instance still sends them."""
        self._add(vi, epoch="fenced")
        self._txn_commit(vi, "current", epoch="fenced")
        self._end(vi, committed=True, epoch="fenced")

    @rule(
        plan=st.tuples(
            VERSION_INDEX,
            st.sampled_from(TXN_COMMITTERS),
            st.sampled_from(TXN_ENDINGS),
            st.booleans(),
        )
    )
    def transact(self, plan: tuple[int, str, str, bool]) -> None:
        """A macro: one transaction of the producer from start to end — InitProducerId (if it
        has no producer id yet, or ``fresh``), AddOffsetsToTxn, a TxnOffsetCommit with the member
        fields ``committer`` names, an OffsetFetch with ``require_stable`` while the offsets are
        pending, the ending (:data:`TXN_ENDINGS`), and right after it a stable fetch, inside the
        markers' window, then one after a pause. One tuple argument so it is drawn often
        (``form_group``)."""
        vi, committer, ending, fresh = plan
        if self.producer.producer_id < 0 or fresh:
            self._init(vi)
        self._add(vi)
        self._txn_commit(vi, committer)
        self._fetch(vi, stable=True)
        if ending == "reinit":
            self._init(vi)
            self._zombie(vi)
        else:
            self._end(vi, committed=ending == "commit")
            self._fetch(vi, stable=True)
        self._run(Tick(ms=TXN_BACKOFF_MS))
        self._fetch(vi, stable=True)

    @rule(plan=st.tuples(VERSION_INDEX, st.sampled_from(TXN_STEPS)))
    def txn_step(self, plan: tuple[int, str]) -> None:
        """One step of the transactional path on its own (:data:`TXN_STEPS`), so the search also
        draws them out of order: a TxnOffsetCommit before AddOffsetsToTxn, EndTxn of an empty or
        ended transaction, a fetch with or without ``require_stable``."""
        vi, step = plan
        if self.producer.producer_id < 0 and step not in ("fetch", "fetch-stable"):
            self._init(vi)
            return
        if step == "init":
            self._init(vi)
        elif step == "add":
            self._add(vi)
        elif step.startswith("commit-"):
            self._txn_commit(vi, step.removeprefix("commit-"))
        elif step.startswith("end-"):
            self._end(vi, committed=step == "end-commit")
        elif step == "zombie":
            self._zombie(vi)
        else:
            self._fetch(vi, stable=step == "fetch-stable")


# the machines of the opt-in request types (``model/requests.py``), in the order their rules are
# added to the classic machine
# what ``operator_acl`` may send right after a denial: the requests of the default search each
# permission guards (``model/classic/authorization.py`` A1-A5; DELETE guards opt-in requests only)
ACL_PROBE_RULES: dict[str, Callable[[Any, str, int], None]] = {
    "join": lambda m, c, vi: m.join(c, vi, False),
    "sync": lambda m, c, vi: m.sync(c, vi, False),
    "heartbeat": lambda m, c, vi: m.heartbeat(c, vi, "current"),
    "leave": lambda m, c, vi: m.leave(c, vi, "self"),
    "commit": lambda m, c, vi: m.commit(c, vi, "current", vi),
    "fetch": lambda m, c, vi: m.fetch(c, vi),
    "describe": lambda m, c, vi: m.describe(c, vi),
    "find": lambda m, c, vi: m.find_coordinator(c, vi),
}
ACL_GUARDS: dict[tuple[str, str], tuple[str, ...]] = {
    ("group", "READ"): ("heartbeat", "join", "sync", "leave", "commit"),
    ("group", "DESCRIBE"): ("fetch", "describe", "find"),
    ("group", "DELETE"): (),
    ("topic", "READ"): ("commit",),
    ("topic", "DESCRIBE"): ("fetch",),
}
# the denial and the request that reach each authorization cell (``engine/coverage.py``)
ACL_AIMS: dict[tuple[str, str], tuple[AclChange, str]] = {
    **{
        (request, "GROUP_AUTHORIZATION_FAILED"): (AclChange(True, "group", "READ"), probe)
        for request, probe in (
            ("JoinGroup", "join"),
            ("SyncGroup", "sync"),
            ("Heartbeat", "heartbeat"),
            ("LeaveGroup", "leave"),
            ("OffsetCommit", "commit"),
        )
    },
    **{
        (request, "GROUP_AUTHORIZATION_FAILED"): (AclChange(True, "group", "DESCRIBE"), probe)
        for request, probe in (
            ("OffsetFetch", "fetch"),
            ("DescribeGroups", "describe"),
            ("FindCoordinator", "find"),
        )
    },
    ("OffsetCommit", "TOPIC_AUTHORIZATION_FAILED"): (AclChange(True, "topic", "READ"), "commit"),
    ("OffsetFetch", "TOPIC_AUTHORIZATION_FAILED"): (AclChange(True, "topic", "DESCRIBE"), "fetch"),
}

# every ACL action the search draws: deny, then allow again, each permission a group request of
# the run checks (``model/classic/authorization.py`` DENIABLE)
ACL_CHANGES: tuple[AclChange, ...] = tuple(
    AclChange(deny=deny, resource=resource, operation=operation)
    for deny in (True, False)
    for resource, operation in DENIABLE
)


class AuthorizingGroupMachine(GroupMachine):
    """:class:`GroupMachine` with the ``acl`` rule: an operator denies the run's principal one
    operation on the run's group or topic, or allows it again, between two requests; every
    request from then on is judged by what the principal may do
    (``model/classic/authorization.py``). Only where the run may change its principal's ACLs
    (``SuiteContext.acl_actions``: a secured broker kgc started); a class of its own for the
    reason :class:`ListingGroupMachine` is one."""

    # only once a client is drawn: Hypothesis's first examples draw the first rule valid, in
    # name order, and a run of ACL actions on a group nobody uses reaches nothing
    @rule(
        change=st.sampled_from(ACL_CHANGES),
        client=GroupMachine.clients,
        vi=VERSION_INDEX,
        which=st.integers(min_value=0, max_value=9),
        restore=st.booleans(),
        aimed=st.booleans(),
    )
    @precondition(lambda self: self.drawn_clients > 0)
    def operator_acl(
        self, change: AclChange, client: str, vi: int, which: int, restore: bool, aimed: bool
    ) -> None:
        """The action; after a denial, one request of ``client`` that the permission guards
        (``ACL_GUARDS``, the ``which``-th), so the denial meets a request it refuses in the same
        step, and with ``restore`` the permission back at once. ``aimed``: the denial and the
        request of the ``which``-th authorization cell no earlier example reached, instead of
        the drawn ones (as ``aim`` steers to state cells)."""
        guarded = ACL_GUARDS[(change.resource, change.operation)] if change.deny else ()
        probe = guarded[which % len(guarded)] if guarded else None
        if aimed:  # the ``which``-th authorization cell not reached before this example
            open_cells = [
                c for c in AUTHORIZATION_CELLS if c not in self._authorization_reached()
            ] or list(AUTHORIZATION_CELLS)
            change, probe = ACL_AIMS[open_cells[which % len(open_cells)]]
        self._acl(change)
        if probe is not None and self.failed_check is None:
            ACL_PROBE_RULES[probe](self, client, vi)
        if change.deny and restore and self.failed_check is None:
            self._acl(replace(change, deny=False))

    def _authorization_reached(self) -> set[tuple[str, str]]:
        """The authorization cells reached before this example (``aim``'s frozen basis, so a
        replay of a failing example steers as it did)."""
        return {(r, e) for (_, r, e), n in self.aim_basis.items() if n and (r, e) in ACL_AIMS}

    def _acl(self, change: AclChange) -> None:
        if self.failed_check is not None:
            return
        self._last_sender = None
        self.context.acls += 1

        def perform(action: str, node: int) -> None:
            self.target.alter_acl(action)

        try:
            result = self.engine.inject(FaultStep(action=change.action, node=0), perform)
        except TargetError as exc:
            self.failed_check = "connection"
            self.failure_message = f"the target did not carry out an ACL action: {exc}"
            if self.context.connection_failure is None:
                self.context.connection_failure = self.failure_message
            return
        self._judge(result)


OPT_IN_MACHINES: tuple[tuple[frozenset[str], type[GroupMachine]], ...] = (
    (frozenset({"ListGroups"}), ListingGroupMachine),
    (frozenset({"DeleteGroups", "OffsetDelete"}), DeletingGroupMachine),
    (frozenset(TRANSACTIONAL_REQUESTS), TransactionalMachine),
)


def machine_for(context: SuiteContext) -> type[GroupMachine]:
    """A concrete machine class bound to ``context`` (Hypothesis instantiates it per example):
    with the rules of each opt-in request type ``context.opt_in`` names (``OPT_IN_MACHINES``),
    else the classic machine alone."""
    bases = tuple(m for apis, m in OPT_IN_MACHINES if apis & context.opt_in) or (GroupMachine,)
    if context.acl_actions:
        bases = (AuthorizingGroupMachine, *(b for b in bases if b is not GroupMachine))
    return type("GroupMachineUnderTest", bases, {"context": context})


def search(
    machine: type[EngineMachine],
    *,
    examples: int,
    steps: int = 30,
    seed: int | None = None,
    shrink: bool = True,
) -> None:
    """Run ``machine`` (from ``machine_for`` or ``consumer_machine_for``) for ``examples`` examples
    of up to ``steps`` steps, with no deadline, no example database and no too-slow health check:
    a search kgc drives itself on the model's own target. ``seed`` fixes Hypothesis's draws;
    ``shrink=False`` raises the first failure as found (for a caller that asks only whether
    there is one)."""
    if seed is not None:
        machine._hypothesis_internal_use_seed = seed  # type: ignore[attr-defined]
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=examples,
            stateful_step_count=steps,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
            database=None,
            phases=tuple(Phase) if shrink else (Phase.explicit, Phase.reuse, Phase.generate),
        ),
    )
