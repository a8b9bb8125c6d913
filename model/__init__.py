"""kgc.model."""
