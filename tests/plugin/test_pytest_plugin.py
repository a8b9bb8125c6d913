"""The pytest plugin, without a broker: cheap to load, unique names, and no silent skips.

The behavioural tests run pytest in a subprocess on a throwaway test file (the plugin is loaded
through its ``pytest11`` entry point, as in any project that installs kgc).
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

from kgc.pytest_plugin import unique_name


def test_loading_the_plugin_imports_nothing_heavy():
    code = (
        "import sys, kgc.pytest_plugin\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('kafka', 'hypothesis', 'pyspark', 'z3') or m.startswith('kgc.conformance'))\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_unique_names_are_prefixed_legal_and_distinct():
    a = unique_name("test_join[v4-é ünïcode]")
    b = unique_name("test_join[v4-é ünïcode]")
    assert a != b
    for name in (a, b, unique_name(""), unique_name("x" * 500)):
        assert name.startswith("kgc-")
        assert re.fullmatch(r"[a-z0-9-]+", name), name
        assert len(name) < 80
    assert a.startswith("kgc-test-join-v4-")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # nothing listens once the socket is closed


def _run_pytest(tmp_path: Path, body: str, *args: str) -> str:
    (tmp_path / "test_it.py").write_text(textwrap.dedent(body), encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return out.stdout + out.stderr


def test_external_broker_unreachable_errors_and_fault_tests_skip_with_reason(tmp_path):
    out = _run_pytest(
        tmp_path,
        """
        import pytest

        @pytest.mark.broker
        def test_a(kgc_broker):
            pass

        @pytest.mark.broker
        def test_b(kgc_broker):
            pass

        @pytest.mark.faults
        def test_kill():
            pass
        """,
        f"--kgc-bootstrap-server=127.0.0.1:{_closed_port()}",
    )
    # an unreachable broker is an error for every test that needs it, never a skip
    assert "2 errors" in out, out
    assert "cannot reach Kafka" in out, out
    # the only skip is the fault test, and it says why
    assert "1 skipped" in out, out
    assert "fault injection needs a broker kgc started itself" in out, out


def test_bad_embedded_configuration_is_an_error_with_the_fix(tmp_path):
    # ZooKeeper mode does not exist in Kafka 4.x: the fixture must say so, not skip
    out = _run_pytest(
        tmp_path,
        """
        import pytest

        @pytest.mark.broker
        def test_a(kgc_broker):
            pass
        """,
        "--kgc-kafka-version=4.3.1",
        "--kgc-mode=zookeeper",
    )
    assert "1 error" in out, out
    assert "no ZooKeeper mode" in out, out
