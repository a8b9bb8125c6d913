"""The differential suite, collected here for kgc's own runs (``make test``, ``pytest
tests/differential``). The test itself ships inside the package, :mod:`kgc.testsuite`, so a
broker's own CI runs the same test with ``pytest --pyargs kgc.testsuite``; this repository's
``testpaths`` do not reach the package, so it is collected once, here.
"""

from __future__ import annotations

from kgc.testsuite.test_differential import test_broker_answers_as_the_model_allows

__all__ = ["test_broker_answers_as_the_model_allows"]
