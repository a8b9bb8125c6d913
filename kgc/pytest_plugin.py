"""kgc pytest plugin (imports nothing heavy at load)."""
