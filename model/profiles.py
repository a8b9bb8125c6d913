"""Every release line's rules, for both protocols, and the classic group model's broker
configuration.

The classic group: one profile per Apache Kafka release line, 1.0 to 4.4 (``PROFILE_NAMES``),
each following the line's newest patch. The two the model was built on are spelled out below
(``KAFKA_4_X`` = the 4.3 line, ``KAFKA_3_9``); every other line is one of them with the switches
where its coordinator differs (``_SCALA_SWITCHES``, ``_JAVA_SWITCHES``), each switch cited at its
field and tabled in ``docs/release-lines.md`` with the broker test that shows it on both lines it
separates.

Rule: the model follows the coordinator that *actually runs by default* in each Kafka version, and
every behaviour that differs between versions is one named switch on :class:`Profile`, citing the
source that decides it. Sources (read at the release commits of ``confluentinc/kafka``, which
carries Apache Kafka's tags: ``26b251a451`` "Bump version to 4.3.1", ``12ead27d3b`` "Bump version to
3.9.2"):

* 4.x: the Java group coordinator, ``group-coordinator/src/main/java/org/apache/kafka/coordinator/
  group/GroupMetadataManager.java`` (``classicGroupJoin*``, ``classicGroupSync*``,
  ``classicGroupHeartbeat*``, ``classicGroupLeave*``, ``completeClassicGroupJoin``, …),
  ``classic/ClassicGroup.java``, ``classic/ClassicGroupMember.java``,
  ``OffsetMetadataManager.java``.
* 3.9: the Scala coordinator,
  ``core/src/main/scala/kafka/coordinator/group/GroupCoordinator.scala``,
  ``GroupMetadata.scala``, ``MemberMetadata.scala``, ``DelayedJoin.scala`` (``InitialDelayedJoin``),
  ``DelayedHeartbeat.scala``, ``DelayedSync.scala``.

Which coordinator runs in 3.9 by default: ``KafkaConfig.isNewGroupCoordinatorEnabled`` is
``group.coordinator.new.enable`` (internal, default ``false``, ``GroupCoordinatorConfig.java``) OR
``group.coordinator.rebalance.protocols`` contains ``consumer`` (default ``[classic]``). So by
default 3.9 runs the **old Scala coordinator in both KRaft mode** (``BrokerServer.scala`` picks it
when the flag is false) **and ZooKeeper mode** (``KafkaServer.scala`` always builds
``GroupCoordinatorAdapter`` around the Scala ``GroupCoordinator``; ZooKeeper mode also rejects the
``consumer`` protocol). A 3.9 broker started with ``group.coordinator.rebalance.protocols=classic,
consumer`` runs the new Java coordinator of that release instead — not modelled as a separate
profile (it is close to, but not the same code as, 4.x).

The KIP-848 consumer group (4.0 to 4.4): :func:`consumer_line_rules`, the ``ConsumerGroupConfig``
switches that hold a line to its own rules, each cited at its switch. The KIP-932 share group
(4.2 to 4.4): :func:`share_line_rules`, the same for ``ShareGroupConfig``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from kgc.model.commands import NotModelled

INT32_MAX = 2**31 - 1


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiRange:
    """Request versions the broker accepts for one API (``clients/.../message/*Request.json``
    ``validVersions``; versions that need ZooKeeper storage are left out)."""

    api: str
    min_version: int
    max_version: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Profile:
    """A Kafka version's classic-group behaviour; each flag names the code that decides it."""

    name: str
    kafka_version: str
    coordinator: str  # "group-coordinator (Java)" | "core GroupCoordinator (Scala)"
    api_ranges: tuple[ApiRange, ...]

    # SyncGroup answered in Stable reschedules the member's session timer.
    # 3.9 GroupCoordinator.doSyncGroup, Stable: completeAndScheduleNextHeartbeatExpiration.
    # 4.x GroupMetadataManager.classicGroupSyncToClassicGroup, STABLE: no reschedule.
    sync_in_stable_reschedules_heartbeat: bool

    # A join phase that started from Empty may be extended by the initial rebalance delay when a
    # new member joined. 3.9: addMemberAndRebalance sets newMemberAdded only when
    # ``generationId == 0``; 4.x: addMemberThenRebalanceOrCompleteJoin when ``previousState ==
    # EMPTY`` (any initial rebalance, also after earlier generations).
    new_member_added_only_in_generation_0: bool

    # A member or pending member removed by its session/join timer while the join phase waits
    # for the initial rebalance delay completes the join phase at once if everyone left has joined.
    # 4.x removeMemberAndUpdateClassicGroup / removePendingMemberAndUpdateClassicGroup call
    # completeClassicGroupJoin when hasAllMembersJoined, whatever the previous state.
    # 3.9 only checkAndComplete the purgatory, and InitialDelayedJoin.tryComplete is always false.
    expiry_completes_initial_join: bool

    # DescribeGroups outside Stable lists each member's current assignment.
    # 4.x ClassicGroupMember.describeNoMetadata sets MemberAssignment; 3.9
    # MemberMetadata.summaryNoMetadata sends empty metadata and assignment.
    describe_assignment_outside_stable: bool

    # DescribeGroups v6+ of a group that does not exist: GROUP_ID_NOT_FOUND (4.x
    # GroupMetadataManager.describeGroups); 3.9 has no v6 and answers NONE / "Dead".
    describe_missing_group_error_v6: bool

    # OffsetCommit v9+ with generation >= 0 to a group that does not exist: GROUP_ID_NOT_FOUND
    # (4.x OffsetMetadataManager.validateOffsetCommit); else (and always in 3.9) ILLEGAL_GENERATION.
    commit_missing_group_v9_group_id_not_found: bool

    # JoinGroup rejected with GROUP_MAX_SIZE_REACHED while PreparingRebalance removes the member and
    # then re-checks whether the join phase can complete: 3.9 handleJoinGroup always ends with
    # rebalancePurgatory.checkAndComplete; 4.x classicGroupJoinToClassicGroup only removes it.
    max_size_rejection_checks_join: bool

    # SyncGroup v5+ naming a protocol while the group has none selected (a join phase that started
    # from Empty): 3.9 validateSyncGroup: ``!group.protocolName.contains(name)`` ->
    # INCONSISTENT_GROUP_PROTOCOL; 4.x isProtocolInconsistent ignores a null group protocol.
    sync_protocol_check_without_group_protocol: bool

    # LeaveGroup with several members: 3.9 handleLeaveGroup removes them one by one, each removal
    # running removeMemberAndUpdateGroup (prepare rebalance / try to complete the join at once);
    # 4.x classicGroupLeaveToClassicGroup removes all, then rebalances or completes once.
    leave_rebalances_per_member: bool

    # SyncGroup answered while the coordinator loads: 3.9 handleSyncGroup turns
    # COORDINATOR_LOAD_IN_PROGRESS into REBALANCE_IN_PROGRESS; 4.x passes it through
    # (CoordinatorOperationExceptionHelper). Used by ``coordinator.py``.
    sync_load_in_progress_as_rebalance: bool

    # Timers due at the same time. 4.x runs every timer of the group coordinator on one timer
    # (``CoordinatorTimerImpl`` over server-common's ``SystemTimer``, 1 ms ticks, one executor
    # thread), so timers due in one tick fire in the order they were scheduled; and in every
    # event that sets a member's heartbeat and the join or sync timer, the heartbeat comes first
    # (``prepareRebalance``: ``resetAndPropagateAssignmentWithError`` before
    # ``maybeCompleteJoinElseSchedule``; ``completeClassicGroupJoin``: heartbeats before
    # ``schedulePendingSync``). 3.9 keeps heartbeats in ``heartbeatPurgatory`` and the join and
    # sync timers in ``rebalancePurgatory``, each with a timer thread of its own, so a heartbeat
    # and a join or sync timer due together fire in either order. Used by ``group.py``.
    one_coordinator_timer: bool
    # 4.x: a JoinGroup that creates a classic group appends an empty group metadata record at
    # once ("to commit the group to the timeline data structure", ``GroupMetadataManager
    # .classicGroupJoin``: ``newEmptyGroupMetadataRecord`` when ``isNewGroup``), so a coordinator
    # that loads the partition after a failover finds the group Empty at generation 0, and a
    # member it never persisted is UNKNOWN_MEMBER_ID there. 3.9's Scala ``GroupCoordinator``
    # (``handleJoinGroup``: ``groupManager.addGroup``) only creates it in memory. Used by
    # ``cluster_group.py`` (what survives a failover; found by a fault replay on 4.3.1) and by
    # ``describe.py`` rule 3 (the join does not wait for that record, and DescribeGroups reads at
    # the last committed offset; found under load on a 3-node 4.3.1 cluster).
    new_group_writes_empty_record: bool
    # 2.4 (up to 2.4.1, KAFKA-9752, fixed in 2.5.1 by ``MemberMetadata.heartbeatSatisfied``):
    # ``onCompleteJoin`` calls ``completeAndScheduleNextHeartbeatExpiration`` before it clears
    # ``member.isNew``; the new ``DelayedHeartbeat``'s ``tryComplete`` asks ``shouldKeepAlive``,
    # which is true for a new member (``latestHeartbeat + NewMemberJoinTimeoutMs > deadline``), so
    # the timer completes at once and the member is left with none: a member whose first join
    # phase completed is never expired unless it heartbeats, commits or syncs again. Found by
    # ``kgc check --kafka-version 2.4.1`` (a member that never synced blocked a new protocol).
    new_member_keeps_no_timer_after_first_join: bool = False
    # The sync deadline (RULES.md R8): members that have not sent SyncGroup one rebalance timeout
    # after the join phase completed are removed. 3.9 ``DelayedSync.scala``,
    # ``GroupCoordinator.schedulePendingSync`` / 4.x ``GroupMetadataManager.schedulePendingSync``;
    # first shipped in 2.8 (``DelayedSync`` is in the 2.8.2 jar, not in 2.7.2's or older;
    # KAFKA-12890, "Consumer group stuck in CompletingRebalance", apache/kafka PR 10863).
    sync_deadline: bool = True
    # A group.instance.id that is not registered: 3.0+ ``validateCurrentMember`` answers
    # UNKNOWN_MEMBER_ID for it in SyncGroup, Heartbeat, LeaveGroup and OffsetCommit. Before 3.0
    # those handlers ask only ``GroupMetadata.isStaticMemberFenced`` (fenced when the instance is
    # registered to another member id) and then whether the member id exists, so an unknown
    # instance id is ignored (2.4-2.8 ``GroupCoordinator.handleSyncGroup``/``handleHeartbeat``/
    # ``handleCommitOffsets``/``handleLeaveGroup``). JoinGroup refuses it on every line
    # (``groupInstanceIdNotFound``). Found by ``kgc check --kafka-version 2.4.1``.
    unknown_instance_id_rejected: bool = True
    # Heartbeat in CompletingRebalance: before 2.6 ``GroupCoordinator.handleHeartbeat`` answers
    # REBALANCE_IN_PROGRESS and leaves the member's timer alone (1.0.2, 2.4.1, 2.5.1); from 2.6
    # ("consumers may start sending heartbeat after join-group response … reset the timer") it
    # reschedules the timer and answers NONE, as 3.9 and 4.x do (apache/kafka PR 8834, named in
    # KAFKA-12890's description). Found by ``kgc check
    # --kafka-version 1.0.2``.
    heartbeat_awaiting_sync_is_rebalancing: bool = False
    # The generation of a JoinGroup error answer: 1.x ``GroupCoordinator.joinError`` sets
    # ``generationId = 0``; from 2.x on it is ``GroupCoordinator.NoGeneration`` (-1), as the Java
    # coordinator's. Found by ``kgc check --kafka-version 1.0.2`` (INVALID_SESSION_TIMEOUT).
    join_error_generation_id: int = -1
    # OffsetCommit with generation -1 to an Empty (or missing) group: 3.3+ ``validateOffsetCommit``
    # accepts it first ("the request comes from either the admin client or a consumer which does
    # not use the group management facility"); 3.0-3.2 ``validateOffsetCommit`` first sends any
    # commit naming a member id or a group.instance.id to ``validateCurrentMember`` (so an unknown
    # one is UNKNOWN_MEMBER_ID, even for a group the commit just created); before 3.0 only
    # ``isStaticMemberFenced`` comes first, which an Empty group never fences. Found by ``kgc lines
    # --sweep`` on 3.0.2 and 3.1.2.
    simple_commit_checked_first: bool = True
    # Which group requests refuse the empty group id: from 2.4 JoinGroup, SyncGroup, Heartbeat
    # and LeaveGroup (``GroupCoordinator.validateGroupStatus`` → ``isValidGroupId``; 4.x
    # ``GroupCoordinatorService``: ``isGroupIdNotEmpty``). On: JoinGroup alone (1.0.2 and 1.1.1
    # ``GroupCoordinator.handleJoinGroup`` → ``validGroupId``); the others look the group ``""``
    # up (``model/classic/empty_group.py`` rule 3).
    empty_group_id_checked_by_join_only: bool = False
    # The name DescribeGroups gives the state between join and sync: 1.0's ``GroupMetadata.scala``
    # calls it ``AwaitingSync``; from 1.1 on it is ``CompletingRebalance``. Found by ``kgc lines
    # --sweep`` on 1.0.2.
    completing_rebalance_name: str = "CompletingRebalance"
    # A JoinGroup of a known member replaces its session and rebalance timeouts from 3.3 on
    # (``GroupMetadata.updateMember(member, protocols, rebalanceTimeoutMs, sessionTimeoutMs, …)``,
    # as 4.x ``ClassicGroup.updateMember``); up to 3.2.3 ``updateMember`` takes only the protocols,
    # so the first join's timeouts stay for the member's life.
    rejoin_updates_timeouts: bool = True
    # 1.x ``GroupCoordinator.handleHeartbeat``, ``case CompletingRebalance``: only "is it a
    # member?" is asked, not the generation (REBALANCE_IN_PROGRESS for any generation).
    heartbeat_awaiting_sync_skips_generation: bool = False
    # 1.x ``GroupCoordinator.doCommitOffsets``: right after the simple-commit case, a group in
    # CompletingRebalance answers REBALANCE_IN_PROGRESS before the member and generation checks.
    commit_completing_rebalance_first: bool = False
    # A static member rejoining with an empty member id (a restarted consumer) in Stable: from 2.6
    # ``updateStaticMemberAndRebalance`` rebalances if the group's protocol would change
    # (``selectProtocol``); 2.4.1 and 2.5.1 answer at once with the current generation, unasked.
    static_rejoin_checks_protocol: bool = True
    # ... and in CompletingRebalance: 2.4.1 answers it at once like in Stable ("Static member joins
    # during CompletingRebalance stage will not trigger rebalance"); from 2.5 it rebalances. Found
    # by ``kgc lines --sweep`` on 2.4.1 (seed 5).
    static_rejoin_answered_in_completing: bool = False
    # JoinGroupResponse's member ``GroupInstanceId`` (v5+) is ``"ignorable": true`` from 3.3 on
    # (``clients/.../common/message/JoinGroupResponse.json`` in the 3.3.2 kafka-clients jar; not in
    # 3.2.3's or older): in 2.5 - 3.2 a leader answer at v0-4 that lists a static member cannot be
    # written ("Attempted to write a non-default groupInstanceId"): a rejoin answered at once gets
    # UNSUPPORTED_VERSION (generation -1, no member id), and a join phase that completes with such
    # a leader is the known bug ``join-answered-twice`` (``known_bugs.py``). Found by ``kgc lines
    # --sweep`` on 2.5.1
    # (seeds 3 and 5). 2.4.1's generated class has the same check, yet its broker answered such a
    # join with the member list, instance ids left out (seen in the sweep on 2.4.1, seed 5): its
    # responses are not written through that method.
    join_response_instance_ids_ignorable: bool = True
    # ``group.max.size`` (KIP-389, 2.2) before 2.6: ``GroupCoordinator.handleJoinGroup`` (2.2.2
    # l.136-140, 2.3.1 l.137-142, 2.4.1 l.162-167, 2.5.0 l.161-166, 2.5.1 l.161-166) refuses a
    # JoinGroup in any state only when (a) the member id is empty and ``group.size`` (members, not
    # KIP-394 pending ones) is at least the limit, or (b) the group is over the limit
    # (``groupIsOverCapacity``: ``group.size > groupMaxSize``) and the joiner is a member that is
    # not awaiting join. So new members are refused at once when the group is full even while it
    # rebalances, and a pending member's rejoin is never refused (the group can grow past the
    # limit). 2.6.0 replaces it with ``acceptJoiningMember`` (waiting members counted in
    # PreparingRebalance; KAFKA-9885, apache/kafka PR 8525, commit c5d13dcb6ca). 1.x has no limit
    # (group.max.size is unknown to it, so the model keeps the default). Found by ``kgc check
    # --kafka-version 2.5.1 --seed 1`` (a fourth new member refused in PreparingRebalance).
    max_size_limits_unknown_members_only: bool = False
    # A JoinGroup refused for ``group.max.size`` drops its group.instance.id's mapping: 2.3 - 2.7
    # ``GroupCoordinator.handleJoinGroup`` calls ``group.removeStaticMember(groupInstanceId)``
    # after ``group.remove(memberId)`` (2.5.1 l.165, 2.6.3 l.186, 2.7.2 l.186), so a static
    # member restarting (empty member id) into a full group is refused and stays a member that
    # its instance id no longer names: a commit naming the instance is UNKNOWN_MEMBER_ID, not
    # FENCED_INSTANCE_ID, and the next restart adds a second member. 2.8.0 drops the call
    # (apache/kafka PR 9952, commit 6d411620ddb), as the Java coordinator never had it. Found by
    # ``kgc check --kafka-version 2.5.1 --seed 1`` once the 2.5 size rule was modelled.
    max_size_refusal_forgets_instance: bool = False
    # OffsetDelete that deletes offsets of an Empty group which then holds none deletes the group
    # too: the Scala coordinator (2.4 - 3.9) runs ``GroupMetadataManager.cleanupGroupMetadata``
    # on it, which turns an Empty group without offsets Dead and drops it (3.9
    # ``GroupCoordinator.handleDeleteOffsets`` l.784-785 and l.798-800,
    # ``GroupMetadataManager.cleanupGroupMetadata`` l.871-873; 2.4.0 the same, l.568 and l.787).
    # 4.x ``OffsetMetadataManager.deleteOffsets`` writes offset tombstones only; the group stays
    # until the periodic cleanup (``GroupConfig.empty_group_may_vanish``). Rule 6 of
    # ``classic/delete.py``.
    offset_delete_drops_empty_group: bool = False
    # How ``computeSubscribedTopics`` reads a consumer-protocol member's subscription, which
    # failures it catches and which escape it and stall the join phase forever (the known bug
    # ``join-stalled-by-subscription``): ``classic/subscription.py`` names each reader with its
    # source. "struct" before 2.7 (1.x never reads one), "generated" in 2.7, "checked" from 2.8;
    # and in 4.2.2 and 4.4.0 ``deserializeConsumerProtocolSubscription`` wraps every
    # ``RuntimeException`` into a ``SchemaException`` (``subscription_failures_wrapped``; 4.3.1's
    # does not), so every failure is caught there.
    subscription_reader: str = "checked"
    subscription_failures_wrapped: bool = False
    # A TxnOffsetCommit to a group that does not exist creates it, Empty, whatever its generation
    # and before the transaction is verified: 3.9 ``GroupCoordinator.handleTxnCommitOffsets``
    # (``groupManager.getGroup(groupId).getOrElse(addGroup(new GroupMetadata(groupId, Empty,
    # time)))``), so a generation >= 0 then fails member validation (UNKNOWN_MEMBER_ID) in a group
    # that stays. 4.x creates a simple group only for a generation < 0, once the transaction is
    # verified, and answers any other generation ILLEGAL_GENERATION
    # (``OffsetMetadataManager.validateTransactionalOffsetCommit``). Rule T4 of
    # ``classic/transactions.py``.
    txn_commit_creates_group_first: bool = False

    # --- implementation switches: where another implementation differs from every Apache
    # release, named in its profile (``conformance/brokers/implementations.py`` ``SWITCHES``, with
    # its source and the trace that proves it); Kafka's behaviour is the default.
    #
    # A JoinGroup error answer names the request's member id (4.x ``GroupCoordinatorService.
    # joinGroup`` and ``classicGroupJoin…``: ``.setMemberId(memberId)``; 3.9 ``GroupCoordinator.
    # handleJoinGroup``: ``JoinGroupResult(memberId, error)``). Off: it is empty.
    join_error_names_member: bool = True
    # SyncGroup, Heartbeat and LeaveGroup for a group that does not exist: ``UNKNOWN_MEMBER_ID``
    # (4.x ``classicGroupSync``/``classicGroupHeartbeat``/``classicGroupLeave``); checked
    # against 4.3.1 by the suite. On: ``GROUP_ID_NOT_FOUND`` before anything else is checked,
    # with no member results. (OffsetFetch: ``fetch_unknown_group_not_found``.)
    unknown_group_not_found: bool = False
    # DescribeGroups' member ``ClientHost`` is the address alone as Java writes it, ``/127.0.0.1``
    # (``InetAddress.toString`` of ``RequestContext.clientAddress``). On: ``127.0.0.1:<port>``,
    # the member's connection's remote address with its port (Go's ``net.Addr.String``).
    client_host_with_port: bool = False
    # LeaveGroup v3+ naming an instance id and a member id the instance does not map to:
    # ``FENCED_INSTANCE_ID`` (``ClassicGroup.validateMember``, KIP-345). On: the member the
    # instance maps to leaves, and the answer names it.
    leave_by_instance_only: bool = False
    # A member whose JoinGroup or SyncGroup is parked is alive: its heartbeat timer does not expire
    # it (``ClassicGroup.hasSatisfiedHeartbeat``: ``isAwaitingJoin || isAwaitingSync``). Off: its
    # session timer runs on, and when it fires the member is removed with its parked request never
    # answered; with other members' timers due within ``TIE_MS`` in either order
    # (``ClassicGroupModel.tied``).
    parked_request_keeps_member_alive: bool = True
    # SyncGroup v5+ must name the protocol type and name: else INCONSISTENT_GROUP_PROTOCOL before
    # anything else (``KafkaApis.handleSyncGroupRequest``:
    # ``areMandatoryProtocolTypeAndNamePresent``, KIP-559). Off: a missing one is not compared.
    sync_requires_protocol: bool = True
    # OffsetCommit with a generation to a group with no members: the member is checked
    # (UNKNOWN_MEMBER_ID; ``ClassicGroup.validateOffsetCommit``), or a missing group answered as
    # the line says (``commit_missing_group_v9_group_id_not_found``). On: the instance id is
    # checked first (unknown: UNKNOWN_MEMBER_ID, another member's: FENCED_INSTANCE_ID), then such
    # a commit is ILLEGAL_GENERATION.
    commit_memberless_illegal_generation: bool = False
    # A JoinGroup that made a new group and is then refused (INCONSISTENT_GROUP_PROTOCOL) leaves
    # the group, Empty (``getOrMaybeCreateClassicGroup`` before the protocol check). Off: no group.
    failed_join_keeps_new_group: bool = True
    # Completing a join phase removes the dynamic members that did not rejoin; static ones stay
    # (KIP-345: ``completeClassicGroupJoin``; 3.9 ``onCompleteJoin``:
    # ``filterNot(isStaticMember)``). Off: static ones go too.
    join_completion_keeps_static_members: bool = True
    # A dynamic member's JoinGroup with an empty member id is answered MEMBER_ID_REQUIRED (the
    # KIP-394 handshake) from v4 only (``JoinGroupRequest.requiresKnownMemberId``:
    # ``apiVersion >= 4``); v0-3 add the member at once. Off: at every version.
    member_id_required_from_v4: bool = True
    # A MEMBER_ID_REQUIRED answer sets neither ProtocolType nor ProtocolName: both null
    # (``GroupMetadataManager.classicGroupJoinNewDynamicMember``: only ``setMemberId`` and
    # ``setErrorCode``). On: v7+ names the request's ProtocolType (the group's, whenever the
    # group has members: ``supports_protocols`` compared them) and ProtocolName ``""``.
    member_id_required_names_protocol: bool = False
    # A group a JoinGroup makes is created at generation 0, so its first completed join phase is
    # generation 1 (``ClassicGroup``'s constructor: ``generationId`` 0; 3.9 ``GroupMetadata``).
    # Off: it is created at generation 1, and its first join phase completes generation 2.
    new_group_at_generation_0: bool = True
    # A new group's first join phase waits ``group.initial.rebalance.delay.ms`` and is extended by
    # that again while new members join, up to the rebalance timeout
    # (``GroupMetadataManager.tryCompleteInitialRebalanceElseSchedule``; 3.9
    # ``InitialDelayedJoin.onComplete``). Off: one fixed delay, never extended.
    initial_delay_extended: bool = True
    # OffsetFetch v5+ answers each partition's committed leader epoch, -1 when nothing is
    # committed or the commit carried none (``OffsetMetadataManager.fetchOffsets``; 3.9
    # ``GroupMetadataManager.getOffsets``). Off: the partition's current leader epoch, committed
    # or not: 0 for a partition whose leader never moved (kgc moves none on a broker it launched).
    fetch_answers_committed_leader_epoch: bool = True
    # A dynamic member's JoinGroup with an empty member id is answered MEMBER_ID_REQUIRED with a
    # new id (the KIP-394 handshake; ``GroupMetadataManager.classicGroupJoinNewDynamicMember``,
    # 3.9 ``GroupCoordinator.doNewMemberJoinGroup``), at the versions
    # ``member_id_required_from_v4`` says. Off: never; the member is added at once, at every
    # version.
    member_id_required_handshake: bool = True
    # A group's protocol type is set when its first member is added (``ClassicGroup.add``:
    # ``if (members.isEmpty()) protocolType = ...``; 3.9 ``GroupMetadata.add``), so a group only a
    # MEMBER_ID_REQUIRED answer made is described with none. On: the first JoinGroup naming one
    # whose protocols the group supports sets it, whatever it is then answered (the handshake, an
    # unknown member or instance id).
    any_join_sets_protocol_type: bool = False
    # A join phase is complete only when every member rejoined and no KIP-394 pending member (one
    # answered MEMBER_ID_REQUIRED) is left (``ClassicGroup.hasAllMembersJoined``:
    # ``pendingJoinMembers.isEmpty()``). Off: pending members are not waited for.
    join_waits_for_pending_members: bool = True
    # A LeaveGroup that drops only a KIP-394 pending member still starts a rebalance of a Stable
    # or CompletingRebalance group (4.x ``classicGroupLeaveToClassicGroup``: every member it
    # removed, pending ones included, then ``maybePrepareRebalanceOrCompleteJoin``; 4.3.1 went
    # PreparingRebalance so). Off: the pending member is dropped and nothing else happens.
    pending_leave_rebalances: bool = True
    # A static member that rejoins under a new id into a Stable group with its old protocols is
    # answered at once; below JoinGroup v9 the answer names the *old* leader id and no members,
    # so a replaced leader does not assign again (``GroupMetadataManager``'s static-member
    # replacement: ``supportsSkippingAssignment`` else ``setLeader(currentLeader)``); from v9 a
    # leader gets the member list with ``SkipAssignment`` (KIP-814). Off: the KIP-814 answer at
    # every version (the field itself exists from v9 only).
    static_rejoin_old_leader_below_v9: bool = True
    # JoinGroup v0 carries no rebalance timeout: Kafka takes the member's session timeout for it
    # (``JoinGroupRequest.maybeOverrideRebalanceTimeout``, clients 4.3.1 and before: "Version 0 has
    # no rebalance timeout, so we use the session timeout").
    # Off: a v0 member's rebalance timeout is 0, so a join phase among v0 members ends at once,
    # without the members that have not rejoined.
    v0_join_rebalance_timeout_is_session: bool = True
    # A group has one leader from its first member on: a member added to a group without one
    # becomes it (``ClassicGroup.add``), a removed leader is replaced by a remaining member
    # (``ClassicGroup.remove``), and a join phase's completion keeps it if it rejoined, else
    # elects one rejoined member (``maybeElectNewJoinedLeader``), the only one answered with the
    # member list (3.9 ``GroupMetadata.add``/``remove``, ``onCompleteJoin``). Off: the leader is
    # named only when a join phase completes, and a removed one stays named; when the named one is
    # not among the members then (it left, or none was ever named), every member is answered as
    # the leader, each with the member list, and the group's leader is whichever was answered
    # last: any of them.
    join_leader_elected_once: bool = True
    # OffsetFetch for a group that does not exist: the offsets asked for, none committed
    # (``OffsetMetadataManager.fetchOffsets``); checked against 4.3.1 by the suite. On:
    # ``GROUP_ID_NOT_FOUND`` (v2+, which carry a group-level error) with no partitions; v0-1,
    # which have no such field, list no partition at all.
    fetch_unknown_group_not_found: bool = False
    # An OffsetCommit naming a group that does not exist: a simple commit (generation -1) makes
    # the group, Empty, and stores its offsets; one with a generation is refused
    # ``ILLEGAL_GENERATION`` (4.x ``OffsetMetadataManager.validateOffsetCommit``, 3.9
    # ``GroupCoordinator.handleCommitOffsets``). Off: the offsets are stored whatever the
    # generation and member, and no group is made (a later request finds none).
    commit_makes_group: bool = True
    # SyncGroup, Heartbeat and OffsetCommit naming an instance id: checked against the member the
    # instance maps to, another member id refused ``FENCED_INSTANCE_ID`` (KIP-345,
    # ``ClassicGroup.validateMember``). Off: the instance id is not looked at; the member id
    # alone is (a static member's own id passes, any other is ``UNKNOWN_MEMBER_ID``).
    instance_id_fenced: bool = True
    # An OffsetCommit that names no member (generation -1, no member id: a *simple* commit, from
    # the admin client or a consumer without group management) to an Empty group that exists is
    # stored (4.x ``OffsetMetadataManager.validateOffsetCommit``: ``generationId < 0 &&
    # group.isInState(EMPTY)``; 3.9 ``GroupCoordinator.handleCommitOffsets``). Off: a group
    # that exists takes commits from its members alone: any other commit is UNKNOWN_MEMBER_ID,
    # whatever its generation and the group's state, before anything else is checked.
    simple_commit_to_existing_group: bool = True
    # Timers due less than this many ms apart fire in either order. 0: Kafka's order (4.x runs
    # every timer of the group coordinator on one timer, in deadline order; 3.9's two timer
    # threads tie within ``TIE_MS``: ``one_coordinator_timer``). An implementation whose timers
    # each run on their own and then queue for one loop (kfake's Go timers) may run a later one
    # first: the value is the widest inversion its evidence shows, rounded up
    # (``ClassicGroupModel.tied``).
    timers_unordered_within_ms: int = 0

    def api_range(self, api: str) -> ApiRange:
        for r in self.api_ranges:
            if r.api == api:
                return r
        if api in NEWEST_VERSION_SINCE:
            return _range_by_release(api, self.kafka_version)
        raise KeyError(api)


# The Profile fields an implementation's profile may switch (the last ones of the class).
IMPLEMENTATION_SWITCHES = (
    "join_error_names_member",
    "unknown_group_not_found",
    "client_host_with_port",
    "leave_by_instance_only",
    "parked_request_keeps_member_alive",
    "sync_requires_protocol",
    "commit_memberless_illegal_generation",
    "failed_join_keeps_new_group",
    "join_completion_keeps_static_members",
    "new_group_at_generation_0",
    "initial_delay_extended",
    "fetch_answers_committed_leader_epoch",
    "member_id_required_handshake",
    "member_id_required_from_v4",
    "member_id_required_names_protocol",
    "any_join_sets_protocol_type",
    "join_waits_for_pending_members",
    "pending_leave_rebalances",
    "static_rejoin_old_leader_below_v9",
    "v0_join_rebalance_timeout_is_session",
    "join_leader_elected_once",
    "fetch_unknown_group_not_found",
    "commit_makes_group",
    "instance_id_fenced",
    "timers_unordered_within_ms",
    "simple_commit_to_existing_group",
)


# Request types whose version range follows the release alone (every line's oldest version is
# v0): the first release line that answers each newest version (a table that starts with v0 also
# says no older release has the request). ListGroups
# (``ListGroupsRequest.json``: v2 in 2.0, v3 flexible in 2.4, v4 StatesFilter in 2.6 (KIP-518), v5
# TypesFilter in 3.8 (KIP-848); v0-1 in 1.x's ``ApiKeys.LIST_GROUPS``; 4.3.1's spec still "0-5").
NEWEST_VERSION_SINCE: dict[str, tuple[tuple[tuple[int, int], int], ...]] = {
    "ListGroups": (((1, 0), 1), ((2, 0), 2), ((2, 4), 3), ((2, 6), 4), ((3, 8), 5)),
    # ``DeleteGroupsRequest.json``: v0 in 1.1 (KIP-229; 1.1.0's ``DeleteGroupsRequest.java``), v1
    # in 2.0 (throttling, KIP-219), v2 flexible in 2.4; 4.3.1's spec still "0-2"
    "DeleteGroups": (((1, 1), 0), ((2, 0), 1), ((2, 4), 2)),
    # ``OffsetDeleteRequest.json``: v0 only, from 2.4 (KIP-496); 4.3.1's spec still "0"
    "OffsetDelete": (((2, 4), 0),),
}


def _range_by_release(api: str, kafka_version: str) -> ApiRange:
    release = release_of(kafka_version)
    table = NEWEST_VERSION_SINCE[api]
    offered = [v for since, v in table if since <= release]
    if not offered and table[0][1] == 0:  # a table that starts at v0 names the API's first release
        raise KeyError(f"{api} is not a request of Kafka {kafka_version}")
    newest = max(offered, default=0)
    return ApiRange(api=api, min_version=0, max_version=newest)


def _ranges(**spec: tuple[int, int]) -> tuple[ApiRange, ...]:
    return tuple(ApiRange(api=k, min_version=a, max_version=b) for k, (a, b) in spec.items())


KAFKA_4_X = Profile(
    name="kafka-4.3",
    kafka_version="4.3.1",
    coordinator="group-coordinator (Java)",
    # 4.3.1 *Request.json: OffsetCommit v0-1 and OffsetFetch v0 removed in 4.0 (KIP-896).
    api_ranges=_ranges(
        JoinGroup=(0, 9),
        SyncGroup=(0, 5),
        Heartbeat=(0, 4),
        LeaveGroup=(0, 5),
        OffsetCommit=(2, 10),
        OffsetFetch=(1, 10),
        DescribeGroups=(0, 6),
        FindCoordinator=(0, 6),
        # 4.3.1 *Request.json (InitProducerId v6, 2PC, is "latestVersionUnstable": not offered)
        InitProducerId=(0, 5),
        AddOffsetsToTxn=(0, 4),
        TxnOffsetCommit=(0, 5),
        EndTxn=(0, 5),
    ),
    sync_in_stable_reschedules_heartbeat=False,
    new_member_added_only_in_generation_0=False,
    expiry_completes_initial_join=True,
    describe_assignment_outside_stable=True,
    describe_missing_group_error_v6=True,
    commit_missing_group_v9_group_id_not_found=True,
    max_size_rejection_checks_join=False,
    sync_protocol_check_without_group_protocol=False,
    leave_rebalances_per_member=False,
    sync_load_in_progress_as_rebalance=False,
    one_coordinator_timer=True,
    new_group_writes_empty_record=True,
)

KAFKA_3_9 = Profile(
    name="kafka-3.9",
    kafka_version="3.9.2",
    coordinator="core GroupCoordinator (Scala)",
    # 3.9.2 *Request.json. OffsetCommit/OffsetFetch v0 store offsets in ZooKeeper
    # (KafkaApis.commitOffsetsToZookeeper) and fail in KRaft mode: outside this model.
    api_ranges=_ranges(
        JoinGroup=(0, 9),
        SyncGroup=(0, 5),
        Heartbeat=(0, 4),
        LeaveGroup=(0, 5),
        OffsetCommit=(1, 9),
        OffsetFetch=(1, 9),
        DescribeGroups=(0, 5),
        FindCoordinator=(0, 6),
        # 3.9.2 *Request.json: no transaction version 2 (TxnOffsetCommit v5, EndTxn v5)
        InitProducerId=(0, 5),
        AddOffsetsToTxn=(0, 4),
        TxnOffsetCommit=(0, 4),
        EndTxn=(0, 4),
    ),
    sync_in_stable_reschedules_heartbeat=True,
    new_member_added_only_in_generation_0=True,
    expiry_completes_initial_join=False,
    describe_assignment_outside_stable=False,
    describe_missing_group_error_v6=False,
    commit_missing_group_v9_group_id_not_found=False,
    max_size_rejection_checks_join=True,
    sync_protocol_check_without_group_protocol=True,
    leave_rebalances_per_member=True,
    sync_load_in_progress_as_rebalance=True,
    one_coordinator_timer=False,
    new_group_writes_empty_record=False,
    offset_delete_drops_empty_group=True,
    txn_commit_creates_group_first=True,
)

_RELEASE = re.compile(r"(\d+)\.(\d+)(?:\.\d+)*(?:-[0-9A-Za-z.]+)?")


def release_of(kafka_version: str) -> tuple[int, int]:
    """``(major, minor)`` of an Apache Kafka release string such as ``"4.3.1"``, ``"3.9.2"`` or
    ``"4.1.0-SNAPSHOT"``. Raises ``ValueError`` naming the string for anything else (``"v23.2.1"``
    is another product's version, not a Kafka release)."""
    match = _RELEASE.fullmatch(kafka_version) if isinstance(kafka_version, str) else None
    if match is None:
        raise ValueError(
            f"{kafka_version!r} is not an Apache Kafka release number such as 4.3.1 or 3.9.2"
        )
    return int(match.group(1)), int(match.group(2))


# ---------------------------------------------------------------------------------------------
# One profile per release line. A line's profile follows its latest patch release; its request
# versions are those its broker offers (ApiVersions of that patch, measured 2026-11-25 in the mode
# kgc runs it: ZooKeeper before 3.3, KRaft after), less OffsetCommit/OffsetFetch v0, which store
# offsets in ZooKeeper (``KafkaApis.handleOffsetCommitRequest``: ``header.apiVersion == 0``) and
# are outside this model. Each behaviour switch that differs from the neighbouring line's is
# cited at the line that changes it (docs/release-lines.md has the table).

_SCALA_LINES: dict[str, tuple[str, dict[str, tuple[int, int]]]] = {
    # line: (latest patch, {api: (min, max)})
    "1.0": ("1.0.2", dict(JoinGroup=(0, 2), SyncGroup=(0, 1), Heartbeat=(0, 1), LeaveGroup=(0, 1),
                          OffsetCommit=(1, 3), OffsetFetch=(1, 3), DescribeGroups=(0, 1),
                          FindCoordinator=(0, 1))),
    "1.1": ("1.1.1", dict(JoinGroup=(0, 2), SyncGroup=(0, 1), Heartbeat=(0, 1), LeaveGroup=(0, 1),
                          OffsetCommit=(1, 3), OffsetFetch=(1, 3), DescribeGroups=(0, 1),
                          FindCoordinator=(0, 1))),
    "2.4": ("2.4.1", dict(JoinGroup=(0, 6), SyncGroup=(0, 4), Heartbeat=(0, 4), LeaveGroup=(0, 4),
                          OffsetCommit=(1, 8), OffsetFetch=(1, 6), DescribeGroups=(0, 5),
                          FindCoordinator=(0, 3))),
    **{
        line: (latest, dict(JoinGroup=(0, 7), SyncGroup=(0, 5), Heartbeat=(0, 4),
                            LeaveGroup=(0, 4), OffsetCommit=(1, 8), OffsetFetch=(1, 7),
                            DescribeGroups=(0, 5), FindCoordinator=(0, 3)))
        for line, latest in (("2.5", "2.5.1"), ("2.6", "2.6.3"), ("2.7", "2.7.2"),
                             ("2.8", "2.8.2"))
    },
    **{
        line: (latest, dict(JoinGroup=(0, 7), SyncGroup=(0, 5), Heartbeat=(0, 4),
                            LeaveGroup=(0, 4), OffsetCommit=(1, 8), OffsetFetch=(1, 8),
                            DescribeGroups=(0, 5), FindCoordinator=(0, 4)))
        for line, latest in (("3.0", "3.0.2"), ("3.1", "3.1.2"))
    },
    **{
        line: (latest, dict(JoinGroup=(0, 9), SyncGroup=(0, 5), Heartbeat=(0, 4),
                            LeaveGroup=(0, 5), OffsetCommit=(1, 8), OffsetFetch=(1, 8),
                            DescribeGroups=(0, 5), FindCoordinator=(0, 4)))
        for line, latest in (("3.2", "3.2.3"), ("3.3", "3.3.2"), ("3.4", "3.4.1"),
                             ("3.5", "3.5.2"), ("3.6", "3.6.2"))
    },
    "3.7": ("3.7.2", dict(JoinGroup=(0, 9), SyncGroup=(0, 5), Heartbeat=(0, 4), LeaveGroup=(0, 5),
                          OffsetCommit=(1, 9), OffsetFetch=(1, 9), DescribeGroups=(0, 5),
                          FindCoordinator=(0, 4))),
    "3.8": ("3.8.1", dict(JoinGroup=(0, 9), SyncGroup=(0, 5), Heartbeat=(0, 4), LeaveGroup=(0, 5),
                          OffsetCommit=(1, 9), OffsetFetch=(1, 9), DescribeGroups=(0, 5),
                          FindCoordinator=(0, 5))),
}  # fmt: skip

# Switches of each Scala line that differ from 3.9's (each is cited at its field of Profile).
_NO_SYNC_DEADLINE: dict[str, Any] = {"sync_deadline": False}
_BEFORE_3_3: dict[str, Any] = {
    "rejoin_updates_timeouts": False,
    "join_response_instance_ids_ignorable": False,
}
_BEFORE_3_0: dict[str, Any] = {**_BEFORE_3_3, "unknown_instance_id_rejected": False}
_BEFORE_2_6: dict[str, Any] = {
    **_NO_SYNC_DEADLINE,
    **_BEFORE_3_0,
    "subscription_reader": "struct",
    "heartbeat_awaiting_sync_is_rebalancing": True,
    "max_size_limits_unknown_members_only": True,
}
# 2.3 - 2.7 (static membership arrived in 2.3; 1.x has none, so it is not set there)
_BEFORE_2_8: dict[str, Any] = {"max_size_refusal_forgets_instance": True}
_1_X: dict[str, Any] = {
    **_BEFORE_2_6,
    "subscription_reader": "struct",
    "join_error_generation_id": 0,
    "empty_group_id_checked_by_join_only": True,
    "heartbeat_awaiting_sync_skips_generation": True,
    "commit_completing_rebalance_first": True,
}
_SCALA_SWITCHES: dict[str, dict[str, Any]] = {
    "1.0": {**_1_X, "completing_rebalance_name": "AwaitingSync"},
    "1.1": _1_X,
    "2.4": {
        **_BEFORE_2_6,
        **_BEFORE_2_8,
        "join_response_instance_ids_ignorable": True,
        "new_member_keeps_no_timer_after_first_join": True,
        "static_rejoin_checks_protocol": False,
        "static_rejoin_answered_in_completing": True,
    },
    "2.5": {**_BEFORE_2_6, **_BEFORE_2_8, "static_rejoin_checks_protocol": False},
    "2.6": {**_NO_SYNC_DEADLINE, **_BEFORE_3_0, **_BEFORE_2_8, "subscription_reader": "struct"},
    "2.7": {**_NO_SYNC_DEADLINE, **_BEFORE_3_0, **_BEFORE_2_8, "subscription_reader": "generated"},
    "2.8": _BEFORE_3_0,
    "3.0": {**_BEFORE_3_3, "simple_commit_checked_first": False},
    "3.1": {**_BEFORE_3_3, "simple_commit_checked_first": False},
    "3.2": {**_BEFORE_3_3, "simple_commit_checked_first": False},
}

_JAVA_LINES: dict[str, tuple[str, dict[str, tuple[int, int]]]] = {
    line: (latest, dict(JoinGroup=(0, 9), SyncGroup=(0, 5), Heartbeat=(0, 4), LeaveGroup=(0, 5),
                        OffsetCommit=(2, top), OffsetFetch=(1, top), DescribeGroups=(0, 6),
                        FindCoordinator=(0, 6)))
    for line, latest, top in (("4.0", "4.0.2", 9), ("4.1", "4.1.2", 9), ("4.2", "4.2.2", 10),
                              ("4.4", "4.4.0", 10))
}  # fmt: skip
_JAVA_SWITCHES: dict[str, dict[str, Any]] = {
    "4.2": {"subscription_failures_wrapped": True},
    "4.4": {"subscription_failures_wrapped": True},
}


def _line_profile(
    base: Profile,
    line: str,
    latest: str,
    api: dict[str, tuple[int, int]],
    switches: dict[str, Any],
) -> Profile:
    named = replace(base, name=f"kafka-{line}", kafka_version=latest, api_ranges=_ranges(**api))
    return replace(named, **switches) if switches else named


_ALL_LINES: tuple[Profile, ...] = (
    *(
        _line_profile(KAFKA_3_9, line, latest, api, _SCALA_SWITCHES.get(line, {}))
        for line, (latest, api) in _SCALA_LINES.items()
    ),
    KAFKA_3_9,
    *(
        _line_profile(KAFKA_4_X, line, latest, api, _JAVA_SWITCHES.get(line, {}))
        for line, (latest, api) in _JAVA_LINES.items()
        if release_of(latest) < release_of(KAFKA_4_X.kafka_version)
    ),
    KAFKA_4_X,
    *(
        _line_profile(KAFKA_4_X, line, latest, api, _JAVA_SWITCHES.get(line, {}))
        for line, (latest, api) in _JAVA_LINES.items()
        if release_of(latest) > release_of(KAFKA_4_X.kafka_version)
    ),
)

PROFILE_NAMES: tuple[str, ...] = tuple(p.name for p in _ALL_LINES)
"""The profiles, oldest line first."""

LEGACY_PROFILE_NAMES: dict[str, str] = {"kafka-4.x": KAFKA_4_X.name}
"""Names older traces carry: ``kafka-4.x`` was the 4.3 line's profile before there was one
profile per line."""

PROFILES: dict[str, Profile] = {p.name: p for p in _ALL_LINES} | {
    old: next(p for p in _ALL_LINES if p.name == new) for old, new in LEGACY_PROFILE_NAMES.items()
}
"""Every profile by name (legacy names included; :data:`PROFILE_NAMES` lists each once)."""


def profile_for_version(kafka_version: str) -> Profile:
    """The profile of the release line of ``kafka_version`` (``"3.6.0"`` -> ``kafka-3.6``). A
    release newer than the newest line is judged by the newest line's rules."""
    major, minor = release_of(kafka_version)
    by_line = {p.name: p for p in _ALL_LINES}
    found = by_line.get(f"kafka-{major}.{minor}")
    if found is not None:
        return found
    newest = _ALL_LINES[-1]
    if (major, minor) > release_of(newest.kafka_version):
        return newest
    raise ValueError(
        f"no model profile for Kafka {kafka_version}; profiles exist for the lines "
        f"{', '.join(p.name.removeprefix('kafka-') for p in _ALL_LINES)}"
    )


# ---------------------------------------------------------------------------------------------
# The KIP-848 consumer group's rules per release line (4.0 - 4.4). The consumer protocol has no
# ``Profile``: its model (``ConsumerGroupModel``) takes the newest line's rules by default, and an
# older line is those with the ``ConsumerGroupConfig`` switches below. ``engine/registry.py`` sets
# them from the line a run (or a trace's manifest) is judged by.


# The first release line whose rules kgc models for each protocol beside the classic one:
# KIP-848's consumer protocol (and the online migration to it) is generally available from 4.0
# (3.7-3.9 had a preview), KIP-932's share groups from 4.2 (4.0 and 4.1 had an early access)
FIRST_LINE: dict[str, tuple[int, int]] = {"consumer": (4, 0), "migration": (4, 0), "share": (4, 2)}


def consumer_line_rules(release: tuple[int, int] | None) -> dict[str, Any]:
    """The ``ConsumerGroupConfig`` switches (``model/consumer/group.py``) that hold a 4.x
    ``release`` (``(major, minor)``) to its own rules (the defaults are the newest line's, and
    None's). Each was read in that line's kafka-group-coordinator jar (sources; 4.4.0's bytecode,
    no sources jar being served) and shown by the suite on a broker of the older line
    (``docs/release-lines.md``, "The consumer protocol's lines")."""
    if release is None:
        return {}
    rules: dict[str, Any] = {}
    if release < (4, 4):
        # a full group checks the member id alone (``throwIfConsumerGroupIsFull``), fencing the
        # last members leaves the assignment epoch behind (``consumerGroupFenceMembers``), and a
        # change of the preferred assignor bumps nothing (``consumerGroupHeartbeat``)
        rules["full_group_spares_static"] = False
        rules["empty_group_assignment_catches_up"] = False
        rules["assignor_change_bumps"] = False
    if release < (4, 3):
        # a new group starts at epoch 0, not 1 (``ModernGroup``'s constructor in the 4.0.2,
        # 4.1.2 and 4.2.1 jars), and any heartbeat moves it off 0 (``bumpGroupEpoch =
        # groupEpoch == 0 || …``; found by the suite on 4.2.1: a join by regex alone answered
        # epoch 1)
        rules["initial_group_epoch"] = 0
        rules["epoch_zero_group_bumps"] = True
        # ConsumerGroupDescribe shows partitions pending revocation from 4.3.0
        rules["describe_includes_pending_revocation"] = False
        # an OffsetCommit at an older epoch is checked per partition from 4.3.0 (KIP-1251,
        # ``ConsumerGroup.validateOffsetCommit``); before, the member's epoch exactly
        rules["commit_partition_epochs"] = False
    if release < (4, 2):
        # epoch 0 from a known member is a rejoin from 4.2.0, checked like a lower epoch before
        # (``throwIfConsumerGroupMemberEpochIsInvalid``); a subscription change reconciles at
        # once from 4.2.0 (``consumerGroupHeartbeat``'s ``maybeReconcile``)
        rules["epoch_zero_rejoins"] = False
        rules["subscription_change_reconciles"] = False
    if release < (4, 1):
        # dropping a regex bumps nothing, and no refresh interval (``maybeUpdate
        # RegularExpressions`` in the 4.0.2 jar)
        rules["regex_drop_bumps"] = False
        rules["regex_refresh_interval_ms"] = None
    return rules


def share_line_rules(release: tuple[int, int] | None) -> dict[str, Any]:
    """The ``ShareGroupConfig`` switches (``model/share/group.py``) that hold a ``release``
    (``(major, minor)``) to its own rules (the defaults are the newest line's, and None's). 4.3.1
    was read in its sources, 4.4.0 and 4.2.2 in their jars' bytecode (``docs/share-groups.md`` §7
    and §8); 4.1 and 4.0 are refused: 4.1 turns share groups off by default (``share.version``
    0) and 4.0 speaks only their preview (v0)."""
    if release is None:
        return {}
    if release < (4, 2):
        raise NotModelled(
            f"share groups of Kafka {release[0]}.{release[1]} are not modelled (4.2, 4.3 and 4.4 "
            "were read; 4.1 has them off by default and 4.0 only as a preview)"
        )
    rules: dict[str, Any] = {}
    if release < (4, 4):
        # fencing the last member leaves the assignment epoch behind the group epoch
        # (``shareGroupFenceMember``; 4.4.0 writes a target-assignment metadata record at the new
        # group epoch)
        rules["empty_group_assignment_catches_up"] = False
    if release < (4, 3):
        # the 4.2.2 kafka-group-coordinator jar (bytecode): a new group at epoch 0, not 1
        # (``ModernGroup``'s constructor sets neither ``groupEpoch`` nor
        # ``targetAssignmentEpoch``); ``initializedAssignmentPending`` asked whatever the
        # assignment epoch (``shareGroupHeartbeat``: ``hasMemberSubscriptionChanged(...) ||
        # initializedAssignmentPending(group)``); no ``group.share.assignment.interval.ms``
        # (``updateTargetAssignment`` runs whenever the group epoch is ahead; the key is in
        # neither ``GroupCoordinatorConfig`` nor ``GroupConfig``)
        rules["initial_group_epoch"] = 0
        rules["initialized_pending_while_behind"] = True
        rules["has_assignment_interval"] = False
    return rules


# The ``ShareGroupConfig`` fields an implementation's profile may switch: the implementation
# switches (Kafka's behaviour their default), and the release-line rules of
# :func:`share_line_rules` (every one of them set for the oldest line modelled), which an
# implementation may follow as that line does (kfake's new share group at epoch 0, as 4.2's).
SHARE_IMPLEMENTATION_SWITCHES = (
    "initialized_at_subscription",
    "describe_shows_target_assignment",
    "group_answers_carry_interval",
    "fence_computes_target",
    "last_member_gone_deletes_group",
    "assignment_sent_on_epoch_change",
    "blank_member_id_accepted",
    "leave_answer_names_no_member",
    "error_answers_echo_epoch",
    "assignment_in_every_answer",
    "heartbeat_makes_group",
    "unknown_member_leave_answered",
    "rejoin_bumps_epoch",
    "recalculation_moves_every_member",
    "assignor_ranges_in_join_order",
    "assignor_sticky_in_id_order",
    "heartbeat_unvalidated",
    "previous_epoch_heartbeat_changes_nothing",
)
SHARE_SWITCHES = frozenset(share_line_rules((4, 2))) | frozenset(SHARE_IMPLEMENTATION_SWITCHES)


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupConfig:
    """Broker settings that shape one group's behaviour, plus what the model assumes about the
    world around the group. Defaults are Kafka's (``GroupCoordinatorConfig.java``), except where a
    test broker usually differs (noted)."""

    profile: Profile = KAFKA_4_X
    group_id: str = "kgc-group"
    group_min_session_timeout_ms: int = 6000
    group_max_session_timeout_ms: int = 1_800_000
    group_initial_rebalance_delay_ms: int = 3000
    group_max_size: int = INT32_MAX
    offsets_topic_num_partitions: int = 50
    # offset.metadata.max.bytes; longer commit metadata is OFFSET_METADATA_TOO_LARGE per partition
    offset_metadata_max_bytes: int = 4096
    # offsets.commit.timeout.ms: how long a 4.x write operation waits for its commit before it is
    # answered COORDINATOR_NOT_AVAILABLE (GroupCoordinatorConfig, default 5000; cluster_group.py
    # rule 7)
    offsets_commit_timeout_ms: int = 5000
    # KIP-394 / ClassicGroupMember: a new member's JoinGroup is parked at most this long.
    # 4.x GroupCoordinatorConfig.CLASSIC_GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS, 3.9
    # GroupCoordinator.NewMemberJoinTimeoutMs: 5 minutes, not configurable.
    new_member_join_timeout_ms: int = 300_000
    # Topics that exist, as (name, partition count). None: every committed partition exists (the
    # conformance layer creates the topics a test uses). Others get UNKNOWN_TOPIC_OR_PARTITION.
    topics: tuple[tuple[str, int], ...] | None = None
    # Coordinator discovery (coordinator.py): the leader node of each __consumer_offsets partition,
    # if known. Else FindCoordinator may name any of ``node_ids``; with neither, node_id is -1 and
    # the conformance layer must normalise it.
    offsets_partition_leaders: tuple[int, ...] | None = None
    node_ids: tuple[int, ...] = ()
    # Two requests sent less than this apart may be processed in either order (the order of
    # concurrent requests is not observable from the client). 0 disables reordering.
    reorder_window_ms: float = 0.0
    # An Empty group with no committed offsets is deleted by the coordinator's periodic cleanup
    # (4.x ``GroupCoordinatorShard.cleanupGroupMetadata``; 3.9 ``GroupMetadataManager.
    # cleanupGroupMetadata``: ``group.is(Empty) && !group.hasOffsets``), every
    # ``offsets.retention.check.interval.ms`` (10 minutes by default) at a phase a client cannot
    # know: at any moment it may be gone, and a group made anew starts at generation 0 again
    # (seen on 4.3.1: a join after every member expired answered generation 1). Off by default so
    # that a model test sees one group; on in a run against a broker (``engine/registry.py``)
    # unless kgc started it with a cleanup interval no session lasts (``NO_CLEANUP_MS``).
    empty_group_may_vanish: bool = False
    # ``offsets.retention.check.interval.ms`` (``GroupCoordinatorConfig``, default 10 minutes):
    # the cleanup runs on a fixed period (4.x: every interval after a partition loads,
    # ``GroupCoordinatorShard.scheduleGroupMetadataExpiration``; 3.9 and older: at start-up and
    # then every interval, ``GroupMetadataManager.startup``), so a group vanishes at most once in
    # this long (``ClassicGroupModel.vanished``).
    cleanup_interval_ms: int = 600_000
    # The client address the broker records for every simulated client's connection, as Kafka
    # writes it (``InetAddress.toString`` of the connection's address: ``/127.0.0.1``; 4.x
    # ``RequestContext.clientAddress``, 3.9 and older ``request.session.clientAddress``), shown
    # as DescribeGroups' ``ClientHost``. The wire reads it off its own connection
    # (``brokerconfig.facts``: ``client_host``).
    client_host: str = "/127.0.0.1"
    # The run's principal holds permissions on the run's own groups and topics only (a prefixed
    # ACL, as ``kgc-user`` on a secured broker kgc starts): a request naming a group outside the
    # prefix, the empty group id among them, is refused ``GROUP_AUTHORIZATION_FAILED`` before any
    # check of the id (``classic/authorization.py`` A0). False: a principal the authorizer lets
    # through (no authorizer, a super user), or one the run knows nothing about.
    foreign_group_refused: bool = False

    def __post_init__(self) -> None:
        if self.group_min_session_timeout_ms > self.group_max_session_timeout_ms:
            raise ValueError(
                "group_min_session_timeout_ms must be <= group_max_session_timeout_ms "
                f"(got {self.group_min_session_timeout_ms} > {self.group_max_session_timeout_ms})"
            )
        if self.offsets_topic_num_partitions < 1:
            raise ValueError("offsets_topic_num_partitions must be >= 1")
        if self.group_max_size < 1:
            raise ValueError("group_max_size must be >= 1")
        if self.offsets_commit_timeout_ms < 1:
            raise ValueError("offsets_commit_timeout_ms must be >= 1")
        if (
            self.offsets_partition_leaders is not None
            and len(self.offsets_partition_leaders) != self.offsets_topic_num_partitions
        ):
            raise ValueError(
                "offsets_partition_leaders needs one leader per __consumer_offsets partition "
                f"({self.offsets_topic_num_partitions}), got {len(self.offsets_partition_leaders)}"
            )


_CONFIG_FIELDS = (
    "group_id",
    "group_min_session_timeout_ms",
    "group_max_session_timeout_ms",
    "group_initial_rebalance_delay_ms",
    "group_max_size",
    "offsets_topic_num_partitions",
    "offset_metadata_max_bytes",
    "new_member_join_timeout_ms",
    "topics",
    "offsets_partition_leaders",
    "node_ids",
    "reorder_window_ms",
    "client_host",
    "foreign_group_refused",
)


def config_to_json(config: GroupConfig) -> dict[str, object]:
    """A trace manifest's model section: the profile by name plus every setting."""
    out: dict[str, object] = {"profile": config.profile.name}
    for name in _CONFIG_FIELDS:
        value = getattr(config, name)
        if name == "foreign_group_refused" and not value:
            continue  # written only when set: manifests of runs without an authorizer unchanged
        if isinstance(value, tuple):
            value = [list(v) if isinstance(v, tuple) else v for v in value]
        out[name] = value
    return out


def config_from_json(obj: object) -> GroupConfig:
    """Inverse of :func:`config_to_json`; raises ``ValueError`` naming the bad field."""
    if not isinstance(obj, dict):
        raise ValueError(f"model config: expected a JSON object, got {type(obj).__name__}")
    unknown = set(obj) - {"profile", *_CONFIG_FIELDS}
    if unknown:
        raise ValueError(f"model config: unknown field(s) {sorted(unknown)}")
    name = obj.get("profile", KAFKA_4_X.name)
    if name not in PROFILES:
        raise ValueError(
            f"model config: field 'profile': unknown profile {name!r}; use one of "
            f"{', '.join(PROFILE_NAMES)}"
        )
    kwargs: dict[str, object] = {}
    for key in _CONFIG_FIELDS:
        if key not in obj:
            continue
        value = obj[key]
        if key == "topics" and value is not None:
            value = tuple((str(t[0]), int(t[1])) for t in value)
        elif key in ("offsets_partition_leaders", "node_ids") and value is not None:
            value = tuple(int(v) for v in value)
        kwargs[key] = value
    return GroupConfig(profile=PROFILES[name], **kwargs)  # type: ignore[arg-type]
