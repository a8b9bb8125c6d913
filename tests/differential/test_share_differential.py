"""The share-group suite (``kgc check --protocol share``) against the session broker: on Apache
Kafka 4.3 and later every answer must be one the share-group model allows, member epochs never go
back, every settled target a ShareGroupDescribe shows keeps the ``simple`` assignor's promises,
and the search reaches most of the share cells. A broker without share groups (Kafka 3.9, the
CI's second pass: it offers neither ShareGroupHeartbeat nor ShareGroupDescribe; a default-formatted
4.1, whose share.version is 0) must be refused
before any example with a one-line reason, not a traceback."""

from __future__ import annotations

import pytest
from kgc.conformance.brokers.session import description_of
from kgc.conformance.drivers.suite import run_suite
from kgc.conformance.errors import ProtocolUnsupported
from kgc.engine.coverage import share_universe, summarise
from kgc.engine.registry import release_line

pytestmark = pytest.mark.broker


def _line(broker) -> tuple[int, int]:  # noqa: ANN001
    return release_line(str(description_of(broker).get("version") or "4.3")) or (4, 3)


def test_share_suite_agrees_with_the_model(kgc_broker, tmp_path):
    if _line(kgc_broker) < (4, 2):
        with pytest.raises(ProtocolUnsupported, match="ShareGroupHeartbeat"):
            run_suite(
                bootstrap_servers=kgc_broker.bootstrap_servers,
                description=description_of(kgc_broker),
                profile="quick",
                seed=1,
                traces_dir=tmp_path,
                protocol="share",
            )
        return
    result = run_suite(
        bootstrap_servers=kgc_broker.bootstrap_servers,
        description=description_of(kgc_broker),
        profile="ci",
        seed=1,
        traces_dir=tmp_path,
        protocol="share",
    )
    assert result.ok, result.message[:4000]
    assert result.examples >= 12 and result.commands > 100
    assert result.assignment_checks >= 1  # settled targets were described and checked
    cov = summarise(result.coverage, protocol="share")
    print(f"share groups: {cov['reached']} of {cov['cells']} cells; never {cov['never']}")
    assert cov["cells"] == len(share_universe())
    assert cov["reached"] >= 0.8 * cov["cells"]
    # a cell outside the universe only where the model's live states disagreed on the state ("?":
    # a session deadline inside the checker's timer window)
    assert all(c.startswith("? × ") for c in cov["outside_universe"]), cov["outside_universe"]
