#!/usr/bin/env bash
# Runs the ONNX backend node tests (Debian's libonnx-testdata) through lmc
# and writes the report docs/onnx-conformance.md (build first:
# scripts/build.sh). --update-expected also rewrites the list of tests the
# lit test requires to pass (test/e2e/conformance/expected-pass.txt).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DATA=/usr/share/libonnx-testdata/data/node
OUT=$ROOT/build/conformance.txt
"$ROOT/build/bin/lmc-onnx-conformance" "$DATA" >"$OUT" || true
python3 "$ROOT/scripts/conformance_report.py" "$OUT" >"$ROOT/docs/onnx-conformance.md"
tail -1 "$OUT"
if [[ ${1:-} == --update-expected ]]; then
  EXPECTED=$ROOT/test/e2e/conformance/expected-pass.txt
  { sed -n '1,/^[^#]/{/^#/p}' "$EXPECTED"; awk '$1 == "PASS" {print $2}' "$OUT"; } >"$EXPECTED.new"
  mv "$EXPECTED.new" "$EXPECTED"
fi
