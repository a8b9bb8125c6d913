"""Kafka bugs the model knows by name: where a release breaks the protocol, and what still holds.

Role: a release's rules (``profiles.py``) describe what that release does. A few releases do
something no rule can describe, because it breaks the protocol's own contract: one answer per
request. When a step leads into such a bug, the model does not guess what the broker does next:
the step produces a *bug world* (:class:`BugWorld`), a state that predicts nothing more, and the
checker (``checker.py``) sets it aside. The other worlds go on being checked as before. If every
other world is later refuted by what the broker does, the history is explained by that bug, and
the checker ends with it (``Checker.known_bug``) instead of a divergence. A bug world is refuted in
turn by an answer that the bug cannot give (:func:`refuted`), so a world in which the bug was only
possible does not excuse a broker that took another branch.

Each bug has a proof: a broker test that holds the broker to the contract and fails on the
releases with the bug (a strict xfail there), and passes on the release that fixed it.

Two bugs are known so far.

``join-answered-twice`` (Kafka 2.5 - 3.2; fixed in 3.3 by making the field ignorable). A leader
whose JoinGroup is below v5 gets the member list without instance ids, but until 3.3 the
response's ``GroupInstanceId`` field is not ``ignorable`` (``JoinGroupResponse.json``), so writing
an answer that lists a static member throws. The exception leaves
``GroupMetadata.maybeInvokeJoinCallback`` before it clears the member's ``awaitingJoinCallback``
and leaves ``GroupCoordinator.onCompleteJoin``'s loop over ``group.allMemberMetadata`` (a
``HashMap``) at the leader: members before the leader are answered, the leader and the members
after it are not, their callbacks stay set (so later fencing answers an old request a second
time), no sync deadline is scheduled, and the request whose thread completed the join (the last
JoinGroup, a LeaveGroup, or none for a timer) is answered UNSUPPORTED_VERSION by
``KafkaApis.handleError``, whether or not it was answered already. Proof:
``tests/lines/test_finding_double_answer.py``; the story: ``docs/release-lines.md``. What still
holds after it: every JoinGroup answered NONE for that generation names that leader, and the
leader itself never gets one.

What else still holds, since the bug is in writing join answers and touches neither the offsets
store nor the generation counter (so a bug world keeps judging those answers,
:func:`after_event`):

- **Offsets.** Each partition's committed offset is the one it had when the bug hit, or one an
  OffsetCommit sent since named (whether or not it was accepted: the bug world does not know),
  or none after an OffsetDelete or DeleteGroups sent since. An OffsetFetch answer (its error and
  the partition's ``NONE``) naming any other offset refutes the world.
- **Generations.** The generation never goes back (``GroupMetadata.initNextGeneration`` only adds
  one), unless the group is deleted (DeleteGroups sent since) or may vanish when Empty
  (``GroupConfig.empty_group_may_vanish``), and each join phase that completes needs a trigger:
  a JoinGroup (a new member, or a rejoin), a LeaveGroup, or a member's expiry, and a member
  expires at most once (it was there when the bug hit, or a JoinGroup since added it). So a
  Heartbeat, SyncGroup or OffsetCommit answered ``NONE`` for a generation below the bug's, or
  above the bug's plus twice the JoinGroups, plus the LeaveGroups sent since, plus the members the
  group had, refutes the world.

``join-stalled-by-subscription`` (Kafka 2.7 - 4.1 and 4.3; fixed in 4.2.2 and 4.4.0). With
protocol type ``consumer``, ``initNextGeneration`` reads each member's metadata for the chosen
protocol as a subscription (``computeSubscribedTopics``), catching only ``SchemaException``; the
generated reader of 2.7 on throws other exceptions for some malformed inputs, which leave the join
phase's completion after the generation was bumped: no member is answered, and the Scala
coordinator never completes that phase again (its ``DelayedJoin`` is spent and a group in
PreparingRebalance cannot prepare another). Which inputs escape on which line:
``classic/subscription.py``. Proof: ``tests/findings/test_consumer_metadata.py`` (no answer on the
lines with it, an answer on the others). What still holds is the same as for the first bug, but
the leader: the bug touches neither the offsets store nor the generation counter's rule (each
later completion, if any, needs a trigger), and no JoinGroup is answered ``NONE`` for the stalled
phase's generation (``initNextGeneration`` bumped it before it threw: a later completion, on a
coordinator that attempts one, is one higher).

The first bug's releases are Apache Kafka's: a bug world arises only on an Apache target
(``Profile.join_response_instance_ids_ignorable`` is switched on for another implementation
judged by those lines' rules, ``engine/registry.model_manifest``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kgc.model.commands import (
    DeleteGroups,
    Heartbeat,
    HeartbeatResponse,
    JoinGroup,
    JoinGroupResponse,
    LeaveGroup,
    OffsetCommit,
    OffsetCommitResponse,
    OffsetDelete,
    OffsetFetchResponse,
    SyncGroup,
    SyncGroupResponse,
)
from kgc.model.errors import NONE
from kgc.model.history import Event, Invoke, Receive


@dataclass(frozen=True, slots=True, kw_only=True)
class KnownBug:
    """A Kafka bug the model knows: ``key`` names it in traces and summaries."""

    key: str
    title: str
    releases: str  # the release lines that have it
    fixed_in: str
    proof: str  # the broker test that fails on those releases
    story: str  # where the repository tells it


JOIN_ANSWERED_TWICE = KnownBug(
    key="join-answered-twice",
    title="a leader's JoinGroup answer that lists a static member cannot be written below v5, "
    "and the broker answers JoinGroups twice or never after it",
    releases="2.5 - 3.2",
    fixed_in="3.3",
    proof="tests/lines/test_finding_double_answer.py",
    story="docs/release-lines.md, 'A Kafka bug the sweep found'",
)

JOIN_STALLED_BY_SUBSCRIPTION = KnownBug(
    key="join-stalled-by-subscription",
    title="a consumer-protocol JoinGroup whose subscription the coordinator cannot read throws "
    "past computeSubscribedTopics' SchemaException catch, and the join phase never completes",
    releases="2.7 - 4.1, 4.3 (2.7: negative lengths and user data past the end only)",
    fixed_in="4.2.2 and 4.4.0 (ConsumerProtocol wraps every RuntimeException)",
    proof="tests/findings/test_consumer_metadata.py",
    story="model/classic/subscription.py",
)

KNOWN_BUGS: dict[str, KnownBug] = {
    b.key: b for b in (JOIN_ANSWERED_TWICE, JOIN_STALLED_BY_SUBSCRIPTION)
}


@dataclass(frozen=True, slots=True, kw_only=True)
class BugWorld:
    """The model's state once Kafka met ``key``: what still constrains the broker."""

    key: str
    generation_id: int
    leader: str
    # what the bug cannot touch (module docstring): each partition's possible committed offsets
    # ((topic, partition, offsets), sorted; -1: none committed), the members the group had, the
    # join phases the requests sent since may have started (JoinGroups twice, LeaveGroups once),
    # whether the generation may go back (the group deleted, or Empty and vanished), and the
    # generations of the Heartbeats, SyncGroups and OffsetCommits not answered yet
    offsets: tuple[tuple[str, int, tuple[int, ...]], ...] = ()
    members: int = 0
    triggers: int = 0
    may_restart: bool = False
    asked: tuple[tuple[int, int], ...] = ()  # (request id, generation), sorted

    @property
    def bug(self) -> KnownBug:
        return KNOWN_BUGS[self.key]

    def possible_offsets(self, topic: str, partition: int) -> tuple[int, ...]:
        for t, p, offsets in self.offsets:
            if t == topic and p == partition:
                return offsets
        return (-1,)

    def generation_possible(self, generation: int) -> bool:
        """Whether the group may be at ``generation`` now (module docstring)."""
        if generation < self.generation_id and not self.may_restart:
            return False
        return generation <= self.generation_id + self.members + self.triggers


def refuted(world: BugWorld, event: Event) -> bool:
    """Whether ``event`` cannot happen once Kafka met the bug as ``world`` says (module
    docstring): a JoinGroup answered NONE for the bug's generation that names another leader, or
    that reaches the leader; an offset fetched that no commit could have stored; a generation
    answered NONE that the group cannot be at."""
    return after_event(world, event) is None


def after_event(world: BugWorld, event: Event) -> BugWorld | None:
    """``world`` once ``event`` happened in it, or None if it cannot (:func:`refuted`)."""
    if isinstance(event, Invoke):
        return _sent(world, event.request_id, event.command)
    if not isinstance(event, Receive):
        return world
    r = event.response
    asked = dict(world.asked)
    generation = asked.pop(event.request_id, None)
    if generation is not None:
        world = replace(world, asked=tuple(sorted(asked.items())))
        if _accepted(r) and not world.generation_possible(generation):
            return None
    if isinstance(r, JoinGroupResponse) and r.error == NONE:
        if (
            world.key == JOIN_ANSWERED_TWICE.key
            and r.generation_id == world.generation_id
            and (r.leader != world.leader or r.member_id == world.leader)
        ):
            return None
        if world.key == JOIN_STALLED_BY_SUBSCRIPTION.key and r.generation_id == world.generation_id:
            return None  # the stalled phase answers nobody: a later one completes one higher
        if not world.generation_possible(r.generation_id):
            return None
    if isinstance(r, OffsetFetchResponse) and r.error == NONE:
        for p in r.partitions:
            if p.error == NONE and p.offset not in world.possible_offsets(p.topic, p.partition):
                return None
    return world


def _accepted(response: object) -> bool:
    """A Heartbeat, SyncGroup or OffsetCommit answer that took its generation as the group's."""
    if isinstance(response, HeartbeatResponse | SyncGroupResponse):
        return response.error == NONE
    if isinstance(response, OffsetCommitResponse):
        return bool(response.partitions) and response.error == NONE
    return False


def _sent(world: BugWorld, request_id: int, command: object) -> BugWorld:
    if isinstance(command, JoinGroup):
        return replace(world, triggers=world.triggers + 2)
    if isinstance(command, LeaveGroup):
        return replace(world, triggers=world.triggers + 1)
    if isinstance(command, Heartbeat | SyncGroup | OffsetCommit):
        asked = tuple(sorted((*world.asked, (request_id, command.generation_id))))
        world = replace(world, asked=asked)
    if isinstance(command, OffsetCommit):
        return with_possible(world, ((o.topic, o.partition, o.offset) for o in command.offsets))
    if isinstance(command, OffsetDelete):
        return with_possible(world, ((p.topic, p.partition, -1) for p in command.partitions))
    if isinstance(command, DeleteGroups):
        every = [(t, p, -1) for t, p, _ in world.offsets]
        return replace(with_possible(world, every), may_restart=True)
    return world


def with_possible(world: BugWorld, offsets: object) -> BugWorld:
    """``world`` with each (topic, partition, offset) of ``offsets`` possible too."""
    table = {(t, p): set(o) for t, p, o in world.offsets}
    for t, p, o in offsets:  # type: ignore[attr-defined]
        table.setdefault((t, p), {-1}).add(o)
    merged = tuple((t, p, tuple(sorted(table[t, p]))) for t, p in sorted(table))
    return replace(world, offsets=merged)


def bug_to_json(world: BugWorld) -> dict[str, object]:
    return {"key": world.key, "generation_id": world.generation_id, "leader": world.leader}


def at_bug(world: BugWorld, *, offsets: object, members: int, may_restart: bool) -> BugWorld:
    """``world`` as the bug hit: the committed ``offsets`` ((topic, partition, offset) each),
    the group's ``members`` and whether an Empty group may vanish (module docstring)."""
    table = {(t, p): (o,) for t, p, o in offsets}  # type: ignore[attr-defined]
    return replace(
        world,
        offsets=tuple((t, p, table[t, p]) for t, p in sorted(table)),
        members=members,
        may_restart=may_restart,
    )
