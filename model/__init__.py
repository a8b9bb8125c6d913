"""kgc.model: the pure reference model of Kafka's group machinery, every protocol kgc checks.

Standard library only: no clock, no randomness, no I/O (``tests/model/test_model_purity.py``),
``mypy --strict`` clean. ``model/RULES.md`` lists every rule, its Kafka source and its tests.

Rooms, as Kafka's ``group-coordinator`` module has them (``classic/``, ``modern/consumer/``):

* ``classic/``  — the classic group (JoinGroup/SyncGroup/Heartbeat), also under coordinator faults.
* ``consumer/`` — the KIP-848 consumer group, and online migration between the two protocols.
* ``share/``    — the KIP-932 share group (``modern/share/``): membership, initialization, the
  ``simple`` assignor.

Shared by every room (imports point from the rooms to these, never back; the layer test checks it):

* ``commands.py``    — the vocabulary: what a client sends, what a broker or the model answers.
* ``apis.py``        — Kafka's API keys, the one table every layer reads.
* ``requests.py``    — each classic request type's pure facts: key, records, drawn versions, cells.
* ``errors.py``      — Kafka's error names and codes.
* ``history.py``     — one group's timestamped events, and their JSON form.
* ``checker.py``     — the fold that keeps every model state consistent with a history.
* ``timed.py``       — ``TimedModel``: timers and the reorder window every group model shares.
* ``profiles.py``    — every release line's rules for every protocol, and the group settings.
* ``known_bugs.py``  — Kafka bugs known by name: where a release breaks the contract.
* ``client_view.py`` — what a client knows, turned into its next command, with version gates.
* ``coordinator.py`` — coordinator discovery: which broker coordinates a group.
* ``controller.py``  — controller epochs and fencing.
* ``assignors.py``   — partition assignors, client- and server-side, as Kafka specifies them.

``ClassicGroupModel(GroupConfig(profile=KAFKA_4_X, ...))`` is a checker ``Model``.
"""

from kgc.model.classic.group import ClassicGroupModel
from kgc.model.classic.state import GroupState, state_from_json, state_to_json
from kgc.model.profiles import (
    KAFKA_3_9,
    KAFKA_4_X,
    PROFILES,
    GroupConfig,
    Profile,
    config_from_json,
    config_to_json,
    profile_for_version,
)

__all__ = [
    "KAFKA_3_9",
    "KAFKA_4_X",
    "PROFILES",
    "ClassicGroupModel",
    "GroupConfig",
    "GroupState",
    "Profile",
    "config_from_json",
    "config_to_json",
    "profile_for_version",
    "state_from_json",
    "state_to_json",
]
