"""A target that does not carry a request out is a failure of the target, never a crash and never
"flaky" (issue: "Any Kafka-protocol broker", item 5):

- a connection closed on a request is that request's answer (``ConnectionClosed``, as
  ``BrokerTarget`` records it): no model allows it, so it is a divergence, shrunk like any other;
- a target that fails in another way (``TargetError``) fails the example as ``connection``, and the
  search draws the same data on every replay;
- the broker is gone for good (librdkafka's mock cluster aborts on some JoinGroup rounds, seen by
  ``kgc check``): the search stops at once with ``TargetLost``, naming the request.

Driven on the model's own target (``ModelTarget``) with a misbehaving ``send``; the same paths
against a real broker that crashes: ``tests/differential/test_other_brokers.py``.
"""

from __future__ import annotations

import re

import pytest
from kgc.engine.registry import build
from kgc.engine.target import Arrival, ModelTarget, TargetError
from kgc.model.checker import CheckerConfig
from kgc.model.commands import ConnectionClosed
from kgc.properties.machine import (
    AIM_STEPS,
    ConnectionFailure,
    DivergenceError,
    SuiteContext,
    TargetLost,
    machine_for,
    search,
)

PROFILE = {"profile": "kafka-4.x", "config": {"group_initial_rebalance_delay_ms": 0}}


def _search(open_target, examples: int = 40) -> SuiteContext:  # noqa: ANN001
    counter = iter(range(10**6))
    ctx = SuiteContext(
        open_target=open_target,
        new_model=lambda gid: build(PROFILE, gid),
        checker_config=CheckerConfig(early_ms=0, late_ms=0),
    )
    ctx.new_group_id = lambda: f"kgc-conn-{next(counter)}"
    machine = machine_for(ctx)
    search(machine, examples=examples, steps=16, seed=20261125)
    return ctx


def _failing_on_second_join(gid: str) -> ModelTarget:
    """A target that fails every group's second JoinGroup (``TargetError``)."""
    t = ModelTarget(build(PROFILE, gid))
    send, joins = t.send, []

    def closing(request_id, command):  # noqa: ANN001, ANN202
        if command.type == "JoinGroup":
            joins.append(request_id)
            if len(joins) == 2:
                raise TargetError(f"JoinGroup from {command.client}: connection closed by broker")
        return send(request_id, command)

    t.send = closing  # type: ignore[method-assign]
    return t


def test_a_target_failing_a_request_is_a_shrunk_failure_not_a_crash() -> None:
    with pytest.raises(ConnectionFailure) as caught:
        _search(_failing_on_second_join)
    text = str(caught.value)
    assert text.startswith("the target did not carry out a request: JoinGroup from c")
    assert "connection closed by broker" in text
    # shrunk: the two joins and little else (the readable trace follows the first line). One
    # ``aim`` rule may send up to 8 requests (``AIM_STEPS``), which Hypothesis shrinks as one
    # step: at most one such macro is left around the failing join
    sent = [line for line in text.splitlines()[1:] if " -> " in line]
    assert 2 <= len(sent) <= 1 + max(AIM_STEPS), text
    assert "JoinGroup" in sent[-1], text


class _ClosingTarget(ModelTarget):
    """Answers a group's second JoinGroup by closing the connection, as ``BrokerTarget`` records
    a broker doing so."""

    def __init__(self, gid: str) -> None:
        super().__init__(build(PROFILE, gid))
        self.joins = 0
        self.closed: list[Arrival] = []

    def send(self, request_id, command):  # noqa: ANN001, ANN201
        if command.type == "JoinGroup":
            self.joins += 1
            if self.joins == 2:
                reason = "JoinGroup v5: connection closed by broker"
                self.closed.append(
                    Arrival(
                        request_id=request_id,
                        response=ConnectionClosed(reason=reason),
                        at_ms=self.now_ms(),
                    )
                )
                return
        super().send(request_id, command)

    def poll(self, timeout_ms):  # noqa: ANN001, ANN201
        out, self.closed = self.closed, []
        return out + super().poll(timeout_ms)


def test_a_connection_closed_on_a_request_is_its_answer_and_a_divergence() -> None:
    with pytest.raises(DivergenceError) as caught:
        _search(_ClosingTarget)
    text = str(caught.value)
    assert re.search(r"the broker closed the connection of request \d+ instead of answering", text)
    assert "(JoinGroup v5: connection closed by broker)" in text
    # shrunk: the two joins and at most one ``aim`` macro's other requests (see the test above)
    sent = [line for line in text.splitlines() if " -> " in line]
    assert 2 <= len(sent) <= 1 + max(AIM_STEPS), text
    assert "JoinGroup" in sent[-1], text


def test_a_target_gone_for_good_stops_the_search_at_once() -> None:
    opened: list[str] = []

    def dying(gid: str) -> ModelTarget:
        if opened and opened[-1] == "broken":
            raise ConnectionRefusedError("connection refused")
        t = ModelTarget(build(PROFILE, gid))
        send = t.send

        def crash(request_id, command):  # noqa: ANN001, ANN202
            if command.type == "SyncGroup":
                opened.append("broken")
                raise TargetError("SyncGroup from c1: connection closed by broker")
            return send(request_id, command)

        t.send = crash  # type: ignore[method-assign]
        opened.append(gid)
        return t

    with pytest.raises(TargetLost) as caught:
        _search(dying)
    text = str(caught.value)
    assert "SyncGroup from c1: connection closed by broker" in text
    assert "could not be opened again (connection refused)" in text
    # stopped at once: the example after the one that broke it was the last one opened
    assert opened.count("broken") == 1


def test_a_healthy_target_never_fails_on_connections() -> None:
    ctx = _search(lambda gid: ModelTarget(build(PROFILE, gid)), examples=15)
    assert ctx.connection_failure is None and ctx.examples >= 15
