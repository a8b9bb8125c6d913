"""The transactional offsets path (model/classic/transactions.py), on small hand-written histories.

Each expectation is read off Kafka's source, cited at the test (4.x ``OffsetMetadataManager``,
``ClassicGroup.validateOffsetCommit``; the Scala ``TransactionCoordinator``; 3.9
``GroupCoordinator.handleTxnCommitOffsets``), and the marked ones were also answered so by Apache
Kafka 4.3.1 (``tests/differential/test_transactions_differential.py``).
"""

from __future__ import annotations

import pytest
from kgc.model.classic.transactions import MARKERS_WRITTEN_WITHIN_MS
from kgc.model.commands import (
    AddOffsetsToTxn,
    AddOffsetsToTxnResponse,
    EndTxn,
    EndTxnResponse,
    FetchedOffset,
    InitProducerId,
    InitProducerIdResponse,
    OffsetFetch,
    PartitionError,
    TopicPartition,
    TopicPartitionOffset,
    TxnOffsetCommit,
    TxnOffsetCommitResponse,
)
from kgc.model.profiles import KAFKA_3_9, KAFKA_4_X
from model_harness import Sim, commit, describe, join, stable_group

LINES = pytest.mark.parametrize("profile", [KAFKA_4_X, KAFKA_3_9], ids=["4.x", "3.9"])
TID = "t1"


def init(version: int = 4) -> InitProducerId:
    return InitProducerId(client="p1", transactional_id=TID, version=version)


def add(epoch: int, version: int = 3, pid: int = 1) -> AddOffsetsToTxn:
    return AddOffsetsToTxn(
        client="p1", transactional_id=TID, producer_id=pid, producer_epoch=epoch, version=version
    )


def txn_commit(
    epoch: int,
    offset: int = 7,
    *,
    version: int = 3,
    member_id: str = "",
    generation: int = -1,
    pid: int = 1,
) -> TxnOffsetCommit:
    return TxnOffsetCommit(
        client="p1",
        transactional_id=TID,
        producer_id=pid,
        producer_epoch=epoch,
        member_id=member_id,
        generation_id=generation,
        offsets=(TopicPartitionOffset(topic="t", partition=0, offset=offset),),
        version=version,
    )


def end(epoch: int, committed: bool, version: int = 3) -> EndTxn:
    return EndTxn(
        client="p1",
        transactional_id=TID,
        producer_id=1,
        producer_epoch=epoch,
        committed=committed,
        version=version,
    )


def stable_fetch(version: int = 7, stable: bool = True) -> OffsetFetch:
    return OffsetFetch(
        client="c9",
        partitions=(TopicPartition(topic="t", partition=0),),
        version=version,
        require_stable=stable,
    )


def ok(*errors: str) -> TxnOffsetCommitResponse:
    return TxnOffsetCommitResponse(
        partitions=tuple(PartitionError(topic="t", partition=0, error=e) for e in errors)
    )


def fetched(sim: Sim, rid: int) -> FetchedOffset:
    return sim.take(rid).partitions[0]  # type: ignore[union-attr]


def in_transaction(sim: Sim) -> None:
    """A producer at epoch 0 with the group's offsets partition in its transaction."""
    assert sim.take(sim.send(init())) == InitProducerIdResponse(
        error="NONE", producer_id=1, producer_epoch=0
    )
    assert sim.take(sim.send(add(0))) == AddOffsetsToTxnResponse(error="NONE")


@LINES
def test_pending_offsets_are_unstable_until_the_commit_marker(profile) -> None:  # noqa: ANN001
    # T5/T6 (4.x fetchOffsets, 3.9 getOffsets); seen on 4.3.1: UNSTABLE_OFFSET_COMMIT with
    # require_stable, -1 without it, the offset once the marker is written
    sim = Sim(profile=profile)
    in_transaction(sim)
    assert sim.take(sim.send(txn_commit(0))) == ok("NONE")
    assert fetched(sim, sim.send(stable_fetch())).error == "UNSTABLE_OFFSET_COMMIT"
    assert fetched(sim, sim.send(stable_fetch(stable=False))).offset == -1
    assert fetched(sim, sim.send(stable_fetch(version=6))).offset == -1  # no require_stable in v6
    assert sim.take(sim.send(end(0, committed=True))) == EndTxnResponse(error="NONE")
    sim.at(sim.t + MARKERS_WRITTEN_WITHIN_MS)
    got = fetched(sim, sim.send(stable_fetch()))
    assert (got.offset, got.error) == (7, "NONE")


@LINES
def test_the_markers_window_is_a_choice_the_first_observation_resolves(profile) -> None:  # noqa: ANN001
    # T9: EndTxn answers before the markers; a fetch right after may see either, and once it saw
    # the offset committed no later fetch sees it pending again
    sim = Sim(profile=profile)
    in_transaction(sim)
    sim.take(sim.send(txn_commit(0)))
    sim.take(sim.send(end(0, committed=True)))
    sim.at(sim.t + 5)
    rid = sim.send(stable_fetch())
    assert {a.partitions[0].error for a in sim.answers(rid)} == {  # type: ignore[union-attr]
        "UNSTABLE_OFFSET_COMMIT",
        "NONE",
    }
    committed = sim.answers(rid) - {
        a
        for a in sim.answers(rid)
        if a.partitions[0].error != "NONE"  # type: ignore[union-attr]
    }
    sim.observe(rid, committed.pop())  # type: ignore[arg-type]
    assert fetched(sim, sim.send(stable_fetch())).offset == 7


@LINES
def test_abort_drops_the_pending_offsets(profile) -> None:  # noqa: ANN001
    sim = Sim(profile=profile)
    sim.take(sim.send(commit("c9", "", -1, (("t", 0, 3),))))  # a plain commit first
    in_transaction(sim)
    sim.take(sim.send(txn_commit(0)))
    sim.take(sim.send(end(0, committed=False)))
    sim.at(sim.t + MARKERS_WRITTEN_WITHIN_MS)
    got = fetched(sim, sim.send(stable_fetch()))
    assert (got.offset, got.error) == (3, "NONE")


@LINES
def test_a_txn_commit_without_add_offsets_is_refused_before_v5(profile) -> None:  # noqa: ANN001
    # T3: verification finds the offsets partition not in the transaction: TRANSACTION_ABORTABLE,
    # mapped to INVALID_TXN_STATE for v0-3 (seen on 4.3.1 at v3)
    sim = Sim(profile=profile)
    sim.take(sim.send(init()))
    assert sim.take(sim.send(txn_commit(0))) == ok("INVALID_TXN_STATE")
    assert sim.take(sim.send(txn_commit(0, version=4))) == ok("TRANSACTION_ABORTABLE")


def test_v5_adds_the_offsets_partition_itself_on_4x() -> None:
    # T3: TxnOffsetCommit v5 is transaction version 2 (KIP-890); seen on 4.3.1
    sim = Sim(profile=KAFKA_4_X)
    sim.take(sim.send(init()))
    assert sim.take(sim.send(txn_commit(0, version=5))) == ok("NONE")
    assert fetched(sim, sim.send(stable_fetch())).error == "UNSTABLE_OFFSET_COMMIT"


def test_end_txn_v5_bumps_the_epoch_and_names_it() -> None:
    # T8 (4.x endTransaction, prepareAbortOrCommit with TV2); seen on 4.3.1: epoch 0 -> 1
    sim = Sim(profile=KAFKA_4_X)
    in_transaction(sim)
    answer = sim.take(sim.send(end(0, committed=True, version=5)))
    assert answer == EndTxnResponse(error="NONE", producer_id=1, producer_epoch=1)
    # the old epoch again is a retry of the same end (answered at once) ...
    sim.at(sim.t + MARKERS_WRITTEN_WITHIN_MS)
    retry = sim.take(sim.send(end(0, committed=True, version=5)))
    assert retry == EndTxnResponse(error="NONE", producer_id=1, producer_epoch=1)
    # ... and an abort at the current epoch aborts an empty transaction, bumping again
    bumped = sim.take(sim.send(end(1, committed=False, version=5)))
    assert bumped == EndTxnResponse(error="NONE", producer_id=1, producer_epoch=2)


@LINES
def test_end_txn_v1_errors_by_state(profile) -> None:  # noqa: ANN001
    # T7 (endTransactionWithTV1); seen on 4.3.1 at v3: commit after an abort INVALID_TXN_STATE,
    # the abort again NONE
    sim = Sim(profile=profile)
    sim.take(sim.send(init()))
    assert sim.take(sim.send(end(0, committed=True))).error == "INVALID_TXN_STATE"  # Empty
    sim.take(sim.send(add(0)))
    sim.take(sim.send(end(0, committed=False)))
    assert sim.take(sim.send(end(0, committed=True))).error == "INVALID_TXN_STATE"
    sim.at(sim.t + MARKERS_WRITTEN_WITHIN_MS)
    assert sim.take(sim.send(end(0, committed=False))).error == "NONE"


@LINES
def test_a_new_producer_fences_the_old_epoch(profile) -> None:  # noqa: ANN001
    # T1: InitProducerId of an Ongoing transaction aborts it and answers CONCURRENT_TRANSACTIONS;
    # the retry gets epoch + 2. The old epoch: PRODUCER_FENCED (v0-1 INVALID_PRODUCER_EPOCH) from
    # the transaction coordinator, INVALID_PRODUCER_EPOCH on TxnOffsetCommit (seen on 4.3.1)
    sim = Sim(profile=profile)
    in_transaction(sim)
    sim.take(sim.send(txn_commit(0)))
    assert sim.take(sim.send(init())).error == "CONCURRENT_TRANSACTIONS"
    sim.at(sim.t + MARKERS_WRITTEN_WITHIN_MS)
    assert sim.take(sim.send(init())) == InitProducerIdResponse(
        error="NONE", producer_id=1, producer_epoch=2
    )
    assert sim.take(sim.send(add(0))).error == "PRODUCER_FENCED"
    assert sim.take(sim.send(add(0, version=1))).error == "INVALID_PRODUCER_EPOCH"
    assert sim.take(sim.send(end(0, committed=True))).error == "PRODUCER_FENCED"
    assert sim.take(sim.send(txn_commit(0))) == ok("INVALID_PRODUCER_EPOCH")
    assert fetched(sim, sim.send(stable_fetch())).offset == -1  # aborted


@LINES
def test_a_txn_commit_is_taken_in_completing_rebalance(profile) -> None:  # noqa: ANN001
    # T4: ClassicGroup.validateOffsetCommit / 3.9 doTxnCommitOffsets enforce no group state for a
    # transactional commit, where a plain one is REBALANCE_IN_PROGRESS
    sim = Sim(profile=profile)
    r1, r2 = sim.send(join("c1", version=3)), sim.send(join("c2", version=3))
    sim.at(1)
    gen = sim.take(r1).generation_id  # type: ignore[union-attr]
    sim.take(r2)
    assert sim.only.state == "CompletingRebalance"
    assert sim.take(sim.send(commit("c1", "c1-1", gen))).error == "REBALANCE_IN_PROGRESS"
    in_transaction(sim)
    assert sim.take(sim.send(txn_commit(0, member_id="c1-1", generation=gen))) == ok("NONE")
    assert sim.take(sim.send(txn_commit(0, member_id="c1-1", generation=gen + 1))) == ok(
        "ILLEGAL_GENERATION"
    )
    assert sim.take(sim.send(txn_commit(0, member_id="c7-1", generation=gen))) == ok(
        "UNKNOWN_MEMBER_ID"
    )
    # memberless: any group takes it (v0-2 carry no member at all)
    assert sim.take(sim.send(txn_commit(0, version=2))) == ok("NONE")


def test_which_group_a_txn_commit_creates_differs_by_line() -> None:
    # T4: 4.x creates a simple group for generation -1 only, else ILLEGAL_GENERATION and no group;
    # 3.9 creates the group first, so a generation >= 0 is UNKNOWN_MEMBER_ID in a group that stays
    for profile, error, exists in ((KAFKA_4_X, "ILLEGAL_GENERATION", False),
                                   (KAFKA_3_9, "UNKNOWN_MEMBER_ID", True)):  # fmt: skip
        sim = Sim(profile=profile)
        in_transaction(sim)
        answer = sim.take(sim.send(txn_commit(0, member_id="c1-1", generation=1)))
        assert answer == ok(error)
        assert sim.only.exists is exists
    sim = Sim(profile=KAFKA_4_X)
    in_transaction(sim)
    sim.take(sim.send(txn_commit(0)))
    described = sim.take(sim.send(describe("c9")))
    assert (described.group_state, described.protocol_type) == ("Empty", "")  # type: ignore[union-attr]


@LINES
def test_a_plain_commit_after_the_txn_commit_wins(profile) -> None:  # noqa: ANN001
    # T10: replayEndTransactionMarker keeps the record written last (3.9
    # completePendingTxnOffsetCommit: olderThan)
    sim = Sim(profile=profile)
    stable_group(sim, "c1")
    in_transaction(sim)
    sim.take(sim.send(txn_commit(0, 9)))
    sim.take(sim.send(commit("c1", "c1-1", 1, (("t", 0, 4),))))
    sim.take(sim.send(end(0, committed=True)))
    sim.at(sim.t + MARKERS_WRITTEN_WITHIN_MS)
    assert fetched(sim, sim.send(stable_fetch())).offset == 4


def test_a_group_with_only_pending_offsets_is_kept_by_the_cleanup() -> None:
    # T10: 4.x cleanupExpiredOffsets is false while openTransactions holds the group
    sim = Sim(profile=KAFKA_4_X, empty_group_may_vanish=True)
    in_transaction(sim)
    sim.take(sim.send(txn_commit(0)))
    sim.at(sim.t + 1)
    assert sim.only.exists
