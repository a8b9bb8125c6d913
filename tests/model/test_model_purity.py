"""``model/`` imports only the standard library, and nothing impure from it.

Complements ``tests/architecture/test_layers.py`` (which reads import statements): this test
*runs* every module of ``model/`` in a fresh interpreter and checks every module that got loaded,
so an import done indirectly (through another module, ``importlib``, ``__import__``) is caught too.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

MODEL_DIR = Path(__file__).resolve().parents[2] / "model"
IMPURE = {
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
    "multiprocessing",
}

PROBE = r"""
import importlib, json, sys
before = set(sys.modules)
for name in NAMES:
    importlib.import_module(name)
loaded = sorted(set(sys.modules) - before)
print(json.dumps({"loaded": loaded, "stdlib": sorted(sys.stdlib_module_names)}))
"""


def _model_modules() -> list[str]:
    return sorted(
        "kgc.model." + ".".join(p.relative_to(MODEL_DIR).with_suffix("").parts)
        for p in MODEL_DIR.rglob("*.py")
        if p.stem != "__init__"
    )


def test_model_modules_load_only_stdlib_and_themselves() -> None:
    names = _model_modules()
    assert "kgc.model.classic.group" in names and len(names) >= 10
    code = f"NAMES = {names!r}\n{PROBE}"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)
    stdlib = set(report["stdlib"])
    offenders = []
    for mod in report["loaded"]:
        top = mod.split(".")[0]
        if mod == "kgc" or mod.startswith("kgc.model"):
            continue
        if top.startswith("_") or top in stdlib:
            continue
        offenders.append(mod)
    assert offenders == [], f"model/ pulled in non-stdlib modules: {offenders}"


def test_model_modules_do_not_import_impure_stdlib_modules_directly() -> None:
    import ast

    bad = {}
    for path in sorted(MODEL_DIR.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            hits = [n for n in names if n.split(".")[0] in IMPURE]
            if hits:
                bad.setdefault(str(path.relative_to(MODEL_DIR)), []).extend(hits)
    assert bad == {}, f"impure imports in model/: {bad}"


def test_the_probe_would_catch_a_third_party_import(tmp_path: Path) -> None:
    # Quality check of the test itself: the same probe flags a module that imports hypothesis.
    code = "NAMES = ['hypothesis']\n" + PROBE
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)
    assert "hypothesis" in report["loaded"] and "hypothesis" not in report["stdlib"]
