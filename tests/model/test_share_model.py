"""The KIP-932 share-group model on small hand-written histories, judged by the checker as a
broker's trace is (rules numbered in ``model/share/group.py``'s docstring). Every expectation is
read in Apache Kafka 4.3.1's sources (``docs/share-groups.md`` gathers them with line numbers):
``KafkaApis.handleShareGroupHeartbeat``, ``GroupCoordinatorService
.throwIfShareGroupHeartbeatRequestIsInvalid``, ``GroupMetadataManager.shareGroupHeartbeat`` /
``shareGroupLeave`` / ``shareGroupFenceMember`` / ``initializedAssignmentPending``,
``ShareGroupAssignmentBuilder``, ``SimpleHomogeneousAssignmentBuilder``,
``SimpleHeterogeneousAssignmentBuilder``, ``ShareGroup``; 4.4.0's and 4.2.2's in their jars'
bytecode (``javap -c -p``, ``docs/share-groups.md`` §7 and §8)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kgc.engine.registry import build_share, model_from_manifest, share_manifest
from kgc.model.checker import Checker, CheckerConfig
from kgc.model.commands import (
    DeleteGroups,
    DeleteGroupsResponse,
    JoinGroup,
    ListedGroup,
    ListGroups,
    ListGroupsResponse,
    NotModelled,
    Protocol,
    Request,
    Response,
    ShareGroupDescribe,
    ShareGroupDescribeResponse,
    ShareGroupHeartbeat,
    ShareGroupHeartbeatResponse,
    ShareMember,
    TopicPartition,
)
from kgc.model.history import Event, Invoke, Receive
from kgc.model.share.group import ShareGroupConfig, ShareGroupModel, simple_targets

T = "t"
INTERVAL = 500
# the suite's broker settings (``docs/share-groups.md`` §1); initialization bounded at 1 s so that
# a history can say "by now the topic is initialized"
CONFIG = ShareGroupConfig(
    topics=((T, 3),),
    session_timeout_ms=2000,
    heartbeat_interval_ms=INTERVAL,
    max_size=3,
    initialization_ms=1000.0,
    empty_group_assignment_catches_up=False,  # 4.3.1
)


def tps(*ps: int, topic: str = T) -> tuple[TopicPartition, ...]:
    return tuple(TopicPartition(topic=topic, partition=p) for p in ps)


def join(client: str, topics: tuple[str, ...] | None = (T,), **fields: object) -> Request:
    return ShareGroupHeartbeat(
        client=client,
        member_id=f"{client}-1",
        member_epoch=0,
        subscribed_topic_names=topics,
        version=1,
        **fields,  # type: ignore[arg-type]
    )


def beat(client: str, epoch: int, topics: tuple[str, ...] | None = None) -> Request:
    return ShareGroupHeartbeat(
        client=client,
        member_id=f"{client}-1",
        member_epoch=epoch,
        subscribed_topic_names=topics,
        version=1,
    )


def ok(
    client: str, epoch: int, assignment: tuple[TopicPartition, ...] | None
) -> ShareGroupHeartbeatResponse:
    return ShareGroupHeartbeatResponse(
        error="NONE",
        member_id=f"{client}-1",
        member_epoch=epoch,
        heartbeat_interval_ms=INTERVAL,
        assignment=assignment,
    )


def error(name: str) -> ShareGroupHeartbeatResponse:
    """An error answer carries only the error (``GroupCoordinatorService.shareGroupHeartbeat``)."""
    return ShareGroupHeartbeatResponse(error=name)


DESCRIBE = ShareGroupDescribe(client="c9", version=1)
NOT_FOUND = ShareGroupDescribeResponse(error="GROUP_ID_NOT_FOUND")


class History:
    """A history built event by event and judged by a fresh ``Checker`` each time it is asked, with
    no timing tolerance (timers fire exactly at their deadlines)."""

    def __init__(self, config: ShareGroupConfig = CONFIG) -> None:
        self.model = ShareGroupModel(config)
        self.events: list[Event] = []
        self.rid = 0
        self.t = 0.0

    def _judge(self, events: list[Event]) -> Checker:
        checker = Checker(self.model, CheckerConfig(early_ms=0.0, late_ms=0.0))
        checker.feed_all(events)
        return checker

    def send(self, command: Request, at: float) -> int:
        assert at >= self.t
        self.t = at
        self.rid += 1
        self.events.append(Invoke(step=self.rid, at_ms=at, request_id=self.rid, command=command))
        return self.rid

    def accepts(self, rid: int, response: Response, at: float | None = None) -> bool:
        """Whether the model allows ``response`` as the answer to ``rid`` arriving at ``at``."""
        when = self.t + 1 if at is None else at
        event = Receive(step=rid, at_ms=when, request_id=rid, response=response)
        return self._judge([*self.events, event]).divergence is None

    def receive(self, rid: int, response: Response, at: float | None = None) -> None:
        when = self.t + 1 if at is None else at
        assert self.accepts(rid, response, when), self.allowed(rid)
        self.t = when
        self.events.append(Receive(step=rid, at_ms=when, request_id=rid, response=response))

    def call(self, command: Request, at: float, response: Response) -> None:
        """Send ``command`` at ``at`` and read ``response`` 1 ms later (the model must allow it)."""
        self.receive(self.send(command, at), response)

    def allowed(self, rid: int) -> set[Response]:
        """Every answer to ``rid`` the live states have emitted."""
        checker = self._judge(self.events)
        assert checker.divergence is None, checker.divergence
        return {self.model.outbox(s)[rid][0] for s in checker.states if rid in self.model.outbox(s)}


def formed(config: ShareGroupConfig = CONFIG) -> History:
    """The note's typical trace up to A holding every partition: A joins at 0 (epoch 2, nothing:
    no partition is initialized yet), its topic is initialized within 1 s, A's heartbeat at 2000
    bumps the epoch to 3 and gets every partition."""
    h = History(config)
    h.call(join("c1"), 0, ok("c1", 2, ()))
    h.call(beat("c1", 2), 1500, ok("c1", 3, tps(0, 1, 2)))
    return h


# ----------------------------------------------------------------------- the typical trace


def test_the_typical_trace_of_docs_share_groups():
    h = formed()
    # B joins: epoch 4 at once, with its share (1 or 2 of the 3 partitions: which member gets the
    # extra one follows HashMap order)
    b = h.send(join("c2"), 1600)
    shares = {a.assignment for a in h.allowed(b)}
    assert {a.member_epoch for a in h.allowed(b)} == {4}
    assert shares == {tps(*ps) for ps in [(0,), (1,), (2,), (0, 1), (0, 2), (1, 2)]}
    h.receive(b, ok("c2", 4, tps(0)))
    # A's next heartbeat: epoch 4 with the rest, nothing waits for A to give partition 0 up
    a = h.send(beat("c1", 3), 1700)
    assert h.allowed(a) == {ok("c1", 4, tps(1, 2))}


def test_the_first_join_answer_has_no_partition_whatever_the_timing():
    # the target is computed before the initialization is even asked for (rule 8: after the answer)
    h = History()
    rid = h.send(join("c1"), 0)
    assert h.allowed(rid) == {ok("c1", 2, ())}
    assert not h.accepts(rid, ok("c1", 2, tps(0, 1, 2)))


def test_an_assignment_right_after_the_join_is_allowed_and_required_once_initialized():
    h = History(replace(CONFIG, initialization_ms=None))
    h.call(join("c1"), 0, ok("c1", 2, ()))
    # 1 ms later the initialization may or may not have completed: both answers are Kafka's
    rid = h.send(beat("c1", 2), 2)
    assert h.allowed(rid) == {ok("c1", 2, None), ok("c1", 3, tps(0, 1, 2))}
    # with the bound of 1 s, at 1500 ms it must have completed
    h = History()
    h.call(join("c1"), 0, ok("c1", 2, ()))
    rid = h.send(beat("c1", 2), 1500)
    assert not h.accepts(rid, ok("c1", 2, None))
    assert h.accepts(rid, ok("c1", 3, tps(0, 1, 2)))


def test_an_initialization_alone_bumps_nothing():
    # initialized at some moment, but no heartbeat since: the group is still at epoch 2
    h = History()
    h.call(join("c1"), 0, ok("c1", 2, ()))
    rid = h.send(DESCRIBE, 1500)
    (described,) = h.allowed(rid)
    assert (described.group_epoch, described.assignment_epoch) == (2, 2)


# ----------------------------------------------------------------------- validation (rule 1)


@pytest.mark.parametrize(
    "command",
    [
        replace(join("c1"), member_id=""),  # row 3: empty
        replace(join("c1"), member_id="m" * 37),  # row 3: longer than 36
        replace(join("c1"), member_id="   "),  # row 6: blank after trim
        replace(join("c1"), member_id="\t"),
        join("c1", rack_id=""),  # row 6: a RackId set but blank
        join("c1", rack_id=" "),
        join("c1", topics=None),  # row 7: epoch 0 without topic names
        join("c1", topics=()),
        beat("c1", -2),  # row 8: epoch below -1
    ],
)
def test_an_invalid_request_is_refused_alone_and_makes_no_group(command):
    h = History()
    h.call(command, 0, error("INVALID_REQUEST"))
    h.call(DESCRIBE, 10, NOT_FOUND)


def test_a_member_id_of_36_characters_is_valid():
    h = History()
    h.call(replace(join("c1"), member_id="m" * 36), 0, replace(ok("c1", 2, ()), member_id="m" * 36))


def test_validation_comes_before_the_group_is_read():
    # an invalid request to a group that exists is refused the same way, before any member check
    h = formed()
    h.call(beat("c1", -2), 1600, error("INVALID_REQUEST"))
    h.call(join("c2", topics=()), 1700, error("INVALID_REQUEST"))


# ----------------------------------------------------------------------- group and member (2)


def test_a_missing_group_is_not_found_but_at_epoch_0():
    h = History()
    h.call(beat("c1", 1), 0, error("GROUP_ID_NOT_FOUND"))
    h.call(beat("c1", -1), 10, error("GROUP_ID_NOT_FOUND"))  # a leave too
    h.call(DESCRIBE, 20, NOT_FOUND)


def test_an_unknown_member_is_unknown_unless_joining():
    h = formed()
    h.call(beat("c2", 3), 1600, error("UNKNOWN_MEMBER_ID"))
    h.call(beat("c2", -1), 1700, error("UNKNOWN_MEMBER_ID"))


def test_a_full_group_refuses_an_id_it_does_not_have_before_looking_it_up():
    h = formed()  # max size 3
    h.call(join("c2"), 1600, ok("c2", 4, tps(0)))
    h.call(beat("c2", 9), 1700, error("FENCED_MEMBER_EPOCH"))  # a member: its own checks
    h.call(beat("c3", 9), 1800, error("UNKNOWN_MEMBER_ID"))  # 2 members: not full yet
    rid = h.send(join("c3"), 1900)
    h.receive(rid, next(a for a in h.allowed(rid) if a.member_epoch == 5))
    h.call(join("c4"), 2000, error("GROUP_MAX_SIZE_REACHED"))
    # an unknown id at epoch > 0: the size check comes first (row 13 before row 14)
    h.call(beat("c4", 5), 2100, error("GROUP_MAX_SIZE_REACHED"))
    # a member of a full group is not refused
    assert {a.error for a in h.allowed(h.send(beat("c3", 5), 2200))} == {"NONE"}


def test_epochs_above_or_below_but_not_the_previous_are_fenced_and_the_member_stays():
    h = formed()  # c1 at epoch 3, previous 2
    h.call(beat("c1", 4), 1600, error("FENCED_MEMBER_EPOCH"))
    h.call(beat("c1", 1), 1700, error("FENCED_MEMBER_EPOCH"))
    # the previous epoch passes (its answer may have been lost): the current epoch comes back,
    # no assignment since nothing changed and the request is not full
    h.call(beat("c1", 2), 1800, ok("c1", 3, None))
    h.call(beat("c1", 3), 1900, ok("c1", 3, None))


def test_a_known_member_rejoining_at_0_keeps_its_epoch_and_gets_everything():
    h = formed()
    h.call(join("c1"), 1600, ok("c1", 3, tps(0, 1, 2)))
    # no bump: the topics did not change
    rid = h.send(DESCRIBE, 1700)
    assert {(d.group_epoch, d.assignment_epoch) for d in h.allowed(rid)} == {(3, 3)}


def test_topic_names_make_a_full_request_and_a_new_set_bumps_the_epoch():
    h = formed()
    # the same set, named again: no bump, but the assignment is sent (a full request)
    h.call(beat("c1", 3, topics=(T,)), 1600, ok("c1", 3, tps(0, 1, 2)))
    # another set: bump; the new topic is not initialized yet, so nothing of it
    h2 = History(replace(CONFIG, topics=((T, 3), ("u", 2))))
    h2.call(join("c1"), 0, ok("c1", 2, ()))
    h2.call(beat("c1", 2), 1500, ok("c1", 3, tps(0, 1, 2)))
    h2.call(beat("c1", 3, topics=(T, "u")), 1600, ok("c1", 4, tps(0, 1, 2)))
    # and once u is initialized (1 s later), the next heartbeat bumps again and takes it in
    h2.call(beat("c1", 4), 2700, ok("c1", 5, tps(0, 1, 2) + tps(0, 1, topic="u")))


def test_a_rack_or_client_change_bumps_nothing_and_is_described():
    h = formed()
    rack = replace(beat("c1", 3), rack_id="r1", client="c5")  # c5 sends c1's member id
    h.call(rack, 1600, ok("c1", 3, None))
    h.call(
        DESCRIBE,
        1700,
        ShareGroupDescribeResponse(
            error="NONE",
            group_state="Stable",
            group_epoch=3,
            assignment_epoch=3,
            assignor_name="simple",
            members=(
                ShareMember(
                    member_id="c1-1",
                    rack_id="r1",
                    member_epoch=3,
                    client_id="kgc-c5",
                    subscribed_topic_names=(T,),
                    assignment=tps(0, 1, 2),
                ),
            ),
        ),
    )


# ----------------------------------------------------------------------- answers the model rejects


def test_a_partition_given_to_two_members_is_rejected():
    h = formed()
    h.call(join("c2"), 1600, ok("c2", 4, tps(0, 1)))
    a = h.send(beat("c1", 3), 1700)
    # with 2 members and 3 partitions each partition has one owner: c1 gets 2, only 2
    assert h.allowed(a) == {ok("c1", 4, tps(2))}
    assert not h.accepts(a, ok("c1", 4, tps(1, 2)))
    assert not h.accepts(a, ok("c1", 4, tps(0, 1, 2)))


def test_a_member_epoch_off_by_one_is_rejected():
    h = formed()
    b = h.send(join("c2"), 1600)
    assert h.accepts(b, ok("c2", 4, tps(0)))
    assert not h.accepts(b, ok("c2", 3, tps(0)))
    assert not h.accepts(b, ok("c2", 5, tps(0)))


def test_more_members_than_partitions_share_each_partition():
    # desiredSharing = ceil(M / P): 3 members, 2 partitions -> each shared by 2; quotas by member
    # index 2, 1, 1 (SimpleHomogeneousAssignmentBuilder's constructor)
    none = frozenset[str]()
    subs = tuple((m, frozenset({T})) for m in ("a", "b", "c"))
    targets = simple_targets(subs, ((T, 2),), frozenset({T}), ())
    assert targets
    for target in targets:
        holders = {p: {m for m, a in target for t, ps in a if p in ps} for p in (0, 1)}
        assert sorted(len(h) for h in holders.values()) == [2, 2]
        assert sorted(sum(len(ps) for _, ps in a) for _, a in target) == [1, 1, 2]
    # nothing initialized: nothing assigned
    assert simple_targets(subs, ((T, 2),), none, ()) == {tuple((m, ()) for m in ("a", "b", "c"))}


def test_a_heterogeneous_group_balances_each_topic_over_its_subscribers():
    # SimpleHeterogeneousAssignmentBuilder's own example: a member subscribed to both topics gets
    # its share of each; u has one subscriber, who gets all of it
    subs = (("a", frozenset({T})), ("b", frozenset({T, "u"})))
    targets = simple_targets(subs, ((T, 3), ("u", 2)), frozenset({T, "u"}), ())
    # t by hand (TopicAssignmentPartialBuilder, partitions and member indices as Integer keys,
    # ascending): quotas 2 and 1 by index; partition 0 to index 0, 1 to index 1 (filled), 2 to
    # index 0 on the next pass. Which member is index 0 follows HashMap order: either
    u = frozenset({0, 1})
    assert targets == {
        (("a", ((T, frozenset({0, 2})),)), ("b", ((T, frozenset({1})), ("u", u)))),
        (("a", ((T, frozenset({1})),)), ("b", ((T, frozenset({0, 2})), ("u", u)))),
    }


def test_the_builder_is_sticky_a_newcomer_takes_from_the_overfilled_only():
    # c1 held {0, 1, 2}; with c2 new, c1 keeps what its quota allows and c2 gets only what c1
    # gave up (revokeOverfilledMembers, then assignRemainingPartitions)
    prev = (("a", ((T, frozenset({0, 1, 2})),)),)
    subs = (("a", frozenset({T})), ("b", frozenset({T})))
    for target in simple_targets(subs, ((T, 4),), frozenset({T}), prev):
        got = {m: dict(a).get(T, frozenset()) for m, a in target}
        assert got["a"] <= {0, 1, 2} and len(got["a"]) == 2
        assert 3 in got["b"] and len(got["b"]) == 2


# ----------------------------------------------------------------------- leave and expiry (9)


def test_leave_echoes_the_id_bumps_the_epoch_and_computes_no_target():
    h = formed()
    h.call(join("c2"), 1600, ok("c2", 4, tps(0)))
    h.call(
        beat("c2", -1),
        1700,
        ShareGroupHeartbeatResponse(error="NONE", member_id="c2-1", member_epoch=-1),
    )
    rid = h.send(DESCRIBE, 1800)
    (d,) = h.allowed(rid)
    # group epoch 5, assignment still 4 until another member's heartbeat computes a target
    assert (d.group_state, d.group_epoch, d.assignment_epoch) == ("Stable", 5, 4)
    assert [m.member_id for m in d.members] == ["c1-1"]
    # c1 (still at epoch 3 with every partition) moves to 5 and keeps all 3 (it is alone)
    h.call(beat("c1", 3), 1900, ok("c1", 5, None))


def test_the_last_member_leaving_leaves_an_empty_group_behind_in_4_3():
    h = formed()
    h.call(
        beat("c1", -1),
        1600,
        ShareGroupHeartbeatResponse(error="NONE", member_id="c1-1", member_epoch=-1),
    )
    rid = h.send(DESCRIBE, 1700)
    assert {(d.group_state, d.group_epoch, d.assignment_epoch) for d in h.allowed(rid)} == {
        ("Empty", 4, 3)
    }


def test_the_last_member_leaving_in_4_4_the_assignment_epoch_catches_up():
    h = formed(replace(CONFIG, empty_group_assignment_catches_up=True))
    h.call(
        beat("c1", -1),
        1600,
        ShareGroupHeartbeatResponse(error="NONE", member_id="c1-1", member_epoch=-1),
    )
    rid = h.send(DESCRIBE, 1700)
    assert {(d.group_state, d.group_epoch, d.assignment_epoch) for d in h.allowed(rid)} == {
        ("Empty", 4, 4)
    }


def test_a_session_expires_its_timeout_after_the_last_successful_heartbeat():
    h = formed()  # c1's last heartbeat at 1500, session 2000 ms
    # an error answer restarts nothing
    h.call(beat("c1", 9), 1600, error("FENCED_MEMBER_EPOCH"))
    rid = h.send(DESCRIBE, 3499)
    assert {d.group_state for d in h.allowed(rid)} == {"Stable"}
    h.receive(rid, next(iter(h.allowed(rid))))
    rid = h.send(DESCRIBE, 3500)
    assert {(d.group_state, d.group_epoch, d.assignment_epoch) for d in h.allowed(rid)} == {
        ("Empty", 4, 3)
    }
    h.receive(rid, next(iter(h.allowed(rid))))
    h.call(beat("c1", 3), 3600, error("UNKNOWN_MEMBER_ID"))


def test_an_expired_member_leaves_its_partitions_to_the_next_heartbeat():
    h = formed()
    h.call(join("c2"), 1600, ok("c2", 4, tps(0)))
    h.call(beat("c1", 3), 1700, ok("c1", 4, tps(1, 2)))
    # c2's session runs out at 3601; c1 keeps heartbeating
    h.call(beat("c1", 4), 3000, ok("c1", 4, None))
    rid = h.send(DESCRIBE, 3700)
    (d,) = h.allowed(rid)
    assert (d.group_epoch, d.assignment_epoch) == (5, 4)
    assert [(m.member_id, m.assignment) for m in d.members] == [("c1-1", tps(1, 2))]
    h.receive(rid, d)
    h.call(beat("c1", 4), 3800, ok("c1", 5, tps(0, 1, 2)))


# ----------------------------------------------------------------------- describe, list, delete


def test_a_share_group_never_expires():
    # unlike an Empty consumer group, an Empty share group stays (ShareGroup.shouldExpire)
    h = formed()
    h.call(
        beat("c1", -1),
        1600,
        ShareGroupHeartbeatResponse(error="NONE", member_id="c1-1", member_epoch=-1),
    )
    rid = h.send(DESCRIBE, 3_600_000)
    assert not h.accepts(rid, NOT_FOUND)
    assert {d.group_state for d in h.allowed(rid)} == {"Empty"}


@pytest.mark.parametrize(
    ("version", "listed"),
    [
        (3, ListedGroup(protocol_type="share")),
        (4, ListedGroup(protocol_type="share", group_state="Stable")),
        (5, ListedGroup(protocol_type="share", group_state="Stable", group_type="share")),
    ],
)
def test_list_groups_lists_a_share_group_by_version(version, listed):
    h = formed()
    h.call(
        ListGroups(client="c9", version=version),
        1600,
        ListGroupsResponse(error="NONE", groups=(listed,)),
    )


def test_list_groups_filters_by_state_and_type_in_any_case():
    h = formed()
    stable = ListedGroup(protocol_type="share", group_state="Stable", group_type="share")
    for states, types, groups in [
        ((" STABLE ",), (), (stable,)),
        (("empty",), (), ()),
        ((), ("Share",), (stable,)),
        ((), ("consumer", "classic"), ()),
    ]:
        command = ListGroups(client="c9", states_filter=states, types_filter=types, version=5)
        h.call(command, h.t + 10, ListGroupsResponse(error="NONE", groups=groups))


def test_a_missing_group_is_not_listed():
    h = History()
    h.call(ListGroups(client="c9", version=5), 0, ListGroupsResponse(error="NONE"))


def test_delete_groups_needs_an_empty_group_and_a_new_one_initializes_again():
    h = formed()
    h.call(
        DeleteGroups(client="c9", version=2), 1600, DeleteGroupsResponse(error="NON_EMPTY_GROUP")
    )
    h.call(
        beat("c1", -1),
        1700,
        ShareGroupHeartbeatResponse(error="NONE", member_id="c1-1", member_epoch=-1),
    )
    # before deleting: the Empty group keeps its initialized partitions, and a join takes them
    # in at once
    kept = History()
    kept.events, kept.rid, kept.t = list(h.events), h.rid, h.t
    kept.call(join("c1"), 1800, ok("c1", 5, tps(0, 1, 2)))
    # deleted: gone, and a join makes a new group at epoch 1 (answered 2) with nothing initialized
    h.call(DeleteGroups(client="c9", version=2), 1800, DeleteGroupsResponse(error="NONE"))
    h.call(DESCRIBE, 1900, NOT_FOUND)
    h.call(ListGroups(client="c9", version=5), 1950, ListGroupsResponse(error="NONE"))
    h.call(
        DeleteGroups(client="c9", version=2), 2000, DeleteGroupsResponse(error="GROUP_ID_NOT_FOUND")
    )
    h.call(join("c1"), 2100, ok("c1", 2, ()))
    h.call(beat("c1", 2), 3200, ok("c1", 3, tps(0, 1, 2)))


def test_other_requests_are_not_modelled():
    model = ShareGroupModel(CONFIG)
    other = JoinGroup(
        client="c1",
        session_timeout_ms=2000,
        rebalance_timeout_ms=2000,
        protocols=(Protocol(name="range"),),
        version=5,
    )
    with pytest.raises(NotModelled, match="not a request of the share group model"):
        model.invoke(model.initial(), request_id=1, command=other, at_ms=0)
    with pytest.raises(NotModelled, match="v0"):
        model.invoke(model.initial(), request_id=1, command=replace(join("c1"), version=0), at_ms=0)


# ----------------------------------------------------------------------- the 4.2 line
# Expectations from the 4.2.2 kafka-group-coordinator jar's bytecode (``docs/share-groups.md``
# §8): ``ModernGroup``'s constructor leaves ``groupEpoch`` and ``targetAssignmentEpoch`` at 0;
# ``GroupMetadataManager.shareGroupHeartbeat`` sets ``bumpGroupEpoch =
# hasMemberSubscriptionChanged(...) || initializedAssignmentPending(group)`` with no look at the
# assignment epoch, and calls ``updateTargetAssignment`` whenever ``groupEpoch >
# assignmentEpoch``, with no interval. ``shareGroupLeave``, ``shareGroupFenceMember``,
# ``initializedAssignmentPending``, ``maybeReconcile`` and the assignor are the same bytecode as
# 4.3.1's.

CONFIG_4_2 = replace(
    CONFIG,
    initial_group_epoch=0,
    initialized_pending_while_behind=True,
    has_assignment_interval=False,
)


def formed_4_2(config: ShareGroupConfig = CONFIG_4_2) -> History:
    """The typical trace on 4.2, one lower: A joins a new group at epoch 0 and is answered 1 (no
    partition initialized yet); its heartbeat once the topic is initialized bumps to 2 with every
    partition."""
    h = History(config)
    h.call(join("c1"), 0, ok("c1", 1, ()))
    h.call(beat("c1", 1), 1500, ok("c1", 2, tps(0, 1, 2)))
    return h


def test_a_new_group_starts_at_epoch_0_in_4_2():
    h = History(CONFIG_4_2)
    rid = h.send(join("c1"), 0)
    # the join's new topic set bumps 0 -> 1, and 1 > 0 computes the (empty) target at once
    assert h.allowed(rid) == {ok("c1", 1, ())}
    h.receive(rid, ok("c1", 1, ()))
    rid = h.send(DESCRIBE, 10)
    assert {(d.group_state, d.group_epoch, d.assignment_epoch) for d in h.allowed(rid)} == {
        ("Stable", 1, 1)
    }
    # the same join on 4.3 (``ModernGroup`` starts at 1) is answered 2
    h43 = History()
    assert h43.allowed(h43.send(join("c1"), 0)) == {ok("c1", 2, ())}


def test_the_typical_trace_in_4_2():
    h = formed_4_2()
    b = h.send(join("c2"), 1600)
    assert {a.member_epoch for a in h.allowed(b)} == {3}
    h.receive(b, ok("c2", 3, tps(0)))
    h.call(beat("c1", 2), 1700, ok("c1", 3, tps(1, 2)))


def test_a_group_made_again_after_delete_groups_starts_at_0_in_4_2():
    h = formed_4_2()
    h.call(
        beat("c1", -1),
        1600,
        ShareGroupHeartbeatResponse(error="NONE", member_id="c1-1", member_epoch=-1),
    )
    h.call(DeleteGroups(client="c9", version=2), 1700, DeleteGroupsResponse(error="NONE"))
    h.call(join("c1"), 1800, ok("c1", 1, ()))
    h.call(beat("c1", 1), 2900, ok("c1", 2, tps(0, 1, 2)))


def test_after_a_leave_the_next_heartbeat_bumps_once_more_in_4_2():
    h = formed_4_2()
    h.call(join("c2"), 1600, ok("c2", 3, tps(0)))
    h.call(
        beat("c2", -1),
        1700,
        ShareGroupHeartbeatResponse(error="NONE", member_id="c2-1", member_epoch=-1),
    )
    rid = h.send(DESCRIBE, 1800)
    (d,) = h.allowed(rid)
    assert (d.group_epoch, d.assignment_epoch) == (4, 3)  # the leave: +1, no target
    h.receive(rid, d)
    # c1's heartbeat: the targets left (c1's: partitions 1 and 2) no longer cover the initialized
    # partition 0, so ``initializedAssignmentPending`` bumps 4 -> 5 although the assignment is
    # behind, and the target is computed at 5 (c1 still holds all three: no assignment sent)
    rid = h.send(beat("c1", 2), 1900)
    assert h.allowed(rid) == {ok("c1", 5, None)}
    # without the 4.2 switch (4.3's rule) the same history answers 4
    h43 = History(replace(CONFIG_4_2, initialized_pending_while_behind=False))
    h43.events, h43.rid, h43.t = list(h.events), h.rid, h.t
    assert h43.allowed(rid) == {ok("c1", 4, None)}


def test_an_expiry_gives_the_same_extra_bump_in_4_2():
    h = formed_4_2()
    h.call(join("c2"), 1600, ok("c2", 3, tps(0)))
    h.call(beat("c1", 2), 1700, ok("c1", 3, tps(1, 2)))
    h.call(beat("c1", 3), 3000, ok("c1", 3, None))
    # c2's session (2000 ms after its join at 1600) ran out at 3600: epoch 4, target still at 3;
    # c1's next heartbeat bumps to 5 and takes partition 0 in
    h.call(beat("c1", 3), 3700, ok("c1", 5, tps(0, 1, 2)))


def test_no_extra_bump_when_the_targets_left_still_cover_every_partition_in_4_2():
    # one partition shared by two members (desiredSharing = ceil(2/1) = 2): when c2 leaves, c1's
    # target still holds partition 0, so nothing is pending and the epoch moves once
    h = History(replace(CONFIG_4_2, topics=((T, 1),)))
    h.call(join("c1"), 0, ok("c1", 1, ()))
    h.call(beat("c1", 1), 1500, ok("c1", 2, tps(0)))
    h.call(join("c2"), 1600, ok("c2", 3, tps(0)))
    h.call(beat("c1", 2), 1700, ok("c1", 3, None))
    h.call(
        beat("c2", -1),
        1800,
        ShareGroupHeartbeatResponse(error="NONE", member_id="c2-1", member_epoch=-1),
    )
    h.call(beat("c1", 3), 1900, ok("c1", 4, None))


def test_4_2_has_no_assignment_interval():
    # no ``group.share.assignment.interval.ms`` in the 4.2.2 ``GroupCoordinatorConfig`` or
    # ``GroupConfig``: a target is always computed in the heartbeat that needs it
    with pytest.raises(ValueError, match="line without group.share.assignment.interval.ms"):
        replace(CONFIG_4_2, assignment_interval_ms=1000)


@pytest.mark.parametrize(
    ("version", "first", "pending_while_behind", "interval", "catches_up"),
    [
        ("4.2.2", 0, True, False, False),
        ("4.3.1", 1, False, True, False),
        ("4.4.0", 1, False, True, True),
    ],
)
def test_each_line_gets_its_own_share_rules(
    version: str, first: int, pending_while_behind: bool, interval: bool, catches_up: bool
) -> None:
    # a broker that does not say its assignment interval is assumed at 4.3's default, 1000
    # (``brokerconfig.ASSUMED``); a 4.2 broker has no such setting, so the fact is not taken
    facts = {"group.share.assignment.interval.ms": 0 if interval else 1000}
    record = share_manifest({"version": version, "group_config": facts}, {T: 3})
    config = build_share(record, "g").config
    assert config.initial_group_epoch == first
    assert config.initialized_pending_while_behind is pending_while_behind
    assert config.has_assignment_interval is interval
    assert config.empty_group_assignment_catches_up is catches_up


# ----------------------------------------------------------------------- the registry


def test_the_manifest_carries_the_brokers_share_settings_and_the_line():
    facts = {
        "group.share.session.timeout.ms": 2000,
        "group.share.heartbeat.interval.ms": 500,
        "group.share.max.size": 3,
    }
    record = share_manifest({"version": "4.3.1", "group_config": facts}, {T: 3})
    config = build_share(record, "g").config
    assert (config.session_timeout_ms, config.heartbeat_interval_ms, config.max_size) == (
        2000,
        500,
        3,
    )
    assert config.topics == ((T, 3),) and config.group_id == "g"
    assert config.empty_group_assignment_catches_up is False  # 4.3
    newer = share_manifest({"version": "4.4.0", "group_config": facts}, {T: 3})
    assert build_share(newer, "g").config.empty_group_assignment_catches_up is True
    rebuilt = model_from_manifest({"model": record, "group_id": "g"})
    assert isinstance(rebuilt, ShareGroupModel) and rebuilt.config == config


def test_the_manifest_refuses_what_the_model_does_not_cover():
    with pytest.raises(NotModelled, match="4.1"):
        share_manifest({"version": "4.1.2"}, {T: 3})
    deferred = {"group_config": {"group.share.assignment.interval.ms": 1000}, "version": "4.3.1"}
    with pytest.raises(ValueError, match="group.share.assignment.interval.ms=0"):
        build_share(share_manifest(deferred, {T: 3}), "g")


# ----------------------------------------------------------------------- implementation switches
# Other implementations' share groups (``conformance/brokers/implementations.py`` ``SWITCHES``,
# each cited there at the pinned source and proved by a trace in ``traces/known/``): each switch
# on allows what the implementation answers and Kafka's rules (off) refuse it.

AT_ONCE = replace(CONFIG, initialized_at_subscription=True)


@pytest.mark.parametrize("at_once", [False, True])
def test_initialized_at_subscription(at_once: bool):
    # kfake and librdkafka's mock hand a new member every partition in its first answer; Kafka
    # assigns only initialized partitions, which the share coordinator initializes after it
    h = History(replace(CONFIG, initialized_at_subscription=at_once))
    rid = h.send(join("c1"), 0)
    assert h.allowed(rid) == {ok("c1", 2, tps(0, 1, 2) if at_once else ())}
    # with kfake's 4.2-like first epoch the same answer is epoch 1
    h0 = History(replace(AT_ONCE, initial_group_epoch=0))
    assert h0.allowed(h0.send(join("c1"), 0)) == {ok("c1", 1, tps(0, 1, 2))}


def two_members(config: ShareGroupConfig) -> tuple[History, set[tuple[int, ...]]]:
    """c1 joins (every partition at once), then c2 (its share); returns c2's partitions."""
    h = History(config)
    h.call(join("c1"), 0, ok("c1", 2, tps(0, 1, 2)))
    rid = h.send(join("c2"), 10)
    answers = h.allowed(rid)
    answer = min(answers, key=lambda a: [p.partition for p in a.assignment or ()])
    h.receive(rid, answer)
    return h, {tuple(p.partition for p in answer.assignment or ())}


@pytest.mark.parametrize("target", [False, True])
def test_describe_shows_target_assignment(target: bool):
    # kfake keeps one assignment per member, rewritten when another joins: c1, not yet
    # reconciled (epoch 2), is described with its new target; Kafka describes what c1 holds
    h, (c2s,) = two_members(replace(AT_ONCE, describe_shows_target_assignment=target))
    rid = h.send(DESCRIBE, 20)
    (c1,) = {m for d in h.allowed(rid) for m in d.members if m.member_id == "c1-1"}
    held = tuple(p.partition for p in c1.assignment)
    assert c1.member_epoch == 2
    assert held == (tuple(p for p in (0, 1, 2) if p not in c2s) if target else (0, 1, 2))


@pytest.mark.parametrize("carry", [False, True])
def test_group_answers_carry_interval(carry: bool):
    # kfake's leave answer and a group's errors carry the heartbeat interval; Kafka's carry 0
    h = History(replace(AT_ONCE, group_answers_carry_interval=carry))
    h.call(join("c1"), 0, ok("c1", 2, tps(0, 1, 2)))
    interval = INTERVAL if carry else 0
    h.call(beat("c2", 3), 10, replace(error("UNKNOWN_MEMBER_ID"), heartbeat_interval_ms=interval))
    h.call(beat("c1", 7), 20, replace(error("FENCED_MEMBER_EPOCH"), heartbeat_interval_ms=interval))
    left = ShareGroupHeartbeatResponse(
        error="NONE", member_id="c1-1", member_epoch=-1, heartbeat_interval_ms=interval
    )
    h.call(beat("c1", -1), 30, left)


@pytest.mark.parametrize("no_member", [False, True])
def test_leave_answer_names_no_member(no_member: bool):
    # librdkafka's mock cluster answers a leave with MemberId null; Kafka echoes the member's id
    h = History(replace(AT_ONCE, leave_answer_names_no_member=no_member))
    h.call(join("c1"), 0, ok("c1", 2, tps(0, 1, 2)))
    left = ShareGroupHeartbeatResponse(
        error="NONE", member_id=None if no_member else "c1-1", member_epoch=-1
    )
    h.call(beat("c1", -1), 10, left)


@pytest.mark.parametrize("echo", [False, True])
def test_error_answers_echo_epoch(echo: bool):
    # librdkafka's mock cluster writes the request's epoch into an error answer; Kafka's is 0.
    # A missing group's GROUP_ID_NOT_FOUND and rule 1's INVALID_REQUEST carry 0 either way
    h = History(replace(AT_ONCE, error_answers_echo_epoch=echo))
    h.call(beat("c1", 4), 0, error("GROUP_ID_NOT_FOUND"))
    h.call(beat("c1", -2), 5, error("INVALID_REQUEST"))
    h.call(join("c1"), 10, ok("c1", 2, tps(0, 1, 2)))
    h.call(beat("c2", 3), 20, replace(error("UNKNOWN_MEMBER_ID"), member_epoch=3 if echo else 0))
    h.call(beat("c1", 7), 30, replace(error("FENCED_MEMBER_EPOCH"), member_epoch=7 if echo else 0))


@pytest.mark.parametrize("every", [False, True])
def test_assignment_in_every_answer(every: bool):
    # librdkafka's mock cluster sends a member its assignment in every answer; Kafka only to a
    # join, a full request or a change
    h = History(replace(AT_ONCE, assignment_in_every_answer=every))
    h.call(join("c1"), 0, ok("c1", 2, tps(0, 1, 2)))
    again = ok("c1", 2, tps(0, 1, 2))
    h.call(beat("c1", 2), 10, again if every else replace(again, assignment=None))


@pytest.mark.parametrize("makes", [False, True])
def test_heartbeat_makes_group(makes: bool):
    # librdkafka's mock cluster makes the group any heartbeat names: a stranger's heartbeat to a
    # missing group is UNKNOWN_MEMBER_ID there, and the group is then described Empty; Kafka
    # answers GROUP_ID_NOT_FOUND and makes nothing
    h = History(replace(AT_ONCE, heartbeat_makes_group=makes))
    h.call(beat("c2", 3), 0, error("UNKNOWN_MEMBER_ID" if makes else "GROUP_ID_NOT_FOUND"))
    rid = h.send(DESCRIBE, 10)
    assert {d.group_state or d.error for d in h.allowed(rid)} == {
        "Empty" if makes else "GROUP_ID_NOT_FOUND"
    }
    # a join then finds the group at the line's first epoch, as a new group would be made
    h.call(join("c1"), 20, ok("c1", 2, tps(0, 1, 2)))


@pytest.mark.parametrize("answered", [False, True])
def test_unknown_member_leave_answered(answered: bool):
    # librdkafka's mock cluster answers a leave from a member the group lacks as a leave, and
    # nothing changes; Kafka answers UNKNOWN_MEMBER_ID
    h = History(replace(AT_ONCE, unknown_member_leave_answered=answered))
    h.call(join("c1"), 0, ok("c1", 2, tps(0, 1, 2)))
    left = ShareGroupHeartbeatResponse(error="NONE", member_id="c2-1", member_epoch=-1)
    h.call(beat("c2", -1), 10, left if answered else error("UNKNOWN_MEMBER_ID"))
    h.call(beat("c1", 2), 20, replace(ok("c1", 2, tps(0, 1, 2)), assignment=None))


@pytest.mark.parametrize("bumps", [False, True])
def test_rejoin_bumps_epoch(bumps: bool):
    # librdkafka's mock cluster recalculates on every epoch-0 heartbeat: a known member's rejoin
    # with the same subscription moves the group (and the member) to the next epoch; Kafka keeps
    # the member's epoch and sends its whole assignment
    h = History(replace(AT_ONCE, rejoin_bumps_epoch=bumps))
    h.call(join("c1"), 0, ok("c1", 2, tps(0, 1, 2)))
    h.call(join("c1"), 10, ok("c1", 3 if bumps else 2, tps(0, 1, 2)))


@pytest.mark.parametrize("moves", [False, True])
def test_recalculation_moves_every_member(moves: bool):
    # librdkafka's mock cluster moves every member to the new group epoch whenever it
    # recalculates: c1 joins, then c2 and c3; c1 (2) is at 4 there, previous 3, so its own 2 is
    # fenced. In Kafka c1 is still at 2 and is moved to 4 by its own heartbeat
    h = History(replace(AT_ONCE, max_size=4, recalculation_moves_every_member=moves))
    h.call(join("c1"), 0, ok("c1", 2, tps(0, 1, 2)))
    for at, client in [(10, "c2"), (20, "c3")]:
        rid = h.send(join(client), at)
        assert {a.member_epoch for a in h.allowed(rid)} == {3 if client == "c2" else 4}
        h.receive(rid, min(h.allowed(rid), key=lambda a: [p.partition for p in a.assignment]))
    rid = h.send(beat("c1", 2), 30)
    if moves:
        assert h.allowed(rid) == {error("FENCED_MEMBER_EPOCH")}
        # at the group's previous epoch it is accepted (the answer with the bump may be lost)
        h.receive(rid, error("FENCED_MEMBER_EPOCH"))
        assert {a.member_epoch for a in h.allowed(h.send(beat("c1", 3), 40))} == {4}
    else:
        assert {a.error for a in h.allowed(rid)} == {"NONE"}
        assert {a.member_epoch for a in h.allowed(rid)} == {4}


@pytest.mark.parametrize("moves", [False, True])
def test_recalculation_moves_every_member_and_the_last_leave_bumps_nothing(moves: bool):
    # the mock's leave of the last member recalculates nothing, so the group epoch stays and the
    # next join is answered 3; Kafka's leave bumps it (3), the join again (4)
    # (each answer carries the assignment, as the mock's do: a member moved by another's
    # heartbeat is told its new assignment in its next answer, changed or not)
    config = replace(AT_ONCE, assignment_in_every_answer=True)
    h = History(replace(config, recalculation_moves_every_member=moves))
    h.call(join("c1"), 0, ok("c1", 2, tps(0, 1, 2)))
    gone = ShareGroupHeartbeatResponse(error="NONE", member_id="c1-1", member_epoch=-1)
    h.call(beat("c1", -1), 10, gone)
    h.call(join("c1"), 20, ok("c1", 3 if moves else 4, tps(0, 1, 2)))
    # a leave that leaves a member recalculates for it at once: c2's epoch moves without a
    # heartbeat of its own, so its old epoch is now its previous one
    h.call(join("c2"), 30, ok("c2", 4 if moves else 5, tps(*([2] if moves else [0]))))
    h.call(beat("c1", -1), 40, replace(gone, member_epoch=-1))
    rid = h.send(beat("c2", 4 if moves else 5), 50)
    assert {(a.member_epoch, a.assignment) for a in h.allowed(rid)} == {
        (5, tps(0, 1, 2)) if moves else (6, tps(0, 1, 2))
    }


@pytest.mark.parametrize("ranges", [False, True])
def test_assignor_ranges_in_join_order(ranges: bool):
    # the mock hands each topic out in contiguous ranges in join order, keeping nothing: of 4
    # partitions and members c1, c2 (joined in that order) c1 gets 0-1 and c2 2-3; a third
    # member, c3, makes it 0-1, 2, 3. Kafka's ``simple`` assignor keeps what it can
    config = replace(AT_ONCE, topics=((T, 4),), max_size=4, assignor_ranges_in_join_order=ranges)
    h = History(
        replace(config, recalculation_moves_every_member=True, assignment_in_every_answer=True)
    )
    h.call(join("c1"), 0, ok("c1", 2, tps(0, 1, 2, 3)))
    rid = h.send(join("c2"), 10)
    c2 = {a.assignment for a in h.allowed(rid)}
    if ranges:
        assert c2 == {tps(2, 3)}
    else:
        assert tps(2, 3) in c2 and len(c2) > 1
    h.receive(rid, ok("c2", 3, tps(2, 3)))
    rid = h.send(join("c3"), 20)
    c3 = {a.assignment for a in h.allowed(rid)}
    assert c3 == {tps(3)} if ranges else len(c3) > 1
    h.receive(rid, ok("c3", 4, tps(3)))
    if ranges:  # c1 was moved with the others, to 0-1
        assert h.allowed(h.send(beat("c1", 4), 30)) == {ok("c1", 4, tps(0, 1))}


@pytest.mark.parametrize("unchecked", [False, True])
def test_heartbeat_unvalidated(unchecked: bool):
    # librdkafka's mock cluster checks nothing in a ShareGroupHeartbeat: an empty member id joins,
    # a join without topics is a member with no assignment at all (null even where every answer
    # carries one), an epoch below -1 is an epoch the member does not have. Kafka refuses each
    # (with the mock's other share switches that shape these answers)
    config = replace(
        AT_ONCE, max_size=4, assignment_in_every_answer=True, recalculation_moves_every_member=True
    )
    h = History(replace(config, heartbeat_unvalidated=unchecked))
    empty = ShareGroupHeartbeat(
        client="c1", member_id="", member_epoch=0, subscribed_topic_names=(T,), version=1
    )
    h.call(
        empty,
        0,
        replace(ok("c1", 2, tps(0, 1, 2)), member_id="") if unchecked else error("INVALID_REQUEST"),
    )
    rid = h.send(join("c2", topics=()), 10)
    assert h.allowed(rid) == ({ok("c2", 3, None)} if unchecked else {error("INVALID_REQUEST")})
    h.receive(rid, ok("c2", 3, None) if unchecked else error("INVALID_REQUEST"))
    low = "UNKNOWN_MEMBER_ID" if unchecked else "INVALID_REQUEST"
    h.call(beat("c3", -2), 20, error(low))


@pytest.mark.parametrize("ignored", [False, True])
def test_previous_epoch_heartbeat_changes_nothing(ignored: bool):
    # librdkafka's mock cluster reads no subscription from a heartbeat at the member's previous
    # epoch: c1 (moved to 3 by c2's join) says at 2 that it subscribes to nothing, and is
    # answered 3 with what it holds. Kafka takes the change: the group epoch moves to 4 and c1
    # holds nothing
    # (with the mock's switches that move c1 to 3 behind its back and answer every heartbeat)
    config = replace(
        AT_ONCE,
        topics=((T, 4),),
        assignment_in_every_answer=True,
        recalculation_moves_every_member=True,
    )
    h = History(replace(config, previous_epoch_heartbeat_changes_nothing=ignored))
    h.call(join("c1"), 0, ok("c1", 2, tps(0, 1, 2, 3)))
    rid = h.send(join("c2"), 10)
    h.receive(rid, min(h.allowed(rid), key=lambda a: [p.partition for p in a.assignment]))
    rid = h.send(beat("c1", 2, topics=()), 20)
    epochs = {(a.member_epoch, bool(a.assignment)) for a in h.allowed(rid)}
    assert epochs == ({(3, True)} if ignored else {(4, False)})


@pytest.mark.parametrize("sticky", [False, True])
def test_assignor_sticky_in_id_order(sticky: bool):
    # kfake's assignor: c1 (every partition) keeps its lowest two, its quota as the first of two
    # members by id, and c2 is handed the rest; Kafka's ``simple`` assignor leaves the split to
    # hash order
    h = History(replace(AT_ONCE, assignor_sticky_in_id_order=sticky))
    h.call(join("c1"), 0, ok("c1", 2, tps(0, 1, 2)))
    rid = h.send(join("c2"), 10)
    c2 = {a.assignment for a in h.allowed(rid)}
    assert c2 == {tps(2)} if sticky else tps(2) in c2 and len(c2) > 1


def test_sticky_in_id_order_follows_the_implementation_step_by_step():
    from kgc.model.share.group import sticky_in_id_order

    def run(members: str, n: int, previous: dict[str, tuple[int, ...]]) -> dict[str, tuple]:
        subs = tuple((m, frozenset({T})) for m in members)
        last = tuple(sorted((m, ((T, frozenset(ps)),)) for m, ps in previous.items()))
        out = sticky_in_id_order(subs, ((T, n),), frozenset({T}), last)
        return {m: tuple(sorted(p for _, ps in a for p in ps)) for m, a in out}

    # quotas 2 and 1 (the first by id gets the rounding); round-robin from the lowest partition
    assert run("ab", 3, {}) == {"a": (0, 2), "b": (1,)}
    # a third member: quotas 1 each; a keeps its lowest, c is handed what a gave up
    assert run("abc", 3, {"a": (0, 2), "b": (1,)}) == {"a": (0,), "b": (1,), "c": (2,)}
    # more members than partitions: each partition shared by 2, quotas 2, 1, 1
    assert run("abc", 2, {}) == {"a": (0, 1), "b": (0,), "c": (1,)}
    # both held both: each is cut to its lowest (quota 1); partition 0, then held by both, loses
    # one (equally over quota: the first by id, a), and a is handed partition 1
    assert run("ab", 2, {"a": (0, 1), "b": (0, 1)}) == {"a": (1,), "b": (0,)}
    # a member is cut to its quota before a partition loses holders: c keeps 0 of 0-1, and 0,
    # held by all three, loses a and b (none over its quota: by id)
    assert run("abc", 3, {"a": (0,), "b": (0,), "c": (0, 1)}) == {"a": (1,), "b": (2,), "c": (0,)}
    # the member most over its quota loses a shared partition first: a (quota 2, holding 1) is
    # under, b (quota 1, holding 1) is not, so b gives 0 up although a comes first by id
    assert run("ab", 3, {"a": (0,), "b": (0,)}) == {"a": (0, 1), "b": (2,)}


def test_ranges_in_join_order_follows_the_doubles_of_the_implementation():
    from kgc.model.share.group import ranges_in_join_order

    subs = tuple((m, frozenset({T})) for m in ("a", "b", "c"))
    joined = ("c", "a", "b")
    # 4 partitions over 3 members: ceil(4/3 * i) = 0, 2, 3, 4
    got = dict(ranges_in_join_order(joined, subs, ((T, 4),), frozenset({T})))
    assert got == {
        "c": ((T, frozenset({0, 1})),),
        "a": ((T, frozenset({2})),),
        "b": ((T, frozenset({3})),),
    }
    # more members than partitions: the last members hold the topic with no partition
    got = dict(ranges_in_join_order(joined, subs, ((T, 2),), frozenset({T})))
    assert got == {
        "c": ((T, frozenset({0})),),
        "a": ((T, frozenset({1})),),
        "b": ((T, frozenset()),),
    }
    # a topic not initialized is handed to nobody
    assert dict(ranges_in_join_order(joined, subs, ((T, 2),), frozenset())) == {
        "c": (),
        "a": (),
        "b": (),
    }


@pytest.mark.parametrize("deleted", [False, True])
def test_last_member_gone_deletes_group(deleted: bool):
    # kfake deletes a share group whose last member left; Kafka keeps it Empty (never expires)
    h = History(replace(AT_ONCE, last_member_gone_deletes_group=deleted))
    h.call(join("c1"), 0, ok("c1", 2, tps(0, 1, 2)))
    gone = ShareGroupHeartbeatResponse(error="NONE", member_id="c1-1", member_epoch=-1)
    h.call(beat("c1", -1), 10, gone)
    rid = h.send(DESCRIBE, 20)
    assert {d.group_state or d.error for d in h.allowed(rid)} == {
        "GROUP_ID_NOT_FOUND" if deleted else "Empty"
    }


@pytest.mark.parametrize("computes", [False, True])
def test_fence_computes_target(computes: bool):
    # kfake computes the others' target when a member leaves (assignment epoch = group epoch);
    # Kafka leaves it to the next heartbeat
    h, _ = two_members(replace(AT_ONCE, fence_computes_target=computes))
    gone = ShareGroupHeartbeatResponse(error="NONE", member_id="c2-1", member_epoch=-1)
    h.call(beat("c2", -1), 20, gone)
    rid = h.send(DESCRIBE, 30)
    assert {(d.group_epoch, d.assignment_epoch) for d in h.allowed(rid)} == {
        (4, 4 if computes else 3)
    }


@pytest.mark.parametrize("sent", [False, True])
def test_assignment_sent_on_epoch_change(sent: bool):
    # c2 joins and keeps its share; c3 joins; c2's next heartbeat moves its epoch. kfake sends
    # its assignment though it did not change; Kafka sends none
    h = History(replace(AT_ONCE, assignment_sent_on_epoch_change=sent, max_size=4))
    h.call(join("c1"), 0, ok("c1", 2, tps(0, 1, 2)))
    h.call(join("c2"), 10, ok("c2", 3, tps(2)))
    h.call(join("c3"), 20, ok("c3", 4, tps(1)))
    rid = h.send(beat("c2", 3), 30)
    assert ok("c2", 4, tps(2) if sent else None) in h.allowed(rid)
    assert ok("c2", 4, None if sent else tps(2)) not in h.allowed(rid)


@pytest.mark.parametrize("accepted", [False, True])
def test_blank_member_id_accepted(accepted: bool):
    # kfake refuses an empty member id only; Kafka trims it: blanks are INVALID_REQUEST
    h = History(replace(AT_ONCE, blank_member_id_accepted=accepted))
    rid = h.send(replace(join("c1"), member_id="   "), 0)
    expected = replace(ok("c1", 2, tps(0, 1, 2)), member_id="   ") if accepted else None
    assert h.allowed(rid) == {expected or error("INVALID_REQUEST")}
