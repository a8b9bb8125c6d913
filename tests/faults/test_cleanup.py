"""A test that fails while a node is paused leaves no process behind.

Runs an inner pytest session (a subprocess) that uses this directory's real fixtures (a one-node
KRaft cluster to keep it quick), pauses the node and fails. The nemesis fixture must still resume
the node (its finalizer runs on failure), and afterwards every JVM the inner session started must
be gone (the cluster fixture kills them at session end).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest_plugins = ("pytester",)
pytestmark = [pytest.mark.broker, pytest.mark.faults]

INNER = """
import pytest

pytestmark = [pytest.mark.broker, pytest.mark.faults]
SEEN = []


@pytest.fixture(scope="session", autouse=True)
def report_faults():
    yield
    for nemesis in SEEN:
        print("KGC-FAULTS", [(f.action, f.node) for f in nemesis.faults], flush=True)


def test_fails_while_a_node_is_paused(kraft3, kraft_nemesis):
    SEEN.append(kraft_nemesis)
    node = kraft3.node_ids[0]
    kraft_nemesis.pause(node)
    print("KGC-PIDS", " ".join(str(p) for p in kraft3.pids()), flush=True)
    assert False, "deliberate failure while node %d is paused" % node
"""


def _state(pid: int) -> str | None:
    """The process state letter from /proc (``T`` = stopped), or None if there is no process."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    m = re.search(r"^State:\s+(\S)", text, re.M)
    return m.group(1) if m else "?"


def test_failing_test_with_a_paused_node_leaves_no_process(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeconftest((Path(__file__).parent / "conftest.py").read_text())
    pytester.makepyfile(test_inner=INNER)
    monkeypatch.setenv("KGC_FAULTS_NODES", "1")
    result = pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider", timeout=300)
    result.assert_outcomes(failed=1)
    assert any("deliberate failure while node" in line for line in result.outlines)
    found = [re.search(r"KGC-PIDS((?: \d+)+)", line) for line in result.outlines]
    lines = [m.group(1) for m in found if m]
    assert lines, "the inner test did not report its JVMs:\n" + "\n".join(result.outlines[-30:])
    pids = [int(p) for p in lines[0].split()]
    assert pids, "the inner cluster had no running JVM"
    # the nemesis finalizer resumed the node although the test failed
    assert any("KGC-FAULTS [('pause', 1), ('resume', 1)]" in line for line in result.outlines)
    left = {pid: _state(pid) for pid in pids if _state(pid) is not None}
    assert left == {}, f"JVMs left behind (pid: state): {left}"
