"""Controller epochs and fencing: who may act as controller, and whose messages a node accepts.

Three rules, one per mode of Kafka's control plane. Each is a pure function of its inputs; where
Kafka may legally do several things (which broker wins an election race, whether a timer right at
its deadline has fired) the functions return every allowed outcome.

**ZooKeeper-mode controller** (Kafka ≤ 3.9; ``core/.../controller/KafkaController.scala``,
``ControllerContext.scala``, ``zk/KafkaZkClient.registerControllerAndIncrementControllerEpoch``).
The controller is whoever holds the ephemeral ``/controller`` znode; ``/controller_epoch`` starts
at ``KafkaController.InitialControllerEpoch`` (0) and each successful election writes ``epoch + 1``
in the same ZooKeeper multi-op that creates ``/controller``, so epochs strictly increase and each
epoch has exactly one controller. ``/controller`` disappears when its owner's ZooKeeper session
expires (e.g. the owner was paused past ``zookeeper.session.timeout.ms``), and a live broker wins
the next election. The old controller does not know yet: when it resumes it is a *zombie* that
still stamps its requests with the old epoch until it processes its session expiry and resigns.
Receivers fence it (``server/ReplicaManager.scala``: ``maybeUpdateMetadataCache`` for
UpdateMetadata, ``becomeLeaderOrFollower`` for LeaderAndIsr): a control request whose
``ControllerEpoch`` is lower than the highest the receiver has accepted is answered
``STALE_CONTROLLER_EPOCH`` and changes nothing; one with an equal or higher epoch is processed and
the receiver adopts its epoch (``ReplicaManager.controllerEpoch``). A request carrying
``BrokerEpoch = -1`` (``AbstractControlRequest.UNKNOWN_BROKER_EPOCH``) skips the broker-epoch check
(``ZkBrokerEpochManager.isBrokerEpochStale``), so only the controller epoch decides.

**KRaft quorum** (KIP-595; ``raft/.../QuorumState.java``, ``LeaderState.java``,
``KafkaRaftClient.java``). Every voter keeps an epoch that never decreases (``QuorumState``
refuses every transition to a lower epoch). A candidate bumps its epoch by one and votes for
itself; a voter grants at most one vote per epoch; a candidate with a majority of votes becomes
the epoch's only leader. Any message carrying a higher epoch moves the receiver to that epoch as
follower or unattached — a leader that resumes after a pause steps down the moment it hears the
new epoch (or resigns on its own when its check-quorum timer, 1.5 × fetch timeout, expires).
Messages with a lower epoch are rejected (``FENCED_LEADER_EPOCH``) and change nothing.

**KRaft broker liveness** (KIP-631; ``metadata/.../controller/BrokerHeartbeatManager.java``,
``QuorumController.maybeFenceStaleBrokerPeriodNs``). A broker that has not heartbeated to the
active controller for ``broker.session.timeout.ms`` is fenced by a periodic task that runs every
``session / 8``, so fencing lands between ``session`` and ``1.125 × session`` after the last
heartbeat (a new active controller restarts every broker's clock at its activation, because
heartbeat times are soft state). A fenced broker is unfenced by the first heartbeat after it has
caught up with the metadata log (``calculateNextBrokerState``: ``currentMetadataOffset >=
registerBrokerRecordOffset``). Other brokers see the change once they replay the record, so an
observation through ``DescribeCluster``/``Metadata`` lags by a propagation delay.

The observation checkers at the end (:func:`check_zk_readings`, :func:`check_quorum_observations`)
state the same rules as properties of what a test can read from a live cluster.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from kgc.model.errors import NONE, STALE_CONTROLLER_EPOCH

INITIAL_CONTROLLER_EPOCH = 0  # KafkaController.InitialControllerEpoch
UNKNOWN_BROKER_EPOCH = -1  # AbstractControlRequest.UNKNOWN_BROKER_EPOCH


class InvalidTransition(ValueError):
    """A transition Kafka's rules do not allow from this state; the message says which rule."""


def _get(pairs: tuple[tuple[int, int], ...], key: int, default: int) -> int:
    for k, v in pairs:
        if k == key:
            return v
    return default


def _put(pairs: tuple[tuple[int, int], ...], key: int, value: int) -> tuple[tuple[int, int], ...]:
    return tuple(sorted({**dict(pairs), key: value}.items()))


def _drop(pairs: tuple[tuple[int, int], ...], key: int) -> tuple[tuple[int, int], ...]:
    return tuple((k, v) for k, v in pairs if k != key)


# =========================================================================== receiver-side fencing


@dataclass(frozen=True, slots=True, kw_only=True)
class ControlResult:
    """A broker's answer to one control request (UpdateMetadata, LeaderAndIsr, StopReplica)."""

    error: str
    controller_epoch: int  # the receiver's ReplicaManager.controllerEpoch afterwards


def receive_control_request(known_epoch: int, request_epoch: int) -> ControlResult:
    """ReplicaManager's rule: lower than known -> STALE_CONTROLLER_EPOCH; otherwise adopt it."""
    if request_epoch < known_epoch:
        return ControlResult(error=STALE_CONTROLLER_EPOCH, controller_epoch=known_epoch)
    return ControlResult(error=NONE, controller_epoch=request_epoch)


# ================================================================= ZooKeeper-mode controller model


@dataclass(frozen=True, slots=True, kw_only=True)
class ZkCluster:
    """ZooKeeper's view plus what each broker believes.

    ``controller_epoch`` / ``controller`` are the ``/controller_epoch`` and ``/controller`` znodes.
    ``sessions`` are the brokers whose ZooKeeper session is alive. ``acting`` maps a broker that
    believes it is the controller to the epoch it stamps on its requests (a zombie keeps its entry
    after its session expired, until it resigns). ``known`` is each broker's
    ``ReplicaManager.controllerEpoch``; ``paused`` brokers neither send nor receive.
    """

    brokers: tuple[int, ...]
    controller_epoch: int = INITIAL_CONTROLLER_EPOCH
    controller: int | None = None
    sessions: frozenset[int] = frozenset()
    acting: tuple[tuple[int, int], ...] = ()
    known: tuple[tuple[int, int], ...] = ()
    paused: frozenset[int] = frozenset()

    def acting_epoch(self, broker: int) -> int | None:
        epoch = _get(self.acting, broker, -1)
        return None if epoch < 0 else epoch

    def known_epoch(self, broker: int) -> int:
        return _get(self.known, broker, INITIAL_CONTROLLER_EPOCH)


def zk_cluster(brokers: Iterable[int]) -> ZkCluster:
    """A fresh cluster: every broker has a session, nobody is controller yet."""
    ids = tuple(sorted(brokers))
    return ZkCluster(brokers=ids, sessions=frozenset(ids))


class ZkControllerRules:
    """The ZooKeeper-mode rules as transitions. Subclass to build a deliberately broken variant."""

    def receive(self, known_epoch: int, request_epoch: int) -> ControlResult:
        return receive_control_request(known_epoch, request_epoch)

    def elections(self, cluster: ZkCluster) -> list[ZkCluster]:
        """Every allowed outcome of the election race while ``/controller`` is empty: any broker
        with a live session that is not paused may create it, writing ``/controller_epoch + 1``."""
        if cluster.controller is not None:
            return []
        out = []
        for b in sorted(cluster.sessions - cluster.paused):
            epoch = cluster.controller_epoch + 1
            out.append(
                replace(
                    cluster,
                    controller_epoch=epoch,
                    controller=b,
                    acting=_put(cluster.acting, b, epoch),
                    # the new controller's own ReplicaManager learns the epoch from its first
                    # UpdateMetadata to itself; model it as immediate
                    known=_put(cluster.known, b, max(epoch, cluster.known_epoch(b))),
                )
            )
        return out

    def elect(self, cluster: ZkCluster, broker: int) -> ZkCluster:
        """The election outcome in which ``broker`` wins; InvalidTransition if it cannot."""
        for c in self.elections(cluster):
            if c.controller == broker:
                return c
        raise InvalidTransition(
            f"broker {broker} cannot become controller: /controller is held by "
            f"{cluster.controller} or broker {broker} has no live session / is paused"
        )

    def pause(self, cluster: ZkCluster, broker: int) -> ZkCluster:
        return replace(cluster, paused=cluster.paused | {broker})

    def resume(self, cluster: ZkCluster, broker: int) -> ZkCluster:
        """The broker runs again. If its session expired it is still acting (a zombie) until
        :meth:`notice_expiry`."""
        return replace(cluster, paused=cluster.paused - {broker})

    def expire_session(self, cluster: ZkCluster, broker: int) -> ZkCluster:
        """ZooKeeper expires the broker's session (it was silent past the session timeout): its
        ephemeral ``/controller`` znode, if any, is deleted. The broker itself is not told."""
        return replace(
            cluster,
            sessions=cluster.sessions - {broker},
            controller=None if cluster.controller == broker else cluster.controller,
        )

    def notice_expiry(self, cluster: ZkCluster, broker: int) -> ZkCluster:
        """The (running) broker processes its session expiry: it resigns as controller
        (``KafkaController.onControllerResignation``) and opens a new session."""
        if broker in cluster.paused:
            raise InvalidTransition(f"broker {broker} is paused; resume it first")
        acting = cluster.acting
        if cluster.controller != broker:
            acting = _drop(acting, broker)
        return replace(cluster, acting=acting, sessions=cluster.sessions | {broker})

    def send(
        self, cluster: ZkCluster, sender: int, receiver: int
    ) -> tuple[ZkCluster, ControlResult]:
        """``sender``, acting as controller, sends a control request stamped with its epoch."""
        epoch = cluster.acting_epoch(sender)
        if epoch is None:
            raise InvalidTransition(f"broker {sender} does not act as controller")
        if sender in cluster.paused or receiver in cluster.paused:
            raise InvalidTransition("a paused broker neither sends nor receives")
        return self.deliver(cluster, receiver, epoch)

    def deliver(
        self, cluster: ZkCluster, receiver: int, request_epoch: int
    ) -> tuple[ZkCluster, ControlResult]:
        """A control request stamped ``request_epoch`` (from any sender, e.g. a test client)."""
        result = self.receive(cluster.known_epoch(receiver), request_epoch)
        return replace(
            cluster, known=_put(cluster.known, receiver, result.controller_epoch)
        ), result


# =============================================================================== KRaft quorum model

Role = Literal["unattached", "candidate", "leader", "follower", "resigned"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Voter:
    """One voter's ``QuorumState``: its epoch, role, known leader, vote cast in this epoch, and (as
    a candidate) the votes granted to it."""

    node: int
    epoch: int = 0
    role: Role = "unattached"
    leader: int | None = None
    voted_for: int | None = None
    votes: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True, kw_only=True)
class Quorum:
    voters: tuple[Voter, ...]
    paused: frozenset[int] = frozenset()
    # every (epoch, leader) ever elected: the history the one-leader-per-epoch property reads
    elected: frozenset[tuple[int, int]] = frozenset()

    def voter(self, node: int) -> Voter:
        for v in self.voters:
            if v.node == node:
                return v
        raise InvalidTransition(f"node {node} is not a voter")

    def with_voter(self, voter: Voter) -> Quorum:
        return replace(
            self, voters=tuple(voter if v.node == voter.node else v for v in self.voters)
        )

    @property
    def majority(self) -> int:
        return len(self.voters) // 2 + 1

    def leaders(self) -> dict[int, int]:
        """Node -> epoch, for every voter that currently believes it is leader."""
        return {v.node: v.epoch for v in self.voters if v.role == "leader"}


def quorum(nodes: Iterable[int]) -> Quorum:
    return Quorum(voters=tuple(Voter(node=n) for n in sorted(nodes)))


class QuorumRules:
    """KIP-595 leader election as transitions. Subclass to build a deliberately broken variant."""

    def _running(self, q: Quorum, node: int) -> Voter:
        if node in q.paused:
            raise InvalidTransition(f"node {node} is paused")
        return q.voter(node)

    def observe_epoch(self, q: Quorum, node: int, epoch: int, leader: int | None) -> Quorum:
        """``node`` receives any message stamped ``epoch`` (naming ``leader`` if known).

        Higher epoch: move to it as follower of ``leader`` (or unattached), dropping leadership.
        Same epoch with a leader it did not know: become its follower. Lower: rejected, no change.
        """
        v = self._running(q, node)
        if epoch > v.epoch:
            role: Role = "follower" if leader is not None else "unattached"
            return q.with_voter(
                Voter(node=node, epoch=epoch, role=role, leader=leader, voted_for=None)
            )
        if epoch == v.epoch and leader is not None and v.leader is None and v.role != "leader":
            return q.with_voter(replace(v, role="follower", leader=leader, votes=frozenset()))
        return q

    def start_election(self, q: Quorum, node: int) -> Quorum:
        """Election timeout: ``node`` becomes candidate in ``epoch + 1`` and votes for itself."""
        v = self._running(q, node)
        if v.role == "leader":
            raise InvalidTransition(f"node {node} leads epoch {v.epoch}; a leader does not run")
        return q.with_voter(
            Voter(
                node=node,
                epoch=v.epoch + 1,
                role="candidate",
                leader=None,
                voted_for=node,
                votes=frozenset({node}),
            )
        )

    def may_grant(self, voter: Voter, candidate: int, epoch: int) -> bool:
        """One vote per epoch (``EpochState.canGrantVote``; log recency is not modelled)."""
        if epoch < voter.epoch:
            return False
        if epoch > voter.epoch:
            return True
        return voter.voted_for in (None, candidate) and voter.leader is None

    def request_vote(self, q: Quorum, candidate: int, voter: int) -> Quorum:
        """``candidate`` asks ``voter``; the voter adopts the epoch and grants if it may."""
        c = self._running(q, candidate)
        if c.role != "candidate":
            raise InvalidTransition(f"node {candidate} is not a candidate")
        v = self._running(q, voter)
        if voter == candidate:
            return q
        if not self.may_grant(v, candidate, c.epoch):
            return self.observe_epoch(q, candidate, v.epoch, v.leader) if v.epoch > c.epoch else q
        if c.epoch > v.epoch:
            v = Voter(node=voter, epoch=c.epoch, role="unattached")
        q = q.with_voter(replace(v, voted_for=candidate))
        return q.with_voter(replace(c, votes=c.votes | {voter}))

    def become_leader(self, q: Quorum, node: int) -> Quorum:
        v = self._running(q, node)
        if v.role != "candidate" or len(v.votes) < q.majority:
            raise InvalidTransition(
                f"node {node} cannot lead epoch {v.epoch}: {len(v.votes)} of {q.majority} votes"
            )
        q = q.with_voter(replace(v, role="leader", leader=node, votes=frozenset()))
        return replace(q, elected=q.elected | {(v.epoch, node)})

    def resign(self, q: Quorum, node: int) -> Quorum:
        """Check-quorum expiry: a leader that heard from no majority steps down in its epoch."""
        v = self._running(q, node)
        if v.role != "leader":
            raise InvalidTransition(f"node {node} is not leader")
        return q.with_voter(replace(v, role="resigned"))

    def pause(self, q: Quorum, node: int) -> Quorum:
        return replace(q, paused=q.paused | {node})

    def resume(self, q: Quorum, node: int) -> Quorum:
        return replace(q, paused=q.paused - {node})


# ================================================================== KRaft broker liveness (fencing)


@dataclass(frozen=True, slots=True, kw_only=True)
class LivenessConfig:
    """Timing of broker fencing. ``propagation_ms`` is how long the observing broker may take to
    replay the fence/unfence record; ``unfence_ms`` bounds resume -> heartbeat -> caught up ->
    unfenced -> replayed. Both are tolerances to measure, not Kafka settings."""

    session_timeout_ms: float  # broker.session.timeout.ms
    heartbeat_interval_ms: float  # broker.heartbeat.interval.ms
    # the broker sends its next heartbeat one interval after the previous *answer*, so on a slow
    # machine the gap between heartbeats is the interval plus a round trip: allow this much more
    heartbeat_slack_ms: float = 0.0
    fence_check_factor: float = 1.125  # QuorumController.maybeFenceStaleBrokerPeriodNs: session/8
    propagation_ms: float = 1500.0
    unfence_ms: float = 6000.0
    early_ms: float = 50.0


@dataclass(frozen=True, slots=True, kw_only=True)
class LivenessEvent:
    """Something that changes when a broker heartbeats: ``pause``/``kill`` (it stops),
    ``resume``/``restart`` (it starts again), ``controller`` (a new active controller activated,
    restarting every broker's session clock)."""

    at_ms: float
    action: Literal["pause", "kill", "resume", "restart", "controller"]


def allowed_fenced(
    events: Sequence[LivenessEvent], at_ms: float, config: LivenessConfig
) -> frozenset[bool]:
    """Every value of "is this broker fenced?" an observer may read at ``at_ms``.

    The broker starts unfenced and heartbeating. For each stretch in which it is stopped (paused
    or killed, from ``s`` until it runs again at ``r``): its last heartbeat was at most one
    interval (plus ``heartbeat_slack_ms``) before ``s``, so fencing cannot land before
    ``s - interval - slack + session``; it must have
    landed (and propagated) by ``s + fence_check_factor × session + propagation`` — or that long
    after a controller activation inside the stretch, whichever is later — if the broker is still
    stopped then. Once it runs again its next heartbeat comes within one interval (so a stretch
    shorter than ``session - 2 × interval`` cannot fence it at all), and it must read as unfenced
    again ``unfence_ms`` after ``r``.
    """
    c = config
    stretches: list[tuple[float, float, float]] = []  # (start, end or inf, must-be-fenced-by)
    start: float | None = None
    must_by = 0.0
    inf = float("inf")
    for ev in sorted(events, key=lambda e: e.at_ms):
        if ev.action in ("pause", "kill"):
            if start is None:
                start = ev.at_ms
                must_by = start + c.fence_check_factor * c.session_timeout_ms + c.propagation_ms
        elif ev.action in ("resume", "restart"):
            if start is not None:
                stretches.append((start, ev.at_ms, must_by))
                start = None
        elif ev.action == "controller" and start is not None:
            must_by = max(
                must_by,
                ev.at_ms + c.fence_check_factor * c.session_timeout_ms + c.propagation_ms,
            )
    if start is not None:
        stretches.append((start, inf, must_by))

    possible = False
    for s, r, hi in stretches:
        gap = c.heartbeat_interval_ms + c.heartbeat_slack_ms
        lo = s - gap + c.session_timeout_ms - c.early_ms
        if r + gap < lo:
            continue  # back before its session could lapse
        if hi <= at_ms < r:
            return frozenset({True})
        if lo <= at_ms < r + c.unfence_ms:
            possible = True
    return frozenset({False, True}) if possible else frozenset({False})


# ========================================================================= observation checkers


@dataclass(frozen=True, slots=True, kw_only=True)
class ZkReading:
    """One read of ``/controller`` (broker id, or None if absent) and ``/controller_epoch``."""

    at_ms: float
    controller: int | None
    controller_epoch: int


@dataclass(frozen=True, slots=True, kw_only=True)
class QuorumObservation:
    """What ``node`` said about itself at ``at_ms``: its epoch, and the leader it knows (itself if
    it claims leadership). From DescribeQuorum on the node's controller listener (only a leader
    answers it) or from the node's own ``QuorumState`` transition log."""

    at_ms: float
    node: int
    epoch: int
    leader: int | None
    source: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Violation:
    rule: str
    detail: str
    at_ms: float = field(default=0.0)


def check_zk_readings(readings: Sequence[ZkReading]) -> list[Violation]:
    """``/controller_epoch`` never decreases, and one epoch never names two controllers."""
    out: list[Violation] = []
    seen: dict[int, int] = {}
    highest = INITIAL_CONTROLLER_EPOCH
    for r in sorted(readings, key=lambda r: r.at_ms):
        if r.controller_epoch < highest:
            out.append(
                Violation(
                    rule="epoch-decreased",
                    detail=f"/controller_epoch read {r.controller_epoch} after {highest}",
                    at_ms=r.at_ms,
                )
            )
        highest = max(highest, r.controller_epoch)
        if r.controller is None:
            continue
        first = seen.setdefault(r.controller_epoch, r.controller)
        if first != r.controller:
            out.append(
                Violation(
                    rule="two-controllers-one-epoch",
                    detail=f"epoch {r.controller_epoch}: controller {first} and {r.controller}",
                    at_ms=r.at_ms,
                )
            )
    return out


def check_quorum_observations(observations: Sequence[QuorumObservation]) -> list[Violation]:
    """No node's epoch goes backwards, and no epoch has two leaders (claimed or followed)."""
    out: list[Violation] = []
    last: dict[int, QuorumObservation] = {}
    leader_of: dict[int, QuorumObservation] = {}
    for o in sorted(observations, key=lambda o: o.at_ms):
        prev = last.get(o.node)
        if prev is not None and o.epoch < prev.epoch:
            out.append(
                Violation(
                    rule="epoch-decreased",
                    detail=f"node {o.node} at epoch {o.epoch} ({o.source}) after {prev.epoch} "
                    f"({prev.source})",
                    at_ms=o.at_ms,
                )
            )
        if prev is None or o.epoch >= prev.epoch:
            last[o.node] = o
        if o.leader is None:
            continue
        first = leader_of.setdefault(o.epoch, o)
        if first.leader != o.leader:
            out.append(
                Violation(
                    rule="two-leaders-one-epoch",
                    detail=f"epoch {o.epoch}: leader {first.leader} (node {first.node}, "
                    f"{first.source}) and leader {o.leader} (node {o.node}, {o.source})",
                    at_ms=o.at_ms,
                )
            )
    return out


def highest_epoch(observations: Iterable[QuorumObservation]) -> Mapping[int, int]:
    """Node -> highest epoch observed."""
    out: dict[int, int] = {}
    for o in observations:
        out[o.node] = max(out.get(o.node, o.epoch), o.epoch)
    return out
