"""kgc's conformance suite as installed tests, for a broker's own CI (no clone of kgc needed).

After ``pip install kafka-group-conformance``, from any folder::

    pytest --pyargs kgc.testsuite --kgc-bootstrap-server HOST:PORT --kgc-traces DIR \
        --junitxml out.xml

collects :mod:`kgc.testsuite.test_differential` and runs the differential suite against that
broker (kgc's pytest plugin, ``kgc.pytest_plugin``, adds the ``--kgc-*`` options). Without
``--kgc-bootstrap-server`` it starts an embedded Apache Kafka as kgc's own tests do. Shrunk failing
traces are saved under ``--kgc-traces`` (default ``traces/`` in the current folder); replay them
with ``kgc replay``.

With ``--kgc-known DIR`` (a folder of baseline traces, one per known deviation of that broker, as
``traces/known/<implementation>/``) it is a ratchet: it passes while only those deviations show,
fails on a new one, and warns ``FIXED`` for a baseline that replays clean.

* ``test_differential.py`` — the differential suite against that broker, and (with
  ``--kgc-known``) each known deviation replayed on it.
"""
