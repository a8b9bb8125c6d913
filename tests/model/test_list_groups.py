"""ListGroups rules (model/classic/list_groups.py), on small hand-written histories."""

from __future__ import annotations

from kgc.model.commands import ListedGroup, ListGroups, ListGroupsResponse
from kgc.model.profiles import KAFKA_3_9
from model_harness import Sim, commit, heartbeat, join, stable_group

NOT_LISTED = ListGroupsResponse(error="NONE")


def listing(client: str = "c9", version: int = 5, states=(), types=()) -> ListGroups:  # noqa: ANN001
    return ListGroups(client=client, states_filter=states, types_filter=types, version=version)


def test_a_group_that_does_not_exist_is_not_listed() -> None:
    # rule 1: nothing joined or committed, so the coordinator holds no such group
    sim = Sim()
    assert sim.take(sim.send(listing())) == NOT_LISTED


def test_a_stable_group_is_listed_with_its_state_and_type_by_version() -> None:
    # rule 4: the state from v4, the type from v5; below v4 only the protocol type
    sim = Sim()
    stable_group(sim, "c1", "c2")
    assert sim.take(sim.send(listing(version=5))) == ListGroupsResponse(
        error="NONE",
        groups=(ListedGroup(protocol_type="consumer", group_state="Stable", group_type="classic"),),
    )
    assert sim.take(sim.send(listing(version=4))).groups == (
        ListedGroup(protocol_type="consumer", group_state="Stable"),
    )
    assert sim.take(sim.send(listing(version=2))).groups == (ListedGroup(protocol_type="consumer"),)


def test_the_states_filter_ignores_case_and_hides_other_states() -> None:
    # rule 2: a Stable group is listed for "stable", not for Empty or PreparingRebalance
    sim = Sim()
    stable_group(sim, "c1")
    assert len(sim.take(sim.send(listing(states=("stable",)))).groups) == 1
    assert sim.take(sim.send(listing(states=("Empty", "PreparingRebalance")))) == NOT_LISTED


def test_the_types_filter_lists_a_classic_group_only_for_classic() -> None:
    # rule 3: "Classic" in any case lists it; "consumer" or a type Kafka does not know does not
    sim = Sim()
    stable_group(sim, "c1")
    assert len(sim.take(sim.send(listing(types=("Classic",)))).groups) == 1
    assert sim.take(sim.send(listing(types=("consumer",)))) == NOT_LISTED
    assert sim.take(sim.send(listing(types=("no-such-type",)))) == NOT_LISTED


def test_a_group_of_simple_commits_is_listed_empty_with_no_protocol_type() -> None:
    sim = Sim(profile=KAFKA_3_9)
    assert sim.take(sim.send(commit("c1", "", -1, version=5))).error == "NONE"
    assert sim.take(sim.send(listing(version=4))).groups == (
        ListedGroup(protocol_type="", group_state="Empty"),
    )


def test_a_new_group_may_be_missing_until_an_answer_shows_it_committed() -> None:
    # rule 5 (4.x): the join answers before the group's creation record is committed, and
    # ListGroups reads the groups at the last committed offset; a listing that shows the group
    # shows the record committed, so it is listed from then on
    sim = Sim()
    joined = sim.send(join("c1", version=3))
    sim.at(1)
    sim.take(joined)
    first = sim.send(listing(version=4))
    assert {len(r.groups) for r in sim.answers(first)} == {0, 1}  # type: ignore[union-attr]
    sim.observe(first, NOT_LISTED)
    assert sim.take(sim.send(heartbeat("c1", "c1-1", 1))).error == "NONE"  # waits for the write
    assert sim.take(sim.send(listing(version=4))).groups == (
        ListedGroup(protocol_type="consumer", group_state="CompletingRebalance"),
    )


def test_a_group_between_join_and_sync_is_listed_as_completing_rebalance() -> None:
    # rules 2 and 4 on 3.9 (no creation record to wait for): the line's name for the state,
    # matched by a lower-case filter
    sim = Sim(profile=KAFKA_3_9)
    joined = sim.send(join("c1", version=3))
    sim.at(1)
    sim.take(joined)
    assert sim.take(sim.send(listing(version=4, states=("completingrebalance",)))).groups == (
        ListedGroup(protocol_type="consumer", group_state="CompletingRebalance"),
    )
