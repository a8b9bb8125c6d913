"""``group.max.size`` before and after KAFKA-9885 (``max_size_limits_unknown_members_only``).

2.2 - 2.5 ``GroupCoordinator.handleJoinGroup`` (2.5.1 l.161-166) refuses, in any state, a new
member (empty member id) once the group has ``group.max.size`` members, and a member that is not
awaiting join once the group is over the limit; a KIP-394 pending member's rejoin is never refused.
2.6.0 (KAFKA-9885, apache/kafka PR 8525) brought ``acceptJoiningMember``: PreparingRebalance counts
the members awaiting join, CompletingRebalance and Stable the members. One history per difference,
each run on the last lines with the old rule (2.4, 2.5) and the first with the new one (2.6).
"""

from __future__ import annotations

import pytest
from kgc.model import PROFILES
from model_harness import Sim, commit, join, leave, stable_group

OLD = [PROFILES["kafka-2.4"], PROFILES["kafka-2.5"]]
NEW = PROFILES["kafka-2.6"]


def _name(x: object) -> str:
    return str(getattr(x, "name", x))


def test_the_switch_is_on_before_2_6_only() -> None:
    assert all(p.max_size_limits_unknown_members_only for p in OLD)
    assert not NEW.max_size_limits_unknown_members_only
    assert not PROFILES["kafka-3.9"].max_size_limits_unknown_members_only
    assert not PROFILES["kafka-4.3"].max_size_limits_unknown_members_only


@pytest.mark.parametrize(
    ("profile", "refused"), [*((p, True) for p in OLD), (NEW, False)], ids=_name
)
def test_a_new_member_of_a_full_rebalancing_group(profile, refused) -> None:
    # What `kgc check --kafka-version 2.5.1 --seed 1` found. group.max.size = 3. c1 is Stable
    # alone; c2 and c3 join (v3, no handshake): 3 members, PreparingRebalance, c1 not rejoined.
    # c4 joins: before 2.6 the group has 3 members, so it is refused at once; 2.6 counts the
    # members awaiting join (c2, c3: 2 < 3) and parks it.
    sim = Sim(profile=profile, group_max_size=3)
    stable_group(sim, "c1")
    sim.send(join("c2", version=3), at=10)
    sim.send(join("c3", version=3), at=20)
    assert sim.only.state == "PreparingRebalance" and len(sim.members()) == 3
    r4 = sim.send(join("c4", version=3), at=30)
    answer = sim.answer(r4)
    if refused:
        assert answer is not None and answer.error == "GROUP_MAX_SIZE_REACHED"
        assert answer.member_id == "" and answer.generation_id == -1
        assert sim.members() == ["c1-1", "c2-1", "c3-1"]
    else:
        assert answer is None  # parked in the join phase
        assert sim.members() == ["c1-1", "c2-1", "c3-1", "c4-1"]


@pytest.mark.parametrize(("profile", "grows"), [*((p, True) for p in OLD), (NEW, False)], ids=_name)
def test_a_pending_member_rejoining_a_full_group(profile, grows) -> None:
    # group.max.size = 2. c1 is Stable alone. c3 asks with v4 and gets a pending id (c3-1); c2
    # joins (v3) and c1 rejoins: 2 members, both awaiting join, the join phase waits for c3-1.
    # c3-1 rejoins: before 2.6 only empty member ids are counted against the limit, so it is
    # added and the group completes generation 2 with 3 members, past the limit; 2.6 counts the 2
    # members awaiting join and refuses it (and the join phase completes without it).
    sim = Sim(profile=profile, group_max_size=2)
    stable_group(sim, "c1")
    assert sim.take(sim.send(join("c3", version=4), at=10)).error == "MEMBER_ID_REQUIRED"
    r2 = sim.send(join("c2", version=3), at=20)
    r1 = sim.send(join("c1", "c1-1", version=3), at=30)
    assert sim.answer(r1) is None  # c3-1 is still pending
    r3 = sim.send(join("c3", "c3-1", version=4), at=40)
    if grows:
        assert sim.take(r3).generation_id == 2
        assert sim.members() == ["c1-1", "c2-1", "c3-1"]
    else:
        assert sim.take(r3).error == "GROUP_MAX_SIZE_REACHED"
        assert sim.members() == ["c1-1", "c2-1"]
    assert sim.take(r1).generation_id == sim.take(r2).generation_id == 2


@pytest.mark.parametrize("profile", OLD, ids=lambda p: p.name)
def test_an_over_full_group_sheds_a_member_that_rejoins_without_awaiting(profile) -> None:
    # Continuing the history above before 2.6: generation 2 has 3 members with a limit of 2
    # (CompletingRebalance). A follower rejoining with the same metadata would get the current
    # generation at once, but the group is over capacity and c2 is not awaiting join: refused and
    # removed (``groupIsOverCapacity``), with no rebalance. The group is now at the limit, not
    # over it, so c3-1 rejoining the same way gets the current generation.
    sim = Sim(profile=profile, group_max_size=2)
    stable_group(sim, "c1")
    sim.take(sim.send(join("c3", version=4), at=10))
    r2 = sim.send(join("c2", version=3), at=20)
    r1 = sim.send(join("c1", "c1-1", version=3), at=30)
    r3 = sim.send(join("c3", "c3-1", version=4), at=40)
    for r in (r1, r2, r3):
        sim.take(r)
    assert sim.only.state == "CompletingRebalance"
    refused = sim.take(sim.send(join("c2", "c2-1", version=3), at=50))
    assert refused.error == "GROUP_MAX_SIZE_REACHED" and refused.member_id == ""
    assert sim.members() == ["c1-1", "c3-1"] and sim.only.state == "CompletingRebalance"
    again = sim.take(sim.send(join("c3", "c3-1", version=4), at=60))
    assert again.error == "NONE" and again.generation_id == 2


FORGETS = [PROFILES[f"kafka-{line}"] for line in ("2.4", "2.5", "2.6", "2.7")]
KEEPS = [PROFILES["kafka-2.8"], PROFILES["kafka-3.9"], PROFILES["kafka-4.3"]]


@pytest.mark.parametrize(
    ("profile", "forgets"),
    [*((p, True) for p in FORGETS), *((p, False) for p in KEEPS)],
    ids=_name,
)
def test_a_static_member_restarting_into_a_full_group(profile, forgets) -> None:
    # ``max_size_refusal_forgets_instance``: group.max.size = 2. c1 (static, c1-instance) and c2
    # complete generation 2. c1 restarts (empty member id, same instance): the group is full, so
    # it is refused on every line. 2.3 - 2.7 also drop c1-instance's mapping (``group
    # .removeStaticMember``) and keep c1-1: a commit naming only the instance is then
    # UNKNOWN_MEMBER_ID, not FENCED_INSTANCE_ID, and once c2 has left, the next restart adds a
    # second member with that instance instead of replacing c1-1. 2.8 and later keep the mapping.
    sim = Sim(profile=profile, group_max_size=2)
    first = sim.send(join("c1", version=5, instance="c1-instance"), at=0)
    sim.at(1)
    sim.take(first)
    r2 = sim.send(join("c2", version=3), at=10)
    r1 = sim.send(join("c1", "c1-1", version=5, instance="c1-instance"), at=20)
    assert sim.take(r1).generation_id == sim.take(r2).generation_id == 2
    restart = join("c1", version=5, instance="c1-instance")
    assert sim.take(sim.send(restart, at=30)).error == "GROUP_MAX_SIZE_REACHED"
    assert sim.members() == ["c1-1", "c2-1"]
    c = sim.take(sim.send(commit("c1", "", -1, version=7, instance="c1-instance"), at=40))
    assert c.partitions[0].error == ("UNKNOWN_MEMBER_ID" if forgets else "FENCED_INSTANCE_ID")
    sim.take(sim.send(leave("c2", ("c2-1", None)), at=50))
    r = sim.send(restart, at=60)
    if forgets:
        assert sim.members() == ["c1-1", "c1-2"]  # a second member with c1-instance
        assert sim.answer(r) is None  # parked: c1-1 has not rejoined
    else:
        assert sim.members() == ["c1-2"]  # c1-1 replaced
