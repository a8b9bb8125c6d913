"""A Kafka bug the model knows by name (``model/known_bugs.py``), on hand-written histories.

The history: a static member ``c1`` alone in its group (JoinGroup v5, SyncGroup), then ``c1``
rejoins at v3, so it leads and its answer must list itself. 3.3 writes the list without instance
ids; 2.5 - 3.2 cannot write it, which is the bug ``join-answered-twice``.
"""

from __future__ import annotations

from dataclasses import replace

from kgc.model import PROFILES, ClassicGroupModel, GroupConfig
from kgc.model.checker import Checker, CheckerConfig
from kgc.model.commands import (
    Assignment,
    FetchedOffset,
    Heartbeat,
    HeartbeatResponse,
    JoinedMember,
    JoinGroup,
    JoinGroupResponse,
    OffsetCommit,
    OffsetFetchResponse,
    Protocol,
    SyncGroup,
    SyncGroupResponse,
)
from kgc.model.history import Invoke, Quiet, Receive
from kgc.model.known_bugs import JOIN_ANSWERED_TWICE, BugWorld, refuted
from model_harness import commit, fetch, heartbeat

RANGE = (Protocol(name="range", metadata="m"),)


def _checker(profile: str) -> Checker:
    config = GroupConfig(
        profile=PROFILES[profile],
        group_min_session_timeout_ms=500,
        group_initial_rebalance_delay_ms=0,
    )
    return Checker(ClassicGroupModel(config), CheckerConfig())


def _join(member_id: str, version: int, instance: str | None = None) -> JoinGroup:
    return JoinGroup(
        client="c1",
        member_id=member_id,
        group_instance_id=instance,
        session_timeout_ms=10_000,
        rebalance_timeout_ms=10_000,
        protocols=RANGE,
        version=version,
    )


STABLE_ALONE = [
    Invoke(step=0, at_ms=0.0, request_id=0, command=_join("", 5, "c1-instance")),
    Receive(
        step=0,
        at_ms=1.0,
        request_id=0,
        response=JoinGroupResponse(
            error="NONE",
            generation_id=1,
            protocol_name="range",
            leader="c1-1",
            member_id="c1-1",
            members=(
                JoinedMember(member_id="c1-1", group_instance_id="c1-instance", metadata="m"),
            ),
        ),
    ),
    Invoke(
        step=1,
        at_ms=10.0,
        request_id=1,
        command=SyncGroup(
            client="c1",
            member_id="c1-1",
            group_instance_id="c1-instance",
            generation_id=1,
            assignments=(Assignment(member_id="c1-1", assignment="a"),),
            version=3,
        ),
    ),
    Receive(
        step=1, at_ms=11.0, request_id=1, response=SyncGroupResponse(error="NONE", assignment="a")
    ),
    # the rejoin at v3: c1 leads generation 2, and its answer must list c1 (a static member)
    Invoke(step=2, at_ms=20.0, request_id=2, command=_join("c1-1", 3)),
]
REJOIN = len(STABLE_ALONE) - 1
UNSUPPORTED = Receive(
    step=2, at_ms=21.0, request_id=2, response=JoinGroupResponse(error="UNSUPPORTED_VERSION")
)
LISTED = Receive(  # what 3.3 answers: the list, instance ids left out below v5
    step=2,
    at_ms=21.0,
    request_id=2,
    response=JoinGroupResponse(
        error="NONE",
        generation_id=2,
        protocol_name="range",
        leader="c1-1",
        member_id="c1-1",
        members=(JoinedMember(member_id="c1-1", metadata="m"),),
    ),
)


def test_up_to_3_2_the_unwritable_answer_is_the_known_bug_from_the_rejoin_on() -> None:
    # 3.2.3 answered the rejoin UNSUPPORTED_VERSION, and later answered it again: nothing after
    # the rejoin is judged, and the checker says which bug and from which event
    checker = _checker("kafka-3.2")
    history = [*STABLE_ALONE, UNSUPPORTED, Quiet(step=3, at_ms=5_000.0)]
    assert checker.feed_all(history) is None
    hit = checker.known_bug
    assert hit is not None
    # c1 was the group's one member when the bug hit, and nothing was committed
    assert hit.world == BugWorld(
        key=JOIN_ANSWERED_TWICE.key, generation_id=2, leader="c1-1", members=1
    )
    assert hit.since == REJOIN  # the world met the bug at the rejoin itself
    assert checker.must_answer() == frozenset()  # a bug world owes no answer: nothing to wait for


def test_up_to_3_2_a_broker_that_wrote_the_list_is_not_excused_by_the_bug() -> None:
    # the leader answered NONE with the list for the bug's generation: the bug cannot give that,
    # so the bug world is refuted and, with no other world, it is a divergence
    checker = _checker("kafka-3.2")
    divergence = checker.feed_all([*STABLE_ALONE, LISTED])
    assert divergence is not None and divergence.index == len(STABLE_ALONE)
    assert checker.known_bug is None


def test_from_3_3_the_list_is_written_and_unsupported_version_is_a_divergence() -> None:
    assert (
        _checker("kafka-3.3").feed_all([*STABLE_ALONE, LISTED, Quiet(step=3, at_ms=99.0)]) is None
    )
    checker = _checker("kafka-3.3")
    divergence = checker.feed_all([*STABLE_ALONE, UNSUPPORTED])
    assert divergence is not None and divergence.index == len(STABLE_ALONE)
    assert checker.known_bug is None


def test_only_answers_the_bug_cannot_give_refute_it() -> None:
    world = BugWorld(key=JOIN_ANSWERED_TWICE.key, generation_id=2, leader="c1-1", members=1)

    def joined(member_id: str, leader: str, generation: int = 2, error: str = "NONE") -> Receive:
        response = JoinGroupResponse(
            error=error, generation_id=generation, leader=leader, member_id=member_id
        )
        return Receive(step=0, at_ms=0.0, request_id=0, response=response)

    assert not refuted(world, joined("c2-1", "c1-1"))  # a member before the leader: answered
    assert refuted(world, joined("c1-1", "c1-1"))  # the leader itself never is
    assert refuted(world, joined("c2-1", "c2-1"))  # nor is anyone told of another leader
    # a later generation is open while a join phase could have completed: one member could
    # expire; two phases could not
    assert not refuted(world, joined("c2-1", "c2-1", generation=3))
    assert refuted(world, joined("c2-1", "c2-1", generation=4))
    assert not refuted(world, joined("", "", generation=-1, error="UNSUPPORTED_VERSION"))
    assert not refuted(world, Quiet(step=0, at_ms=0.0))  # silence: the bug leaves joins unanswered


# What the bug cannot touch (``known_bugs.py``, "What else still holds"), after the bug hit at
# the v3 rejoin of ``STABLE_ALONE`` (generation 2, c1 the one member, nothing committed).
AFTER_BUG = [*STABLE_ALONE, UNSUPPORTED]
T0 = 100.0


def _sent(i: int, command: object) -> Invoke:
    return Invoke(step=3 + i, at_ms=T0 + 10 * i, request_id=3 + i, command=command)


def _got(i: int, response: object) -> Receive:
    return Receive(step=3 + i, at_ms=T0 + 10 * i + 1, request_id=3 + i, response=response)


def _heartbeat(generation: int) -> Heartbeat:
    return heartbeat("c1", "c1-1", generation)


def _commit(offset: int) -> OffsetCommit:
    return commit("c1", "c1-1", 2, (("t", 0, offset),), version=7)


def _fetched(offset: int) -> OffsetFetchResponse:
    return OffsetFetchResponse(
        error="NONE", partitions=(FetchedOffset(topic="t", partition=0, offset=offset),)
    )


FETCH = fetch("c1", ("t", 0))


def _judge(*events: object) -> Checker:
    checker = _checker("kafka-3.2")
    checker.feed_all([*AFTER_BUG, *events])
    return checker


def test_the_bug_world_still_judges_generations_answered_none() -> None:
    ok = HeartbeatResponse(error="NONE")
    for generation in (2, 3):  # the bug's, or one more (c1 could expire)
        assert _judge(_sent(0, _heartbeat(generation)), _got(0, ok)).divergence is None
    for generation in (1, 4, 99):  # back, or past every join phase that could have completed
        checker = _judge(_sent(0, _heartbeat(generation)), _got(0, ok))
        assert checker.divergence is not None, generation
        assert checker.divergence.index == len(AFTER_BUG) + 1
    # an error answer says nothing of the group's generation
    bad = HeartbeatResponse(error="ILLEGAL_GENERATION")
    assert _judge(_sent(0, _heartbeat(99)), _got(0, bad)).divergence is None
    # each JoinGroup sent since may start a join phase (and add a member that may expire)
    rejoin = _sent(0, _join("c1-1", 3))
    assert _judge(rejoin, _sent(1, _heartbeat(5)), _got(1, ok)).divergence is None
    assert _judge(rejoin, _sent(1, _heartbeat(6)), _got(1, ok)).divergence is not None


def test_the_bug_world_still_judges_the_offsets_fetched() -> None:
    none_yet = _judge(_sent(0, FETCH), _got(0, _fetched(-1)))
    assert none_yet.divergence is None and none_yet.known_bug is not None
    never_committed = _judge(_sent(0, FETCH), _got(0, _fetched(42)))
    assert never_committed.divergence is not None
    # a commit sent after the bug may have been stored, or not
    for seen in (-1, 42):
        checker = _judge(_sent(0, _commit(42)), _sent(1, FETCH), _got(1, _fetched(seen)))
        assert checker.divergence is None, seen
    other = _judge(_sent(0, _commit(42)), _sent(1, FETCH), _got(1, _fetched(41)))
    assert other.divergence is not None


def test_only_an_apache_target_meets_the_bug() -> None:
    """Another implementation judged by a line with the bug (``kgc check --rules kafka-3.2``) is
    held to the contract there: the leader's answer lists its members, instance ids left out, as
    3.3 writes it. A broker kgc did not launch may be any Apache release: the bug world stays."""
    from kgc.engine.registry import build, model_manifest

    def judged(**description: str) -> Checker:
        record = model_manifest({"model_profile": "kafka-3.2", **description})
        model = build(record, "g")
        config = replace(model.config, group_min_session_timeout_ms=500)
        config = replace(config, group_initial_rebalance_delay_ms=0)
        return Checker(ClassicGroupModel(config), CheckerConfig())

    for other in ({"implementation": "tansu"}, {"implementation_profile": "kfake"}):
        assert judged(**other).feed_all([*STABLE_ALONE, LISTED]) is None, other
        assert judged(**other).feed_all([*STABLE_ALONE, UNSUPPORTED]) is not None, other
    for apache in ({"implementation": "apache-kafka"}, {"implementation": "unknown"}):
        checker = judged(**apache)
        assert checker.feed_all([*STABLE_ALONE, UNSUPPORTED]) is None, apache
        assert checker.known_bug is not None
