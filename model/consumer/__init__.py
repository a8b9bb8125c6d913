"""The KIP-848 consumer group, and online migration between it and the classic group. Kafka's
counterpart is ``group-coordinator``'s ``modern/consumer/``.

* ``group.py``     — ``ConsumerGroupModel``: group epoch, target assignment, member epochs and
  reconciliation, its timers.
* ``migration.py`` — ``MigratingGroupModel``: one group id, both protocols, the upgrade and
  downgrade conversions (a classic member of a consumer group is a consumer-model member).
"""
