"""Regular-expression subscriptions, scripted, against the session broker (rule 12 of
``model/consumer_group.py``): every answer is checked by ``ConsumerGroupModel`` as the search's
are, and each scenario asserts what Kafka's ``GroupMetadataManager`` does (4.2.1 and 4.3.1 read
alike: ``maybeUpdateRegularExpressions``, ``handleRegularExpressionsResult``), read off the
broker's own answers. The search (``subscribe`` in ``properties/consumer_machine.py``) moves
consumers between regexes in random order; these make sure each rule is met, every run."""

from __future__ import annotations

import secrets
import time
from dataclasses import replace
from typing import Any

import pytest
from kgc.conformance.brokerconfig import facts
from kgc.conformance.client import Cluster
from kgc.conformance.negotiate import negotiate_with
from kgc.conformance.session import description_of
from kgc.conformance.suite import consumer_workload
from kgc.engine.broken import broken
from kgc.engine.loop import Engine
from kgc.engine.registry import model_manifest, release_line
from kgc.model import PROFILES
from kgc.model.checker import CheckerConfig
from kgc.model.commands import ConsumerGroupDescribe, ConsumerGroupHeartbeat, Tick, TopicPartition
from kgc.model.history import Receive
from kgc.properties.machine import TOPIC_PARTITIONS

pytestmark = pytest.mark.broker


@pytest.fixture(scope="module")
def regex_group(kgc_broker: Any) -> Any:
    """(open an engine for a fresh group, the run's topic) on the session broker."""
    version = str(description_of(kgc_broker).get("version") or "4")
    release = release_line(version)
    if release is not None and release < (4, 2):
        # CI runs this module on its 4.x pass; a 3.x session broker has no consumer protocol,
        # and these scenarios assert 4.2's rules (a subscription change reconciles at once; the
        # search covers 4.0 and 4.1 by their own switches)
        pytest.skip(f"these scenarios assert Apache Kafka 4.2+ rules, not {version}'s")
    cluster = Cluster(kgc_broker.bootstrap_servers, client_id="kgc-test")
    description = {**description_of(kgc_broker), **facts(cluster, None)}
    negotiated = negotiate_with(cluster, PROFILES[model_manifest(description)["profile"]])
    description["request_versions"] = {k: list(v) for k, v in negotiated.versions.items()}
    topic = f"kgc-regex-{secrets.token_hex(3)}"
    cluster.create_topic(topic, partitions=TOPIC_PARTITIONS)
    workload = consumer_workload(cluster, description, topic=topic)
    engines: list[Engine] = []

    def open_engine() -> Engine:
        group = f"kgc-regex-{secrets.token_hex(4)}"
        engine = Engine(workload.open_target(group), workload.new_model(group), CheckerConfig())
        engines.append(engine)
        return engine

    yield open_engine, topic
    for engine in engines:
        engine.target.close()
    cluster.close()


def _join(client: str, *, topic: str | None = None, regex: str | None = None) -> Any:
    return ConsumerGroupHeartbeat(
        client=client,
        member_id=f"{client}-1",
        member_epoch=0,
        rebalance_timeout_ms=2000,
        subscribed_topic_names=None if topic is None else (topic,),
        subscribed_topic_regex=regex,
        topic_partitions=(),
        version=1,
    )


def _beat(client: str, epoch: int, owned: tuple[TopicPartition, ...] = ()) -> Any:
    return ConsumerGroupHeartbeat(
        client=client,
        member_id=f"{client}-1",
        member_epoch=epoch,
        topic_partitions=owned,
        version=1,
    )


def _answer(engine: Engine, command: Any) -> Any:
    """Send ``command``, wait for its answer (the model checks it), return the broker's answer."""
    rid = engine.execute(command).request_id
    for _ in range(50):
        assert engine.divergence is None, engine.divergence
        for event in engine.events:
            if isinstance(event, Receive) and event.request_id == rid:
                return event.response
        engine.execute(Tick(ms=20))
    raise AssertionError(f"no answer to {command}")


class Member:
    """A consumer that heartbeats at its epoch and acks what it is given, as the machine's do."""

    def __init__(self, engine: Engine, client: str) -> None:
        self.engine, self.client = engine, client
        self.epoch, self.owned = 0, ()

    def send(self, command: Any) -> Any:
        answer = _answer(self.engine, command)
        assert answer.error == "NONE", answer
        self.epoch = answer.member_epoch
        if answer.assignment is not None:
            self.owned = answer.assignment
        return answer

    def beat(self) -> Any:
        return self.send(_beat(self.client, self.epoch, self.owned))


def _until(members: list[Member], done: Any, seconds: float) -> None:
    """Heartbeat every member every 300 ms (sessions are 2 s) until ``done()`` or ``seconds``."""
    deadline = time.monotonic() + seconds
    while not done() and time.monotonic() < deadline:
        for m in members:
            m.beat()
        time.sleep(0.3)


def test_a_regex_subscribes_once_the_coordinator_resolved_it(regex_group: Any) -> None:
    open_engine, topic = regex_group
    e = open_engine()
    c1 = Member(e, "c1")
    joined = c1.send(_join("c1", regex=topic))
    # an unresolved regex matches nothing: no partition yet, and no epoch bump for it
    assert joined.assignment == ()
    first = joined.member_epoch
    # the coordinator resolves it in the background, then bumps the group epoch once
    _until([c1], lambda: len(c1.owned) == TOPIC_PARTITIONS, 5)
    assert (len(c1.owned), c1.epoch) == (TOPIC_PARTITIONS, first + 1)
    described = _answer(e, ConsumerGroupDescribe(client="c1", version=1))
    (member,) = described.members
    assert (member.subscribed_topic_regex, member.subscribed_topic_names) == (topic, ())
    e.finish()
    assert e.divergence is None, e.divergence


def test_an_invalid_regex_is_refused_and_creates_no_group(regex_group: Any) -> None:
    open_engine, topic = regex_group
    e = open_engine()
    refused = _answer(e, _join("c1", regex=f"{topic}["))
    assert refused.error == "INVALID_REGULAR_EXPRESSION"
    described = _answer(e, ConsumerGroupDescribe(client="c1", version=1))
    assert described.error == "GROUP_ID_NOT_FOUND"
    e.finish()
    assert e.divergence is None, e.divergence


def test_a_regex_matching_nothing_leaves_the_topic_to_the_member_that_names_it(
    regex_group: Any,
) -> None:
    open_engine, topic = regex_group
    e = open_engine()
    c1, c2 = Member(e, "c1"), Member(e, "c2")
    c1.send(_join("c1", topic=topic))
    c2.send(_join("c2", regex=f"{topic}-none.*"))
    _until([c1, c2], lambda: len(c1.owned) == TOPIC_PARTITIONS, 5)
    _until([c1, c2], lambda: False, 2.5)  # past any resolution: nothing may move any more
    assert (len(c1.owned), c2.owned) == (TOPIC_PARTITIONS, ())
    e.finish()
    assert e.divergence is None, e.divergence


def test_a_new_regex_waits_for_a_heartbeat_10_s_after_the_last_resolution(
    regex_group: Any,
) -> None:
    open_engine, topic = regex_group
    e = open_engine()
    c1, c2 = Member(e, "c1"), Member(e, "c2")
    c1.send(_join("c1", regex=topic))
    _until([c1], lambda: len(c1.owned) == TOPIC_PARTITIONS, 5)
    started = time.monotonic()
    # another regex matching the topic: new to the group, but the last resolution began less
    # than 10 s ago (REGEX_BATCH_REFRESH_MIN_INTERVAL_MS), so none starts; c2 gets nothing
    c2.send(_join("c2", regex=f"{topic}.*"))
    _until([c1, c2], lambda: False, 4)
    assert c2.owned == ()
    # the first heartbeat past the 10 s starts one; once done, c2 gets its share
    _until([c1, c2], lambda: bool(c2.owned), 18 - (time.monotonic() - started))
    assert c2.owned and time.monotonic() - started > 9
    e.finish()
    assert e.divergence is None, e.divergence


def test_the_batch_interval_scenario_catches_a_model_without_it(regex_group: Any) -> None:
    # the search does not reach this rule (engine/broken.py, SCENARIO_VARIANTS): the scenario
    # above must, or a model that resolves every new regex at once would pass unseen
    open_engine, topic = regex_group
    e = open_engine()
    c1, c2 = Member(e, "c1"), Member(e, "c2")
    with broken("consumer-regex-no-batch-interval"):
        c1.send(_join("c1", regex=topic))
        _until([c1], lambda: len(c1.owned) == TOPIC_PARTITIONS, 5)
        c2.send(_join("c2", regex=f"{topic}.*"))
        with pytest.raises(AssertionError, match="Divergence"):
            _until([c1, c2], lambda: False, 4)
    assert e.divergence is not None


def test_switching_from_names_to_a_regex_and_back(regex_group: Any) -> None:
    open_engine, topic = regex_group
    e = open_engine()
    c1 = Member(e, "c1")
    c1.send(_join("c1", topic=topic))
    _until([c1], lambda: len(c1.owned) == TOPIC_PARTITIONS, 3)
    to_regex = replace(
        _beat("c1", c1.epoch, c1.owned), subscribed_topic_names=(), subscribed_topic_regex=topic
    )
    moved = c1.send(to_regex)
    # subscribed to nothing until the regex is resolved: everything is revoked at once
    assert moved.assignment == ()
    _until([c1], lambda: len(c1.owned) == TOPIC_PARTITIONS, 5)
    back = replace(
        _beat("c1", c1.epoch, c1.owned), subscribed_topic_names=(topic,), subscribed_topic_regex=""
    )
    before = c1.epoch
    answer = c1.send(back)
    # dropping the regex bumps the epoch (REGEX_UPDATED_AND_RESOLVED); the topic stays c1's
    assert answer.member_epoch == before + 1 and len(c1.owned) == TOPIC_PARTITIONS
    described = _answer(e, ConsumerGroupDescribe(client="c1", version=1))
    assert described.members[0].subscribed_topic_regex is None
    e.finish()
    assert e.divergence is None, e.divergence
