"""Replay in the library (``kgc.engine.replay``), with no broker: the model itself answers.

A synthetic trace holds the model's own answers, so re-sent to a ``ModelTarget`` of the model its
manifest names it must pass, with the same commands, the tail ``Engine.finish`` records at the end,
and a verdict read against the one the trace recorded. A trace with faults and no runner for them
refuses to run, saying why.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from kgc.engine.registry import model_from_manifest
from kgc.engine.replay import replay, verdict
from kgc.engine.target import ModelTarget
from kgc.engine.traces import Trace
from kgc.model.history import Fault, Quiet
from kgc.pipeline.synthetic import make_trace


def _on_the_model(trace: Trace):  # noqa: ANN202
    target = ModelTarget(model_from_manifest(trace.manifest))
    try:
        return replay(trace, target, group_id="kgc-replay-test")
    finally:
        target.close()


def test_the_models_own_answers_replay_and_pass() -> None:
    trace = make_trace(3)
    done = _on_the_model(trace)
    assert done.ok, done.engine.divergence
    assert done.verdict == "PASSES"
    assert [c.type for c in done.trace.commands] == [c.type for c in trace.commands]
    assert isinstance(done.trace.events[-1], Quiet)  # Engine.run ended with finish()
    assert done.trace.manifest["replay_of"] == trace.manifest["trace_id"]
    assert done.trace.manifest["profile"] == "replay"
    assert done.trace.manifest["group_id"] == "kgc-replay-test"
    assert done.trace.result["verdict"] == "pass"


def test_a_recorded_divergence_the_model_does_not_make_again_is_fixed() -> None:
    trace = make_trace(7, divergence_rate=1.0)  # one recorded answer replaced
    assert trace.result["verdict"] == "divergence"
    assert _on_the_model(trace).verdict == "FIXED"


@pytest.mark.parametrize(
    ("recorded", "diverges", "expected"),
    [
        ("divergence", False, "FIXED"),
        ("divergence", True, "STILL FAILING"),
        ("pass", False, "PASSES"),
        ("pass", True, "NOW FAILING"),
        (None, False, "PASSES"),
        (None, True, "FAILING"),
    ],
)
def test_verdict_against_the_recorded_one(recorded, diverges, expected) -> None:  # noqa: ANN001
    trace = Trace(manifest={}, events=[], result={} if recorded is None else {"verdict": recorded})
    engine = SimpleNamespace(divergence=object() if diverges else None, known_bug=None)
    assert verdict(trace, engine) == expected  # type: ignore[arg-type]


def test_faults_without_a_runner_refuse_to_run() -> None:
    trace = make_trace(3)
    trace.events.insert(0, Fault(step=0, at_ms=0.0, action="kill", node=1))
    with pytest.raises(ValueError, match="no nemesis"):
        _on_the_model(trace)


def test_the_topic_made_before_a_replay_is_the_one_the_run_made() -> None:
    # a share search subscribes a consumer to a topic made never to exist (``-missing``); its
    # trace, replayed, needs the run's own topic, which the model's record lists (the kfake
    # proof of ``assignor_sticky_in_id_order`` begins with such a join)
    from kgc.engine.replay import topic_of
    from kgc.model.commands import ShareGroupHeartbeat
    from kgc.model.history import Invoke

    def join(topic: str) -> Invoke:
        command = ShareGroupHeartbeat(
            client="c1",
            member_id="c1-1",
            member_epoch=0,
            subscribed_topic_names=(topic,),
            version=1,
        )
        return Invoke(step=0, at_ms=0.0, request_id=0, command=command)

    record = {"name": "ShareGroupModel", "config": {"topics": [["kgc-suite", 3]]}}
    trace = Trace(manifest={"model": record}, events=[join("kgc-suite-missing")])
    assert topic_of(trace) == "kgc-suite"
    # a record that lists no topic: the first the commands name
    trace = Trace(manifest={"model": {"config": {}}}, events=[join("t")])
    assert topic_of(trace) == "t"
