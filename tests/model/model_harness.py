"""A tiny driver for model unit tests: exact time, explicit choices, short command builders.

``Sim`` plays the model the way a broker would run with no timer lateness: ``at(t)`` fires every
timer due by ``t`` (must = may = t). It keeps the *set* of states the model allows; most steps
have one, and ``only`` asserts that. Responses are read with ``answer`` (all states must agree) and
consumed with ``take``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kgc.model import ClassicGroupModel, GroupConfig, GroupState
from kgc.model.commands import (
    Assignment,
    DescribeGroups,
    FindCoordinator,
    Heartbeat,
    JoinGroup,
    LeaveGroup,
    MemberIdentity,
    OffsetCommit,
    OffsetFetch,
    Protocol,
    Request,
    Response,
    SyncGroup,
    TopicPartition,
    TopicPartitionOffset,
)

RANGE = (Protocol(name="range", metadata="m"),)


class Sim:
    def __init__(self, **config: Any) -> None:
        config.setdefault("group_min_session_timeout_ms", 500)
        config.setdefault("group_initial_rebalance_delay_ms", 0)
        self.model = ClassicGroupModel(GroupConfig(**config))
        self.states: list[GroupState] = [self.model.initial()]
        self.t = 0.0
        self.rid = 0

    # ---------------------------------------------------------------- time and requests
    def at(self, t: float) -> Sim:
        assert t >= self.t, "time only moves forward"
        self.t = t
        out: dict[GroupState, None] = {}
        for s in self.states:
            out.update(dict.fromkeys(self.model.advance(s, must_until=t, may_until=t)))
        self.states = list(out)
        return self

    def send(self, command: Request, at: float | None = None) -> int:
        if at is not None:
            self.at(at)
        self.rid += 1
        out: dict[GroupState, None] = {}
        for s in self.states:
            out.update(
                dict.fromkeys(
                    self.model.invoke(s, request_id=self.rid, command=command, at_ms=self.t)
                )
            )
        self.states = list(out)
        return self.rid

    def keep(self, predicate: Callable[[GroupState], bool]) -> Sim:
        self.states = [s for s in self.states if predicate(s)]
        assert self.states, "no state satisfies the predicate"
        return self

    # ---------------------------------------------------------------- observations
    @property
    def only(self) -> GroupState:
        assert len(self.states) == 1, f"expected one state, got {len(self.states)}"
        return self.states[0]

    def answer(self, rid: int) -> Response | None:
        seen = {self.model.outbox(s).get(rid, (None, 0))[0] for s in self.states}
        assert len(seen) == 1, f"states disagree on request {rid}: {seen}"
        return seen.pop()

    def answers(self, rid: int) -> set[Response | None]:
        return {self.model.outbox(s).get(rid, (None, 0))[0] for s in self.states}

    def take(self, rid: int) -> Response:
        """The (agreed) response to ``rid``, which must exist; it is delivered."""
        r = self.answer(rid)
        assert r is not None, f"request {rid} has no answer yet"
        self.states = [self.model.deliver(s, rid) for s in self.states]
        return r

    def observe(self, rid: int, response: Response) -> Sim:
        """Keep the states that answered ``rid`` with ``response`` (as the checker does)."""
        self.states = [
            self.model.deliver(s, rid)
            for s in self.states
            if self.model.outbox(s).get(rid, (None, 0))[0] == response
        ]
        assert self.states, f"no state answers request {rid} with {response}"
        return self

    def members(self) -> list[str]:
        return [m.member_id for m in self.only.members]

    def deadline(self, member_id: str) -> float | None:
        m = self.only.member(member_id)
        assert m is not None, f"{member_id} is not a member"
        return m.heartbeat_deadline_ms


# -------------------------------------------------------------------------- command builders


def join(
    client: str,
    member_id: str = "",
    *,
    session: int = 10_000,
    rebalance: int = 60_000,
    version: int = 5,
    instance: str | None = None,
    protocols: tuple[Protocol, ...] = RANGE,
    protocol_type: str = "consumer",
) -> JoinGroup:
    return JoinGroup(
        client=client,
        member_id=member_id,
        group_instance_id=instance,
        session_timeout_ms=session,
        rebalance_timeout_ms=rebalance,
        protocol_type=protocol_type,
        protocols=protocols,
        version=version,
    )


def sync(
    client: str,
    member_id: str,
    generation: int,
    assignments: Iterable[tuple[str, str]] = (),
    *,
    version: int = 3,
    instance: str | None = None,
    protocol_type: str | None = None,
    protocol_name: str | None = None,
) -> SyncGroup:
    return SyncGroup(
        client=client,
        member_id=member_id,
        generation_id=generation,
        group_instance_id=instance,
        protocol_type=protocol_type,
        protocol_name=protocol_name,
        assignments=tuple(Assignment(member_id=m, assignment=a) for m, a in assignments),
        version=version,
    )


def heartbeat(
    client: str, member_id: str, generation: int, *, version: int = 3, instance: str | None = None
) -> Heartbeat:
    return Heartbeat(
        client=client,
        member_id=member_id,
        generation_id=generation,
        group_instance_id=instance,
        version=version,
    )


def leave(client: str, *members: tuple[str, str | None], version: int = 3) -> LeaveGroup:
    return LeaveGroup(
        client=client,
        members=tuple(MemberIdentity(member_id=m, group_instance_id=i) for m, i in members),
        version=version,
    )


def commit(
    client: str,
    member_id: str,
    generation: int,
    offsets: Iterable[tuple[str, int, int]] = (("t", 0, 5),),
    *,
    version: int = 8,
    instance: str | None = None,
    metadata: str = "",
) -> OffsetCommit:
    return OffsetCommit(
        client=client,
        member_id=member_id,
        generation_id=generation,
        group_instance_id=instance,
        offsets=tuple(
            TopicPartitionOffset(topic=t, partition=p, offset=o, metadata=metadata)
            for t, p, o in offsets
        ),
        version=version,
    )


def fetch(client: str, *partitions: tuple[str, int], version: int = 6) -> OffsetFetch:
    return OffsetFetch(
        client=client,
        partitions=tuple(TopicPartition(topic=t, partition=p) for t, p in partitions),
        version=version,
    )


def describe(client: str, version: int = 5) -> DescribeGroups:
    return DescribeGroups(client=client, version=version)


def find(client: str, version: int = 3) -> FindCoordinator:
    return FindCoordinator(client=client, version=version)


def stable_group(sim: Sim, *clients: str, session: int = 10_000, start: float = 0.0) -> int:
    """Bring ``clients`` (v3 JoinGroup, no handshake) into one Stable generation; the first is the
    leader and assigns ``a-<member>`` to everyone. Returns the generation."""
    sim.at(start)
    rids = [sim.send(join(c, version=3, session=session)) for c in clients]  # all at `start`
    sim.at(start + 1)  # the initial delay (0) passes: the join phase completes
    resp = [sim.take(r) for r in rids]
    gen = resp[0].generation_id  # type: ignore[union-attr]
    ids = [f"{c}-1" for c in clients]
    follower_syncs = [sim.send(sync(c, m, gen)) for c, m in zip(clients[1:], ids[1:], strict=True)]
    leader_sync = sim.send(sync(clients[0], ids[0], gen, [(m, f"a-{m}") for m in ids]))
    for r in [leader_sync, *follower_syncs]:
        sim.take(r)
    assert sim.only.state == "Stable"
    return gen


def joins_handled_out_of_order() -> list[Any]:
    """A history Apache Kafka 4.3.1 gave (no initial delay): c1 and c2 got their ids, then their
    rejoins were sent 0.4 ms apart; the broker handled c2's first and completed the join phase with
    c2 alone. Only the reorder window (``model/timed.py``) explains it."""
    from kgc.model.commands import JoinedMember, JoinGroupResponse
    from kgc.model.history import Invoke, Receive

    events: list[Any] = []
    for rid, (client, sent, answered) in enumerate((("c1", 0.1, 1.2), ("c2", 1.4, 2.9))):
        events.append(Invoke(step=rid, at_ms=sent, request_id=rid, command=join(client, version=5)))
        required = JoinGroupResponse(error="MEMBER_ID_REQUIRED", member_id=f"{client}-1")
        events.append(Receive(step=rid, at_ms=answered, request_id=rid, response=required))
    events.append(Invoke(step=2, at_ms=3.1, request_id=2, command=join("c1", "c1-1", version=5)))
    events.append(Invoke(step=3, at_ms=3.5, request_id=3, command=join("c2", "c2-1", version=5)))
    alone = JoinGroupResponse(
        error="NONE",
        generation_id=1,
        protocol_name="range",
        leader="c2-1",
        member_id="c2-1",
        members=(JoinedMember(member_id="c2-1", metadata="m"),),
    )
    events.append(Receive(step=3, at_ms=4.9, request_id=3, response=alone))
    return events
