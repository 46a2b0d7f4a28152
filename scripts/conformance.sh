#!/usr/bin/env bash
# Runs the ONNX backend node tests (Debian's libonnx-testdata) through lmc
# and writes the report docs/onnx-conformance.md (build first:
# scripts/build.sh). --update-expected also rewrites the list of tests the
# lit test requires to pass (test/e2e/conformance/expected-pass.txt): it
# adds what passes now and refuses to drop a test that passed before
# unless --allow-drops follows.
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
  # The baseline only grows by itself: a test that passed before and no
  # longer does is a regression to fix, or to drop by name on purpose.
  dropped=$(comm -23 <(grep -v '^#' "$EXPECTED" | sort) \
                     <(grep -v '^#' "$EXPECTED.new" | sort))
  if [[ -n $dropped && ${2:-} != --allow-drops ]]; then
    rm -f "$EXPECTED.new"
    echo "error: these tests passed before and no longer do:" >&2
    echo "$dropped" | sed 's/^/  /' >&2
    echo "fix them, or run with --update-expected --allow-drops to remove" \
         "them from test/e2e/conformance/expected-pass.txt" >&2
    exit 1
  fi
  mv "$EXPECTED.new" "$EXPECTED"
fi
