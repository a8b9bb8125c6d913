"""DescribeGroups and FindCoordinator as seen from one group.

Rules (4.x ``GroupMetadataManager.describeGroups`` / ``ClassicGroupMember.describe`` /
``describeNoMetadata``; 3.9 ``GroupCoordinator.handleDescribeGroup`` / ``GroupMetadata.summary`` /
``MemberMetadata.summaryNoMetadata``; FindCoordinator in ``coordinator.py``):

1. A group that does not exist is described as state ``Dead`` with no protocol type and no members,
   error ``NONE`` — except 4.x v6+, which says ``GROUP_ID_NOT_FOUND``.
2. Otherwise: the state's Kafka name; ``protocol_type`` the group's (``""`` for a simple group);
   ``protocol_data`` the selected protocol in Stable only (``""`` otherwise); every member (not the
   KIP-394 pending ones), with its instance id from v4. Member assignments: Stable shows each
   member's assignment; outside Stable 3.9 shows none, 4.x shows the member's current one (the
   previous generation's until a rebalance from CompletingRebalance clears it). Each member's
   client id and host are those of the JoinGroup that added it (``ClassicGroupMember.clientId``/
   ``clientHost``, 3.9 ``MemberMetadata``; kept when a static member is replaced:
   ``ClassicGroup.replaceStaticMember`` / ``GroupMetadata.replaceStaticMember``); its metadata is
   its metadata for the group's protocol in Stable (``ClassicGroupMember.describe``,
   ``MemberMetadata.summary``) and empty otherwise (``describeNoMetadata``,
   ``summaryNoMetadata``; 1.0 ``GroupMetadata.summary`` the same).
3. 4.x reads the group at the last committed offset of its ``__consumer_offsets`` partition
   (``GroupCoordinatorService.describeGroups``: ``scheduleReadOperation``, then
   ``classicGroup(groupId, committedOffset)``): the *existence* of the group is a timeline entry,
   while a ``ClassicGroup``'s state and members are plain fields, read as they are now. A
   JoinGroup that creates a group appends its empty record, but answers (MEMBER_ID_REQUIRED, or
   the join phase's end) through the join's own future, without waiting for that record to be
   committed (``classicGroupJoin``: ``isNewGroup``). Until an answer shows the record committed,
   DescribeGroups may describe the group as missing (rule 1). The answers that show it are those
   the coordinator runtime holds until every write before them is committed: the results of the
   write operations Heartbeat (``NONE``, ``REBALANCE_IN_PROGRESS``), LeaveGroup and OffsetCommit
   (``CoordinatorRuntime.append``: with no records, ``waitForPendingWrites``), and any SyncGroup
   ``NONE`` (the group becomes Stable only once the leader's assignment record is committed).
   A description that shows the group shows it from then on. Found under load on a 3-node
   4.3.1 cluster: a DescribeGroups 18 ms after a join answered generation 1 was told
   ``GROUP_ID_NOT_FOUND``; a paused follower makes it last (``tests/faults``).
"""

from __future__ import annotations

from kgc.model.classic.state import COMPLETING_REBALANCE, DEAD, STABLE
from kgc.model.classic.txn import Txn
from kgc.model.commands import (
    DescribedMember,
    DescribeGroups,
    DescribeGroupsResponse,
    FindCoordinator,
    FindCoordinatorResponse,
    HeartbeatResponse,
    LeaveGroupResponse,
    OffsetCommitResponse,
    Response,
    SyncGroupResponse,
)
from kgc.model.coordinator import find_coordinator_outcomes
from kgc.model.errors import GROUP_ID_NOT_FOUND, NONE, REBALANCE_IN_PROGRESS


def _client_host(tx: Txn, client_id: str) -> str:
    """A member's ``ClientHost``: the connection's address as Java writes it (``/127.0.0.1``,
    ``GroupConfig.client_host``), or with ``Profile.client_host_with_port`` the address and the
    port of that client's connection, which the wire names by client
    (``conformance/wire/requests.py`` ``client_host``)."""
    if not tx.profile.client_host_with_port:
        return tx.config.client_host
    return f"{tx.config.client_host.lstrip('/')}:<port of {client_id}>"


def handle_describe_groups(tx: Txn, request_id: int, cmd: DescribeGroups) -> None:
    if tx.exists and tx.unconfirmed:
        seen = tx.choose((True, False))  # rule 3: the creation committed, or not yet
        tx.unconfirmed = not seen
    if not tx.exists or tx.unconfirmed:
        error = NONE
        if cmd.version >= 6 and tx.profile.describe_missing_group_error_v6:
            error = GROUP_ID_NOT_FOUND
        tx.respond(request_id, DescribeGroupsResponse(error=error, group_state=DEAD))
        return
    stable = tx.state == STABLE
    show_assignment = stable or tx.profile.describe_assignment_outside_stable
    members = tuple(
        DescribedMember(
            member_id=m.member_id,
            group_instance_id=m.group_instance_id if cmd.version >= 4 else None,
            client_id=m.client_id,
            client_host=_client_host(tx, m.client_id),
            metadata=m.metadata(tx.protocol_name) if stable else "",
            assignment=m.assignment if show_assignment else "",
        )
        for m in (tx.members[k] for k in sorted(tx.members))
    )
    tx.respond(
        request_id,
        DescribeGroupsResponse(
            error=NONE,
            group_state=(
                tx.profile.completing_rebalance_name
                if tx.state == COMPLETING_REBALANCE
                else tx.state
            ),
            protocol_type=tx.protocol_type or "",
            protocol_data=(tx.protocol_name or "") if stable else "",
            members=members,
        ),
    )


def shows_writes_committed(response: Response) -> bool:
    """Whether 4.x sends ``response`` only once every record written before it is committed
    (``describe.py`` rule 3): a write operation's own result, or a SyncGroup ``NONE``."""
    error = response.error
    if isinstance(response, HeartbeatResponse):
        return error in (NONE, REBALANCE_IN_PROGRESS)
    if isinstance(response, LeaveGroupResponse | SyncGroupResponse):
        return error == NONE
    if isinstance(response, OffsetCommitResponse):
        return any(p.error == NONE for p in response.partitions)
    return False


def handle_find_coordinator(tx: Txn, request_id: int, cmd: FindCoordinator) -> None:
    cfg = tx.config
    outcomes = find_coordinator_outcomes(
        cfg.group_id, cfg.offsets_topic_num_partitions, cfg.offsets_partition_leaders, cfg.node_ids
    )
    error, node = tx.choose(outcomes)
    tx.respond(request_id, FindCoordinatorResponse(error=error, node_id=node))
