"""The transactional offsets path against a real broker: the model
(``model/classic/transactions.py``) and Kafka agree.

Two tests. A hand-written history takes one group and one transactional producer through every
answer: a TxnOffsetCommit before AddOffsetsToTxn (``INVALID_TXN_STATE``), one with the member's
generation while the group is in CompletingRebalance (``NONE``, where the plain commit beside it
is ``REBALANCE_IN_PROGRESS``), a stale generation (``ILLEGAL_GENERATION``), the pending offset
``UNSTABLE_OFFSET_COMMIT`` to a ``require_stable`` fetch, a fetch right after EndTxn (inside the
markers' window: either answer), the offset visible once committed, dropped once aborted, and a
new InitProducerId during a transaction (``CONCURRENT_TRANSACTIONS``, then the epoch two higher)
after which the old epoch is ``PRODUCER_FENCED`` / ``INVALID_PRODUCER_EPOCH``. Then the classic
machine's search with the opt-in rules (``properties/machine.py`` ``TransactionalMachine``), on
``BrokerTarget`` targets, for a bounded number of examples: no divergence, and the new answers
seen. ``--kgc-kafka-version 3.9.2`` runs them on the Scala coordinator.
"""

from __future__ import annotations

import pytest
from kgc.engine.traces import render
from kgc.model.classic.transactions import MARKERS_WRITTEN_WITHIN_MS
from kgc.model.commands import (
    AddOffsetsToTxn,
    AddOffsetsToTxnResponse,
    EndTxn,
    EndTxnResponse,
    InitProducerId,
    InitProducerIdResponse,
    JoinGroup,
    OffsetCommit,
    OffsetCommitResponse,
    OffsetFetch,
    OffsetFetchResponse,
    Protocol,
    Tick,
    TopicPartition,
    TopicPartitionOffset,
    TxnOffsetCommit,
    TxnOffsetCommitResponse,
)
from kgc.model.requests import TRANSACTIONAL_REQUESTS

from tests.scripted import classic_run, opt_in_search

pytestmark = pytest.mark.broker

PAST_MARKERS = Tick(ms=int(MARKERS_WRITTEN_WITHIN_MS) + 100)
# the answers the bounded search must show (the rarer ones are printed, not required)
WANTED = {
    ("InitProducerId", "NONE"),
    ("AddOffsetsToTxn", "NONE"),
    ("TxnOffsetCommit", "NONE"),
    ("EndTxn", "NONE"),
    ("OffsetFetch", "UNSTABLE_OFFSET_COMMIT"),
}


def _history(topic: str, *, delay_ms: int) -> list:
    def init() -> InitProducerId:
        return InitProducerId(client="p1", transactional_id="t1", version=4)

    def add(epoch: int) -> AddOffsetsToTxn:
        return AddOffsetsToTxn(
            client="p1", transactional_id="t1", producer_id=1, producer_epoch=epoch, version=3
        )

    def txn_commit(epoch: int, offset: int, generation: int = -1) -> TxnOffsetCommit:
        return TxnOffsetCommit(
            client="p1",
            transactional_id="t1",
            producer_id=1,
            producer_epoch=epoch,
            member_id="c1-1" if generation >= 0 else "",
            generation_id=generation,
            offsets=(TopicPartitionOffset(topic=topic, partition=0, offset=offset),),
            version=3,
        )

    def end(epoch: int, committed: bool) -> EndTxn:
        return EndTxn(
            client="p1",
            transactional_id="t1",
            producer_id=1,
            producer_epoch=epoch,
            committed=committed,
            version=3,
        )

    stable_fetch = OffsetFetch(
        client="p1",
        partitions=(TopicPartition(topic=topic, partition=0),),
        version=7,
        require_stable=True,
    )
    return [
        JoinGroup(
            client="c1",
            session_timeout_ms=30_000,
            rebalance_timeout_ms=30_000,
            protocols=(Protocol(name="range", metadata=""),),
            version=3,
        ),
        Tick(ms=delay_ms + 300),  # generation 1, CompletingRebalance: c1 does not sync
        init(),  # producer 1, epoch 0
        txn_commit(0, 5, generation=1),  # the partition is not in the transaction yet
        add(0),
        txn_commit(0, 5, generation=1),  # taken in CompletingRebalance
        OffsetCommit(
            client="c1",
            member_id="c1-1",
            generation_id=1,
            offsets=(TopicPartitionOffset(topic=topic, partition=0, offset=4),),
            version=7,
        ),  # the plain one is not
        txn_commit(0, 6, generation=2),  # stale
        stable_fetch,  # pending
        end(0, committed=True),
        stable_fetch,  # inside the markers' window: either
        PAST_MARKERS,
        stable_fetch,  # 5
        add(0),
        txn_commit(0, 9),
        end(0, committed=False),
        PAST_MARKERS,
        stable_fetch,  # still 5
        add(0),
        txn_commit(0, 11),
        init(),  # fences epoch 0, aborts: CONCURRENT_TRANSACTIONS
        PAST_MARKERS,
        init(),  # epoch 2
        add(0),
        end(0, committed=True),
        txn_commit(0, 12),
        stable_fetch,  # still 5
    ]


def test_a_scripted_transactional_history_is_allowed(kgc_broker) -> None:  # noqa: ANN001
    engine, trace, answers = classic_run(
        kgc_broker, "kgc-txn-", lambda run: _history(run.topic, delay_ms=run.delay_ms)
    )
    assert engine.divergence is None, render(trace)
    inits = [r for r in answers if isinstance(r, InitProducerIdResponse)]
    assert [(r.error, r.producer_epoch) for r in inits] == [
        ("NONE", 0),
        ("CONCURRENT_TRANSACTIONS", -1),
        ("NONE", 2),
    ], render(trace)
    txn_commits = [r.error for r in answers if isinstance(r, TxnOffsetCommitResponse)]
    assert txn_commits == [
        "INVALID_TXN_STATE",
        "NONE",
        "ILLEGAL_GENERATION",
        "NONE",
        "NONE",
        "INVALID_PRODUCER_EPOCH",
    ], render(trace)
    plain = next(r for r in answers if isinstance(r, OffsetCommitResponse))
    assert plain.error == "REBALANCE_IN_PROGRESS"
    adds = [r.error for r in answers if isinstance(r, AddOffsetsToTxnResponse)]
    assert adds == ["NONE", "NONE", "NONE", "PRODUCER_FENCED"], render(trace)
    ends = [r.error for r in answers if isinstance(r, EndTxnResponse)]
    assert ends == ["NONE", "NONE", "PRODUCER_FENCED"], render(trace)
    fetched = [r.partitions[0] for r in answers if isinstance(r, OffsetFetchResponse)]
    assert fetched[0].error == "UNSTABLE_OFFSET_COMMIT"
    assert [(f.offset, f.error) for f in fetched[2:]] == [(5, "NONE")] * 3, render(trace)


def test_the_search_with_transactions_agrees_with_the_broker(kgc_broker) -> None:  # noqa: ANN001
    ctx = opt_in_search(
        kgc_broker, TRANSACTIONAL_REQUESTS, prefix="kgc-tx-", examples=10, steps=20, seed=1
    )
    wanted_types = {*TRANSACTIONAL_REQUESTS, "OffsetFetch"}
    seen = {c: n for c, n in sorted(ctx.coverage.items()) if n and c[1] in wanted_types}
    print(f"{ctx.examples} examples, {ctx.commands} commands; cells: {seen}")  # -s shows it
    reached = {(c[1], c[2]) for c in seen}
    assert reached >= WANTED, f"not seen: {sorted(WANTED - reached)}; coverage {ctx.coverage}"
