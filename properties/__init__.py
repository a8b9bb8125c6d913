"""kgc.properties."""
