#!/usr/bin/env bash
# Two training executables (a change and its baseline) in alternating
# `--profile` runs: on a shared host a step time moves by more than most
# changes outside the products, so a change is judged against the run of
# the other executable just before or after it, never against a number
# from another hour. Each line: the executable (as given), its ms per
# step, its time per kind of region (loop nests, BLAS calls, attention,
# layer norm), and the last step's loss and gradient norm (a change meant
# to keep results bitwise must print the same ones). THREADS sets
# --threads (leave it out of TRAIN_ARGS). OPENBLAS_CORETYPE and
# OPENBLAS_L2_SIZE are unset, as for every benchmark here.
#
#   PAIRS=3 THREADS=1 bash bench/profile_ab.sh ./base ./changed -- \
#     --input x=gpt_x.npy --input labels=gpt_y.npy --steps 20
set -euo pipefail
if [ $# -lt 3 ] || [ "$3" != "--" ]; then
  echo "usage: [PAIRS=3] [THREADS=1] $0 EXE_A EXE_B -- TRAIN_ARGS..." >&2
  exit 2
fi
A=$1 B=$2
shift 3
for exe in "$A" "$B"; do
  [ -x "$exe" ] || { echo "error: $exe is not an executable" >&2; exit 2; }
done
for _ in $(seq "${PAIRS:-3}"); do
  for exe in "$A" "$B"; do
    out=$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$exe" \
      --threads "${THREADS:-1}" --profile "$@" 2>&1) ||
      { echo "$out" >&2; echo "error: $exe failed" >&2; exit 1; }
    step=$(grep -oE "[0-9.]+ ms per step" <<< "$out" | head -1)
    kinds=$(grep -E "^by kind:" <<< "$out" | sed 's/^by kind: //')
    last=$(grep -E "^step [0-9]+/" <<< "$out" | tail -1 |
      grep -oE "loss [^ ]+|norm [^ ]+" | tr '\n' ' ')
    echo "$exe: $step | $kinds | $last"
  done
done
