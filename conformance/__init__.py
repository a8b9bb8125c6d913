"""kgc.conformance: everything that touches a real broker, in rooms by job.

Rooms, and the one way their imports point (``tests/architecture/test_layers.py`` checks it)::

    errors  <-  artifacts  <-  wire  <-  brokers  <-  faults  <-  mutants  <-  drivers

* ``errors.py``   — the one-line errors of this layer (each says how to fix it).
* ``artifacts/``  — Apache Kafka's release lines and their jars from Maven Central.
* ``wire/``       — speaking the protocol: the raw client, model command <-> wire message, message
  specs, version negotiation, facts read off a broker, probes, the broker as a ``Target``.
* ``brokers/``    — start, find and describe a broker: embedded Kafka, the other implementations
  kgc launches, providers (external, container), detached brokers, the front ends' session.
* ``faults/``     — the nemesis and the control plane it observes and pokes.
* ``mutants/``    — brokers broken on purpose, behind a mutating proxy.
* ``drivers/``    — what runs searches: the suite and its workloads, the fault suite, parallel
  workers, shrink budgets, minimisation, witnesses, groups of real clients.

Benchmarks that measure these live in ``kgc.bench``; ``resources/`` holds Kafka's JSON message
specs shipped verbatim (read by ``faults/controlplane.py``).
"""
