"""Regular-expression subscriptions in the consumer-group model (rule 12 of
``model/consumer/group.py``), each expectation read in Apache Kafka 4.3.1's
``GroupMetadataManager.maybeUpdateRegularExpressions`` / ``handleRegularExpressionsResult``."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kgc.model.commands import ConsumerGroupDescribe as Describe
from kgc.model.commands import ConsumerGroupHeartbeat as HB
from kgc.model.consumer.group import TP, ConsumerGroupConfig, heterogeneous_targets

from tests.consumer.test_consumer_model import CONFIG, Run, T, beat, join, tps

MATCHES = "t"  # matches the topic in full
NOTHING = "t-.*"  # matches no topic of the run
BROKEN = "t["  # does not compile

# the session longer than the 10 s between resolutions, so that members outlive it
LONG = replace(CONFIG, session_timeout_ms=60_000)


def own(*ps: int) -> frozenset[TP]:
    return frozenset(TP(T, p) for p in ps)


def regex_join(client: str, regex: str, n: int = 1) -> HB:
    return replace(join(client, n), subscribed_topic_names=None, subscribed_topic_regex=regex)


def epochs(answers: set) -> set:
    return {(a.error, a.member_epoch, a.assignment) for a in answers}


def test_a_regex_matches_nothing_until_the_group_resolved_it():
    r = Run(LONG)
    # the new group is at epoch 1; the unresolved regex changes no subscribed topic: no bump
    assert epochs(r.send(regex_join("c1", MATCHES))) == {("NONE", 1, ())}
    # the resolution completes at a moment the client cannot know: either answer, for a while
    assert epochs(r.send(beat("c1", 1, ()), 10)) == {("NONE", 1, None), ("NONE", 2, tps(0, 1, 2))}
    # ... but no later than regex_resolution_ms after the heartbeat that asked for it
    r = Run(LONG)
    r.send(regex_join("c1", MATCHES))
    assert epochs(r.send(beat("c1", 1, ()), 2500)) == {("NONE", 2, tps(0, 1, 2))}


def test_an_invalid_new_regex_is_refused_and_creates_no_group():
    r = Run(LONG)
    assert epochs(r.send(regex_join("c1", BROKEN))) == {("INVALID_REGULAR_EXPRESSION", 0, None)}
    assert {a.error for a in r.send(Describe(client="c1", version=0), 5)} == {"GROUP_ID_NOT_FOUND"}


def test_an_epoch_0_join_needs_topic_names_or_a_regex():
    r = Run(LONG)
    bare = replace(join("c1"), subscribed_topic_names=None)
    assert {a.error for a in r.send(bare)} == {"INVALID_REQUEST"}
    assert {a.error for a in r.send(regex_join("c1", NOTHING))} == {"NONE"}


def test_a_second_member_on_a_resolved_regex_bumps_the_epoch_at_once():
    r = Run(LONG)
    r.send(regex_join("c1", MATCHES))
    r.observe(next(a for _, a in r.last))
    r.send(beat("c1", 1, ()), 3000)  # resolved by now: epoch 2, every partition
    answers = r.send(regex_join("c2", MATCHES), 3100)
    # REGEX_UPDATED_AND_RESOLVED: epoch 3, and c2 waits for what c1 still holds
    assert epochs(answers) == {("NONE", 3, ())}


def test_a_second_new_regex_within_10_s_waits_for_the_next_heartbeat_after_them():
    r = Run(LONG)
    r.send(regex_join("c1", MATCHES))
    r.send(beat("c1", 1, ()), 3000)  # resolved (scheduled at 0)
    # new, but the last resolution began < 10 s ago; an unresolved regex bumps nothing, so c2
    # joins at the group's epoch, 2, with nothing
    assert epochs(r.send(regex_join("c2", NOTHING), 4000)) == {("NONE", 2, ())}
    # no resolution was started: c2's regex stays unresolved, whatever the wait
    r.send(beat("c1", 2, tps(0, 1, 2)), 9000)
    group = {s.resolving for s in r.states}
    assert group == {None}
    assert all(NOTHING not in dict(s.resolved) for s in r.states)
    # a heartbeat 10 s after the last resolution (plus its latest completion) starts one
    r.send(beat("c2", 2, ()), 13_000)
    assert {s.resolving for s in r.states} == {(MATCHES, NOTHING)}
    r.send(beat("c2", 2, ()), 16_000)
    assert all(dict(s.resolved).get(NOTHING) == frozenset() for s in r.states)


def test_a_regex_that_matches_nothing_leaves_every_partition_to_the_others():
    r = Run(LONG)
    r.send(join("c1"))
    r.send(regex_join("c2", NOTHING), 10)
    # c1 by name, c2 by a regex matching nothing: heterogeneous, c2 gets nothing
    r.send(beat("c1", 3, tps(0, 1, 2)), 3000)
    described = r.send(Describe(client="c1", version=0), 3010)
    for d in described:
        members = {m.member_id: m for m in d.members}
        assert members["c2-1"].target_assignment == ()
        assert members["c2-1"].subscribed_topic_regex == NOTHING
        assert members["c1-1"].subscribed_topic_regex is None
        assert set(members["c1-1"].target_assignment) == set(tps(0, 1, 2))


def test_switching_from_names_to_an_unresolved_regex_revokes_at_once():
    r = Run(LONG)
    r.send(join("c1"))  # epoch 2, every partition
    to_regex = replace(
        beat("c1", 2, tps(0, 1, 2)), subscribed_topic_names=(), subscribed_topic_regex=MATCHES
    )
    answers = r.send(to_regex, 3000)
    # names changed: epoch 3; the new regex is unresolved, so c1 is subscribed to nothing and
    # must give everything up before it moves on (the resolution may already have bumped the
    # group again by the time of the next heartbeat, not of this one)
    assert epochs(answers) == {("NONE", 2, ())}


def test_dropping_the_regex_bumps_the_epoch():
    r = Run(LONG)
    r.send(regex_join("c1", MATCHES))
    r.send(beat("c1", 1, ()), 3000)  # epoch 2, every partition
    back = replace(
        beat("c1", 2, tps(0, 1, 2)), subscribed_topic_names=(T,), subscribed_topic_regex=""
    )
    # REGEX_UPDATED_AND_RESOLVED and a names change: one bump, to 3; the same partitions, so
    # no assignment in the answer (not a full request)
    assert epochs(r.send(back, 3100)) == {("NONE", 3, None)}
    assert all(not s.resolved for s in r.states)  # the regex lost its last subscriber


def test_the_heterogeneous_rule_balances_the_topic_among_its_subscribers():
    out = heterogeneous_targets({T: 3}, {"a": (T,), "b": (T,), "c": ()})
    assert len(out) == 6  # (2, 1) or (1, 2) over a and b: 3 + 3
    for target in out:
        assert target["c"] == frozenset()
        assert sorted(len(target[m]) for m in ("a", "b")) == [1, 2]
    with pytest.raises(ValueError, match="several topics"):
        heterogeneous_targets({T: 1, "u": 1}, {"a": (T,), "b": ("u",)})


def test_the_heterogeneous_rule_keeps_what_a_balanced_assignment_can_keep():
    # UniformHeterogeneousAssignmentBuilder: a keeps its previous target, the balancing moves
    # its last partition over to b, the new subscriber; c subscribes to nothing
    out = heterogeneous_targets(
        {T: 3}, {"a": (T,), "b": (T,), "c": ()}, {"a": own(0, 1, 2), "c": frozenset()}
    )
    assert len(out) == 3  # which of a's three moves is the member order's (a hash map's)
    for target in out:
        assert len(target["a"]) == 2 and target["a"] <= own(0, 1, 2)
        assert target["b"] == own(0, 1, 2) - target["a"]
    # b held two and a one, c is new: a and b each keep one, c takes b's other
    out = heterogeneous_targets(
        {T: 3}, {"a": (T,), "b": (T,), "c": (T,)}, {"a": own(0), "b": own(1, 2)}
    )
    assert {(t["a"], t["b"], t["c"]) for t in out} == {
        (own(0), own(1), own(2)),
        (own(0), own(2), own(1)),
    }
    # a previous target of a member that no longer subscribes is not kept (maybeRevokePartitions)
    out = heterogeneous_targets({T: 2}, {"a": (), "b": (T,)}, {"a": own(0, 1)})
    assert out == [{"a": frozenset(), "b": own(0, 1)}]


def test_a_release_without_the_modelled_regex_rules_refuses_a_regex():
    r = Run(replace(LONG, regex_subscriptions=False))
    with pytest.raises(ValueError, match="regex_subscriptions"):
        r.send(regex_join("c1", MATCHES))


def test_a_model_config_without_regexes_keeps_its_answers():
    # the rule adds nothing to a group that uses none: the first join is still epoch 2
    r = Run(ConsumerGroupConfig(topics=((T, 3),)))
    assert epochs(r.send(join("c1"))) == {("NONE", 2, tps(0, 1, 2))}
