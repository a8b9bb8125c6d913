#!/usr/bin/env bash
# kgc as a user gets it: `pip install` (not editable) into a fresh venv, used from a folder outside
# the repository, with nothing but its core dependencies. Proves that
#   * `kgc check --profile ci` runs against an embedded broker, and `kgc analyze` and `kgc replay`
#     work on what it recorded (z3 and every other import on their paths is a core dependency);
#   * a broker's own CI can run the suite without cloning kgc: `pytest --pyargs kgc.testsuite`
#     against a broker started with `kgc broker start`, its JUnit XML saying 1 test passed.
# Kafka's jars come from kgc's cache (KGC_CACHE_DIR, default ~/.cache/kgc; `make test` fills it);
# pip needs PyPI. Run by .ci/run after `make test`; prints its wall time.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/kgc-clean-install.XXXXXX")
venv="$work/venv"
kgc="$venv/bin/kgc"
# brokers this script starts keep their state here, apart from anyone else's
export KGC_STATE_DIR="$work/run"
broker=""
cleanup() {
  if [ -n "$broker" ]; then "$kgc" broker stop --name clean-install || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
start=$(date +%s)

echo "== the source as a clone has it (no build/ or egg-info left by an earlier build)"
mkdir "$work/src"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard) |
  while IFS= read -r -d '' f; do [ -f "$repo/$f" ] && printf '%s\0' "$f"; done |
  (cd "$repo" && xargs -0 cp --parents -t "$work/src")

echo "== pip install (not editable) into a fresh venv"
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check "$work/src"

cd "$work"  # outside the repository: nothing of it is importable from here
"$kgc" --help >/dev/null
"$kgc" check --help >/dev/null

echo "== kgc check --profile ci (embedded broker)"
"$kgc" check --profile ci --seed 20261121 --traces "$work/failing" --record "$work/corpus"

echo "== kgc analyze (no broker)"
"$kgc" analyze "$work/corpus" | tail -n 1

echo "== kgc broker start"
bootstrap=$("$kgc" broker start --name clean-install)
broker=started
echo "$bootstrap"

echo "== kgc replay against it"
first=$(find "$work/corpus" -name '*.jsonl' | sort | head -n 1)
"$kgc" replay "$first" --bootstrap-server "$bootstrap"

echo "== pytest --pyargs kgc.testsuite against it"
"$venv/bin/pytest" --pyargs kgc.testsuite --kgc-bootstrap-server "$bootstrap" \
  --kgc-traces "$work/failing" --junitxml "$work/junit.xml" -q
"$venv/bin/python" - "$work/junit.xml" <<'EOF'
import sys
import xml.etree.ElementTree as ET

root = ET.parse(sys.argv[1]).getroot()
suite = root if root.tag == "testsuite" else root.find("testsuite")
counts = {k: int(suite.get(k, 0)) for k in ("tests", "failures", "errors", "skipped")}
passed = counts["tests"] - counts["failures"] - counts["errors"] - counts["skipped"]
if (counts["tests"], passed) != (1, 1):
    sys.exit(f"JUnit XML: expected 1 test, passed; got {counts}")
print(f"JUnit XML: 1 test, passed ({counts})")
EOF

"$kgc" broker stop --name clean-install
broker=""
echo "== clean install took $(( $(date +%s) - start )) s"
