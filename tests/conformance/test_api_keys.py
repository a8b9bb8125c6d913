"""Kafka's API keys (``model/apis.py``) against kafka-python's ``ApiKey`` enum, which is generated
from the same JSON message specs as Kafka's ``ApiKeys``; and no other module writing a key number.
"""

from __future__ import annotations

import ast
from pathlib import Path

from kafka.protocol.api_key import ApiKey
from kgc.model import apis

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("model", "engine", "properties", "conformance", "kgc", "pipeline")


def test_every_key_agrees_with_kafka_python() -> None:
    for name, key in apis.KEYS.items():
        assert ApiKey[name].value == key, (name, key)


def test_names_and_groups_come_from_the_table() -> None:
    assert len(apis.NAMES) == len(apis.KEYS)
    from kgc.model.requests import CLASSIC_REQUESTS

    for group in (tuple(CLASSIC_REQUESTS), apis.CONSUMER_GROUP_APIS, apis.OFFSET_APIS):
        assert set(group) <= set(apis.KEYS)


def _key_constants(path: Path) -> list[str]:
    """Assignments in ``path`` that bind an API-key-like name or dict to a number literal."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign | ast.AnnAssign):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        value = node.value
        keyish = [n for n in names if n.upper().endswith(("_KEY", "API_KEYS", "_KEYS"))]
        if not keyish or value is None:
            continue
        literal = isinstance(value, ast.Constant) and isinstance(value.value, int)
        table = isinstance(value, ast.Dict) and any(
            isinstance(v, ast.Constant) and isinstance(v.value, int) for v in value.values
        )
        if literal or table:
            found.append(f"{path.relative_to(ROOT)}:{node.lineno} {keyish[0]}")
    return found


def test_no_other_module_writes_an_api_key() -> None:
    # pipeline/audit.py's GROUP_METADATA_KEY is a __consumer_offsets record key, not an API key
    allowed = {"GROUP_METADATA_KEY", "OFFSET_COMMIT_KEY"}
    bad = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path == ROOT / "model" / "apis.py":
                continue
            bad += [b for b in _key_constants(path) if b.split()[-1] not in allowed]
    assert bad == [], bad
