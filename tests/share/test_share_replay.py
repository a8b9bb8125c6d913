"""A share trace replays on a fresh broker as ``kgc replay`` and ``kgc matrix`` replay it: the
trace recorded by ``kgc check --protocol share --profile quick --seed 1 --record`` against
embedded Apache Kafka 4.3.1 (``recorded/``: two members join, the ``simple`` assignor splits the
partitions, ShareGroupDescribe between heartbeats) replays clean on a broker started for it.

Before its first example the share workload readies the broker (``workloads.prepare_share``): on
a fresh broker the share coordinator's first initialization also creates its state topic, which
can outlast the model's initialization bound (``SHARE_INITIALIZATION_MS``). A replay readies the
broker the same way (``suite.replay_on_broker``); every answer of the replay must be one the
model allows, and the group described Stable. (The replay sends the recorded epochs as they are:
where the replayed group initialized its partitions at another moment, a member is fenced where
the recording's was not, which the model allows; the answers are judged, not matched.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from kgc.conformance.brokers.session import open_broker
from kgc.conformance.drivers.suite import replay_with_own_client
from kgc.engine.traces import load, render
from kgc.model import commands as m

pytestmark = pytest.mark.broker

RECORDED = Path(__file__).parent / "recorded" / "kafka-4.3.1-share-seed-1.jsonl"


def _answers(trace) -> list[m.Response]:  # noqa: ANN001
    return [e.response for e in trace.events if hasattr(e, "response")]


def test_a_recorded_share_trace_replays_clean_on_a_fresh_broker() -> None:
    recorded = load(RECORDED)
    with open_broker(kafka_version=recorded.manifest["target"]["version"]) as fresh:
        done = replay_with_own_client(fresh, recorded)
    assert done.engine.divergence is None, render(done.trace)
    assert str(done.verdict) == "PASSES", done.verdict

    described = [r for r in _answers(done.trace) if isinstance(r, m.ShareGroupDescribeResponse)]
    assert described and {r.group_state for r in described} == {"Stable"}, render(done.trace)
