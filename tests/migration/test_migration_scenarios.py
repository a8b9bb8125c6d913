"""Online migration, scripted: the upgrade of a classic group by a consumer-protocol member, its
classic member catching up inside the consumer group, and the downgrade when the last
consumer-protocol member leaves, sent to a real broker (the session broker: Kafka 4.x's default
``group.consumer.migration.policy``, ``bidirectional``) and checked answer by answer by
``MigratingGroupModel``, as the search is. The search (``test_migration_differential.py``) crosses
in random order; these scenarios make sure each conversion is met, every run.

What each scenario asserts beyond "the model allows every answer" is what Kafka 4.3.1's
``GroupMetadataManager`` does (cited at each step), read off the broker's own answers."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kgc.conformance.brokers.session import description_of
from kgc.conformance.drivers.suite import migration_workload
from kgc.engine.loop import Engine
from kgc.model.client_view import simple_commit, subscription
from kgc.model.commands import (
    Assignment,
    ConsumerGroupDescribe,
    ConsumerGroupHeartbeat,
    DescribeGroups,
    Heartbeat,
    JoinGroup,
    OffsetFetch,
    Protocol,
    SyncGroup,
    TopicPartition,
    TopicPartitionOffset,
)

from tests.scripted import answer, engines

pytestmark = pytest.mark.broker


@pytest.fixture(scope="module")
def mixed(kgc_broker: Any) -> Any:
    """(open an engine for a fresh group, the run's topic) on the session broker."""
    version = str(description_of(kgc_broker).get("version") or "4")
    if version[:1].isdigit() and int(version.split(".")[0]) < 4:
        # CI runs this module on its 4.x pass only; a 3.x session broker (``--kgc-kafka-version``)
        # has no consumer protocol, so no group of it to migrate to
        pytest.skip("no KIP-848 consumer protocol below Apache Kafka 4.0: nothing to migrate to")
    yield from engines(kgc_broker, migration_workload, "kgc-migration-")


def _join(client: str, topic: str, member_id: str = "", version: int = 3) -> JoinGroup:
    return JoinGroup(
        client=client,
        member_id=member_id,
        session_timeout_ms=2000,
        rebalance_timeout_ms=2000,
        protocols=(Protocol(name="range", metadata=subscription([topic])),),
        version=version,
    )


def _cgh(topic: str, epoch: int, owned: tuple[TopicPartition, ...] | None = ()) -> Any:
    if epoch == 0:
        return ConsumerGroupHeartbeat(
            client="k1",
            member_id="k1-1",
            member_epoch=0,
            rebalance_timeout_ms=2000,
            subscribed_topic_names=(topic,),
            topic_partitions=(),
            version=1,
        )
    return ConsumerGroupHeartbeat(
        client="k1", member_id="k1-1", member_epoch=epoch, topic_partitions=owned, version=1
    )


def _states(engine: Engine) -> list[str]:
    """The group types the model passed through, in order (from the recorded group states)."""
    seen: list[str] = []
    for extra in engine.extras:
        state = (extra or {}).get("group_state") or ""
        kind = state.split("/")[0] if "/" in state else ""
        if kind and (not seen or seen[-1] != kind):
            seen.append(kind)
    return seen


def test_upgrade_then_downgrade(mixed: Any) -> None:
    open_engine, topic = mixed
    e = open_engine()
    everything = json.dumps({topic: [0, 1, 2]})
    joined = answer(e, _join("c1", topic))
    assert (joined.error, joined.generation_id) == ("NONE", 1)
    sync = SyncGroup(
        client="c1",
        member_id="c1-1",
        generation_id=1,
        assignments=(Assignment(member_id="c1-1", assignment=everything),),
        version=3,
    )
    assert answer(e, sync).error == "NONE"
    # ``convertToConsumerGroup``: the classic group (generation 1) becomes a consumer group at
    # epoch 1; k1's join bumps it to 2; k1's partitions are c1's still, so it gets none yet
    up = answer(e, _cgh(topic, 0))
    assert (up.error, up.member_epoch, up.assignment) == ("NONE", 2, ())
    # c1, a classic member of a consumer group, is behind: it must rejoin
    beat = Heartbeat(client="c1", member_id="c1-1", generation_id=1, version=3)
    assert answer(e, beat).error == "REBALANCE_IN_PROGRESS"
    rejoined = answer(e, _join("c1", topic, "c1-1"))
    # answered at once, generation = its member epoch, no leader (``classicGroupJoinToConsumer
    # Group``); its v0 subscription owns nothing, so its revocation is done
    assert (rejoined.error, rejoined.generation_id, rejoined.leader) == ("NONE", 2, "")
    kept = answer(e, SyncGroup(client="c1", member_id="c1-1", generation_id=2, version=3))
    assert kept.error == "NONE" and kept.assignment != everything
    given = answer(e, _cgh(topic, 2))
    assert given.error == "NONE" and given.assignment  # released by c1: now k1's
    described = answer(e, ConsumerGroupDescribe(client="k1", version=1))
    assert {m.member_id for m in described.members} == {"c1-1", "k1-1"}
    # the last consumer-protocol member leaves: every member left is classic, so the group is
    # classic again (``convertToClassicGroup``) and rebalances
    assert answer(e, _cgh(topic, -1)).error == "NONE"
    beat = Heartbeat(client="c1", member_id="c1-1", generation_id=2, version=3)
    assert answer(e, beat).error == "REBALANCE_IN_PROGRESS"
    back = answer(e, _join("c1", topic, "c1-1"))
    assert (back.error, back.generation_id, back.leader) == ("NONE", 3, "c1-1")
    assert answer(e, DescribeGroups(client="c1", version=5)).group_state == "CompletingRebalance"
    e.finish()
    assert e.divergence is None, e.divergence
    assert _states(e) == ["classic", "consumer", "classic"]


def test_classic_members_join_a_consumer_group_and_keep_it_when_it_downgrades(mixed: Any) -> None:
    open_engine, topic = mixed
    e = open_engine()
    assert answer(e, _cgh(topic, 0)).member_epoch == 2
    first = answer(e, _join("c1", topic, version=4))  # KIP-394's handshake, in a consumer group
    assert (first.error, first.member_id) == ("MEMBER_ID_REQUIRED", "c1-1")
    joined = answer(e, _join("c1", topic, "c1-1", version=4))
    assert (joined.error, joined.generation_id, joined.leader) == ("NONE", 3, "")
    assert answer(e, _cgh(topic, 2, owned=None)).error == "NONE"
    assert answer(e, _cgh(topic, -1)).error == "NONE"  # downgrade: c1 alone, classic
    assert answer(e, DescribeGroups(client="c1", version=5)).group_state == "PreparingRebalance"
    e.finish()
    assert e.divergence is None, e.divergence
    assert _states(e)[-2:] == ["consumer", "classic"]


def test_a_simple_groups_offsets_pass_to_the_consumer_group_and_back(mixed: Any) -> None:
    open_engine, topic = mixed
    e = open_engine()
    offsets = (TopicPartitionOffset(topic=topic, partition=0, offset=42),)
    committed = answer(e, simple_commit("k1", offsets=offsets, version=9))
    assert committed.partitions[0].error == "NONE"  # a classic "simple" group, Empty
    assert answer(e, _cgh(topic, 0)).error == "NONE"  # ``maybeDeleteEmptyClassicGroup``
    fetch = OffsetFetch(
        client="k1", partitions=(TopicPartition(topic=topic, partition=0),), version=7
    )
    assert [p.offset for p in answer(e, fetch).partitions] == [42]
    assert answer(e, _cgh(topic, -1)).error == "NONE"  # Empty, kept for its offsets
    assert answer(e, _join("c1", topic)).error == "NONE"  # ``maybeDeleteEmptyConsumerGroup``
    assert [p.offset for p in answer(e, fetch).partitions] == [42]
    e.finish()
    assert e.divergence is None, e.divergence
    assert _states(e) == ["classic", "consumer", "classic"]
