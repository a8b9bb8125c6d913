# The two Quickstart commands work on a fresh machine: each installs what is missing first.
#   make check   - the conformance suite against an embedded Apache Kafka, with a readable report
#   make test    - lint, types, and every test (broker-backed ones against Kafka 4.3.1 and 3.9.2)
PY ?= python3
KAFKA_VERSIONS ?= 4.3.1 3.9.2
STAMP := .kgc-installed

.PHONY: check test install lint clean-stamp

$(STAMP): pyproject.toml
	$(PY) -m pip install -q -e '.[all]'
	$(PY) -m kgc.cli broker fetch $(KAFKA_VERSIONS)
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	  || echo "note: install Debian's chromium for the report screenshot test"; }
	touch $@

install: $(STAMP)

check: $(STAMP)
	$(PY) -m kgc.cli check

lint: $(STAMP)
	$(PY) -m ruff check .
	@echo "(mypy --strict on model/ runs as tests/model/test_model_typing.py)"

# Everything against the pinned 4.x, then the broker-facing conformance tests again against 3.9.x
# (fault scenarios pick their own versions: ZooKeeper 3.9.2 and KRaft 4.3.1).
test: lint
	$(PY) -m pytest
	$(PY) -m pytest -m broker tests/smoke tests/differential tests/findings tests/test_traces.py \
	  --kgc-kafka-version 3.9.2

clean-stamp:
	rm -f $(STAMP)
