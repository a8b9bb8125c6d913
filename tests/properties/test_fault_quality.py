"""Quality: deliberately broken controller/failover models are caught, and Hypothesis shrinks the
counterexample to the few steps that matter.

* ZooKeeper-mode fencing: random sequences of elections, pauses, session expiries, resumes and
  control requests run through :class:`~kgc.model.controller.ZkControllerRules`. The property is
  stated on the *outcomes* alone — a broker never accepts a controller epoch lower than one it
  accepted before. The real rules keep it; a variant that accepts stale epochs breaks it, and the
  shrunk sequence is the zombie story: elect, pause, expire, elect another, tell a broker, resume,
  the zombie talks.
* Coordinator failover: the correct :class:`~kgc.model.classic.cluster_group.ClusterGroupModel`
plays the
  broker (answering as a real coordinator would once loaded) for a Stable group and two consumers
  that rediscover the coordinator as Kafka's clients do, and produces a history; the checker folds
  it with the variant ``failover-forgets-generation`` (a new coordinator loads the group at
  generation 0). It diverges, and the shrunk sequence is the coordinator's death followed by one
  request the new coordinator answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, find, given, settings, target
from hypothesis import strategies as st
from kgc.engine.broken import broken
from kgc.model.checker import check
from kgc.model.classic.cluster_group import ClusterGroupModel, ClusterGroupState
from kgc.model.commands import (
    Assignment,
    DescribeGroups,
    FindCoordinator,
    FindCoordinatorResponse,
    Heartbeat,
    JoinGroup,
    OffsetCommit,
    OffsetFetch,
    Protocol,
    Request,
    Response,
    SyncGroup,
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
from kgc.model.coordinator import needs_rediscovery
from kgc.model.history import Event, Fault, Invoke, Receive
from kgc.model.profiles import GroupConfig

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
COORDINATOR = 2
CONFIG = GroupConfig(
    group_id="kgc-quality",
    offsets_topic_num_partitions=1,
    offsets_partition_leaders=(COORDINATOR,),
    node_ids=(1, 2, 3),
    group_initial_rebalance_delay_ms=0,
)
SESSION_MS = 60_000
GENERATION = 1


def command(kind: str, client: str, value: int) -> Request:
    member = f"{client}-1"
    if kind == "heartbeat":
        return Heartbeat(client=client, member_id=member, generation_id=GENERATION, version=4)
    if kind == "commit":
        return OffsetCommit(
            client=client,
            member_id=member,
            generation_id=GENERATION,
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


class Simulation:
    """The correct model as the broker, and two consumers: a deterministic history.

    The broker's choices: once loading can have ended, it has; the new coordinator is the lowest
    running node; a request is answered from the group where the model allows it; every emitted
    answer reaches its client at once. A consumer sends FindCoordinator before a request when its
    coordinator is stopped or its last answer asked for rediscovery (Kafka's
    ``AbstractCoordinator``)."""

    def __init__(self) -> None:
        self.model = ClusterGroupModel(CONFIG)
        self.state: ClusterGroupState = self.model.initial()
        self.events: list[Event] = []
        self.t = 0.0
        self.rid = 0
        self.rediscover: set[str] = set()
        self.paused: set[int] = set()

    def advance(self, ms: float) -> None:
        self.t += ms
        worlds = list(self.model.advance(self.state, must_until=self.t, may_until=self.t))
        self.state = next((s for s in worlds if s.phase == "serving"), worlds[0])

    def send(self, request: Request) -> None:
        rid = self.rid
        self.rid += 1
        options = self.model.invoke(self.state, request_id=rid, command=request, at_ms=self.t)
        self.state = min(options, key=lambda s: self._rank(s, rid))
        self.events.append(
            Invoke(step=len(self.events), at_ms=self.t, request_id=rid, command=request)
        )

    def deliver(self) -> None:
        for rid, (response, _) in sorted(self.model.outbox(self.state).items()):
            self.events.append(
                Receive(step=len(self.events), at_ms=self.t + 1, request_id=rid, response=response)
            )
            self.state = self.model.deliver(self.state, rid)
            self._learn(rid, response)

    def call(self, request: Request, *, after_ms: float = 100.0) -> None:
        client = request.client
        if client in self.rediscover or self.state.route(client) in self.state.stopped:
            self.advance(after_ms)
            self.send(FindCoordinator(client=client, version=3))
            self.deliver()
            after_ms = 5.0
        self.advance(after_ms)
        self.send(request)
        self.deliver()

    def fault(self, action: str, node: int) -> None:
        """Perform a nemesis action if it is possible: at most one node down (so a replica is
        always left to move to), resume only a paused node, restart only a killed one."""
        stopped = self.state.stopped
        if action in ("kill", "pause") and stopped:
            return
        if action in ("resume", "restart") and node not in stopped:
            return
        if action == "resume" and node not in self.paused:
            return
        if action == "restart" and node in self.paused:
            return
        self.advance(100.0)
        self.state = self.model.fault(self.state, action=action, node=node, at_ms=self.t)[0]
        self.events.append(Fault(step=len(self.events), at_ms=self.t, action=action, node=node))
        if action == "pause":
            self.paused.add(node)
        elif action == "resume":
            self.paused.discard(node)

    def _rank(self, state: ClusterGroupState, rid: int) -> int:
        answer = self.model.outbox(state).get(rid)
        if answer is None:
            return 2
        response: Response = answer[0]
        if isinstance(response, FindCoordinatorResponse):
            return 0 if response.node_id == state.coordinator else 1
        served = state.phase == "serving" and any(o.request_id == rid for o in state.group.outbox)
        return 0 if served else 1

    def _learn(self, rid: int, response: Response) -> None:
        request = next(
            e.command for e in self.events if isinstance(e, Invoke) and e.request_id == rid
        )
        error = getattr(response, "error", None)
        if error is None and getattr(response, "partitions", None):
            error = response.partitions[0].error  # type: ignore[attr-defined]
        if needs_rediscovery(str(error)):
            self.rediscover.add(request.client)
        elif isinstance(response, FindCoordinatorResponse):
            self.rediscover.discard(request.client)


def stable_group(sim: Simulation) -> None:
    """c1 and c2 join at once (JoinGroup v3, no member-id handshake) and sync: generation 1,
    leader c1-1."""
    protocols = (Protocol(name="range", metadata="sub"),)
    for client in ("c1", "c2"):
        sim.send(
            JoinGroup(
                client=client,
                session_timeout_ms=SESSION_MS,
                rebalance_timeout_ms=SESSION_MS,
                protocols=protocols,
                version=3,
            )
        )
    sim.advance(1.0)
    sim.deliver()
    assignments = tuple(Assignment(member_id=f"{c}-1", assignment=f"a-{c}") for c in ("c1", "c2"))
    sim.call(
        SyncGroup(
            client="c1",
            member_id="c1-1",
            generation_id=GENERATION,
            assignments=assignments,
            version=4,
        )
    )
    sim.call(SyncGroup(client="c2", member_id="c2-1", generation_id=GENERATION, version=4))


def simulate(steps: Sequence[FStep]) -> list[Event]:
    """The correct model as the broker: a deterministic history for ``steps`` after the group
    formed."""
    sim = Simulation()
    stable_group(sim)
    for kind, who, value in steps:
        if who == "node":
            sim.fault(kind, value)
        else:
            sim.call(command(kind, who, value))
    return sim.events


def diverges(events: list[Event], variant: str | None = None) -> bool:
    if variant is None:
        return check(ClusterGroupModel(CONFIG), events) is not None
    with broken(variant):
        return check(ClusterGroupModel(CONFIG), events) is not None


def test_the_simulated_group_forms() -> None:
    answers = [e.response for e in simulate([]) if isinstance(e, Receive)]
    assert [a.type for a in answers] == ["JoinGroupResponse"] * 2 + ["SyncGroupResponse"] * 2
    assert all(a.error == "NONE" for a in answers), answers  # type: ignore[union-attr]
    assert {a.generation_id for a in answers[:2]} == {GENERATION}  # type: ignore[union-attr]


@given(failover_steps)
@settings(max_examples=200, deadline=None)
def test_correct_failover_model_explains_its_own_histories(steps: list[FStep]) -> None:
    assert not diverges(simulate(steps))


def test_forgotten_generation_is_caught_and_shrunk() -> None:
    minimal: Any = find(
        failover_steps,
        lambda s: diverges(simulate(s), "failover-forgets-generation"),
        settings=FIND,
    )
    # the coordinator dies (killed or paused), then one request is answered from the loaded group
    assert len(minimal) == 2, minimal
    assert minimal[0][0] in ("kill", "pause") and minimal[0][2] == COORDINATOR, minimal
