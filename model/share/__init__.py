"""The KIP-932 share group ("queues"): its membership, as the group coordinator keeps it. Kafka's
counterpart is ``group-coordinator``'s ``modern/share/`` and the ``simple`` assignor.

* ``group.py`` — ``ShareGroupModel``: ShareGroupHeartbeat (validation, group and member epochs,
  target assignment over initialized partitions, jump-to-target reconciliation, leave), the
  asynchronous initialization of share partitions, session expiry, ShareGroupDescribe, and
  ListGroups / DeleteGroups of a share group; the ``simple`` assignor's two builders, ported.

The room stands alone: it imports only the model's shared modules, never ``classic/`` or
``consumer/`` (``tests/architecture/test_layers.py``).
"""
