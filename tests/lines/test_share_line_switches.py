"""The share group's 4.2 switches (``profiles.share_line_rules``) shown on a 4.2.2 and a 4.3.1
broker, one at a time, with one scripted history: A joins a new group and takes every partition,
B joins and takes its share, A reconciles, B leaves, A heartbeats.

The expected epochs are read in the kafka-group-coordinator jars, not in the model
(``docs/share-groups.md`` §8): a new group starts at epoch 0 in 4.2.2 (``ModernGroup``'s
constructor sets neither ``groupEpoch`` nor ``targetAssignmentEpoch``) and at 1 in 4.3.1 (it sets
``groupEpoch`` to 1, ``TargetAssignmentMetadata.INITIAL``); after B's leave the assignment epoch is
behind the group epoch, and 4.2.2's ``shareGroupHeartbeat`` still asks
``initializedAssignmentPending`` (B's partitions are in no target any more: one more bump) where
4.3.1 asks it only ``if (group.assignmentEpoch() >= groupEpoch)``. Each history is then judged by
its line's share model, which passes it, and by that model with one switch set as the other line
has it, which fails it: each switch is needed on both brokers."""

from __future__ import annotations

import itertools
import secrets
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from kgc.conformance.brokers.embedded import EmbeddedKafka
from kgc.conformance.drivers.workloads import prepare_share
from kgc.conformance.wire.broker_target import BrokerTarget
from kgc.conformance.wire.brokerconfig import group_settings
from kgc.conformance.wire.client import Cluster
from kgc.engine.registry import build_share, share_manifest
from kgc.model import commands as m
from kgc.model.checker import Checker, CheckerConfig
from kgc.model.history import Event, Invoke, Receive

pytestmark = [pytest.mark.broker, pytest.mark.slow]

PARTITIONS = 3
ASSIGNED_WITHIN_S = 20.0  # the share coordinator initializes a new group's topic well within it


class Script:
    """One share group on a broker, spoken to through ``BrokerTarget``; every request and answer
    is kept as the history a checker judges (times in ms from the first request)."""

    def __init__(self, cluster: Cluster, topic: str) -> None:
        self.topic = topic
        self.group_id = f"kgc-share-lines-{secrets.token_hex(4)}"
        self.target = BrokerTarget(cluster, self.group_id, description={})
        self.events: list[Event] = []
        self.ids = itertools.count(1)
        self.start = time.monotonic()

    def _now(self) -> float:
        return (time.monotonic() - self.start) * 1000.0

    def ask(self, command: m.Request) -> Any:
        rid = next(self.ids)
        self.target.prepare(command.client)
        self.events.append(Invoke(step=rid, at_ms=self._now(), request_id=rid, command=command))
        self.target.send(rid, command)
        deadline = time.monotonic() + 10.0
        while time.monotonic() < deadline:
            for arrival in self.target.poll(100):
                if arrival.request_id == rid:
                    self.events.append(
                        Receive(
                            step=rid, at_ms=self._now(), request_id=rid, response=arrival.response
                        )
                    )
                    return arrival.response
        raise AssertionError(f"no answer to {command} in 10 s")

    def heartbeat(
        self, client: str, epoch: int, topics: tuple[str, ...] | None = None
    ) -> m.ShareGroupHeartbeatResponse:
        answer = self.ask(
            m.ShareGroupHeartbeat(
                client=client,
                member_id=f"{client}-1",
                member_epoch=epoch,
                subscribed_topic_names=topics,
                version=1,
            )
        )
        assert isinstance(answer, m.ShareGroupHeartbeatResponse) and answer.error == "NONE", answer
        return answer

    def describe(self) -> m.ShareGroupDescribeResponse:
        answer = self.ask(m.ShareGroupDescribe(client="c9", version=1))
        assert isinstance(answer, m.ShareGroupDescribeResponse)
        return answer


@pytest.fixture(params=["4.2.2", "4.3.1"])
def line(request: pytest.FixtureRequest) -> Iterator[tuple[str, Cluster, str]]:
    """A fresh broker of the version (stopped after the test: one broker at a time), a topic of
    three partitions and the share coordinator warmed up on it (``workloads.prepare_share``)."""
    broker = EmbeddedKafka(request.param).start()
    try:
        with Cluster(broker.bootstrap_servers, client_id="kgc-lines") as cluster:
            topic = f"kgc-share-lines-{secrets.token_hex(4)}"
            cluster.create_topic(topic, partitions=PARTITIONS)
            prepare_share(cluster, {}, topic=topic)
            yield request.param, cluster, topic
    finally:
        broker.stop()


SWITCHES = ("initial_group_epoch", "initialized_pending_while_behind")


def _judged(
    version: str, facts: dict[str, int], script: Script, *, flipped: str | None = None
) -> bool:
    """Whether the share model of ``version``'s line, with the broker's share settings, allows the
    history (the suite's timing tolerance, no reorder window: one client speaks at a time); with
    ``flipped``, that one switch set as the other line has it."""
    description = {"version": version, "group_config": facts}
    model = build_share(
        share_manifest(description, {script.topic: PARTITIONS}, reorder=False), script.group_id
    )
    if flipped is not None:
        other = "4.3.1" if version.startswith("4.2") else "4.2.2"
        theirs = build_share(share_manifest({"version": other}, {script.topic: PARTITIONS}), "")
        model.config = replace(model.config, **{flipped: getattr(theirs.config, flipped)})
    checker = Checker(model, CheckerConfig())
    checker.feed_all(script.events)
    return checker.divergence is None


def test_a_new_group_and_the_heartbeat_after_a_leave_on_both_lines(line) -> None:  # noqa: ANN001
    version, cluster, topic = line
    first = 0 if version.startswith("4.2") else 1
    s = Script(cluster, topic)
    # A joins: the new topic set bumps the new group's epoch once; nothing is initialized yet
    assert s.heartbeat("c1", 0, (topic,)).member_epoch == first + 1
    # A heartbeats until the share coordinator has initialized the topic: one bump, everything
    deadline = time.monotonic() + ASSIGNED_WITHIN_S
    while True:
        answer = s.heartbeat("c1", first + 1)
        if answer.member_epoch != first + 1:
            break
        assert time.monotonic() < deadline, "the topic was not initialized within the bound"
        time.sleep(0.1)
    assert answer.member_epoch == first + 2 and len(answer.assignment or ()) == PARTITIONS
    # B joins (bump) and A reconciles to the same epoch
    assert s.heartbeat("c2", 0, (topic,)).member_epoch == first + 3
    assert s.heartbeat("c1", first + 2).member_epoch == first + 3
    # B leaves: +1, no target (the assignment epoch stays behind)
    assert s.heartbeat("c2", -1).member_epoch == -1
    d = s.describe()
    assert (d.group_epoch, d.assignment_epoch) == (first + 4, first + 3)
    # A's heartbeat: 4.3.1 computes the target at the group epoch; 4.2.2 first bumps once more
    # for B's partitions, pending although the assignment is behind
    extra = 1 if version.startswith("4.2") else 0
    answer = s.heartbeat("c1", first + 3)
    assert answer.member_epoch == first + 4 + extra
    assert len(answer.assignment or ()) == PARTITIONS
    s.heartbeat("c1", -1)
    s.target.close()
    facts = group_settings(cluster)
    assert _judged(version, facts, s), f"{version}'s share rules fail its own broker"
    for switch in SWITCHES:
        assert not _judged(version, facts, s, flipped=switch), f"{switch} is not needed"
