"""kgc.model: the pure reference model of Kafka's classic consumer group.

``ClassicGroupModel(GroupConfig(profile=KAFKA_4_X, ...))`` is a checker ``Model``; see
``model/RULES.md`` for every rule, its source and the tests that check it.
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
