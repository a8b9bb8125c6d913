"""One client interface, two implementations: what the engine sends commands to.

A *target* answers group-protocol requests for one group. The engine talks to it only through
:class:`Target`: ``prepare`` for a client's request, ``send`` it (never blocks), ``poll`` for the
responses that arrived, read the target's clock. The real broker target lives in
``kgc.conformance.wire.broker_target``; :class:`ModelTarget` here answers from the reference model
itself, on a virtual clock, so the engine, the state machine and the trace tooling can run and be
tested with no broker (and synthetic corpora can be made).

Faults go through a separate nemesis (``kgc.conformance.faults.nemesis``), never through a target.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kgc.model.checker import Model
from kgc.model.commands import Request, Response


class TargetError(Exception):
    """The target could not carry a request out, and it is not a protocol answer: a connection
    closed on the request or refused, an answer that does not decode. The machine turns it into
    a failure of its own ("connection"), never a crash: Kafka answers every request it offers."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Arrival:
    request_id: int
    response: Response
    at_ms: float
    extras: dict[str, Any] | None = None  # e.g. {"latency_ms": 1.2, "version": 5}


class Target(ABC):
    @abstractmethod
    def now_ms(self) -> float:
        """Milliseconds since the target was opened, on the clock the history uses."""

    def prepare(self, client: str) -> None:
        """Get ready for a request of ``client`` before anything is read for this step (a broker
        target opens the client's connection: its handshake reads answers that arrived before
        the request is written). Default: nothing to do."""
        return None

    def discard_connections(self) -> None:
        """The target met a known Kafka bug after which the broker may still write answers to
        this example's connections (``model/known_bugs.py``): close them rather than reuse them,
        so nothing reaches a later example. Default: nothing to do."""
        return None

    @abstractmethod
    def send(self, request_id: int, command: Request) -> None:
        """Write a request for ``command.client``; returns at once."""

    @abstractmethod
    def poll(self, timeout_ms: float) -> list[Arrival]:
        """Wait up to ``timeout_ms`` for responses; return those that arrived (maybe none)."""

    @abstractmethod
    def in_flight(self, client: str) -> bool:
        """Whether ``client`` has a request that has not been answered yet."""

    def alter_acl(self, action: str) -> None:
        """Carry out an ACL action on the run's principal (``acl-deny:group:READ`` …,
        ``model/classic/authorization.py``) and return once it is in force. Default: this
        target has no authorizer the run may change."""
        raise TargetError(f"{action}: this target takes no ACL actions")

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """Implementation, version, mode, nodes and config, for the trace manifest."""

    @abstractmethod
    def close(self) -> None:
        """Release connections; the target is not used again."""


class ModelTarget(Target):
    """A target that *is* the model: deterministic answers on a virtual clock.

    Where the model allows several outcomes, ``choose`` picks one (default: the first, which makes
    runs reproducible). Timers fire exactly at their deadlines; every response is delivered
    ``latency_ms`` after the model emitted it.
    """

    def __init__(
        self,
        model: Model[Any],
        *,
        latency_ms: float = 1.0,
        choose: Callable[[list[Any]], Any] | None = None,
        description: dict[str, Any] | None = None,
    ) -> None:
        self._model = model
        self._state = model.initial()
        self._now = 0.0
        self._latency = latency_ms
        self._choose = choose or (lambda states: states[0])
        self._open: dict[str, int] = {}
        self._description = description or {"implementation": "kgc-model", "version": "model"}

    def _pick(self, states: Iterable[Any]) -> Any:
        options = list(states)
        if not options:
            raise RuntimeError("the model allowed no successor state")
        return self._choose(options)

    def _advance_to(self, t: float) -> None:
        self._state = self._pick(self._model.advance(self._state, must_until=t, may_until=t))

    def now_ms(self) -> float:
        return self._now

    def send(self, request_id: int, command: Request) -> None:
        if command.client in self._open:
            raise RuntimeError(f"client {command.client} already has a request in flight")
        self._advance_to(self._now)
        self._open[command.client] = request_id
        self._state = self._pick(
            self._model.invoke(self._state, request_id=request_id, command=command, at_ms=self._now)
        )

    def poll(self, timeout_ms: float) -> list[Arrival]:
        end = self._now + max(timeout_ms, 0.0)
        self._advance_to(end)
        out = []
        for rid, (response, emitted) in sorted(self._model.outbox(self._state).items()):
            at = max(emitted + self._latency, self._now)
            if at <= end:
                out.append(Arrival(request_id=rid, response=response, at_ms=at))
        out.sort(key=lambda a: a.at_ms)
        for a in out:
            self._state = self._model.deliver(self._state, a.request_id)
            for client, rid in list(self._open.items()):
                if rid == a.request_id:
                    del self._open[client]
        # virtual time: the whole timeout passes; each arrival keeps its own timestamp
        self._now = end
        return out

    def in_flight(self, client: str) -> bool:
        return client in self._open

    def alter_acl(self, action: str) -> None:
        """The model's own answer to an ACL action (``Model.fault``), at the current time."""
        self._advance_to(self._now)
        self._state = self._pick(
            self._model.fault(self._state, action=action, node=0, at_ms=self._now)
        )

    def describe(self) -> dict[str, Any]:
        return dict(self._description)

    def close(self) -> None:
        pass
