"""Minimise a failing trace against the live broker, after Hypothesis's shrinking.

Hypothesis shrinks the *choices* behind an example, and against a live broker every candidate is a
real replay, so its time-bounded shrinking can stop with a trace that still holds commands the
failure does not need (a macro rule's requests, a tick). This pass works on the recorded command
sequence itself, one deletion at a time (delta debugging, Zeller & Hildebrandt, "Simplifying and
Isolating Failure-Inducing Input", over runs of adjacent commands: ``deletions``): from the last
command to the first, drop a command (or, once no single one can go, a run of two or three) and
replay the rest on a fresh group; keep the deletion when the shorter sequence still
diverges *at a request of the same type* without the engine having to wait for a busy client (a
deleted tick can leave a command whose client is still waiting; the engine then waits for the
answer, a wait no saved command records, so the saved trace would not fail again). The model, its
profile and the checker tolerances are the trace's own (``model_factory`` supplies the model, so a
planted variant stays in force). A replay that errors (e.g. a command naming a member no longer
created) counts as "does not fail". Bounded by ``budget_s``; the result is always a trace that was
really observed to fail, twice: the shortest sequence is replayed once more and kept only if it
fails again the same way (else the next shorter accepted one, up to ``VERIFY_TRIES``; else the trace
as Hypothesis left it). Passes repeat until none deletes anything, so a sequence kept within the
budget is 1-minimal: removing any one command, or any run of up to ``MAX_CHUNK``, loses the
failure (``manifest["minimal"]`` says ``1-minimal``, or ``budget`` when time ran out first). Single
deletions alone left CI of ``8eebdfa`` a 12-command trace, over the quality test's bound of 10.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Sequence
from typing import Any

from kgc.engine.loop import Engine
from kgc.engine.traces import Trace, new_manifest, result_of
from kgc.model.checker import CheckerConfig
from kgc.model.history import Event, Invoke, Receive

VERIFY_TRIES = 3  # accepted sequences re-run to confirm the failure, shortest first


def diverging_request(engine_or_trace_events: Sequence[Event], event: Event) -> str:
    """The type of the request whose answer (or invocation) diverged, else the event's kind."""
    rid = event.request_id if isinstance(event, Receive | Invoke) else None
    for x in engine_or_trace_events:
        if isinstance(x, Invoke) and x.request_id == rid:
            return str(x.command.type)
    return event.kind


def minimize(
    trace: Trace,
    *,
    open_target: Callable[[str], Any],
    model_factory: Callable[[str], Any],
    group_prefix: str = "kgc-minimize-",
    budget_s: float = 60.0,
) -> Trace:
    """The shortest failing variant of ``trace`` found within ``budget_s`` (``trace`` itself if
    no deletion keeps the failure). ``open_target(group_id)`` gives a broker target,
    ``model_factory(group_id)`` the model to check against."""
    original = trace.result.get("divergence") or {}
    if "index" not in original or any(e.kind == "fault" for e in trace.events):
        return trace  # nothing to keep, or faults: minimised by Hypothesis only
    want = diverging_request(trace.events, trace.events[original["index"]])
    cfg = CheckerConfig.from_manifest(trace.manifest)

    def attempt(commands: list[Any]) -> tuple[Engine, str] | None:
        group_id = f"{group_prefix}{secrets.token_hex(4)}"
        try:
            target = open_target(group_id)
        except Exception as exc:  # noqa: BLE001 - the broker answers no more: nothing to replay on
            raise _Unreachable from exc
        engine = Engine(target, model_factory(group_id), checker_config=cfg)
        try:
            engine.run(commands, stop_at_divergence=True)
        except Exception:  # noqa: BLE001 - a sequence that cannot run does not reproduce
            return None
        finally:
            target.close()
        if engine.divergence is None or engine.drains:
            # a sequence that needed the engine to wait for a busy client (a deleted tick, say)
            # fails through a wait no command records: saved, it would not fail again
            return None
        if diverging_request(engine.events, engine.divergence.event) != want:
            return None
        return engine, group_id

    try:
        return _minimize(trace, attempt, budget_s)
    except _Unreachable:
        # a fresh group could not even be opened (tansu stopped answering DescribeGroups under
        # a search's load): the trace stays as Hypothesis left it, observed failing
        return trace


class _Unreachable(Exception):
    """Opening a target for a replay failed: the broker answers no more."""


MAX_CHUNK = 3  # the longest run of adjacent commands one deletion removes


def deletions(
    commands: list[Any], fails: Callable[[list[Any]], bool], budget_s: float
) -> tuple[list[list[Any]], bool]:
    """The deletion search: each sequence ``fails`` accepted, shortest last, and whether the last
    is minimal (no run of at most ``MAX_CHUNK`` adjacent commands can go; False when the budget
    ran out first). Passes go from the last command to the first; a pass that deletes nothing
    tries runs one longer, and any deletion starts again at single commands (delta debugging's
    growing granularity, over adjacent runs only: a request and the one that only makes sense
    after it, such as a member's join and its leave, go together or not at all)."""
    best = commands
    kept: list[list[Any]] = []
    end = time.monotonic() + budget_s
    size = 1
    while time.monotonic() < end:
        deleted = False
        i = len(best) - size
        while i >= 0 and time.monotonic() < end:
            candidate = best[:i] + best[i + size :]
            if candidate and fails(candidate):
                best = candidate
                kept.append(candidate)
                deleted = True
                i = min(i, len(best) - size + 1)
            i -= 1
        if i >= 0:
            return kept, False  # the pass did not finish
        if deleted:
            size = 1
        elif size < min(MAX_CHUNK, len(best) - 1):
            size += 1
        else:
            return kept, True
    return kept, False


def _minimize(
    trace: Trace, attempt: Callable[[list[Any]], tuple[Engine, str] | None], budget_s: float
) -> Trace:
    kept, minimal = deletions(list(trace.commands), lambda c: attempt(c) is not None, budget_s)
    # A replay can fail by accident (the engine stalled on a loaded machine and so read an answer
    # it would not have waited for): keep only a sequence that fails again on a fresh group,
    # trying the shortest first and backing off to longer ones.
    best_run: tuple[Engine, str] | None = None
    for n, candidate in enumerate(reversed(kept[-VERIFY_TRIES:])):
        best_run = attempt(candidate)
        if best_run is not None:
            minimal = minimal and n == 0  # a longer fallback is not the 1-minimal one
            break
    if best_run is None:
        if minimal and not kept:  # no single command could go from the trace as it was
            return _marked(trace, "1-minimal")
        return trace
    engine, group_id = best_run
    fresh = new_manifest(
        target={},
        group_id=group_id,
        seed=None,
        profile="",
        scenario="",
        model={},
        checker={},
    )
    manifest = {**trace.manifest, **{k: fresh[k] for k in ("trace_id", "created_at", "group_id")}}
    manifest["minimized_from"] = trace.manifest.get("trace_id")
    manifest["minimal"] = "1-minimal" if minimal else "budget"
    return Trace(
        manifest=manifest, events=engine.events, extras=engine.extras, result=result_of(engine)
    )


def _marked(trace: Trace, minimal: str) -> Trace:
    return Trace(
        manifest={**trace.manifest, "minimal": minimal},
        events=trace.events,
        extras=trace.extras,
        result=trace.result,
    )
