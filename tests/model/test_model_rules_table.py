"""``model/RULES.md`` cites only tests that exist, and every rule module has a row."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_cited_model_test_exists() -> None:
    text = (ROOT / "model" / "RULES.md").read_text(encoding="utf-8")
    cited = set(re.findall(r"::(test_[a-z0-9_]+|Test[A-Za-z]+)", text))
    # model tests and the broker-backed tests the "broker test" column cites (the differential
    # test ships in kgc/testsuite and is collected through tests/differential)
    files = [*(ROOT / "tests").rglob("test_*.py"), *(ROOT / "kgc" / "testsuite").rglob("test_*.py")]
    source = "".join(p.read_text(encoding="utf-8") for p in files)
    missing = sorted(n for n in cited if f"def {n}(" not in source and f"class {n}" not in source)
    assert len(cited) > 50
    assert missing == [], f"RULES.md cites tests that do not exist: {missing}"


def test_every_rule_module_is_in_the_table() -> None:
    text = (ROOT / "model" / "RULES.md").read_text(encoding="utf-8")
    for module in (
        "coordinator",
        "join",
        "rebalance",
        "sync",
        "heartbeat",
        "leave",
        "offsets",
        "describe",
        "profiles",
    ):
        assert f"`{module}.py`" in text, module
