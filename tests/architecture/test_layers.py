"""The layer order is enforced, not just written down (CONTRIBUTING.md, "Layers").

model  <-  engine  <-  properties  <-  conformance  <-  kgc (cli, pytest plugin, benches), pipeline

* ``model/`` imports only the standard library and itself (its purity — no clock, randomness or
  I/O module, nothing third-party loaded at run time — is ``tests/model/test_model_purity.py``).
* ``engine/`` may use the model; never Hypothesis, Z3 or a broker client.
* ``properties/`` may use the model, the engine, Hypothesis and Z3; never a broker client.
* ``conformance/`` may use everything below it and kafka-python; never the front ends.
The test reads every module's imports with ``ast`` (function-level imports included), so an
import hidden inside a function is caught too.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYERS = {"model": 0, "engine": 1, "properties": 2, "conformance": 3, "pipeline": 4, "kgc": 4}
FOLDER_PACKAGE = {
    "model": "kgc.model",
    "engine": "kgc.engine",
    "properties": "kgc.properties",
    "conformance": "kgc.conformance",
    "pipeline": "kgc.pipeline",
}
# modules a pure model must never import even though they are in the standard library
IMPURE_STDLIB = {
    "time",
    "random",
    "socket",
    "os",
    "subprocess",
    "threading",
    "datetime",
    "secrets",
    "selectors",
    "asyncio",
    "io",
    "pathlib",
    "tempfile",
    "uuid",
}
THIRD_PARTY_ALLOWED = {
    "properties": {"hypothesis", "z3"},
    "conformance": {"hypothesis", "z3", "kafka", "kazoo", "testcontainers", "confluent_kafka"},
}


def modules(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
    return found


def layer_of(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "kgc":
        return None
    if len(parts) == 1:
        return None  # the root package only carries __version__
    sub = parts[1]
    for folder, pkg in FOLDER_PACKAGE.items():
        if pkg == f"kgc.{sub}":
            return LAYERS[folder]
    return LAYERS["kgc"]  # kgc.cli, kgc.bench, kgc.pytest_plugin, …


@pytest.mark.parametrize("folder", ["model", "engine", "properties", "conformance"])
def test_layers_point_one_way(folder: str) -> None:
    mine = LAYERS[folder]
    bad = []
    for path in modules(folder):
        for mod in imports_of(path):
            layer = layer_of(mod)
            if layer is not None and layer > mine:
                bad.append(f"{path.relative_to(ROOT)} imports {mod}")
    assert not bad, "imports against the layer order:\n" + "\n".join(bad)


@pytest.mark.parametrize("folder", ["model", "engine", "properties", "conformance"])
def test_third_party_imports_are_allowed_ones(folder: str) -> None:
    allowed = THIRD_PARTY_ALLOWED.get(folder, set())
    bad = []
    for path in modules(folder):
        for mod in imports_of(path):
            top = mod.split(".")[0]
            if top == "kgc" or top in sys.stdlib_module_names or top == "__future__":
                continue
            if top not in allowed:
                bad.append(f"{path.relative_to(ROOT)} imports {mod}")
    assert not bad, "\n".join(bad)
