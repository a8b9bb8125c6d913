"""``mypy --strict`` is clean on ``model/``.

``model/`` is installed as ``kgc.model`` through a setuptools package-dir mapping, which mypy
cannot follow (``mypy model`` reports every ``kgc.model.*`` import as missing). This test builds
the package layout mypy expects — ``kgc/__init__.py`` plus a ``kgc/model`` symlink to ``model/`` —
in a temporary directory and checks ``-p kgc.model`` there, with the project's mypy settings.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_model_is_mypy_strict_clean(tmp_path: Path) -> None:
    pytest.importorskip("mypy", reason="mypy is in the 'dev' extra: pip install -e '.[dev]'")
    (tmp_path / "kgc").mkdir()
    (tmp_path / "kgc" / "__init__.py").write_text("")
    (tmp_path / "kgc" / "model").symlink_to(ROOT / "model", target_is_directory=True)
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "-p",
            "kgc.model",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr
