"""ListGroups against a real broker: the model (``model/classic/list_groups.py``) and Kafka agree.

Two parts. A hand-written history lists one group through its life (missing, CompletingRebalance,
Stable, Empty after the last member leaves), at v2, v4 and v5, with state and type filters that
hide it and that show it. Then the classic machine's search, with the opt-in ListGroups rule
(``properties/machine.py`` ``ListingGroupMachine``), on ``BrokerTarget`` targets: no divergence,
and ListGroups answered in every live group state. The broker lists every group it coordinates,
so each answer also holds the other tests' and examples' groups; the wire keeps the run's own.
"""

from __future__ import annotations

import pytest
from kgc.engine.traces import render
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

from tests.scripted import classic_run, opt_in_search

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
    ctx = opt_in_search(
        kgc_broker, ("ListGroups",), prefix="kgc-lg-", examples=12, steps=25, seed=7
    )
    reached = {c[0] for c, n in ctx.coverage.items() if c[1] == "ListGroups" and n}
    assert {"Empty", "Stable"} <= reached, ctx.coverage
