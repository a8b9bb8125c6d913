"""Brokers: start one, find one, describe one.

* ``embedded.py``        — genuine Apache Kafka from its Maven jars (one node or a cluster, KRaft or
  ZooKeeper), with per-node kill/pause/restart for the nemesis.
* ``implementations.py`` — the other Kafka-compatible brokers kgc launches on loopback (tansu,
  franz-go's kfake, librdkafka's mock cluster).
* ``providers.py``       — one interface for "a broker to test against": embedded, external, or in a
  container (testcontainers).
* ``runstate.py``        — detached brokers ``kgc broker start`` left running: find, inspect, stop.
* ``session.py``         — open the broker a front end asked for, and describe it for a manifest.
* ``secure.py``          — secured embedded brokers: a CA, SCRAM users, the standard authorizer, a
  super user and a limited principal, and their ``client.properties``.
"""
