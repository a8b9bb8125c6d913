"""Every package of the source tree is installed: ``pyproject.toml`` lists each folder with an
``__init__.py`` under the folders it maps into ``kgc`` (``package-dir``), so a plain
``pip install`` (not editable, as ``.ci/clean_install.sh`` does) carries every module. A package
missing from the list imports in the repository and fails only for users."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_package_folder_is_listed_in_pyproject() -> None:
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    found = set()
    for name, folder in setuptools["package-dir"].items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            rel = init.parent.relative_to(base)
            if "__pycache__" in rel.parts:
                continue
            found.add(".".join((name, *rel.parts)) if rel.parts else name)
    missing = sorted(found - listed)
    assert not missing, f"packages missing from pyproject.toml: {missing}"
