"""Explicit nondeterminism: timer tolerance windows, concurrent request order, and the checker's
state set over the model (model/classic/group.py, model/checker.py)."""

from __future__ import annotations

from dataclasses import replace

from kgc.model import ClassicGroupModel, GroupConfig
from kgc.model.checker import Checker, CheckerConfig
from kgc.model.classic.generate import generate
from kgc.model.commands import HeartbeatResponse, JoinGroupResponse, Tick
from kgc.model.history import Invoke, Quiet, Receive
from model_harness import Sim, heartbeat, join, joins_handled_out_of_order, stable_group

CFG = GroupConfig(group_min_session_timeout_ms=500, group_initial_rebalance_delay_ms=0)


def test_expiry_inside_the_tolerance_window_is_both_fired_and_not() -> None:
    sim = Sim()
    stable_group(sim, "c1", "c2", session=1_000)
    [s] = sim.states
    m = sim.model
    assert (sim.deadline("c1-1"), sim.deadline("c2-1")) == (1_001, 1_001)  # synced at t=1
    # Checking at t=990 with a 20 ms early window: the expiries may or may not have fired.
    branches = m.advance(s, must_until=890, may_until=1_010)
    sizes = sorted(len(b.members) for b in branches)
    # Prefix branching in deadline order: none fired, c1 fired, c1 and c2 fired -> 3 states.
    assert sizes == [0, 1, 2]
    # Well past the deadline (must >= deadline) only the expired state remains.
    assert [len(b.members) for b in m.advance(s, must_until=1_001, may_until=1_021)] == [0]


def test_checker_accepts_either_answer_near_a_deadline_but_not_far_after() -> None:
    model = ClassicGroupModel(CFG)
    cmds = [join("c1", version=3, session=1_000), Tick(ms=5)]
    gen = generate(model, cmds)
    base = list(gen.events)
    hb = heartbeat("c1", "c1-1", 1)
    t0 = gen.end_ms
    for at, answer, ok in [
        (980.0, "NONE", True),  # just before the deadline: alive
        (1_010.0, "NONE", True),  # within the late window: the broker may not have expired it yet
        (1_010.0, "UNKNOWN_MEMBER_ID", True),  # ... or it may have
        (1_500.0, "NONE", False),  # far past: it must have expired
    ]:
        t = max(at, t0)
        events = [
            *base,
            Invoke(step=9, at_ms=t, request_id=99, command=hb),
            Receive(step=9, at_ms=t + 1, request_id=99, response=HeartbeatResponse(error=answer)),
        ]
        c = Checker(model, CheckerConfig(early_ms=20, late_ms=100))
        assert (c.feed_all(events) is None) is ok, (at, answer)


def _two_joins(
    window_ms: float, first: str, second: str, *, version: int, quiet: bool = True
) -> tuple[ClassicGroupModel, Checker]:
    """``first``'s and ``second``'s JoinGroups (no member id) sent 1 ms apart, checked with
    ``window_ms``; then (``quiet``) nothing more arrives at 2 ms."""
    model = ClassicGroupModel(replace(CFG, reorder_window_ms=window_ms))
    c = Checker(model, CheckerConfig(early_ms=0, late_ms=0))
    c.feed(Invoke(step=0, at_ms=0, request_id=1, command=join(first, version=version)))
    c.feed(Invoke(step=1, at_ms=1, request_id=2, command=join(second, version=version)))
    if quiet:
        c.feed(Quiet(step=1, at_ms=2))
    return model, c


def _answered(model: ClassicGroupModel, c: Checker, request_id: int, key: str) -> set[str]:
    return {
        getattr(model.outbox(s)[request_id][0], key)
        for s in c.states
        if request_id in model.outbox(s)
    }


def test_concurrent_requests_within_the_reorder_window_may_swap() -> None:
    # c1's and c2's JoinGroups are sent 1 ms apart into an Empty group; the broker may process
    # either first, and the first member to join leads.
    model, c = _two_joins(5.0, "c1", "c2", version=3)
    assert _answered(model, c, 1, "leader") == {"c1-1", "c2-1"}
    # Without a window the send order is the processing order.
    _, strict = _two_joins(0.0, "c1", "c2", version=3, quiet=False)
    assert {s.leader for s in strict.states} == {("c1-1",)}


def test_one_clients_requests_are_never_swapped() -> None:
    # The broker handles one connection's requests in order: a request held back in case another
    # client's comes first is still handled before its own client's next one. KIP-394 joins: each
    # is answered MEMBER_ID_REQUIRED with the next id handed to its client.
    model, c = _two_joins(5.0, "c1", "c1", version=4)
    assert (_answered(model, c, 1, "member_id"), _answered(model, c, 2, "member_id")) == (
        {"c1-1"},
        {"c1-2"},
    )
    # two clients' joins may be handled in either order
    model, c = _two_joins(5.0, "c1", "c2", version=4)
    firm = [s for s in c.states if not model.provisional(s)]
    assert {tuple(p.member_id for p in s.pending_members) for s in firm} == {("c1-1", "c2-1")}
    # c1's pending deadline: from its send time in send order, from c2's when handled second
    assert {s.pending_members[0].deadline_ms for s in firm} == {10_000, 10_001}
    assert any(model.provisional(s) for s in c.states)  # c2's join may still be held back


def test_the_driver_waits_for_an_answer_every_state_in_send_order_has_emitted() -> None:
    # A heartbeat-free join into an Empty group with a 100 ms window: the state holding it back
    # has no answer yet, the one in send order has MEMBER_ID_REQUIRED. ``due`` must not let the
    # held-back state turn that answer into a mere "may" (the driver would stop waiting for it).
    model = ClassicGroupModel(replace(CFG, reorder_window_ms=100.0))
    c = Checker(model, CheckerConfig(early_ms=0, late_ms=0))
    c.feed(Invoke(step=0, at_ms=0, request_id=1, command=join("c1", version=4)))
    assert any(model.provisional(s) for s in c.states)
    assert any(not model.provisional(s) for s in c.states)
    assert c.due(1) == frozenset({1})
    assert c.must_answer() == frozenset()  # not every state has answered
    # the answer comes: the held-back state cannot explain it and is gone
    c.feed(
        Receive(
            step=0,
            at_ms=2,
            request_id=1,
            response=JoinGroupResponse(error="MEMBER_ID_REQUIRED", member_id="c1-1"),
        )
    )
    assert c.divergence is None
    assert not any(model.provisional(s) for s in c.states)


def test_divergence_is_the_first_event_that_empties_the_state_set() -> None:
    model = ClassicGroupModel(CFG)
    gen = generate(model, [join("c1", version=4), Tick(ms=10)])
    events = list(gen.events)
    i = next(k for k, e in enumerate(events) if isinstance(e, Receive))
    wrong = JoinGroupResponse(error="NONE", generation_id=1, member_id="c1-1", leader="c1-1")
    events[i] = replace(events[i], response=wrong)  # the broker "skipped" MEMBER_ID_REQUIRED
    d = Checker(model).feed_all(events)
    assert d is not None and d.index == i
    assert "MEMBER_ID_REQUIRED" in " ".join(d.allowed)


def test_a_response_that_never_comes_is_a_divergence_at_quiet() -> None:
    model = ClassicGroupModel(CFG)
    c = Checker(model, CheckerConfig(latency_bound_ms=100))
    c.feed(Invoke(step=0, at_ms=0, request_id=1, command=join("c1", version=4)))
    assert c.feed(Quiet(step=0, at_ms=50)) is None  # not overdue yet
    d = c.feed(Quiet(step=1, at_ms=500))
    assert d is not None and "never arrived" in d.reason


def test_timers_may_fire_between_two_swapped_requests() -> None:
    # Seen on 4.3.1 (no initial delay): c1 and c2 got their ids, then c1's and c2's rejoins were
    # sent 0.4 ms apart. The broker handled c2's first, completed the join phase with c2 alone
    # (the delay-0 initial join) and only then took c1's join, which started the next rebalance.
    model = ClassicGroupModel(replace(CFG, reorder_window_ms=100.0))
    c = Checker(model, CheckerConfig(early_ms=20, late_ms=100))
    *before, last = joins_handled_out_of_order()
    for e in before:
        c.feed(e)
    assert c.feed(last) is None


def _recorded_tie() -> tuple[object, list]:
    from pathlib import Path

    from kgc.engine.traces import load

    trace = load(Path(__file__).parent / "data" / "tied_timers_static_member_4.3.1.json")
    return trace, list(trace.events)


def test_a_heartbeat_set_with_the_join_timer_fires_first_on_4x_as_recorded() -> None:
    """A history recorded against Apache Kafka 4.3.1 (Kafka's default group settings, so 12 s
    timeouts): c2's session expired while the group was CompletingRebalance, so the coordinator
    started a rebalance, answered the static member c1's parked SyncGroup REBALANCE_IN_PROGRESS
    and restarted c1's 12 s session, then scheduled the 12 s join phase: one event. c1 never
    rejoined. When both fell due the broker expired c1's session first, and the join phase
    completed with the new member c2-2 alone, as its leader. The model fires a heartbeat before a
    join timer due at the same instant (``Profile.one_coordinator_timer``); in the old order (the
    join phase first, keeping the static c1) it rejects the broker's answer."""
    from kgc.engine.registry import build
    from kgc.model.classic.group import HEARTBEAT, JOIN

    class JoinFirst(ClassicGroupModel):
        def next_timer(self, state):  # noqa: ANN001, ANN202
            t = super().next_timer(state)
            join = state.join_timer
            if t and t[1] == HEARTBEAT and join and join.deadline_ms == t[0]:
                return (t[0], JOIN, "")
            return t

    trace, events = _recorded_tie()
    manifest = trace.manifest  # type: ignore[attr-defined]

    def check(model: ClassicGroupModel) -> object:
        return Checker(model, CheckerConfig(**manifest["checker"])).feed_all(events)

    model = build(manifest["model"], manifest["group_id"])
    assert check(model) is None
    divergence = check(JoinFirst(model.config))
    assert divergence is not None
    assert "request 14" in divergence.reason  # type: ignore[attr-defined]


def test_on_3_9_a_heartbeat_and_the_join_timer_due_together_fire_in_either_order() -> None:
    """3.9 runs them on two purgatories' timer threads: the same moment of the recorded history
    has both outcomes there (c1 expired first, or the join phase completed keeping the static
    c1), and only the first on 4.x."""
    from kgc.engine.registry import build

    trace, events = _recorded_tie()
    manifest = trace.manifest  # type: ignore[attr-defined]
    due = max(e.at_ms for e in events if hasattr(e, "at_ms")) - 1  # just before the answer
    outcomes = {}
    for profile in ("kafka-4.x", "kafka-3.9"):
        model = build({**manifest["model"], "profile": profile}, manifest["group_id"])
        checker = Checker(model, CheckerConfig(**manifest["checker"]))
        assert checker.feed_all(events[:-1]) is None
        outcomes[profile] = {
            tuple(sorted(m.member_id for m in s.members))
            for state in checker.states
            for s in model.advance(state, must_until=due, may_until=due)
        }
    assert outcomes["kafka-4.x"] == {("c2-2",)}
    assert outcomes["kafka-3.9"] == {("c2-2",), ("c1-1", "c2-2")}


def test_an_empty_group_may_be_deleted_by_the_cleanup_as_recorded_on_4_3_1() -> None:
    """Recorded against Apache Kafka 4.3.1 (suite settings): c2 joined (generation 1) and its 1 s
    session expired, leaving the group Empty at generation 2 with no offsets; a second later a
    new member's join was answered generation 1: the coordinator's periodic cleanup
    (``cleanupGroupMetadata``) had deleted the group in between, and the join made it anew. The
    model allows that when ``empty_group_may_vanish`` is on (every run against a broker), and
    rejects the answer without it."""
    from dataclasses import replace as evolve
    from pathlib import Path

    from kgc.engine.registry import build
    from kgc.engine.traces import load

    trace = load(Path(__file__).parent / "data" / "empty_group_deleted_4.3.1.json")
    manifest = trace.manifest
    model = build(manifest["model"], manifest["group_id"])
    assert model.config.empty_group_may_vanish

    def check(m: ClassicGroupModel) -> object:
        return Checker(m, CheckerConfig(**manifest["checker"])).feed_all(list(trace.events))

    assert check(model) is None
    kept = ClassicGroupModel(evolve(model.config, empty_group_may_vanish=False))
    divergence = check(kept)
    assert divergence is not None and "generation_id" in divergence.reason


def test_a_request_answered_before_the_next_was_sent_is_never_swapped_with_it() -> None:
    # Reordering is allowed only between requests in flight together (``TimedModel.invoke``): once
    # c1's join is answered, the state holding it back cannot explain that answer and is gone, so
    # c2's join sent 0.5 ms later, well inside the 100 ms window, is handled after it. Checked
    # with the suite's own timer tolerance, which lets the held-back request's release fire early.
    for early, late in ((0, 0), (20, 100)):
        model = ClassicGroupModel(replace(CFG, reorder_window_ms=100.0))
        c = Checker(model, CheckerConfig(early_ms=early, late_ms=late))
        c.feed(Invoke(step=0, at_ms=0, request_id=1, command=join("c1", version=4)))
        required = JoinGroupResponse(error="MEMBER_ID_REQUIRED", member_id="c1-1")
        c.feed(Receive(step=0, at_ms=0.5, request_id=1, response=required))
        c.feed(Invoke(step=1, at_ms=1, request_id=2, command=join("c2", version=4)))
        assert c.divergence is None
        firm = [s for s in c.states if not model.provisional(s)]
        assert firm
        # c1's pending deadline only from its own send time: never from c2's, as when swapped
        assert {s.pending_members[0].member_id for s in firm} == {"c1-1"}
        assert {s.pending_members[0].deadline_ms for s in firm} == {10_000}, (early, late)
        # and no held-back state still holds c1's join (only c2's may be held back)
        held = {s.deferred.request_id for s in c.states if model.provisional(s)}
        assert held <= {2}


def test_the_cleanup_deletes_a_group_at_most_once_per_interval() -> None:
    """The cleanup runs on a fixed period (``GroupConfig.cleanup_interval_ms``): once it deleted
    the group, the group made anew and left Empty again cannot vanish before a whole interval has
    passed since the earliest moment the first deletion can have happened."""
    model = ClassicGroupModel(replace(CFG, empty_group_may_vanish=True, cleanup_interval_ms=60_000))
    from kgc.model.classic.state import GroupState

    empty = GroupState(exists=True, generation_id=2, now_ms=1_000.0)
    gone = model.vanished(empty, 1_500.0)
    assert gone is not None and not gone.exists and gone.cleaned_at_ms == 1_000.0
    again = replace(gone, exists=True, generation_id=1, now_ms=5_000.0)  # made anew, Empty again
    assert model.vanished(again, 60_999.0) is None
    later = model.vanished(again, 61_000.0)
    assert later is not None and later.cleaned_at_ms == 5_000.0
    # a group with offsets, or a model that does not allow the cleanup, never vanishes
    assert ClassicGroupModel(CFG).vanished(empty, 10**9) is None


def test_a_broker_kgc_launched_never_runs_the_cleanup_inside_a_session() -> None:
    """kgc launches Apache Kafka with a day-long ``offsets.retention.check.interval.ms``, so the
    model of a run on it allows no group to vanish; on any other broker, once per interval."""
    from kgc.conformance.brokers.embedded import default_config
    from kgc.engine.registry import NO_CLEANUP_MS, consumer_manifest, model_manifest

    for version, mode in (("4.3.1", "kraft"), ("3.9.2", "zookeeper"), ("1.0.2", "zookeeper")):
        launched = default_config(version, mode, 1, 4)
        assert int(launched["offsets.retention.check.interval.ms"]) >= NO_CLEANUP_MS
        ours = {"implementation": "apache-kafka", "version": version, "config": launched}
        assert model_manifest(ours)["config"]["empty_group_may_vanish"] is False
    assert consumer_manifest(ours, {})["config"]["empty_group_may_vanish"] is False
    short = {**ours, "config": {**launched, "offsets.retention.check.interval.ms": "600000"}}
    unknown = {"implementation": "unknown", "version": "unknown"}
    for description in (
        short,
        unknown,
        {"implementation": "tansu", "version": "0.6.0", "model_profile": "kafka-4.3"},
    ):
        assert model_manifest(description)["config"]["empty_group_may_vanish"] is True
        assert consumer_manifest(description, {})["config"]["empty_group_may_vanish"] is True
    read = {**unknown, "group_config": {"offsets.retention.check.interval.ms": 300_000}}
    assert model_manifest(read)["config"]["cleanup_interval_ms"] == 300_000


def test_the_last_cleanup_is_remembered_across_requests() -> None:
    """A request processed after the cleanup keeps its time (``Txn.freeze``): a group made anew
    by a JoinGroup still cannot vanish again within the interval."""
    from kgc.model.classic.state import GroupState

    model = ClassicGroupModel(replace(CFG, empty_group_may_vanish=True, cleanup_interval_ms=60_000))
    gone = model.vanished(GroupState(exists=True, generation_id=2, now_ms=1_000.0), 1_500.0)
    assert gone is not None
    after = model.apply(gone, 7, join("c1", version=3), 2_000.0)
    assert after and all(s.cleaned_at_ms == 1_000.0 for s in after)
