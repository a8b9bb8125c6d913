"""The differential state machine: Hypothesis generates group-protocol command sequences.

Each rule builds one command from what the sending client knows (its member id, its generation,
whether it leads — exactly what a real client would know from the responses it got), sometimes
deliberately wrong (a stale generation, a stranger's member id), and hands it to the
:class:`~kgc.properties.engine.Engine`, which sends it to the target and checks every response
against
the reference model. Invariants after each step hold on the *target's* observations alone, so they
catch a broker bug even where the model has none to compare.

The machine is independent of any broker: a front end supplies a :class:`SuiteContext` that opens a
fresh target for each example (a fresh group id on a real broker; a :class:`ModelTarget` in the
model-only tests). See ``kgc.conformance.suite`` for the broker front end.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)
from kgc.model.checker import CheckerConfig, Model
from kgc.model.commands import (
    NO_GENERATION,
    UNKNOWN_MEMBER_ID,
    Assignment,
    DescribeGroups,
    FindCoordinator,
    Heartbeat,
    JoinGroup,
    JoinGroupResponse,
    LeaveGroup,
    MemberIdentity,
    OffsetCommit,
    OffsetFetch,
    Protocol,
    Response,
    SyncGroup,
    Tick,
    TopicPartition,
    TopicPartitionOffset,
)
from kgc.properties.coverage import cells_of
from kgc.properties.engine import Engine, EngineConfig, StepResult
from kgc.properties.target import Target
from kgc.properties.traces import Trace, new_manifest, render, result_of

MAX_CLIENTS = 4
VERSION_INDEX = st.integers(min_value=0, max_value=11)
TOPIC_PARTITIONS = 3  # partitions of the suite's topic, created by the front end

# Ticks either stay well inside every timeout or clear it; deadlines fall in the tolerance window
# rarely, and the checker allows both outcomes there.
TICKS_MS = (5, 60, 250, 700, 1300, 2600)
MAX_DEADLINE_TICK_MS = 3000  # tick_to_deadline never waits longer (timeouts here are <= 2000)
SESSION_TIMEOUTS_MS = (1000, 2000)
REBALANCE_TIMEOUTS_MS = (1000, 2000)
PROTOCOL_SETS: tuple[tuple[str, ...], ...] = (("range",), ("range", "roundrobin"), ("roundrobin",))


class DivergenceError(AssertionError):
    """The target answered something the model does not allow (message: the readable trace)."""


class InvariantError(AssertionError):
    """The target's own answers contradict each other (no model involved)."""


@dataclass(slots=True)
class ClientView:
    """What one client knows, learned only from its own responses."""

    client: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    group_instance_id: str | None
    protocols: tuple[str, ...]
    member_id: str = UNKNOWN_MEMBER_ID
    generation_id: int = NO_GENERATION
    protocol_name: str | None = None
    leader: bool = False
    members: tuple[str, ...] = ()
    subscriptions: tuple[tuple[str, str], ...] = ()  # (member id, metadata) from the leader's join


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
    manifest_extra: dict[str, Any] = field(default_factory=dict)
    on_example_end: Callable[[Any], None] | None = None
    # filled as examples run
    examples: int = 0
    commands: int = 0
    ticks: int = 0
    coverage: dict[tuple[str, str, str], int] = field(default_factory=dict)
    new_group_id: Callable[[], str] | None = None
    topic: str = "kgc-suite"  # created by the front end with TOPIC_PARTITIONS partitions
    first_failure_at: float | None = None
    assignment_checks: int = 0
    tick_ms: int = 0

    def version(self, api: str, index: int) -> int:
        """The ``index``-th exercised version of ``api`` (wrapping). Versions are drawn as plain
        rule arguments, never inside a rule, so what Hypothesis draws cannot depend on what the
        broker answered (that would make replays "flaky" in the strategy, not in the broker)."""
        choices = self.versions.get(api) or DEFAULT_VERSIONS[api]
        return choices[index % len(choices)]


# Versions exercised by default: each is accepted by both Kafka 3.9.x and 4.x (KIP-896 removed the
# oldest ones in 4.0). JoinGroup v3 is before KIP-394's member-id handshake, v4+ after it; v5+
# carries group.instance.id (KIP-345).
DEFAULT_VERSIONS: dict[str, tuple[int, ...]] = {
    "JoinGroup": (3, 5, 7),
    "SyncGroup": (3, 4),
    "Heartbeat": (3, 4),
    "LeaveGroup": (3, 4),
    "OffsetCommit": (7, 8),
    "OffsetFetch": (6, 7),
    "DescribeGroups": (4, 5),
    "FindCoordinator": (3,),
}


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


class GroupMachine(RuleBasedStateMachine):
    """Subclassed by :func:`machine_for` with a concrete :class:`SuiteContext`."""

    context: SuiteContext
    clients = Bundle("clients")

    def __init__(self) -> None:
        super().__init__()
        ctx = self.context
        ctx.examples += 1
        self.group_id = ctx.new_group_id() if ctx.new_group_id else f"{ctx.group_prefix}example"
        self.topic = ctx.topic
        self.failed_check: str | None = None
        self.failure_message = ""
        self.target = ctx.open_target(self.group_id)
        self.engine = Engine(
            self.target,
            ctx.new_model(self.group_id),
            checker_config=ctx.checker_config,
            config=ctx.engine_config,
        )
        self.views: dict[str, ClientView] = {}
        self.leaders: dict[int, str] = {}  # generation -> leader, as observed
        self.max_generation = NO_GENERATION

    # ------------------------------------------------------------------ plumbing
    def _run(self, command: Any) -> StepResult | None:
        """Execute one command. After a failure the rest of the sequence is not executed (its
        arguments are still drawn), and the failure is raised in ``teardown``: where in the
        sequence a live broker first disagrees must not change how much data Hypothesis draws,
        or every replay would look like a flaky *strategy*."""
        if self.failed_check is not None:
            return None
        ctx = self.context
        if isinstance(command, Tick):
            ctx.ticks += 1
            ctx.tick_ms += command.ms
        else:
            ctx.commands += 1
        result = self.engine.execute(command)
        try:
            for rid, response in result.received:
                self._learn(self.engine.requests[rid], response)
        except InvariantError as exc:
            self.failure_message = str(exc)
        if result.divergence is not None and self.failed_check is None:
            self.failed_check = "divergence"
        return result

    def _learn(self, request: Any, response: Response) -> None:
        view = self.views.get(request.client)
        if view is None:
            return
        if isinstance(response, JoinGroupResponse):
            if response.error == "NONE":
                view.member_id = response.member_id
                view.generation_id = response.generation_id
                view.protocol_name = response.protocol_name
                view.leader = response.leader == response.member_id
                view.members = tuple(m.member_id for m in response.members)
                view.subscriptions = tuple((m.member_id, m.metadata) for m in response.members)
                seen = self.leaders.setdefault(response.generation_id, response.leader)
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
            elif response.error == "MEMBER_ID_REQUIRED":
                view.member_id = response.member_id
            elif response.error in ("UNKNOWN_MEMBER_ID", "FENCED_INSTANCE_ID"):
                view.member_id = UNKNOWN_MEMBER_ID
                view.generation_id = NO_GENERATION
        elif getattr(response, "error", None) == "UNKNOWN_MEMBER_ID" and request.type in (
            "SyncGroup",
            "Heartbeat",
        ):
            view.member_id = UNKNOWN_MEMBER_ID
            view.generation_id = NO_GENERATION

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

    def _check_assignment(self, v: ClientView, assignments: tuple[Assignment, ...]) -> None:
        """Z3: the leader's assignment for this generation gives every subscribed partition
        exactly one owner, and only to subscribers (issue: "every SyncGroup assignment is checked
        at each step"). A FAIL or an UNKNOWN stops the example as an invariant failure."""
        from kgc.properties.assignment_z3 import check_generation

        result = check_generation(
            dict(v.subscriptions),
            {a.member_id: a.assignment for a in assignments},
            partitions_per_topic={self.topic: TOPIC_PARTITIONS},
            generation_id=v.generation_id,
            check_handoff=False,
        )
        self.context.assignment_checks += 1
        if str(result.verdict) not in ("PASS", "Verdict.PASS") and self.failed_check is None:
            self.failed_check = "assignment"
            self.failure_message = f"generation {v.generation_id}: {result}"

    def _idle(self, client: str) -> bool:
        return not self.target.in_flight(client)

    # ------------------------------------------------------------------ rules
    def _add_client(
        self, session: int, rebalance: int, static: bool, protocols: tuple[str, ...]
    ) -> str:
        name = f"c{len(self.views) + 1}"
        self.views[name] = ClientView(
            client=name,
            session_timeout_ms=session,
            rebalance_timeout_ms=max(rebalance, session),
            group_instance_id=f"{name}-instance" if static else None,
            protocols=protocols,
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

    @rule(target=clients, **client_settings)
    @precondition(lambda self: len(self.views) < MAX_CLIENTS)
    def new_client(
        self, session: int, rebalance: int, static: bool, protocols: tuple[str, ...]
    ) -> str:
        return self._add_client(session, rebalance, static, protocols)

    def _join_command(self, client: str, version: int, member_id: str) -> JoinGroup:
        v = self.views[client]
        return JoinGroup(
            client=client,
            member_id=member_id,
            group_instance_id=v.group_instance_id if version >= 5 else None,
            session_timeout_ms=v.session_timeout_ms,
            rebalance_timeout_ms=v.rebalance_timeout_ms,
            protocols=tuple(
                Protocol(name=p, metadata=json.dumps({"topics": [self.topic]})) for p in v.protocols
            ),
            version=version,
        )

    @rule(client=clients, vi=VERSION_INDEX, fresh=st.booleans())
    def join(self, client: str, vi: int, fresh: bool) -> None:
        if not self._idle(client):
            return
        v = self.views[client]
        version = self.context.version("JoinGroup", vi)
        member_id = UNKNOWN_MEMBER_ID if (fresh and v.generation_id < 0) else v.member_id
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

    @rule(client=clients, vi=VERSION_INDEX, stale=st.booleans())
    def sync(self, client: str, vi: int, stale: bool) -> None:
        if not self._idle(client):
            return
        if self.views[client].generation_id < 0 and not stale:
            return
        self._sync(client, version=self.context.version("SyncGroup", vi), stale=stale)

    def _sync(self, client: str, *, version: int, stale: bool) -> None:
        v = self.views[client]
        generation = v.generation_id - 1 if stale else v.generation_id
        assignments = assignment_for(v.members, self.topic) if (v.leader and v.members) else ()
        if assignments and not stale:
            self._check_assignment(v, assignments)
        self._run(
            SyncGroup(
                client=client,
                member_id=v.member_id,
                generation_id=generation,
                group_instance_id=v.group_instance_id if version >= 3 else None,
                protocol_type="consumer" if version >= 5 else None,
                protocol_name=v.protocol_name if version >= 5 else None,
                assignments=assignments,
                version=version,
            )
        )

    @rule(
        client=clients, vi=VERSION_INDEX, generation=st.sampled_from(("current", "stale", "none"))
    )
    def heartbeat(self, client: str, vi: int, generation: str) -> None:
        if not self._idle(client):
            return
        v = self.views[client]
        gen = {"current": v.generation_id, "stale": v.generation_id - 1, "none": NO_GENERATION}
        version = self.context.version("Heartbeat", vi)
        self._run(
            Heartbeat(
                client=client,
                member_id=v.member_id,
                generation_id=gen[generation],
                group_instance_id=v.group_instance_id if version >= 3 else None,
                version=version,
            )
        )

    @rule(client=clients, vi=VERSION_INDEX, stranger=st.booleans())
    def leave(self, client: str, vi: int, stranger: bool) -> None:
        if not self._idle(client):
            return
        v = self.views[client]
        member_id = "stranger" if stranger else v.member_id
        if not member_id and v.group_instance_id is None:
            return
        version = self.context.version("LeaveGroup", vi)
        self._run(
            LeaveGroup(
                client=client,
                members=(
                    MemberIdentity(
                        member_id=member_id,
                        group_instance_id=None if stranger else v.group_instance_id,
                    ),
                ),
                version=version,
            )
        )

    @rule(
        client=clients,
        vi=VERSION_INDEX,
        generation=st.sampled_from(("current", "stale", "simple")),
        offset=st.integers(0, 1000),
    )
    def commit(self, client: str, vi: int, generation: str, offset: int) -> None:
        if not self._idle(client):
            return
        v = self.views[client]
        if generation == "simple":
            member_id, gen, instance = UNKNOWN_MEMBER_ID, NO_GENERATION, None
        else:
            member_id = v.member_id
            gen = v.generation_id if generation == "current" else v.generation_id - 1
            instance = v.group_instance_id
        version = self.context.version("OffsetCommit", vi)
        self._run(
            OffsetCommit(
                client=client,
                member_id=member_id,
                generation_id=gen,
                group_instance_id=instance,
                offsets=(TopicPartitionOffset(topic=self.topic, partition=0, offset=offset),),
                version=version,
            )
        )

    @rule(client=clients, vi=VERSION_INDEX)
    def fetch(self, client: str, vi: int) -> None:
        if not self._idle(client):
            return
        version = self.context.version("OffsetFetch", vi)
        self._run(
            OffsetFetch(
                client=client,
                partitions=(TopicPartition(topic=self.topic, partition=0),),
                version=version,
            )
        )

    @rule(client=clients, vi=VERSION_INDEX)
    def describe(self, client: str, vi: int) -> None:
        if not self._idle(client):
            return
        version = self.context.version("DescribeGroups", vi)
        self._run(DescribeGroups(client=client, version=version))

    @rule(client=clients, vi=VERSION_INDEX)
    def find_coordinator(self, client: str, vi: int) -> None:
        if not self._idle(client):
            return
        version = self.context.version("FindCoordinator", vi)
        self._run(FindCoordinator(client=client, version=version))

    @rule(ms=st.sampled_from(TICKS_MS))
    def tick(self, ms: int) -> None:
        self._run(Tick(ms=ms))

    @rule(which=st.integers(min_value=0, max_value=3), after=st.booleans())
    def tick_to_deadline(self, which: int, after: bool) -> None:
        """Let time run to just before or just after a deadline the model has pending (a session
        expiry, a join or sync timeout): liveness rules are exercised on purpose, while the tick
        still lands clearly outside the checker's tolerance window (DESIGN-NOTES.md, "Time")."""
        timers = getattr(self.engine.model, "timers", None)
        if timers is None:
            return
        now = self.target.now_ms()
        # only deadlines the suite's own timeouts produce: Kafka's 5-minute new-member join
        # timeout is a deadline too, and waiting it out would stall the run for minutes
        horizon = now + MAX_DEADLINE_TICK_MS
        deadlines = sorted(
            {
                d
                for st_ in self.engine.checker.states
                for d, _, _ in timers(st_)
                if now < d <= horizon
            }
        )
        if not deadlines:
            return
        cfg = self.engine.checker.config
        target = deadlines[which % len(deadlines)]
        ms = target + cfg.late_ms + 60 - now if after else target - cfg.early_ms - 60 - now
        if ms >= 5:
            self._run(Tick(ms=int(ms)))

    # ------------------------------------------------------------------ invariants
    @invariant()
    def model_agrees(self) -> None:
        if self.engine.divergence is not None and self.failed_check is None:
            self.failed_check = "divergence"

    def teardown(self) -> None:
        for cell, n in cells_of(self.engine.events, self.engine.extras).items():
            self.context.coverage[cell] = self.context.coverage.get(cell, 0) + n
        try:
            if self.context.on_example_end is not None:
                self.context.on_example_end(self)
        finally:
            self.target.close()
        if self.failed_check == "divergence":
            raise DivergenceError(self.report())
        if self.failed_check is not None:
            raise InvariantError(f"{self.failure_message}")


def machine_for(context: SuiteContext) -> type[GroupMachine]:
    """A concrete machine class bound to ``context`` (Hypothesis instantiates it per example)."""
    return type("GroupMachineUnderTest", (GroupMachine,), {"context": context})
