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

The one bug known so far:

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
"""

from __future__ import annotations

from dataclasses import dataclass

from kgc.model.commands import JoinGroupResponse
from kgc.model.history import Event, Receive


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

KNOWN_BUGS: dict[str, KnownBug] = {b.key: b for b in (JOIN_ANSWERED_TWICE,)}


@dataclass(frozen=True, slots=True, kw_only=True)
class BugWorld:
    """The model's state once Kafka met ``key``: what still constrains the broker."""

    key: str
    generation_id: int
    leader: str

    @property
    def bug(self) -> KnownBug:
        return KNOWN_BUGS[self.key]


def refuted(world: BugWorld, event: Event) -> bool:
    """Whether ``event`` cannot happen once Kafka met the bug as ``world`` says (module
    docstring): a JoinGroup answered NONE for the bug's generation that names another leader, or
    that reaches the leader."""
    if world.key != JOIN_ANSWERED_TWICE.key or not isinstance(event, Receive):
        return False
    r = event.response
    if not isinstance(r, JoinGroupResponse) or r.error != "NONE":
        return False
    if r.generation_id != world.generation_id:
        return False
    return r.leader != world.leader or r.member_id == world.leader


def bug_to_json(world: BugWorld) -> dict[str, object]:
    return {"key": world.key, "generation_id": world.generation_id, "leader": world.leader}
