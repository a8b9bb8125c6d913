"""kgc.engine: run commands against a target, record the history, check it, store it as a trace.

Between the pure model (``kgc.model``) and what drives it (the state machines in
``kgc.properties``, the brokers in ``kgc.conformance``): the engine loop, the ``Target`` interface
with its model-backed implementation, the trace format, replay, coverage, and the registry that
says which model judges which target.

* ``loop.py``     — ``Engine``: send, poll, record and check, one example at a time.
* ``target.py``   — the ``Target`` interface, and ``ModelTarget`` answering from the model.
* ``traces.py``   — the trace format (v1): manifest, events, verdict; saving and rendering.
* ``replay.py``   — send a saved trace's commands again on a fresh group, and check every answer.
* ``deviations.py`` — what a divergence is in symbolic form; the same deviation, the same failing
  event (how baselines in ``traces/known`` are matched).
* ``allowances.py`` — which of the model's "either answer is fine" a passing history needed.
* ``registry.py`` — which model, configured how, judges a target, and again from a manifest.
* ``coverage.py`` — group state × request × error cells, their universe and a run's summary.
* ``broken.py``   — deliberately broken model variants, for quality tests and benchmarks.
"""
