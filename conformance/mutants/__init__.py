"""Brokers broken on purpose, for ``kgc bench mutants`` and the quality tests.

* ``catalogue.py`` — the mutants: each a bug a Kafka-compatible broker could have, with the API
  whose answers it rewrites and where the bug applies.
* ``requests.py``  — the mutants that rewrite or answer requests: what the broker keeps, its
  timers and its decisions go wrong (families ``kept``, ``timer``, ``decision``).
* ``proxy.py``     — the mutating Kafka-protocol proxy: a real broker behind it, a mutant in front;
  requests and answers rewritten, requests answered in its place, mutated exchanges recorded.
"""
