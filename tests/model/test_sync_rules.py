"""SyncGroup rules (model/classic/sync.py) and the sync deadline (model/classic/rebalance.py)."""

from __future__ import annotations

from kgc.model.commands import SyncGroupResponse
from model_harness import Sim, heartbeat, join, stable_group, sync


def _completing(sim: Sim, *clients: str, session: int = 10_000) -> None:
    """``clients`` joined generation 1; the group waits for the leader's SyncGroup."""
    rids = [sim.send(join(c, version=3, session=session)) for c in clients]
    sim.at(sim.t + 1)
    for r in rids:
        sim.take(r)
    assert sim.only.state == "CompletingRebalance"


def test_v5_needs_protocol_type_and_name_before_anything_else() -> None:
    # Checked by KafkaApis before the coordinator: even a stranger of a missing group gets it.
    sim = Sim()
    assert sim.take(sim.send(sync("c1", "x", 7, version=5))).error == "INCONSISTENT_GROUP_PROTOCOL"
    assert sim.take(sim.send(sync("c1", "x", 7, version=4))).error == "UNKNOWN_MEMBER_ID"


def test_error_precedence_unknown_member_before_illegal_generation_before_protocol() -> None:
    sim = Sim()
    stable_group(sim, "c1")
    # A stranger with a wrong generation: member validation comes first.
    assert sim.take(sim.send(sync("c9", "c9-1", 5))).error == "UNKNOWN_MEMBER_ID"
    # A member with a wrong generation and a wrong protocol name: generation first.
    wrong = sync("c1", "c1-1", 5, version=5, protocol_type="consumer", protocol_name="roundrobin")
    assert sim.take(sim.send(wrong)).error == "ILLEGAL_GENERATION"
    right_gen = sync(
        "c1", "c1-1", 1, version=5, protocol_type="consumer", protocol_name="roundrobin"
    )
    assert sim.take(sim.send(right_gen)).error == "INCONSISTENT_GROUP_PROTOCOL"


def test_rebalance_in_progress_while_preparing() -> None:
    sim = Sim()
    stable_group(sim, "c1", "c2")
    sim.send(join("c1", "c1-1", version=3), at=10)  # leader rejoins: PreparingRebalance
    assert sim.take(sim.send(sync("c2", "c2-1", 1))).error == "REBALANCE_IN_PROGRESS"


def test_parked_syncs_get_rebalance_in_progress_when_a_rebalance_starts() -> None:
    sim = Sim()
    _completing(sim, "c1", "c2", "c3")
    parked = sim.send(sync("c2", "c2-1", 1))
    sim.send(join("c3", "c3-1", version=3, protocols=()), at=5)  # rejected, no change
    sim.send(join("c4", version=3), at=6)  # a new member: rebalance from CompletingRebalance
    assert sim.take(parked) == SyncGroupResponse(error="REBALANCE_IN_PROGRESS")
    assert sim.only.state == "PreparingRebalance"


def test_stable_sync_returns_current_assignment() -> None:
    sim = Sim()
    stable_group(sim, "c1", "c2")
    assert sim.take(sim.send(sync("c2", "c2-1", 1), at=50)).assignment == "a-c2-1"


def test_member_that_never_syncs_is_removed_at_the_sync_deadline() -> None:
    # The sync deadline is one rebalance timeout (60 s) after the join phase completed (t=0);
    # sessions (100 s) outlive it, so only the missing SyncGroup removes c2.
    sim = Sim()
    _completing(sim, "c1", "c2", session=100_000)
    sim.take(sim.send(sync("c1", "c1-1", 1, [("c1-1", "x"), ("c2-1", "y")]), at=10))
    assert sim.only.state == "Stable"
    sim.take(sim.send(heartbeat("c2", "c2-1", 1), at=5_000))  # alive, but never syncs
    sim.at(59_999)
    assert sim.members() == ["c1-1", "c2-1"] and sim.only.pending_sync == ("c2-1",)
    sim.at(60_000)
    assert sim.members() == ["c1-1"] and sim.only.state == "PreparingRebalance"


def test_all_synced_cancels_the_sync_deadline() -> None:
    sim = Sim()
    stable_group(sim, "c1", "c2")
    assert sim.only.sync_timer is None and sim.only.pending_sync == ()
