"""Quality: deliberately broken controller/failover models are caught, and Hypothesis shrinks the
counterexample to the few steps that matter.

* ZooKeeper-mode fencing: random sequences of elections, pauses, session expiries, resumes and
  control requests run through :class:`~kgc.model.controller.ZkControllerRules`. The property is
  stated on the *outcomes* alone — a broker never accepts a controller epoch lower than one it
  accepted before. The real rules keep it; a variant that accepts stale epochs breaks it, and the
  shrunk sequence is the zombie story: elect, pause, expire, elect another, tell a broker, resume,
  the zombie talks.
* Coordinator failover: the correct :class:`~kgc.model.failover.FailoverModel` plays the broker
  (answering as a real coordinator would once loaded) and produces a history; the checker folds it
  with a variant that forgets the persisted generation on load. It diverges, and the shrunk
  sequence is the coordinator's death followed by one request the new coordinator answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, find, given, settings, target
from hypothesis import strategies as st
from kgc.model.checker import check
from kgc.model.commands import (
    DescribeGroups,
    Heartbeat,
    OffsetCommit,
    OffsetFetch,
    Request,
    TopicPartition,
    TopicPartitionOffset,
)
from kgc.model.controller import (
    ControlResult,
    InvalidTransition,
    ZkCluster,
    ZkControllerRules,
    zk_cluster,
)
from kgc.model.failover import (
    ROUTING_ERRORS,
    FailoverModel,
    FailoverRules,
    FailoverState,
    GroupRecord,
    LoadedGroup,
    PersistedMember,
)
from kgc.model.history import Event, Fault, Invoke, Receive

pytestmark = pytest.mark.quality

FIND = settings(
    database=None,
    max_examples=5000,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
    deadline=None,
)

# =================================================================================== ZooKeeper

BROKERS = (1, 2, 3)
ZkStep = tuple[str, int]
# elect: the lowest running broker with a session wins an empty /controller; expire: ZooKeeper
# expires every paused broker's session; send: every running broker that acts as controller sends
# a control request to every other running broker (as a controller does after each change)
zk_steps = st.lists(
    st.tuples(
        st.sampled_from(("elect", "pause", "resume", "expire", "notice", "send")),
        st.sampled_from(BROKERS),
    ),
    max_size=14,
)


class AcceptsStaleEpoch(ZkControllerRules):
    """Deliberately broken: a receiver that takes any controller epoch."""

    def receive(self, known_epoch: int, request_epoch: int) -> ControlResult:
        return ControlResult(error="NONE", controller_epoch=max(known_epoch, request_epoch))


def run_zk(rules: ZkControllerRules, steps: Sequence[ZkStep]) -> list[tuple[int, int, str]]:
    """Apply the steps that are possible (others are skipped); return every control request's
    (receiver, epoch, answer)."""
    c: ZkCluster = zk_cluster(BROKERS)
    answers: list[tuple[int, int, str]] = []
    for action, a in steps:
        try:
            if action == "elect":
                options = rules.elections(c)
                c = options[0] if options else c
            elif action == "pause":
                c = rules.pause(c, a)
            elif action == "resume":
                c = rules.resume(c, a)
            elif action == "expire":
                for b in sorted(c.paused):
                    c = rules.expire_session(c, b)
            elif action == "notice":
                c = rules.notice_expiry(c, a)
            elif action == "send":
                for sender in BROKERS:
                    epoch = c.acting_epoch(sender)
                    if epoch is None or sender in c.paused:
                        continue
                    for receiver in BROKERS:
                        if receiver != sender and receiver not in c.paused:
                            c, result = rules.send(c, sender, receiver)
                            answers.append((receiver, epoch, result.error))
        except InvalidTransition:
            continue
    return answers


def accepted_lower_epoch(answers: Sequence[tuple[int, int, str]]) -> bool:
    """The property, on outcomes only: some broker accepted an epoch below one it accepted."""
    highest: dict[int, int] = {}
    for receiver, epoch, error in answers:
        if error != "NONE":
            continue
        if epoch < highest.get(receiver, 0):
            return True
        highest[receiver] = max(highest.get(receiver, 0), epoch)
    return False


@given(zk_steps)
@settings(max_examples=300, deadline=None)
def test_real_rules_never_accept_a_lower_epoch(steps: list[ZkStep]) -> None:
    assert not accepted_lower_epoch(run_zk(ZkControllerRules(), steps))


def test_stale_epoch_acceptance_is_caught_and_shrunk() -> None:
    def broken(steps: list[ZkStep]) -> bool:
        answers = run_zk(AcceptsStaleEpoch(), steps)
        # guide the search: histories in which brokers accepted more distinct epochs are closer
        # to the zombie story (more failovers, more controllers talking)
        target(float(len({e for _, e, err in answers if err == "NONE"})), label="epochs")
        return accepted_lower_epoch(answers)

    minimal = find(zk_steps, broken, settings=FIND)
    actions = [a for a, _ in minimal]
    # elect, pause, expire, elect, resume, then the zombie and the new controller both talk
    # (the broken receiver takes the zombie's epoch after the new one): nothing shorter shows it
    assert len(minimal) <= 8, minimal
    assert actions[0] == "elect" and actions[-1] == "send" and "expire" in actions, minimal
    assert actions.count("elect") == 2 and "resume" in actions, minimal


# ===================================================================================== failover

TOPIC = "t"
RECORD = GroupRecord(
    generation_id=4,
    protocol_name="range",
    leader="c1-1",
    members=tuple(
        PersistedMember(
            member_id=f"{c}-1",
            assignment=f"a-{c}",
            session_timeout_ms=60_000,
            rebalance_timeout_ms=60_000,
        )
        for c in ("c1", "c2")
    ),
)
COORDINATOR = 2


def command(kind: str, client: str, value: int) -> Request:
    member = f"{client}-1"
    if kind == "heartbeat":
        return Heartbeat(client=client, member_id=member, generation_id=4, version=4)
    if kind == "commit":
        return OffsetCommit(
            client=client,
            member_id=member,
            generation_id=4,
            offsets=(TopicPartitionOffset(topic=TOPIC, partition=0, offset=value),),
            version=8,
        )
    if kind == "fetch":
        return OffsetFetch(
            client=client, partitions=(TopicPartition(topic=TOPIC, partition=0),), version=7
        )
    return DescribeGroups(client=client, version=5)


FStep = tuple[str, str, int]
failover_steps = st.lists(
    st.one_of(
        st.tuples(
            st.sampled_from(("heartbeat", "commit", "fetch", "describe")),
            st.sampled_from(("c1", "c2")),
            st.integers(0, 9),
        ),
        st.tuples(
            st.sampled_from(("kill", "pause", "resume", "restart")),
            st.just("node"),
            st.sampled_from((1, 2, 3)),
        ),
    ),
    max_size=10,
)


class ForgetsGeneration(FailoverRules):
    """Deliberately broken: loading forgets the persisted generation and members."""

    def load(self, record: GroupRecord, at_ms: float) -> LoadedGroup:
        return super().load(GroupRecord(generation_id=0), at_ms)


def _served_first(options: list[FailoverState], rid: int) -> FailoverState:
    """The broker's choice: once loaded, answer from the group (not a routing error)."""

    def rank(s: FailoverState) -> tuple[int, int]:
        answer = {r: resp for r, resp, _ in s.outbox}.get(rid)
        error = getattr(answer, "error", None)
        if answer is not None and hasattr(answer, "partitions") and error is None:
            error = answer.partitions[0].error if answer.partitions else None
        return (0 if answer is not None and error not in ROUTING_ERRORS else 1, 0)

    return min(options, key=rank)


def simulate(steps: Sequence[FStep]) -> list[Event]:
    """The correct model as the broker: a deterministic history for ``steps``."""
    model = FailoverModel(record=RECORD, coordinator=COORDINATOR, nodes=(1, 2, 3))
    state = model.initial()
    events: list[Event] = []
    t = 0.0
    rid = 0
    for kind, who, value in steps:
        t += 100.0
        advanced = list(model.advance(state, must_until=t, may_until=t))
        state = next((s for s in advanced if s.phase == "loaded"), advanced[0])
        if who == "node":
            options = list(model.fault(state, action=kind, node=value, at_ms=t))
            if not options:
                continue
            state = options[-1]  # outstanding answers still delivered, commits durable
            events.append(Fault(step=len(events), at_ms=t, action=kind, node=value))
            continue
        cmd = command(kind, who, value)
        options = list(model.invoke(state, request_id=rid, command=cmd, at_ms=t))
        state = _served_first(options, rid)
        events.append(Invoke(step=len(events), at_ms=t, request_id=rid, command=cmd))
        answer = model.outbox(state).get(rid)
        if answer is not None:
            events.append(
                Receive(step=len(events), at_ms=t + 1, request_id=rid, response=answer[0])
            )
            state = model.deliver(state, rid)
        rid += 1
    return events


def diverges(rules: FailoverRules | None, events: list[Event]) -> bool:
    model = FailoverModel(record=RECORD, coordinator=COORDINATOR, nodes=(1, 2, 3), rules=rules)
    return check(model, events) is not None


@given(failover_steps)
@settings(max_examples=200, deadline=None)
def test_correct_failover_model_explains_its_own_histories(steps: list[FStep]) -> None:
    assert not diverges(None, simulate(steps))


def test_forgotten_generation_is_caught_and_shrunk() -> None:
    minimal: Any = find(
        failover_steps,
        lambda s: diverges(ForgetsGeneration(), simulate(s)),
        settings=FIND,
    )
    # the coordinator dies (killed or paused), then one request is answered from the loaded group
    assert len(minimal) == 2, minimal
    assert minimal[0][0] in ("kill", "pause") and minimal[0][2] == COORDINATOR, minimal
