"""Faults: only ever injected into a cluster kgc started itself, and recorded in the history.

* ``nemesis.py``      — kill, pause, resume and restart nodes; the Hypothesis rules that draw them.
* ``controlplane.py`` — observe and poke the control plane: controller epochs, the KRaft quorum,
  broker fencing, a zombie controller's UpdateMetadata.
"""
