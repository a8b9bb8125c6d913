"""Apache Kafka's artifacts: which release lines run here, and their jars from Maven Central.

* ``releases.py`` — the release lines kgc knows, which ones this machine's Java can launch, how.
* ``maven.py``    — fetch a release's jars (broker, clients, group coordinator) into kgc's cache.
"""
