"""Brokers broken on purpose, for ``kgc bench mutants`` and the quality tests.

* ``catalogue.py`` — the mutants: each a bug a Kafka-compatible broker could have, with the API
  whose answers it rewrites and where the bug applies.
* ``proxy.py``     — the mutating Kafka-protocol proxy: a real broker behind it, a mutant in front.
"""
