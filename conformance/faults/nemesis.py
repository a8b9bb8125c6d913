"""The nemesis: faults injected into a cluster kgc started, recorded as steps of the same history.

Role (Jepsen's ``nemesis.clj``): the client talks to the target, the nemesis acts on it — kill a
node (SIGKILL), pause it (SIGSTOP: it keeps its sockets and answers nothing, like a long GC pause or
a frozen VM), resume it (SIGCONT), restart it (a killed or running node comes back on the same ports
and data). Every action returns a :class:`kgc.model.history.Fault` event stamped with the history's
clock and step, so the checker folds faults in the same order as requests, and a trace replays with
the same faults at the same steps.

Only a target that declares ``can_inject_faults = True`` (``EmbeddedKafka``) is touched; any other
(an external broker someone else runs) is refused with :class:`FaultsNotSupported`, saying why.
Actions that make no sense in the current state (resume a node that is not paused, pause a dead
one, touch a node id the cluster does not have) are refused with :class:`InvalidFault` *before*
anything is done, so a refused step never half-happens.

Use it as a context manager, or call :meth:`Nemesis.heal` in a finalizer: on exit every paused node
is resumed (a failed test must not leave a stopped JVM behind for the next test) and, with
``restart_killed=True``, killed nodes are restarted so the next test gets a whole cluster.

Plugging into the engine: ``Engine.inject(FaultStep(action, node), nemesis)`` — a ``Nemesis`` is a
``FaultRunner`` (callable as ``nemesis(action, node)``). For Hypothesis state machines,
:class:`NemesisRules` adds shrinkable ``kill``/``pause``/``resume``/``restart`` rules (see its
docstring).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from kgc.conformance.errors import KgcError
from kgc.model.history import Event, Fault

ACTIONS = ("kill", "pause", "resume", "restart")


class FaultsNotSupported(KgcError):
    """The target cannot take faults (kgc did not start it)."""


class InvalidFault(KgcError):
    """The action makes no sense for the node's current state; nothing was done."""


class FaultableCluster(Protocol):
    """What the nemesis needs from a cluster (``kgc.conformance.brokers.embedded.EmbeddedKafka``
    has it)."""

    can_inject_faults: bool

    @property
    def node_ids(self) -> list[int]: ...

    def kill(self, node_id: int) -> None: ...

    def pause(self, node_id: int) -> None: ...

    def resume(self, node_id: int) -> None: ...

    def restart(self, node_id: int) -> None: ...


def _describe(target: Any) -> str:
    try:
        d = target.describe()
        return f"{d.get('implementation', type(target).__name__)} {d.get('version', '')}".strip()
    except Exception:
        return type(target).__name__


class Nemesis:
    """Faults for one cluster. ``clock()`` gives the history's time in ms (default: ms since the
    nemesis was made); ``step()`` the current step number (default: a counter of faults)."""

    def __init__(
        self,
        target: FaultableCluster,
        *,
        clock: Callable[[], float] | None = None,
        step: Callable[[], int] | None = None,
        on_fault: Callable[[Fault], None] | None = None,
        restart_killed: bool = True,
    ) -> None:
        if not target.can_inject_faults:
            raise FaultsNotSupported(
                f"cannot inject faults into {_describe(target)}: kgc did not start it, so it "
                "cannot kill, pause or restart its nodes; run against an embedded cluster "
                "(drop --kgc-bootstrap-server / use EmbeddedKafka)"
            )
        self.target = target
        t0 = time.monotonic()
        self._clock = clock or (lambda: (time.monotonic() - t0) * 1000.0)
        self._step = step
        self._on_fault = on_fault
        self.restart_killed = restart_killed
        self.paused: set[int] = set()
        self.killed: set[int] = set()
        self.faults: list[Fault] = []

    # ------------------------------------------------------------------ state
    @property
    def node_ids(self) -> list[int]:
        return list(self.target.node_ids)

    @property
    def stopped(self) -> set[int]:
        """Nodes that answer nothing right now (paused or killed)."""
        return self.paused | self.killed

    def refusal(self, action: str, node: int) -> str | None:
        """Why ``action`` on ``node`` is not possible now, or None if it is."""
        if action not in ACTIONS:
            return f"unknown action {action!r}; use one of {', '.join(ACTIONS)}"
        if node not in self.node_ids:
            return f"no node {node}; node ids are {self.node_ids}"
        if action == "pause" and node in self.stopped:
            return f"node {node} is already {'paused' if node in self.paused else 'dead'}"
        if action == "kill" and node in self.killed:
            return f"node {node} is already dead; restart it first"
        if action == "resume" and node not in self.paused:
            return f"node {node} is not paused"
        return None

    def can(self, action: str, node: int) -> bool:
        return self.refusal(action, node) is None

    # ------------------------------------------------------------------ actions
    def kill(self, node: int, *, step: int | None = None) -> Fault:
        return self.act("kill", node, step=step)

    def pause(self, node: int, *, step: int | None = None) -> Fault:
        return self.act("pause", node, step=step)

    def resume(self, node: int, *, step: int | None = None) -> Fault:
        return self.act("resume", node, step=step)

    def restart(self, node: int, *, step: int | None = None) -> Fault:
        return self.act("restart", node, step=step)

    def __call__(self, action: str, node: int) -> None:
        """``FaultRunner`` for ``Engine.inject`` (the engine records the event itself)."""
        self._perform(action, node)

    def act(self, action: str, node: int, *, step: int | None = None) -> Fault:
        """Perform ``action`` on ``node`` and return the recorded event (stamped *before* the
        action, when the fault begins; a restart's duration is the next events' business)."""
        reason = self.refusal(action, node)
        if reason is not None:
            raise InvalidFault(f"cannot {action} node {node}: {reason}")
        if step is None:
            step = self._step() if self._step is not None else len(self.faults)
        fault = Fault(step=step, at_ms=self._clock(), action=action, node=node)
        self._perform(action, node)
        self.faults.append(fault)
        if self._on_fault is not None:
            self._on_fault(fault)
        return fault

    def _perform(self, action: str, node: int) -> None:
        reason = self.refusal(action, node)
        if reason is not None:
            raise InvalidFault(f"cannot {action} node {node}: {reason}")
        if action == "kill":
            self.paused.discard(node)  # SIGKILL ends a stopped process too
            self.target.kill(node)
            self.killed.add(node)
        elif action == "pause":
            self.target.pause(node)
            self.paused.add(node)
        elif action == "resume":
            self.target.resume(node)
            self.paused.discard(node)
        else:
            self.paused.discard(node)
            self.target.restart(node)
            self.killed.discard(node)

    def heal(self) -> list[Fault]:
        """Resume every paused node and (if ``restart_killed``) restart every killed one. Never
        raises for one node's trouble before trying the others; re-raises the first at the end."""
        done: list[Fault] = []
        first: BaseException | None = None
        for node in sorted(self.paused):
            try:
                done.append(self.resume(node))
            except BaseException as exc:  # keep healing the rest
                first = first or exc
        if self.restart_killed:
            for node in sorted(self.killed):
                try:
                    done.append(self.restart(node))
                except BaseException as exc:
                    first = first or exc
        if first is not None:
            raise first
        return done

    def __enter__(self) -> Nemesis:
        return self

    def __exit__(self, *exc: object) -> None:
        self.heal()


# ----------------------------------------------------------------------------------------- replay


@dataclass(frozen=True, slots=True, kw_only=True)
class FaultSchedule:
    """The faults of a recorded history, by step: what a replay injects, and where."""

    by_step: dict[int, tuple[tuple[str, int], ...]] = field(default_factory=dict)

    @classmethod
    def of(cls, events: Iterable[Event]) -> FaultSchedule:
        steps: dict[int, list[tuple[str, int]]] = {}
        for e in events:
            if isinstance(e, Fault):
                steps.setdefault(e.step, []).append((e.action, e.node))
        return cls(by_step={s: tuple(v) for s, v in sorted(steps.items())})

    def at(self, step: int) -> tuple[tuple[str, int], ...]:
        return self.by_step.get(step, ())

    def replay(self, nemesis: Nemesis, step: int) -> list[Fault]:
        """Inject the faults recorded at ``step`` (in their recorded order)."""
        return [nemesis.act(action, node, step=step) for action, node in self.at(step)]


def fault_steps(events: Sequence[Event]) -> list[tuple[int, str, int]]:
    """``(step, action, node)`` of every fault, in order: what "same faults at the same steps"
    compares."""
    return [(e.step, e.action, e.node) for e in events if isinstance(e, Fault)]


# --------------------------------------------------------------------------- Hypothesis rules


def nemesis_rules(max_nodes: int = 3, max_stopped: int = 1) -> type[Any]:
    """A ``RuleBasedStateMachine`` mixin with shrinkable nemesis rules.

    Subclass it together with your machine (``class M(NemesisMachine, GroupMachine)``), set
    ``self.nemesis`` in ``__init__`` and override :meth:`record_fault` to put each fault into the
    history (e.g. ``self.engine.inject(FaultStep(action=f.action, node=f.node), self.nemesis)``
    — then use ``inject`` instead of ``act``: the engine performs and records it). Nodes are drawn
    as an index (shrinks towards the first node); at most ``max_stopped`` nodes are down at once
    (keep a quorum). ``teardown`` heals the cluster. Imported lazily so the module loads without
    Hypothesis.
    """
    from hypothesis import strategies as st
    from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

    # Preconditions read a *plan*: the node states the drawn rules asked for, whether or not the
    # machine performed them (it may skip one, e.g. after a failure). What Hypothesis may draw then
    # depends only on what it drew before, never on the cluster (else replays look "flaky").
    def plan(self: Any) -> tuple[set[int], set[int]]:
        if not hasattr(self, "_plan"):
            self._plan = (set(), set())  # (paused, killed)
        planned: tuple[set[int], set[int]] = self._plan
        return planned

    def pick(self: Any, index: int, action: str) -> int | None:
        ids = self.nemesis.node_ids
        node = ids[index % len(ids)]
        paused, killed = plan(self)
        if node in paused | killed:
            return None
        (paused if action == "pause" else killed).add(node)
        return node

    def room(self: Any) -> bool:
        paused, killed = plan(self)
        return len(paused | killed) < max_stopped

    class NemesisMachine(RuleBasedStateMachine):
        nemesis: Nemesis

        def record_fault(self, action: str, node: int) -> None:
            """Default: the nemesis records it itself (its own step counter). Overrides may skip
            an action (the plan moves on regardless); skip one the nemesis refuses."""
            if self.nemesis.can(action, node):
                self.nemesis.act(action, node)

        @precondition(room)
        @rule(index=st.integers(0, max_nodes - 1))
        def nemesis_kill(self, index: int) -> None:
            node = pick(self, index, "kill")
            if node is not None:
                self.record_fault("kill", node)

        @precondition(room)
        @rule(index=st.integers(0, max_nodes - 1))
        def nemesis_pause(self, index: int) -> None:
            node = pick(self, index, "pause")
            if node is not None:
                self.record_fault("pause", node)

        @precondition(lambda self: bool(plan(self)[0]))
        @rule(index=st.integers(0, max_nodes - 1))
        def nemesis_resume(self, index: int) -> None:
            paused = sorted(plan(self)[0])
            node = paused[index % len(paused)]
            plan(self)[0].discard(node)
            self.record_fault("resume", node)

        @precondition(lambda self: bool(plan(self)[1]))
        @rule(index=st.integers(0, max_nodes - 1))
        def nemesis_restart(self, index: int) -> None:
            killed = sorted(plan(self)[1])
            node = killed[index % len(killed)]
            plan(self)[1].discard(node)
            self.record_fault("restart", node)

        def fault_room(self) -> bool:
            """Whether the plan has room for one more stopped node (for aimed rules'
            preconditions: it reads the plan, never the cluster)."""
            return room(self)

        def plan_stop(self, action: str, node: int) -> None:
            """Enter a kill or pause of ``node``, chosen by an aimed rule (e.g. the node that
            coordinates the group now), into the plan. Call it only under ``fault_room``: the
            plan's *size* then grows exactly as for ``nemesis_kill``/``nemesis_pause``, and
            preconditions read sizes only, so what is drawn next never depends on which node
            it was."""
            paused, killed = plan(self)
            assert len(paused | killed) < max_stopped, "plan_stop called without fault_room"
            (paused if action == "pause" else killed).add(node)

        def teardown(self) -> None:
            try:
                self.nemesis.heal()
            finally:
                super().teardown()

    return NemesisMachine
