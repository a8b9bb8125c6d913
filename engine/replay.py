"""Replay: send a saved trace's commands again, on a fresh group, and check every answer.

A trace's sequence — requests, ticks and nemesis actions in the order they were recorded
(``Trace.commands_with_faults``) — goes through :meth:`Engine.run <kgc.engine.loop.Engine.run>`:
each fault is re-injected at its position through the caller's runner, a command whose client is
still waiting first lets that request finish, and the run ends with ``Engine.finish`` as the suite
ends an example, so the replay checks the same tail the recording did. The model and the checker
tolerances are the ones the trace's manifest names (``model_from_manifest``,
``CheckerConfig.from_manifest``); a replay on another cluster passes the model built for it.

The verdict compares the replay with the verdict the trace recorded: a recorded ``divergence``
replays ``FIXED`` or ``STILL FAILING``, a recorded ``pass`` ``PASSES`` or ``NOW FAILING``, a trace
with no verdict ``PASSES`` or ``FAILING``. A replay that only a Kafka bug the model knows explains
(``model/known_bugs.py``) is ``KNOWN KAFKA BUG``, whatever was recorded; a recorded ``known-bug``
that no longer shows replays ``FIXED`` or ``STILL FAILING`` (another divergence).

The replay's own trace has profile ``replay`` and names the original in ``manifest.replay_of``.
Opening the target is the caller's: a broker (``kgc.conformance.drivers.suite.replay_on_broker``), a
cluster kgc started, with its faults (``kgc.conformance.drivers.fault_suite.replay_faulty``), or
the model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kgc.engine.loop import Engine, FaultRunner
from kgc.engine.registry import model_from_manifest
from kgc.engine.target import Target
from kgc.engine.traces import Trace, new_manifest, result_of
from kgc.model.checker import CheckerConfig, Model
from kgc.model.commands import (
    ConsumerGroupHeartbeat,
    OffsetCommit,
    OffsetFetch,
    ShareGroupHeartbeat,
)

VERDICTS: dict[tuple[bool, str], str] = {  # (replay passes, recorded verdict) -> verdict
    (True, "divergence"): "FIXED",
    (False, "divergence"): "STILL FAILING",
    (True, "pass"): "PASSES",
    (False, "pass"): "NOW FAILING",
}
# a replay that only a known Kafka bug explains (``model/known_bugs.py``), whatever was recorded
KNOWN_BUG_VERDICT = "KNOWN KAFKA BUG"


@dataclass(frozen=True, slots=True, kw_only=True)
class Replay:
    engine: Engine  # the run: events, divergence, drains
    trace: Trace  # the replay's own trace
    verdict: str  # FIXED / STILL FAILING / PASSES / NOW FAILING / FAILING / KNOWN KAFKA BUG

    @property
    def ok(self) -> bool:
        return self.engine.divergence is None


def verdict(recorded: Trace, engine: Engine) -> str:
    """The replay's verdict against the one ``recorded`` holds (module docstring)."""
    was = str((recorded.result or {}).get("verdict", "unrecorded"))
    ok = engine.divergence is None
    if ok and engine.known_bug is not None:
        return KNOWN_BUG_VERDICT
    if was == "known-bug":
        was = "divergence"  # the bug no longer shows: FIXED, or another divergence
    return VERDICTS.get((ok, was), "PASSES" if ok else "FAILING")


def topic_of(trace: Trace) -> str | None:
    """The topic a broker needs to exist before the replay: the one the run made, as the model's
    record lists it (a share or consumer group's; a command may name a topic made never to
    exist, as the share search's ``-missing`` subscription does), else the first its commands
    name (offsets, partitions or a subscription); None if neither names one."""
    topics = ((trace.manifest.get("model") or {}).get("config") or {}).get("topics") or []
    if topics and isinstance(topics[0], list | tuple) and topics[0]:
        return str(topics[0][0])
    for c in trace.commands:
        if isinstance(c, OffsetCommit) and c.offsets:
            return c.offsets[0].topic
        if isinstance(c, OffsetFetch) and c.partitions:
            return c.partitions[0].topic
        if isinstance(c, ConsumerGroupHeartbeat | ShareGroupHeartbeat) and c.subscribed_topic_names:
            return c.subscribed_topic_names[0]
    return None


def replay(
    trace: Trace,
    target: Target,
    *,
    group_id: str,
    model: Model[Any] | None = None,
    model_record: dict[str, Any] | None = None,
    faults: FaultRunner | None = None,
) -> Replay:
    """Run ``trace``'s commands and faults on ``target`` (open, for group ``group_id``; the caller
    closes it). ``model`` and its manifest record ``model_record`` replace the ones the trace names
    (a cluster of another shape); ``faults`` performs the nemesis actions (without it a trace with
    faults refuses to run, saying why)."""
    if model is None:
        model = model_from_manifest(trace.manifest)
    engine = Engine(target, model, checker_config=CheckerConfig.from_manifest(trace.manifest))
    engine.run(trace.commands_with_faults(), stop_at_divergence=True, faults=faults)
    manifest = new_manifest(
        target=target.describe(),
        group_id=group_id,
        seed=trace.manifest.get("seed"),
        profile="replay",
        scenario=trace.manifest.get("scenario", "replay"),
        model=trace.manifest.get("model", {}) if model_record is None else model_record,
        checker=trace.manifest.get("checker", {}),
    )
    manifest["replay_of"] = trace.manifest.get("trace_id")
    new = Trace(
        manifest=manifest, events=engine.events, extras=engine.extras, result=result_of(engine)
    )
    return Replay(engine=engine, trace=new, verdict=verdict(trace, engine))
