"""Kafka's error names and codes (``model/errors.py``) against kafka-python's table, and the wire
naming every code the model knows by the model's name.

``model/errors.py`` follows Kafka's ``Errors.java`` (checked against the 4.3.1 client jar's
``Errors.values()``); kafka-python agrees on every code except the few it spells its own way or
does not know yet, listed here so a new disagreement shows up.
"""

from __future__ import annotations

import kafka.errors
from kgc.conformance.wire.client import error_name
from kgc.model import errors

SPELLED_OTHERWISE_BY_KAFKA_PYTHON = {
    -1: "UNKNOWN",
    0: "NO_ERROR",
    6: "NOT_LEADER_FOR_PARTITION",
    10: "MESSAGE_SIZE_TOO_LARGE",
    17: "INVALID_TOPIC",
    39: "INVALID_REPLICATION_ASSIGNMENT",
}
NEWER_THAN_KAFKA_PYTHON = {128, 129, 130, 131, 132, 133}


def test_every_code_agrees_with_kafka_python() -> None:
    for name, code in errors.CODES.items():
        cls = kafka.errors.kafka_errors.get(code)
        if code in NEWER_THAN_KAFKA_PYTHON:
            assert cls is None, (name, code)
        elif code in SPELLED_OTHERWISE_BY_KAFKA_PYTHON:
            assert cls is not None and cls.message == SPELLED_OTHERWISE_BY_KAFKA_PYTHON[code]
        else:
            assert cls is not None and cls.message == name, (name, code, cls)


def test_each_name_is_its_constant_and_codes_are_unique() -> None:
    assert len(errors.NAMES) == len(errors.CODES)
    for name in errors.CODES:
        assert getattr(errors, name) == name
    assert errors.ROUTING_ERRORS.issubset(errors.CODES)


def test_the_wire_names_each_code_as_the_model_does() -> None:
    for name, code in errors.CODES.items():
        assert error_name(code) == name
    # a code model/errors.py does not list is named from kafka-python's table
    assert 28 not in errors.NAMES and error_name(28) == "INVALID_COMMIT_OFFSET_SIZE"
    assert error_name(9999) == "UNKNOWN_ERROR_CODE_9999"
