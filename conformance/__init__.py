"""kgc.conformance."""
