"""Speaking Kafka's protocol: from a model command to bytes on a member's connection, and back.

* ``client.py``        — the raw group-protocol client: one connection per simulated member, one
  poller for all, the ``*_request`` builders (the one place a kafka-python request is built).
* ``encoding.py``      — the model's vocabulary (``kgc.model.commands``) <-> wire messages, with
  symbolic member ids: ``encode``/``decode``, which look the request type up in ``requests.py``.
* ``requests.py``      — one descriptor per request type: its kafka-python class, its builder and
  decoder (adding a request type starts here and in ``model/requests.py``).
* ``payloads.py``      — opaque payloads, the consumer protocol's canonical JSON, topic ids.
* ``message_specs.py`` — Kafka's own JSON message specs loaded into kafka-python at run time (the
  KIP-848 and KIP-932 APIs kafka-python lacks).
* ``negotiate.py``     — which request versions the suite sends to a broker, and which it cannot.
* ``brokerconfig.py``  — the facts the model needs, read off the broker (group settings, version).
* ``probe.py``         — small blocking probes: ApiVersions, Metadata, DescribeQuorum, coordinators.
* ``broker_target.py`` — a real broker as the engine's ``Target``.
* ``security.py``      — client security from ``client.properties``: TLS, SASL (PLAIN, SCRAM,
  OAUTHBEARER), one-line errors for settings and credentials that cannot work.
* ``acls.py``          — the search's ACL actions on its principal, as a secured broker's super
  user.
"""
