"""kgc.properties: what Hypothesis draws, and the invariants every answer must keep.

* ``machine.py``           — ``EngineMachine`` (shared by every protocol) and ``GroupMachine``, the
  classic group's rules; the search context, versions and time scale.
* ``consumer_machine.py``  — ``ConsumerGroupMachine``: KIP-848 consumers on the same engine.
* ``migration_machine.py`` — ``MigrationMachine``: classic clients and KIP-848 consumers on one id.
* ``share_machine.py``     — ``ShareGroupMachine``: KIP-932 share consumers on the same engine.
* ``assignment_z3.py``     — Z3-checked invariants of one generation's partition assignment.
* ``assignment_oracle.py`` — Z3 as an oracle: the best balance any assignment could reach.
* ``assignment_codec.py``  — the tiny JSON encoding of subscriptions and assignments.
* ``bounded_proofs.py``    — every model assignor keeps its promises on every input up to a bound.
"""
