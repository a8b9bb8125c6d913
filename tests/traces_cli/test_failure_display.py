"""The first divergence shows what differs: broker against model, the differing fields whole.

A response used to be printed as its ``repr`` cut at 240 characters (``model/checker.py``) and
again at 79 (``render``), so with a few long topic names the line stopped before the error that
mattered. Now each differing field is named by its path and written whole on both sides
(``partitions[2].error: 'ILLEGAL_GENERATION' ≠ 'NONE'``); only the fields that agree are shortened.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kgc.engine.traces import Trace, render, result_of_divergence
from kgc.model import ClassicGroupModel, GroupConfig
from kgc.model.checker import ABSENT, check, differences
from kgc.model.commands import (
    HeartbeatResponse,
    JoinedMember,
    JoinGroupResponse,
    OffsetCommit,
    OffsetCommitResponse,
    PartitionError,
    TopicPartitionOffset,
)
from kgc.model.history import Invoke, Receive, event_to_json

TOPIC = "kgc-suite-6951a2b3c4d5e6f7-offsets"  # 34 characters, as the suite's topics are long


def _commit_answered_wrongly() -> tuple[ClassicGroupModel, list]:
    """A commit outside any generation (member id "", generation -1) to a group nobody joined:
    Kafka stores it and answers NONE for each partition. This broker answers ILLEGAL_GENERATION
    for the third partition, a field past where the old message was cut."""
    model = ClassicGroupModel(GroupConfig(group_id="kgc-display"))
    offsets = tuple(TopicPartitionOffset(topic=TOPIC, partition=p, offset=10 + p) for p in range(3))
    commit = OffsetCommit(client="c1", member_id="", generation_id=-1, offsets=offsets, version=8)
    errors = ("NONE", "NONE", "ILLEGAL_GENERATION")
    observed = OffsetCommitResponse(
        partitions=tuple(
            PartitionError(topic=TOPIC, partition=p, error=e) for p, e in enumerate(errors)
        )
    )
    events = [
        Invoke(step=0, at_ms=0.0, request_id=1, command=commit),
        Receive(step=0, at_ms=1.0, request_id=1, response=observed),
    ]
    return model, events


def test_divergence_names_the_differing_field_whole() -> None:
    model, events = _commit_answered_wrongly()
    assert len(repr(events[1].response)) > 240  # the old cut fell before partitions[2].error

    d = check(model, events)

    assert d is not None and d.index == 1
    short = f"'{TOPIC[:20]}'..."
    assert d.allowed == (
        "request 1: partitions[2].error: 'ILLEGAL_GENERATION' ≠ 'NONE' (broker ≠ model); "
        "model: OffsetCommitResponse(partitions=("
        f"PartitionError(topic={short}, partition=0, error='NONE'), "
        f"PartitionError(topic={short}, partition=1, error='NONE'), "
        f"PartitionError(topic={short}, partition=2, error='NONE')))",
    )
    # the broker's answer in the reason: the differing field whole, the topics shortened
    assert (
        f"PartitionError(topic={short}, partition=2, error='ILLEGAL_GENERATION')))" in d.reason
    ), d.reason


def test_render_and_analyze_show_the_whole_difference(tmp_path: Path) -> None:
    model, events = _commit_answered_wrongly()
    d = check(model, events)
    manifest = {
        "format_version": 1,
        "trace_id": "t-display",
        "group_id": "kgc-display",
        "target": {"implementation": "apache-kafka", "version": "4.3.1"},
        "model": {"name": "ClassicGroupModel", "profile": "kafka-4.x", "config": {}},
        "checker": {},
    }
    trace = Trace(manifest=manifest, events=events)
    trace.result = result_of_divergence(trace, d)
    diff = "partitions[2].error: 'ILLEGAL_GENERATION' ≠ 'NONE' (broker ≠ model)"

    text = render(trace)
    [line] = [x for x in text.splitlines() if "model allowed:" in x]
    assert line.strip() == f"model allowed: {d.allowed[0]}"
    assert "error='ILLEGAL_GENERATION'" in text.split("!! first divergence:")[1]

    path = tmp_path / "display.json"
    doc = {"manifest": manifest, "events": [event_to_json(e) for e in events], "result": None}
    path.write_text(json.dumps(doc))
    out = subprocess.run(
        [sys.executable, "-m", "kgc.cli", "analyze", "-v", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 1, out
    assert diff in out.stdout, out.stdout


def test_differences_are_paths_to_leaves() -> None:
    leader = JoinedMember(member_id="c1-1", metadata="x" * 40)
    follower = JoinedMember(member_id="c2-1", metadata="y" * 40)
    observed = JoinGroupResponse(error="NONE", generation_id=2, leader="c1-1", members=(leader,))
    allowed = JoinGroupResponse(
        error="NONE", generation_id=3, leader="c1-1", members=(leader, follower)
    )
    assert differences(observed, allowed) == [
        ("generation_id", 2, 3),
        ("members[1]", ABSENT, follower),
    ]
    # answers of different types differ as a whole
    other = HeartbeatResponse(error="REBALANCE_IN_PROGRESS")
    assert differences(other, observed) == [("", other, observed)]
    assert differences(observed, observed) == []


def test_an_answer_that_never_came_is_marked_where_the_checker_stopped_waiting() -> None:
    """A divergence at the checker's wait (``Quiet``: a response every model state had emitted
    never arrived) is marked and explained like any other, not left out of the printed trace
    (seen with ``kgc check --kafka-version 2.8.0``: the trace ended in ticks, no reason)."""
    from kgc.engine.traces import target_label
    from kgc.model.commands import Heartbeat
    from kgc.model.history import Quiet

    trace = Trace(
        manifest={"target": {"implementation": "unknown", "version": "unknown", "mode": "unknown"}},
        events=[
            Invoke(
                step=0,
                at_ms=1.0,
                request_id=0,
                command=Heartbeat(client="c1", member_id="c1-1", generation_id=1, version=3),
            ),
            Quiet(step=1, at_ms=7000.0),
        ],
        result={
            "divergence": {
                "index": 1,
                "reason": "a response every model state had emitted never arrived",
                "allowed": ["request 0: HeartbeatResponse(error='UNKNOWN_MEMBER_ID')"],
            }
        },
    )
    text = render(trace)
    assert ">>    7000.0ms  (waited for the answers the model expected)" in text
    assert "!! first divergence: a response every model state had emitted never arrived" in text
    assert "a broker of unknown implementation and version" in text.splitlines()[0]
    assert "unknown unknown" not in text and target_label({"mode": "unknown"}).endswith("node(s))")
