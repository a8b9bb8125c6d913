"""The KIP-848 consumer-group model on small hand-written histories, one rule each (the rules are
numbered in ``kgc/model/consumer_group.py``'s docstring)."""

from __future__ import annotations

import random
from dataclasses import replace

from kgc.model.assignors import Subscription, uniform_assign
from kgc.model.assignors import TopicPartition as TP
from kgc.model.commands import ConsumerGroupDescribe as Describe
from kgc.model.commands import ConsumerGroupHeartbeat as HB
from kgc.model.commands import OffsetCommit, OffsetFetch, TopicPartition, TopicPartitionOffset
from kgc.model.consumer.group import (
    ConsumerGroupConfig,
    ConsumerGroupModel,
    ConsumerGroupState,
    uniform_targets,
)

T = "t"
CONFIG = ConsumerGroupConfig(topics=((T, 3),), session_timeout_ms=2000, heartbeat_interval_ms=500)


def tps(*ps: int) -> tuple[TopicPartition, ...]:
    return tuple(TopicPartition(topic=T, partition=p) for p in ps)


def join(client: str, n: int = 1, timeout: int = 1000) -> HB:
    return HB(
        client=client,
        member_id=f"{client}-{n}",
        member_epoch=0,
        rebalance_timeout_ms=timeout,
        subscribed_topic_names=(T,),
        topic_partitions=(),
        version=1,
    )


def beat(client: str, epoch: int, owned: tuple[TopicPartition, ...] | None) -> HB:
    return HB(
        client=client,
        member_id=f"{client}-1",
        member_epoch=epoch,
        topic_partitions=owned,
        version=1,
    )


class Run:
    """Apply commands one by one, keeping every allowed successor; answers are read at once."""

    def __init__(self, config: ConsumerGroupConfig = CONFIG) -> None:
        self.model = ConsumerGroupModel(config)
        self.states: list[ConsumerGroupState] = [self.model.initial()]
        self.rid = 0

    def send(self, command, at_ms: float = 0.0) -> set:
        self.rid += 1
        self.last = []
        for s in self.states:
            for s1 in self.model.advance(s, must_until=at_ms, may_until=at_ms):
                for s2 in self.model.invoke(s1, request_id=self.rid, command=command, at_ms=at_ms):
                    answer = self.model.outbox(s2)[self.rid][0]
                    self.last.append((self.model.deliver(s2, self.rid), answer))
        self.states = list(dict.fromkeys(s for s, _ in self.last))
        return {a for _, a in self.last}

    def observe(self, answer) -> None:
        """Keep the states in which the last command got ``answer`` (as the checker does)."""
        self.states = list(dict.fromkeys(s for s, a in self.last if a == answer))

    def only(self, command, at_ms: float = 0.0):
        answers = self.send(command, at_ms)
        assert len(answers) == 1, answers
        return answers.pop()


def test_first_member_gets_every_partition_at_epoch_2():
    # a new group starts at epoch 1 (4.3.1 ModernGroup); the first subscription bumps it to 2
    r = Run()
    a = r.only(join("c1"))
    assert (a.error, a.member_epoch, a.assignment) == ("NONE", 2, tps(0, 1, 2))


def test_a_partition_waits_until_its_old_owner_revoked_it():
    # c1 owns 0,1,2; c2 joins: the new target gives c2 one partition, but c1 still holds it, so
    # c2 gets nothing yet (UNRELEASED_PARTITIONS) — and gets it only after c1's heartbeat no
    # longer reports it (NoDoubleClientAssignment)
    r = Run()
    r.only(join("c1"))
    a2 = r.only(join("c2"), 10)
    assert (a2.member_epoch, a2.assignment) == (3, ())
    revoke = r.send(beat("c1", 2, tps(0, 1, 2)), 20)  # c1 learns what to give up
    assert {(a.member_epoch, len(a.assignment)) for a in revoke} == {(2, 2)}
    answer = min(revoke, key=repr)  # the target picked one of the uniform candidates
    r.observe(answer)
    kept = answer.assignment
    freed = set(tps(0, 1, 2)) - set(kept)
    before_ack = r.send(beat("c2", 3, ()), 30)
    assert {a.assignment for a in before_ack} == {None}  # still held by c1
    r.send(beat("c1", 2, kept), 40)  # c1 acknowledges: the partition is released
    after_ack = r.send(beat("c2", 3, ()), 50)
    assert {a.assignment for a in after_ack} == {tuple(sorted(freed, key=lambda x: x.partition))}


def test_a_greater_epoch_is_fenced_and_the_previous_one_tolerated():
    r = Run()
    r.only(join("c1"))
    r.only(join("c2"), 10)
    assert r.only(beat("c1", 5, None), 20).error == "FENCED_MEMBER_EPOCH"
    # c2 joined at epoch 3 (previous 0): epoch 2 was never its, so it is fenced
    assert r.only(beat("c2", 2, ()), 30).error == "FENCED_MEMBER_EPOCH"


def test_session_expiry_removes_the_member_and_bumps_the_group_epoch():
    r = Run()
    r.only(join("c1"))
    gone = r.send(beat("c1", 2, tps(0, 1, 2)), 2500)  # 2000 ms session, no heartbeat since 0
    # the member is gone; the group is Empty, and an Empty group may already have been deleted
    # by the coordinator's periodic cleanup (rule 8)
    assert {a.error for a in gone} == {"UNKNOWN_MEMBER_ID", "GROUP_ID_NOT_FOUND"}
    r.observe(next(a for a in gone if a.error == "UNKNOWN_MEMBER_ID"))
    described = r.send(Describe(client="c9", version=1), 2600)
    assert {(d.error, d.group_state, d.group_epoch, d.members) for d in described} == {
        ("NONE", "Empty", 3, ()),
        ("GROUP_ID_NOT_FOUND", "", 0, ()),
    }


def test_a_member_that_does_not_revoke_in_time_is_fenced_by_its_rebalance_timeout():
    r = Run()
    r.only(join("c1", timeout=1000))
    r.only(join("c2"), 10)
    r.send(beat("c1", 2, tps(0, 1, 2)), 20)  # asked to revoke: rebalance timer until 1020
    stale = r.send(beat("c1", 2, tps(0, 1, 2)), 1500)  # still claims everything, too late
    assert {a.error for a in stale} == {"UNKNOWN_MEMBER_ID"}


def test_invalid_requests_are_refused_before_the_group_is_read():
    r = Run()
    bad_join = HB(
        client="c1",
        member_id="c1-1",
        member_epoch=0,
        rebalance_timeout_ms=1000,
        subscribed_topic_names=None,
        topic_partitions=(),
        version=1,
    )
    assert r.only(bad_join).error == "INVALID_REQUEST"
    no_id = HB(
        client="c1",
        member_id="",
        member_epoch=0,
        rebalance_timeout_ms=1000,
        subscribed_topic_names=(T,),
        topic_partitions=(),
        version=1,
    )
    assert r.only(no_id).error == "INVALID_REQUEST"
    assert r.only(beat("c1", 1, ())).error == "GROUP_ID_NOT_FOUND"


def test_uniform_targets_contain_the_ported_uniform_assignor():
    rng = random.Random(5)
    for _ in range(200):
        members = [f"m{i}" for i in range(rng.randint(1, 4))]
        parts = rng.randint(1, 5)
        previous = {
            m: frozenset(TP(T, p) for p in range(parts) if rng.random() < 0.3) for m in members
        }
        seen: set = set()  # a partition had one owner before, too
        for m in members:
            previous[m] = previous[m] - seen
            seen |= previous[m]
        subs = {
            m: Subscription(topics=(T,), owned_partitions=tuple(sorted(previous[m])))
            for m in members
        }
        ported = uniform_assign({T: parts}, subs)
        candidates = uniform_targets({T: parts}, {m: (T,) for m in members}, previous)
        assert {m: frozenset(ported[m]) for m in members} in candidates


def static_join(client: str, n: int) -> HB:
    return HB(
        client=client,
        member_id=f"{client}-{n}",
        instance_id=f"{client}-instance",
        member_epoch=0,
        rebalance_timeout_ms=1000,
        subscribed_topic_names=(T,),
        topic_partitions=(),
        version=1,
    )


def test_a_static_member_returns_under_a_new_id_only_after_leaving_with_minus_2():
    # c1 is static (instance c1-instance) and owns everything. A restarted c1 (new id c1-2)
    # cannot take the instance while c1-1 holds it (UNRELEASED_INSTANCE_ID); after c1-1 leaves
    # with epoch -2 it can, and gets c1-1's partitions back with no new group epoch
    r = Run()
    first = r.only(static_join("c1", 1))
    assert first.assignment == tps(0, 1, 2)
    assert r.only(static_join("c1", 2), 10).error == "UNRELEASED_INSTANCE_ID"
    left = r.only(
        HB(client="c1", member_id="c1-1", instance_id="c1-instance", member_epoch=-2, version=1), 20
    )
    assert (left.error, left.member_epoch) == ("NONE", -2)
    back = r.only(static_join("c1", 2), 30)
    assert (back.error, back.member_id, back.assignment) == ("NONE", "c1-2", tps(0, 1, 2))
    assert back.member_epoch == first.member_epoch  # replaced, not rebalanced
    fenced = r.only(
        HB(
            client="c1",
            member_id="c1-1",
            instance_id="c1-instance",
            member_epoch=first.member_epoch,
            topic_partitions=(),
            version=1,
        ),
        40,
    )
    assert fenced.error == "FENCED_INSTANCE_ID"


# ---------------------------------------------------------------- rule 11: offsets with epochs


def commit(client: str, epoch: int, *ps: int, version: int = 9, n: int = 1, meta: str = ""):
    return OffsetCommit(
        client=client,
        member_id=f"{client}-{n}",
        generation_id=epoch,
        offsets=tuple(
            TopicPartitionOffset(topic=T, partition=p, offset=10 + p, metadata=meta) for p in ps
        ),
        version=version,
    )


def fetch(client: str, epoch: int = -1, member: str | None = None, version: int = 9):
    return OffsetFetch(
        client=client,
        partitions=tps(0, 1, 2),
        member_id=member,
        member_epoch=epoch,
        version=version,
    )


def errors(answer) -> set[str]:
    return {p.error for p in answer.partitions}


def test_a_member_commits_at_its_epoch_and_reads_its_offsets_back():
    r = Run(CONFIG)
    r.only(join("c1"))  # epoch 2, owns 0,1,2
    assert errors(r.only(commit("c1", 2, 0, 1), 10)) == {"NONE"}
    for asked in (fetch("c9"), fetch("c1", 2, "c1-1"), fetch("c9", version=8)):
        read = r.only(asked, 20)
        assert read.error == "NONE"
        assert [(p.partition, p.offset) for p in read.partitions] == [(0, 10), (1, 11), (2, -1)]


def test_commit_errors_of_the_group_and_the_member():
    r = Run(CONFIG)
    # no group yet: GROUP_ID_NOT_FOUND from v9, ILLEGAL_GENERATION before (kept for old clients)
    assert errors(r.only(commit("c1", 1, 0))) == {"GROUP_ID_NOT_FOUND"}
    assert errors(r.only(commit("c1", 1, 0, version=8))) == {"ILLEGAL_GENERATION"}
    r.only(join("c1"), 10)
    assert errors(r.only(commit("c2", 2, 0), 20)) == {"UNKNOWN_MEMBER_ID"}
    # a consumer-protocol member must commit with v9+ (its epoch is no generation)
    assert errors(r.only(commit("c1", 2, 0, version=8), 30)) == {"UNSUPPORTED_VERSION"}
    assert errors(r.only(commit("c1", 3, 0), 40)) == {"STALE_MEMBER_EPOCH"}  # ahead of it
    assert r.only(fetch("c1", 2, "c2-1"), 50).error == "UNKNOWN_MEMBER_ID"
    assert r.only(fetch("c1", 1, "c1-1"), 60).error == "STALE_MEMBER_EPOCH"
    # a missing group reads as nothing committed, whoever asks
    assert Run(CONFIG).only(fetch("c1", 5, "c1-1")).error == "NONE"


def test_oversized_metadata_fails_only_its_own_partition():
    r = Run(CONFIG)
    r.only(join("c1"))
    big = commit("c1", 2, 0, meta="x" * 4097)
    small = commit("c1", 2, 1)
    both = replace(big, offsets=big.offsets + small.offsets)
    answer = r.only(both, 10)
    assert [(p.partition, p.error) for p in answer.partitions] == [
        (0, "OFFSET_METADATA_TOO_LARGE"),
        (1, "NONE"),
    ]
    assert [p.offset for p in r.only(fetch("c9"), 20).partitions] == [-1, 11, -1]


def _older_epoch_commits(config: ConsumerGroupConfig) -> tuple[set[str], set[str]]:
    """c1 owns 0,1,2 since epoch 2; c2 joins (epoch 3) and c1, after revoking one partition, moves
    to epoch 3 keeping two. A commit at epoch 2 for a kept partition, then for the given-up one."""
    r = Run(config)
    r.only(join("c1"))
    r.only(join("c2"), 10)
    revoke = r.send(beat("c1", 2, tps(0, 1, 2)), 20)
    answer = min(revoke, key=repr)
    r.observe(answer)
    kept = answer.assignment
    moved = r.only(beat("c1", 2, kept), 30)
    assert moved.member_epoch == 3
    gone = next(p for p in (0, 1, 2) if p not in {tp.partition for tp in kept})
    return errors(r.only(commit("c1", 2, kept[0].partition), 40)), errors(
        r.only(commit("c1", 2, gone), 50)
    )


def test_an_older_epoch_commits_a_partition_held_since_then_from_4_3():
    # KIP-1251 (4.3.0+, ConsumerGroup.createAssignmentEpochValidator): a commit racing the
    # member's epoch bump is accepted for partitions it held since that epoch
    assert _older_epoch_commits(CONFIG) == ({"NONE"}, {"STALE_MEMBER_EPOCH"})
    # before 4.3.0 (validateMemberEpoch): only the member's own epoch commits
    old = replace(CONFIG, commit_partition_epochs=False)
    assert _older_epoch_commits(old) == ({"STALE_MEMBER_EPOCH"}, {"STALE_MEMBER_EPOCH"})


def test_an_empty_group_with_offsets_is_kept_and_takes_admin_commits():
    r = Run(CONFIG)
    r.only(join("c1"))
    r.only(commit("c1", 2, 0), 10)
    r.send(beat("c1", 2, tps(0, 1, 2)), 2500)  # the session ran out at 2000
    # committed offsets keep the group from deletion (rule 8): it is Empty, never gone
    described = r.send(Describe(client="c9", version=1), 2600)
    assert {(d.error, d.group_state) for d in described} == {("NONE", "Empty")}
    # epoch -1 (an admin or a consumer outside group management) commits in an Empty group
    assert errors(r.only(commit("c9", -1, 1), 2700)) == {"NONE"}
    assert [p.offset for p in r.only(fetch("c9"), 2800).partitions] == [10, 11, -1]


def test_oversized_metadata_is_refused_before_an_older_epoch_is_checked():
    # OffsetMetadataManager.commitOffset answers OFFSET_METADATA_TOO_LARGE for a partition before
    # its per-partition epoch check (4.3.0+), so an older epoch with oversized metadata only is
    # not STALE_MEMBER_EPOCH (found by the suite on 4.3.1: the first member, at epoch 2,
    # committed at epoch 1 with oversized metadata); before 4.3.0 the epoch is checked first
    r = Run(CONFIG)
    r.only(join("c1"))  # epoch 2
    assert errors(r.only(commit("c1", 1, 0, 1, meta="x" * 4097), 10)) == {
        "OFFSET_METADATA_TOO_LARGE"
    }
    mixed = commit("c1", 1, 0, meta="x" * 4097)
    mixed = replace(mixed, offsets=mixed.offsets + commit("c1", 1, 1).offsets)
    assert errors(r.only(mixed, 20)) == {"STALE_MEMBER_EPOCH"}  # partition 1 is checked: all fail
    old = Run(replace(CONFIG, commit_partition_epochs=False))
    old.only(join("c1"))
    assert errors(old.only(commit("c1", 1, 0, meta="x" * 4097), 10)) == {"STALE_MEMBER_EPOCH"}
