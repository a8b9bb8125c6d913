"""kgc.engine: run commands against a target, record the history, check it, store it as a trace.

Between the pure model (``kgc.model``) and what drives it (the state machines in
``kgc.properties``, the brokers in ``kgc.conformance``): the engine loop, the ``Target`` interface
with its model-backed implementation, the trace format, replay, coverage, and the registry that
says which model judges which target.
"""
