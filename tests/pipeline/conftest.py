"""Fixtures for the Spark pipeline tests: one local Spark session, corpora, headless Chromium."""

from __future__ import annotations

import shutil
import subprocess
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).parent / "data"

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        pytest.fail("PySpark is missing: pip install -e '.[spark]'")
    from kgc.pipeline import spark as ks

    session = ks.session(app_name="kgc-tests", master="local[2]")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def run_chromium() -> Any:
    """``run_chromium(args, profile_dir)``: headless Chromium with a fresh profile; raises if it
    fails. A missing Chromium fails the test (it is part of the suite, not optional)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail(
            "Chromium is missing: apt-get install chromium (Debian); `make install` does it"
        )

    def run(
        args: list[str], profile: Path, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        cmd = [found, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=True)

    return run


@pytest.fixture(scope="session")
def page_colours(run_chromium: Any) -> Callable[[Path, Path], Counter[tuple[int, int, int]]]:
    """``page_colours(html, tmp)``: screenshot ``html`` in headless Chromium (1400×2000) and count
    the screenshot's pixels by RGB colour: what a person would see, as numbers."""

    def shoot(html: Path, tmp: Path) -> Counter[tuple[int, int, int]]:
        from PIL import Image

        shot = tmp / f"{html.stem}.png"
        run_chromium(
            ["--window-size=1400,2000", f"--screenshot={shot}", html.as_uri()],
            tmp / f"profile-{html.stem}",
        )
        assert shot.stat().st_size > 10_000, f"{shot}: screenshot is (almost) empty"
        with Image.open(shot) as im:
            rgb = im.convert("RGB")
            pixels = (
                rgb.get_flattened_data() if hasattr(rgb, "get_flattened_data") else rgb.getdata()
            )
            return Counter(pixels)

    return shoot
