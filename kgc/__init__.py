"""kafka-group-conformance: a reference model and conformance suite for Kafka groups.

This package holds the front ends; the layers below are ``kgc.model``, ``kgc.engine``,
``kgc.properties``, ``kgc.conformance`` and ``kgc.pipeline`` (CONTRIBUTING.md, "Layers").

* ``cli.py``           — the ``kgc`` command: one line per subcommand, each a ``cli_<name>.py``.
* ``cli_check.py``     — ``kgc check``: the differential suite from the command line.
* ``cli_replay.py``    — ``kgc replay``: re-send saved traces to a broker and the model.
* ``cli_analyze.py``   — ``kgc analyze``: re-check recorded traces with no broker.
* ``cli_matrix.py``    — ``kgc matrix``: several implementations side by side, and their card.
* ``cli_lines.py``     — ``kgc lines``: the release lines kgc knows, and the sweep over them.
* ``cli_broker.py``    — ``kgc broker start|status|stop|fetch``: an embedded Kafka that outlives it.
* ``cli_report.py``    — ``kgc report``: the HTML + JSON report from trace corpora (PySpark).
* ``cli_audit.py``     — ``kgc audit``: a cluster's ``__consumer_offsets`` group history (PySpark).
* ``pytest_plugin.py`` — the pytest plugin: brokers, fixtures and ``--kgc-*`` options.
* ``bench/``           — ``kgc bench NAME``: every benchmark, one JSON object on stdout.
* ``testsuite/``       — the suite as installed tests, for a broker's own CI.
"""

__version__ = "0.1.0"
