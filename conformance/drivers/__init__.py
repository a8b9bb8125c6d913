"""Drivers: what runs a search against a broker, and what it keeps.

* ``suite.py``        — the differential suite: configure (cluster, facts, versions, workload),
  search (Hypothesis over the workload's machine), save (shrink, minimise, traces, result).
* ``workloads.py``    — what a run drives, one ``Workload`` per protocol (classic, consumer,
  migration, share): its scenario, versions, time scale, and the harness it builds.
* ``fault_suite.py``  — the fault-mixed classic workload on a cluster kgc started, and its replay.
* ``workers.py``      — N independent searches against one broker, merged as one.
* ``budgets.py``      — how long a failure may take to shrink and minimise, by default.
* ``minimize.py``     — the command-deletion pass after Hypothesis's shrinking.
* ``witness.py``      — a recorded trace for every cell the coverage universe counts.
* ``real_clients.py`` — groups of real consumers (kafka-python, librdkafka) against a broker.
"""
