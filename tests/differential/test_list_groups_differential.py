"""ListGroups against a real broker: the model (``model/classic/list_groups.py``) and Kafka agree.

Two parts. A hand-written history lists one group through its life (missing, CompletingRebalance,
Stable, Empty after the last member leaves), at v2, v4 and v5, with state and type filters that
hide it and that show it. Then the classic machine's search, with the opt-in ListGroups rule
(``properties/machine.py`` ``ListingGroupMachine``), on ``BrokerTarget`` targets: no divergence,
and ListGroups answered in every live group state. The broker lists every group it coordinates,
so each answer also holds the other tests' and examples' groups; the wire keeps the run's own.
"""

from __future__ import annotations

import secrets

import pytest
from kgc.conformance.brokers.session import description_of
from kgc.conformance.wire.broker_target import BrokerTarget
from kgc.conformance.wire.brokerconfig import facts
from kgc.conformance.wire.client import Cluster
from kgc.conformance.wire.negotiate import negotiate_with
from kgc.engine.registry import build, model_manifest
from kgc.engine.traces import render
from kgc.model import PROFILES
from kgc.model.commands import (
    Assignment,
    JoinGroup,
    LeaveGroup,
    ListGroups,
    ListGroupsResponse,
    MemberIdentity,
    Protocol,
    SyncGroup,
    Tick,
)
from kgc.properties.machine import (
    TOPIC_PARTITIONS,
    SuiteContext,
    machine_for,
    search,
    time_scale_for,
)

from tests.scripted import classic_run

pytestmark = pytest.mark.broker


def _listing(version: int, states: tuple[str, ...] = (), types: tuple[str, ...] = ()) -> ListGroups:
    return ListGroups(client="c2", states_filter=states, types_filter=types, version=version)


def _history() -> list:
    join = JoinGroup(
        client="c1",
        session_timeout_ms=10_000,
        rebalance_timeout_ms=10_000,
        protocols=(Protocol(name="range", metadata="m"),),
        version=3,
    )
    return [
        _listing(5),  # no such group yet
        join,
        Tick(ms=200),
        _listing(4),  # CompletingRebalance (4.x: or missing, until a write is seen committed)
        SyncGroup(
            client="c1",
            member_id="c1-1",
            generation_id=1,
            assignments=(Assignment(member_id="c1-1", assignment="a"),),
            version=3,
        ),
        _listing(5),
        _listing(2),
        _listing(4, states=("stable",)),
        _listing(4, states=("Empty", "PreparingRebalance")),
        _listing(5, types=("Classic",)),
        _listing(5, types=("consumer",)),
        LeaveGroup(client="c1", members=(MemberIdentity(member_id="c1-1"),), version=3),
        _listing(5),  # Empty
        _listing(5, states=("empty",)),
    ]


def test_a_scripted_history_of_listings_is_allowed(kgc_broker) -> None:  # noqa: ANN001
    engine, trace, answers = classic_run(kgc_broker, "kgc-list-", lambda _: _history(), topics=())
    assert engine.divergence is None, render(trace)
    listed = [r for r in answers if isinstance(r, ListGroupsResponse)]
    assert len(listed) == 10, render(trace)
    assert sum(1 for r in listed if r.groups) >= 5, "the group was hardly listed:\n" + render(trace)


def test_the_search_with_list_groups_agrees_with_the_broker(kgc_broker) -> None:  # noqa: ANN001
    cluster = Cluster(kgc_broker.bootstrap_servers, client_id="kgc-list-groups")
    try:
        description = {**description_of(kgc_broker), **facts(cluster)}
        record = model_manifest(description)
        negotiated = negotiate_with(cluster, PROFILES[record["profile"]], ("ListGroups",))
        assert "ListGroups" in negotiated.versions, negotiated.unsupported
        run = f"kgc-lg-{secrets.token_hex(3)}"
        topic = f"{run}-topic"
        cluster.create_topic(topic, partitions=TOPIC_PARTITIONS)
        counter = iter(range(10**6))
        ctx = SuiteContext(
            open_target=lambda gid: BrokerTarget(cluster, gid, description=description),
            new_model=lambda gid: build(record, gid),
            versions=negotiated.versions,
            opt_in=frozenset({"ListGroups"}),
            topic=topic,
            time_scale=time_scale_for(description.get("group_config") or {}),
        )
        ctx.new_group_id = lambda: f"{run}-{next(counter)}"
        search(machine_for(ctx), examples=12, steps=25, seed=7, shrink=False)
    finally:
        cluster.close()
    reached = {c[0] for c, n in ctx.coverage.items() if c[1] == "ListGroups" and n}
    assert {"Empty", "Stable"} <= reached, ctx.coverage
