"""ListGroups as seen from one group: whether, and how, the coordinator lists it.

Rules (4.x ``GroupMetadataManager.listGroups`` / ``ClassicGroup.isInStates`` /
``ClassicGroup.asListedGroup``, reached through ``GroupCoordinatorService.listGroups`` and
``KafkaApis.handleListGroupsRequest``; 3.9 ``GroupCoordinator.handleListGroups`` /
``GroupMetadata.overview`` through ``GroupCoordinatorAdapter.listGroups``; the fields by version in
``clients/src/main/resources/common/message/ListGroupsRequest.json`` /
``ListGroupsResponse.json``):

1. The answer lists every group the broker coordinates; the model speaks of its own group only
   (``commands.ListGroupsResponse``): listed or not. A group that does not exist is not listed
   (the model has no Dead group: a deleted one does not exist). The error is ``NONE``
   (``COORDINATOR_NOT_AVAILABLE`` / ``COORDINATOR_LOAD_IN_PROGRESS`` need a fault).
2. The states filter (v4+, KIP-518): with one, the group is listed only if its state's name is in
   it, compared ignoring case (4.x also trims each name; the suite's have no blanks).
3. The types filter (v5+, KIP-848): with one, the group is listed only if ``classic`` is in it,
   ignoring case (a name Kafka does not know is its ``UNKNOWN`` type, which no group has; 3.9
   calls every group classic).
4. A listed group carries its protocol type (``""`` for a group of simple commits), from v4 its
   state's name (``CompletingRebalance`` as the line names it), from v5 its type ``classic``.
5. 4.x lists the groups at the last committed offset of each ``__consumer_offsets`` partition
   (``scheduleReadAllOperation``: ``groups.values(committedOffset)``), while a classic group's
   state is a plain field read as it is now. So a group whose creation record is not committed
   yet may be missing, exactly as DescribeGroups may describe it as missing (``describe.py``
   rule 3); a listing that shows it shows the record committed.
"""

from __future__ import annotations

from kgc.model.classic.state import COMPLETING_REBALANCE
from kgc.model.classic.txn import Txn
from kgc.model.commands import ListedGroup, ListGroups, ListGroupsResponse
from kgc.model.errors import NONE

CLASSIC = "classic"  # Kafka's ``Group.GroupType.CLASSIC``
STATES_SINCE = 4  # ListGroupsResponse's ``GroupState``
TYPES_SINCE = 5  # ListGroupsResponse's ``GroupType``


def handle_list_groups(tx: Txn, request_id: int, cmd: ListGroups) -> None:
    state = tx.profile.completing_rebalance_name if tx.state == COMPLETING_REBALANCE else tx.state
    wanted = (
        tx.exists
        and (not cmd.states_filter or state.lower() in {s.lower() for s in cmd.states_filter})
        and (not cmd.types_filter or CLASSIC in {t.lower() for t in cmd.types_filter})
    )
    if wanted and tx.unconfirmed:
        seen = tx.choose((True, False))  # rule 5: the creation committed, or not yet
        tx.unconfirmed = not seen
        wanted = seen
    if not wanted:
        tx.respond(request_id, ListGroupsResponse(error=NONE))
        return
    listed = ListedGroup(
        protocol_type=tx.protocol_type or "",
        group_state=state if cmd.version >= STATES_SINCE else "",
        group_type=CLASSIC if cmd.version >= TYPES_SINCE else "",
    )
    tx.respond(request_id, ListGroupsResponse(error=NONE, groups=(listed,)))
