"""Which broker ``kgc replay`` launches (``cli_replay.replay_broker``): the implementation and the
Apache Kafka version the traces were recorded against, unless the user names one. A trace of
another implementation carries that implementation's own version (kfake's Go module version, the
mock's librdkafka), which is no Apache Kafka version: replayed on Apache Kafka it runs on the
pinned release (once an error: "malformed Kafka version 'v0.0.0-…'")."""

from __future__ import annotations

from pathlib import Path

import pytest
from kgc.engine.traces import load

from kgc.cli import UserError
from kgc.cli_replay import replay_broker

KNOWN = Path(__file__).parents[2] / "traces" / "known"
KFAKE = KNOWN / "kfake" / "joingroup-unknown-instance-sets-protocol-type.json"
APACHE = (
    Path(__file__).parents[1] / "lines" / "data" / "heartbeat-awaiting-sync-found-on-1.0.2.json"
)


def _apache_traces() -> list:
    return [(APACHE, load(APACHE))]


def _choose(loaded: list, **named: str | None) -> tuple[str | None, str | None]:
    options = {"bootstrap_server": None, "kafka_version": None, "implementation": None, **named}
    return replay_broker(loaded, **options)


def test_a_kfake_trace_replays_on_kfake_and_on_the_pinned_apache_release() -> None:
    loaded = [(KFAKE, load(KFAKE))]
    assert loaded[0][1].manifest["target"]["version"].startswith("v0.0.0-")
    assert _choose(loaded) == ("kfake", "")
    assert _choose(loaded, implementation="apache-kafka") == ("apache-kafka", None)
    assert _choose(loaded, implementation="apache-kafka", kafka_version="3.9.2") == (
        "apache-kafka",
        "3.9.2",
    )


def test_an_apache_trace_replays_on_its_own_release() -> None:
    loaded = _apache_traces()
    assert loaded[0][1].manifest["target"]["implementation"] == "apache-kafka"
    assert _choose(loaded) == (None, "1.0.2")
    assert _choose(loaded, implementation="apache-kafka") == ("apache-kafka", "1.0.2")


def test_traces_of_two_implementations_are_refused() -> None:
    loaded = [(KFAKE, load(KFAKE)), *_apache_traces()[:1]]
    with pytest.raises(UserError, match="several implementations"):
        _choose(loaded)
