# The two Quickstart commands work on a fresh machine: each installs what is missing first.
#   make check   - the conformance suite against an embedded Apache Kafka, with a readable report
#   make test    - lint, types, and every test (broker-backed ones against Kafka 4.3.1 and 3.9.2)
PY ?= python3
KAFKA_VERSIONS ?= 4.3.1 3.9.2
STAMP := .kgc-installed

.PHONY: check test install lint clean-stamp sweep

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
# (fault scenarios pick their own versions: ZooKeeper 3.9.2 and KRaft 4.3.1). Of the findings only
# the broker's is run again: the kafka-python ones are client bugs, whatever the broker version.
# Both differential passes record every example's trace into one corpus (CI_DIR is make's own
# scratch folder, under the gitignored build/, emptied first so no stale corpus leaks in); the
# CI report is built from that corpus and checked as a person sees it, in headless Chromium.
# The session brokers' logs are kept; one that reloaded a coordinator because its state machine
# fell out of step with the log means a test wrote into the shared __consumer_offsets, which turns
# into COORDINATOR_LOAD_IN_PROGRESS in unrelated tests minutes later: that fails CI by itself.
# ci_report_check.py is not a test_*.py file: only this step runs it (see its docstring).
CI_DIR := build/kgc-ci
CI_VERSIONS := 4.3.1 3.9.2
# Besides the pinned 4.3 and 3.9 passes above, CI runs one seed on the oldest release line kgc can
# start here and on the newest 4.x (`kgc lines`; the sweep over every line is `make sweep`).
CI_LINES := 1.0,4.4
# The quick report card: the pinned Apache release and each implementation kgc launches, against
# their baselines in traces/known (the full card, three Apache lines more: `kgc matrix --out DIR`).
# Past a profile, a search meets one deviation of tansu's or the mock's own join phase in shapes
# its time-bounded shrink leaves differently from run to run: CI tolerates a NEW one near a known
# baseline (same request type and answer; card_check.py holds it to that), a new kind fails.
CI_MATRIX := apache-kafka:4.3.1,tansu,kfake,librdkafka-mock
# The quality tests (a broken model must be caught by a seeded search) run in a pytest process of
# their own, as `kgc check --seed` runs: Hypothesis's generation for one seed was seen to drift in
# a long process after the Spark pipeline tests (the 25th example of seed 1 differs), and the
# drifted search then missed two classic variants it finds in a fresh process. That process runs
# beside the main pass (niced, its output shown when both are done): both spend most of their time
# waiting for brokers' timers, so two cores carry both, and CI saves the quality tests' 9 minutes.
# The differential suite saves what it finds under --kgc-traces: in CI that is $(CI_DIR), never the
# repository's traces/ (a known Kafka bug's example saved there mid-run failed tests/test_traces.py).
test: lint
	rm -rf $(CI_DIR) && mkdir -p $(CI_DIR)
	nice -n 10 $(PY) -m pytest tests/quality > $(CI_DIR)/quality.log 2>&1 & quality=$$!; \
	$(PY) -m pytest --durations=15 --kgc-record $(CI_DIR)/corpus --ignore=tests/quality \
	  --kgc-traces $(CI_DIR)/traces \
	  --kgc-broker-logs $(CI_DIR)/broker-logs; main=$$?; \
	wait $$quality; q=$$?; echo "== the quality tests (run beside the main pass):"; \
	cat $(CI_DIR)/quality.log; test $$main = 0 && test $$q = 0
	$(PY) -m pytest -m broker tests/smoke tests/differential tests/findings/test_consumer_metadata.py \
	  tests/test_traces.py \
	  --kgc-kafka-version 3.9.2 --kgc-record $(CI_DIR)/corpus --kgc-broker-logs $(CI_DIR)/broker-logs \
	  --kgc-traces $(CI_DIR)/traces
	$(PY) -m kgc.cli lines --sweep --only $(CI_LINES) --seeds 1 --traces $(CI_DIR)/lines-traces
	$(PY) -m kgc.cli matrix --implementations $(CI_MATRIX) --out $(CI_DIR)/matrix --tolerate-near
	KGC_CARD=$(CI_DIR)/matrix $(PY) -m pytest tests/pipeline/card_check.py
	@! grep -l "out of sync with the underlying log" $(CI_DIR)/broker-logs/kafka-*-1n-*.log || \
	  { echo "a test wrote into the shared session broker's __consumer_offsets (see above)"; exit 1; }
	$(PY) -m kgc.cli report $(CI_DIR)/corpus --out $(CI_DIR)/report \
	  --title "kgc CI report: traces recorded against Apache Kafka $(CI_VERSIONS)"
	KGC_CI_CORPUS=$(CI_DIR)/corpus KGC_CI_REPORT=$(CI_DIR)/report KGC_CI_VERSIONS="$(CI_VERSIONS)" \
	  $(PY) -m pytest tests/pipeline/ci_report_check.py

clean-stamp:
	rm -f $(STAMP)

# Every release line that runs here, newest patch of each, 5 seeds of the ci profile (about an hour)
sweep: $(STAMP)
	$(PY) -m kgc.cli lines --sweep --seeds 5 --traces build/kgc-sweep/traces
