"""kgc.pipeline."""
