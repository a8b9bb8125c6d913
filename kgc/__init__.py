"""kafka-group-conformance: a reference model and conformance suite for Kafka groups."""

__version__ = "0.1.0"
