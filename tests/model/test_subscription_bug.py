"""The known bug ``join-stalled-by-subscription`` (``model/known_bugs.py``) and the subscription
readers it rests on (``model/classic/subscription.py``), without a broker.

The three malformed subscriptions are the ones probed on brokers (``subscription.py``'s
docstring; ``tests/findings/test_consumer_metadata.py`` holds each line to the contract): 2.4.1 -
2.6.3 answered all three joins, 2.7.2 only the first two, 2.8.2 - 4.0.2 and 4.3.1 none, 4.2.2 and
4.4.0 all three.
"""

from __future__ import annotations

import pytest
from kgc.model import PROFILES, ClassicGroupModel, GroupConfig
from kgc.model.checker import Checker, CheckerConfig
from kgc.model.classic.subscription import CAUGHT, ESCAPES, read_subscription
from kgc.model.commands import JoinGroup, JoinGroupResponse, Protocol
from kgc.model.history import Invoke, Quiet, Receive
from kgc.model.known_bugs import JOIN_STALLED_BY_SUBSCRIPTION

COUNT_PAST_END = "\x00\x00\x00\x00\x00\x10"  # 16 topics, no byte left
NAME_PAST_END = "\x00\x00\x00\x00\x00\x01\x00\x05ab"  # a 5-byte topic name, 2 bytes left
USER_DATA_PAST_END = "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x09"  # 9 bytes of user data, none left
PROBED = (COUNT_PAST_END, NAME_PAST_END, USER_DATA_PAST_END)

# what each line's broker did with the three (True: never answered)
SEEN: dict[str, tuple[bool, bool, bool]] = {
    "kafka-2.4": (False, False, False),
    "kafka-2.5": (False, False, False),
    "kafka-2.6": (False, False, False),
    "kafka-2.7": (False, False, True),
    "kafka-2.8": (True, True, True),
    "kafka-3.0": (True, True, True),
    "kafka-3.5": (True, True, True),
    "kafka-3.9": (True, True, True),
    "kafka-4.0": (True, True, True),
    "kafka-4.2": (False, False, False),
    "kafka-4.3": (True, True, True),
    "kafka-4.4": (False, False, False),
}


@pytest.mark.parametrize("line", sorted(SEEN))
def test_each_line_reads_the_probed_subscriptions_as_its_broker_did(line: str) -> None:
    profile = PROFILES[line]
    wrapped = profile.subscription_failures_wrapped
    got = tuple(
        read_subscription(m, profile.subscription_reader, wrapped=wrapped) == ESCAPES
        for m in PROBED
    )
    assert got == SEEN[line]


def test_a_subscription_that_reads_is_its_topics_and_json_is_the_real_encoding() -> None:
    # version 0, 2 topics "ab" and "c", null user data, then bytes a v0 reader leaves alone
    raw = "\x00\x00\x00\x00\x00\x02\x00\x02ab\x00\x01c\xff\xff\xff\xff\x00\x00"
    for reader in ("struct", "generated", "checked"):
        assert read_subscription(raw, reader) == ("ab", "c")
        assert read_subscription('{"topics": ["t"]}', reader) == ("t",)
        assert read_subscription("", reader) == CAUGHT  # no version: an underflow
        assert read_subscription("\x00\x00\xff\xff\xff\xff", reader) in (CAUGHT, ESCAPES)


def _checker(profile: str, metadata: str) -> tuple[Checker, list[object]]:
    config = GroupConfig(
        profile=PROFILES[profile],
        group_min_session_timeout_ms=500,
        group_initial_rebalance_delay_ms=0,
    )
    join = JoinGroup(
        client="c1",
        session_timeout_ms=10_000,
        rebalance_timeout_ms=1_000,
        protocols=(Protocol(name="range", metadata=metadata),),
        version=3,
    )
    return Checker(ClassicGroupModel(config), CheckerConfig()), [
        Invoke(step=0, at_ms=0.0, request_id=0, command=join)
    ]


def test_where_the_read_escapes_an_unanswered_join_is_the_known_bug_not_a_divergence() -> None:
    checker, history = _checker("kafka-4.3", COUNT_PAST_END)
    assert checker.feed_all([*history, Quiet(step=1, at_ms=5_000.0)]) is None
    assert checker.known_bug is not None
    assert checker.known_bug.world.key == JOIN_STALLED_BY_SUBSCRIPTION.key
    # 4.4.0 reads it as a SchemaException: the join is owed, and silence is a divergence
    checker, history = _checker("kafka-4.4", COUNT_PAST_END)
    assert checker.feed_all([*history, Quiet(step=1, at_ms=5_000.0)]) is not None


def test_a_line_that_answers_is_judged_on_the_answer() -> None:
    answered = Receive(
        step=0,
        at_ms=20.0,
        request_id=0,
        response=JoinGroupResponse(
            error="NONE",
            generation_id=1,
            protocol_name="range",
            leader="c1-1",
            member_id="c1-1",
            members=(),
        ),
    )
    # 2.7 catches the count past the end; 4.3 cannot answer it at all
    checker, history = _checker("kafka-2.7", COUNT_PAST_END)
    divergence = checker.feed_all([*history, answered])
    assert divergence is not None  # the leader's answer lists its member: members=() is wrong
    assert checker.known_bug is None
    checker, history = _checker("kafka-4.3", COUNT_PAST_END)
    assert checker.feed_all([*history, answered]) is not None  # the bug gives no answer at all
