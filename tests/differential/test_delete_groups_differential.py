"""DeleteGroups and OffsetDelete against a real broker: the model (``model/classic/delete.py``) and
Kafka agree.

Four tests. A hand-written history takes one group through every answer: offsets kept while the
group subscribes to their topic (``GROUP_SUBSCRIBED_TO_TOPIC``), a delete refused while it has a
member (``NON_EMPTY_GROUP``), offsets deleted once it is Empty, the group deleted with its
offsets, deleted again (``GROUP_ID_NOT_FOUND``) and joined anew at generation 1. Then the classic
machine's search with the opt-in rules (``properties/machine.py`` ``DeletingGroupMachine``), on
``BrokerTarget`` targets, for a bounded number of examples: no divergence, and each of the new
answers seen. Two short histories pin the rules where the lines or the timing matter: an Empty
group whose last offsets are deleted (3.9 drops it, 4.x keeps it: ``delete.py`` rule 6), and the
subscribed topics of a group whose join phase is still running (rule 5). ``--kgc-kafka-version``
runs them on another release (3.9.2: the Scala coordinator).
"""

from __future__ import annotations

import json

import pytest
from kgc.engine.registry import model_manifest
from kgc.engine.traces import render
from kgc.model import PROFILES
from kgc.model.commands import (
    Assignment,
    DeleteGroups,
    DeleteGroupsResponse,
    JoinGroup,
    JoinGroupResponse,
    LeaveGroup,
    MemberIdentity,
    OffsetCommit,
    OffsetDelete,
    OffsetDeleteResponse,
    OffsetFetch,
    OffsetFetchResponse,
    Protocol,
    SyncGroup,
    Tick,
    TopicPartition,
    TopicPartitionOffset,
)
from kgc.model.history import Receive

from tests.scripted import Classic, classic_run, opt_in_search

pytestmark = pytest.mark.broker

OPT_IN = ("DeleteGroups", "OffsetDelete")
# every answer the opt-in rules are there for: (request type, error)
WANTED = {
    ("DeleteGroups", "NONE"),
    ("DeleteGroups", "NON_EMPTY_GROUP"),
    ("DeleteGroups", "GROUP_ID_NOT_FOUND"),
    ("OffsetDelete", "NONE"),
    ("OffsetDelete", "GROUP_SUBSCRIBED_TO_TOPIC"),
}


def _history(topic: str, *, delay_ms: int) -> list:
    def join() -> JoinGroup:
        return JoinGroup(
            client="c1",
            session_timeout_ms=10_000,
            rebalance_timeout_ms=10_000,
            protocols=(Protocol(name="range", metadata=json.dumps({"topics": [topic]})),),
            version=3,
        )

    def offset_delete(*partitions: int) -> OffsetDelete:
        return OffsetDelete(
            client="c2",
            partitions=tuple(TopicPartition(topic=topic, partition=p) for p in partitions),
            version=0,
        )

    commit = OffsetCommit(
        client="c1",
        member_id="c1-1",
        generation_id=1,
        offsets=(
            TopicPartitionOffset(topic=topic, partition=0, offset=5),
            TopicPartitionOffset(topic=topic, partition=1, offset=6),
        ),
        version=7,
    )
    return [
        DeleteGroups(client="c2", version=2),  # no such group
        offset_delete(0),  # no such group
        join(),
        Tick(ms=delay_ms + 300),
        SyncGroup(
            client="c1",
            member_id="c1-1",
            generation_id=1,
            assignments=(Assignment(member_id="c1-1", assignment="a"),),
            version=3,
        ),
        commit,
        offset_delete(0, 1),  # Stable, subscribed to the topic: kept
        DeleteGroups(client="c2", version=1),  # a member remains
        LeaveGroup(client="c1", members=(MemberIdentity(member_id="c1-1"),), version=3),
        Tick(ms=100),
        offset_delete(1),  # Empty: deleted (the offset of partition 0 stays)
        DeleteGroups(client="c2", version=0),  # Empty: the group and its offsets go
        OffsetFetch(
            client="c2",
            partitions=(TopicPartition(topic=topic, partition=0),),
            version=6,
        ),
        DeleteGroups(client="c2", version=2),  # gone
        join(),
        Tick(ms=delay_ms + 300),
    ]


def test_a_scripted_history_of_deletions_is_allowed(kgc_broker) -> None:  # noqa: ANN001
    engine, trace, answers = classic_run(
        kgc_broker, "kgc-delete-", lambda run: _history(run.topic, delay_ms=run.delay_ms)
    )
    assert engine.divergence is None, render(trace)
    deletes = [r.error for r in answers if isinstance(r, DeleteGroupsResponse)]
    assert deletes == ["GROUP_ID_NOT_FOUND", "NON_EMPTY_GROUP", "NONE", "GROUP_ID_NOT_FOUND"], (
        render(trace)
    )
    offset_deletes = [r for r in answers if isinstance(r, OffsetDeleteResponse)]
    assert [r.error for r in offset_deletes] == ["GROUP_ID_NOT_FOUND", "NONE", "NONE"]
    assert {p.error for p in offset_deletes[1].partitions} == {"GROUP_SUBSCRIBED_TO_TOPIC"}
    assert {p.error for p in offset_deletes[2].partitions} == {"NONE"}
    fetched = next(r for r in answers if isinstance(r, OffsetFetchResponse))
    assert [p.offset for p in fetched.partitions] == [-1], render(trace)
    joins = [r for r in answers if isinstance(r, JoinGroupResponse)]
    assert [j.generation_id for j in joins] == [1, 1], render(trace)


def test_the_search_with_deletions_agrees_with_the_broker(kgc_broker) -> None:  # noqa: ANN001
    ctx = opt_in_search(kgc_broker, OPT_IN, prefix="kgc-dg-", examples=12, steps=25, seed=1)
    seen = {c: n for c, n in sorted(ctx.coverage.items()) if n and c[1] in OPT_IN}
    print(f"{ctx.examples} examples, {ctx.commands} commands; opt-in cells: {seen}")  # -s shows it
    reached = {(c[1], c[2]) for c in seen}
    assert reached >= WANTED, f"not seen: {sorted(WANTED - reached)}; coverage {ctx.coverage}"


def test_deleting_an_empty_groups_last_offsets_follows_the_line(kgc_broker) -> None:  # noqa: ANN001
    # delete.py rule 6: the Scala coordinator (3.9 and older) drops an Empty group whose last
    # offsets an OffsetDelete deleted, so the DeleteGroups after it finds no group; 4.x keeps it
    def history(run: Classic) -> list:
        simple_commit = OffsetCommit(
            client="c1",
            member_id="",
            generation_id=-1,
            offsets=(TopicPartitionOffset(topic=run.topic, partition=0, offset=5),),
            version=7,
        )
        last = OffsetDelete(
            client="c1", partitions=(TopicPartition(topic=run.topic, partition=0),), version=0
        )
        return [simple_commit, last, DeleteGroups(client="c1", version=2)]

    engine, trace, answers = classic_run(kgc_broker, "kgc-delete-", history)
    assert engine.divergence is None, render(trace)
    profile = model_manifest(trace.manifest["target"])["profile"]
    dropped = PROFILES[profile].offset_delete_drops_empty_group
    assert answers[-1] == DeleteGroupsResponse(error="GROUP_ID_NOT_FOUND" if dropped else "NONE")


def test_subscribed_topics_are_those_of_the_last_completed_join_phase(kgc_broker) -> None:  # noqa: ANN001
    # delete.py rule 5: while c2 (subscribed to t and u) waits in the join phase it started, the
    # group's subscribed topics are still generation 1's ({t}): u's offset can be deleted; once
    # the phase completes, u is subscribed too
    def join(client: str, topics: list[str], member_id: str = "") -> JoinGroup:
        return JoinGroup(
            client=client,
            member_id=member_id,
            session_timeout_ms=10_000,
            rebalance_timeout_ms=10_000,
            protocols=(Protocol(name="range", metadata=json.dumps({"topics": topics})),),
            version=3,
        )

    def history(run: Classic) -> list:
        t, u = run.topics
        offset_delete = OffsetDelete(
            client="c3",
            partitions=(TopicPartition(topic=t, partition=0), TopicPartition(topic=u, partition=0)),
            version=0,
        )
        return [
            join("c1", [t]),
            Tick(ms=300),
            SyncGroup(
                client="c1",
                member_id="c1-1",
                generation_id=1,
                assignments=(Assignment(member_id="c1-1", assignment="a"),),
                version=3,
            ),
            OffsetCommit(
                client="c1",
                member_id="c1-1",
                generation_id=1,
                offsets=tuple(TopicPartitionOffset(topic=x, partition=0, offset=5) for x in (t, u)),
                version=7,
            ),
            join("c2", [t, u]),  # parks: c1 has not rejoined
            Tick(ms=50),
            offset_delete,
            join("c1", [t], member_id="c1-1"),  # completes the phase: generation 2
            Tick(ms=300),
            offset_delete,
        ]

    engine, trace, _ = classic_run(
        kgc_broker, "kgc-delete-", history, topics=("t", "u"), partitions=1
    )
    assert engine.divergence is None, render(trace)
    t, u = (f"{trace.manifest['group_id']}-{name}" for name in ("t", "u"))
    answers = [
        {(p.topic, p.error) for p in e.response.partitions}
        for e in engine.events
        if isinstance(e, Receive) and isinstance(e.response, OffsetDeleteResponse)
    ]
    assert answers == [
        {(t, "GROUP_SUBSCRIBED_TO_TOPIC"), (u, "NONE")},
        {(t, "GROUP_SUBSCRIBED_TO_TOPIC"), (u, "GROUP_SUBSCRIBED_TO_TOPIC")},
    ], render(trace)
