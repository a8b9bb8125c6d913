"""The layer order is enforced, not just written down (CONTRIBUTING.md, "Layers").

model  <-  engine  <-  properties  <-  conformance  <-  kgc (cli, pytest plugin, benches), pipeline

* ``model/`` imports only the standard library and itself (its purity — no clock, randomness or
  I/O module, nothing third-party loaded at run time — is ``tests/model/test_model_purity.py``).
* ``engine/`` may use the model; never Hypothesis, Z3 or a broker client.
* ``properties/`` may use the model, the engine, Hypothesis and Z3; never a broker client.
* ``conformance/`` may use everything below it and kafka-python (and the optional clients and
  tools of its extras: kazoo, testcontainers, confluent-kafka, cryptography); never the front ends.
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
    "conformance": {
        "hypothesis",
        "z3",
        "kafka",
        "kazoo",
        "testcontainers",
        "confluent_kafka",
        "cryptography",  # the ``security`` extra: certificates, PKCS12 stores
    },
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


# Rooms inside a layer (CONTRIBUTING.md, "Rooms"): each module of a room may import its own room and
# the rooms below it, never one above. A module at a layer's top level (``conformance/errors.py``,
# the model's shared modules) is the room named by its file.
ROOMS = {
    "conformance": ["errors", "artifacts", "wire", "brokers", "faults", "mutants", "drivers"],
    # the model's shared modules (commands, errors, checker, timers, profiles, …) sit below every
    # group type; a migrating consumer group holds a classic one, never the reverse; the share
    # group stands alone (``STANDALONE_ROOMS``)
    "model": ["", "classic", "consumer", "share"],
}
# Rooms that may import only the shared modules of their layer, whatever their place in ROOMS.
STANDALONE_ROOMS = {"model": ["share"]}


def _room(folder: str, path_or_module: str) -> str:
    """The room of a file (``conformance/wire/client.py``) or module (``kgc.conformance.wire``)."""
    if path_or_module.startswith("kgc."):
        parts = path_or_module.split(".")[2:]
    else:
        parts = list(Path(path_or_module).relative_to(folder).with_suffix("").parts)
    rooms = ROOMS[folder]
    if parts and parts[0] in rooms:
        return parts[0]
    return "" if "" in rooms else (parts[0] if parts else "")


@pytest.mark.parametrize("folder", sorted(ROOMS))
def test_rooms_point_one_way(folder: str) -> None:
    order = ROOMS[folder]
    package = FOLDER_PACKAGE[folder]
    bad = []
    for path in modules(folder):
        rel = str(path.relative_to(ROOT))
        if path.name == "__init__.py" and path.parent == ROOT / folder:
            continue  # a layer's own __init__ may re-export from any room
        mine = _room(folder, rel)
        for mod in imports_of(path):
            if not (mod == package or mod.startswith(package + ".")):
                continue
            theirs = _room(folder, mod) if mod != package else ""
            if theirs in order and mine in order and order.index(theirs) > order.index(mine):
                bad.append(f"{rel} ({mine or 'shared'}) imports {mod} ({theirs or 'shared'})")
    assert not bad, "imports against the order of rooms:\n" + "\n".join(bad)


@pytest.mark.parametrize("folder", sorted(STANDALONE_ROOMS))
def test_standalone_rooms_import_only_shared_modules(folder: str) -> None:
    package = FOLDER_PACKAGE[folder]
    bad = []
    for room in STANDALONE_ROOMS[folder]:
        for path in sorted((ROOT / folder / room).rglob("*.py")):
            for mod in imports_of(path):
                if mod.startswith(package + ".") and _room(folder, mod) not in ("", room):
                    bad.append(f"{path.relative_to(ROOT)} imports {mod}")
    assert not bad, "a standalone room imports another room:\n" + "\n".join(bad)


def test_every_room_has_a_map_naming_its_files() -> None:
    """Each package's ``__init__.py`` names every module and room in it (STYLE.md: the map on the
    door), the layers' own as well as their rooms'."""
    missing = []
    for folder in [*FOLDER_PACKAGE, "kgc"]:
        for init in sorted((ROOT / folder).rglob("__init__.py")):
            doc = init.read_text(encoding="utf-8")
            rooms = [d for d in init.parent.iterdir() if (d / "__init__.py").exists()]
            for room in rooms:
                if f"{room.name}/" not in doc:
                    missing.append(f"{init.relative_to(ROOT)} does not name {room.name}/")
            for module in sorted(init.parent.glob("*.py")):
                if module.name != "__init__.py" and module.name not in doc:
                    missing.append(f"{init.relative_to(ROOT)} does not name {module.name}")
    assert not missing, "\n".join(missing)


def test_contributing_names_every_module() -> None:
    """CONTRIBUTING.md's map names every module by its path, so a newcomer finds each file."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    missing = [
        str(path.relative_to(ROOT))
        for folder in [*FOLDER_PACKAGE, "kgc"]
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path.name != "__init__.py" and str(path.relative_to(ROOT)) not in text
    ]
    assert missing == [], f"CONTRIBUTING.md does not name: {missing}"
