"""The classic consumer group (JoinGroup/SyncGroup/Heartbeat), one group's coordinator as a pure,
nondeterministic state machine. Kafka's counterpart is ``group-coordinator``'s ``classic/``.

* ``group.py``         — ``ClassicGroupModel``: sends each request to the module of its rules.
* ``state.py``         — the group as its coordinator holds it, plus the answers it still owes.
* ``txn.py``           — the working copy of a state during one step, and the choice oracle.
* ``join.py``          — JoinGroup: validation order, member ids, KIP-394, static members.
* ``rebalance.py``     — the join phase, generations, leader choice, protocol vote, assignment.
* ``sync.py``          — SyncGroup: who gets an assignment, when, and the errors by state.
* ``heartbeat.py``     — the delayed heartbeat per member, and what its expiry does.
* ``leave.py``         — LeaveGroup: per-member results, strangers, static members by instance id.
* ``offsets.py``       — OffsetCommit and OffsetFetch, fenced by generation and member.
* ``describe.py``      — DescribeGroups and FindCoordinator as seen from one group.
* ``list_groups.py``   — ListGroups: whether, and how, the coordinator lists the group.
* ``delete.py``        — DeleteGroups and OffsetDelete: deleting the group or some of its offsets.
* ``authorization.py`` — what the authorizer refuses a principal an operator denied one operation,
  before the group sees the request (ACL actions).
* ``empty_group.py``   — a membership request naming the group id ``""``: refused before any
  group is read.
* ``subscription.py``  — how the coordinator reads a consumer member's subscription, per line
  (the known bug ``join-stalled-by-subscription``).
* ``inputs.py``        — the field class of a request: what its fields are to the group (input
  cells).
* ``transactions.py``  — the transactional offsets path: InitProducerId, AddOffsetsToTxn,
  TxnOffsetCommit, EndTxn, pending offsets and ``require_stable``.
* ``cluster_group.py`` — the same group behind a coordinator that may die, stall, move and reload
  (the fault suite's model).
* ``generate.py``      — synthetic histories from the model alone.

Imports point one way: ``consumer/`` may use this room (a migrating group holds a classic one),
never the reverse; the shared modules one level up use neither.
"""
