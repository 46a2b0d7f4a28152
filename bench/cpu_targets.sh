#!/usr/bin/env bash
# One model compiled for several CPUs (lmc --cpu), run alternately on this
# machine: the step time of each (median after step 1), its ratio to the
# first CPU's, and peak RSS. The question it answers: what a portable
# executable (x86-64-v3, x86-64-v2) costs against one for this machine's
# own CPU (native). GPT-2 as examples/gpt2 exports it (PyTorch from PyPI in
# the benchmark venv, bench/common.sh, for the export only).
#
#   SIZE=124M CONTEXT=256 BATCH=4 THREADS=2 STEPS=5 ROUNDS=2 \
#     CPUS="native x86-64-v3" bash bench/cpu_targets.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SIZE=${SIZE:-124M} CONTEXT=${CONTEXT:-256} BATCH=${BATCH:-4}
THREADS=${THREADS:-2} STEPS=${STEPS:-5} ROUNDS=${ROUNDS:-2}
CPUS=${CPUS:-"native x86-64-v3"}
WORK=${WORK:-$ROOT/build/bench-cpu-targets}
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
mkdir -p "$WORK"
source "$ROOT/bench/common.sh"
bench_token_shard "$WORK"
MODEL=$WORK/gpt2-$SIZE-$CONTEXT.onnx
bench_gpt2_export "$MODEL"
for cpu in $CPUS; do
  "$ROOT/build/bin/lmc" "$MODEL" --batch "$BATCH" --cpu "$cpu" \
    -o "$WORK/train-$cpu" --quiet
done
rm -f "$WORK"/run-*.jsonl "$WORK"/run-*.time
for round in $(seq "$ROUNDS"); do # alternating: every CPU once per round
  for cpu in $CPUS; do
    /usr/bin/time -f "%e %M" -o "$WORK/run-$cpu-$round.time" \
      "$WORK/train-$cpu" --tokens "$WORK/train.bin" --steps "$STEPS" \
      --threads "$THREADS" --log-every 1 --metrics "$WORK/run-$cpu-$round.jsonl" \
      > /dev/null
  done
done
python3 - "$WORK" "$ROUNDS" "$SIZE" "$CONTEXT" "$BATCH" "$THREADS" $CPUS <<'PY'
import json, os, statistics, sys
work, rounds, size, ctx, batch, threads, *cpus = sys.argv[1:]
model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
              if l.startswith("model name")), "unknown CPU")
print(f"GPT-2 {size}, batch {batch} x context {ctx}, AdamW, {threads} "
      f"threads, {rounds} alternating rounds; host: {model}")
print("| --cpu | step ms (median over rounds) | per round | / first | peak RSS MiB |")
print("|---|---|---|---|---|")
first = None
for cpu in cpus:
    per_round, rss = [], []
    for r in range(1, int(rounds) + 1):
        rows = [json.loads(l) for l in open(f"{work}/run-{cpu}-{r}.jsonl")]
        per_round.append(statistics.median(x["ms"] for x in rows[1:] or rows))
        rss.append(int(open(f"{work}/run-{cpu}-{r}.time").read().split()[1]) / 1024)
    ms = statistics.median(per_round)
    first = first or ms
    rounds_text = " / ".join(f"{m:.0f}" for m in per_round)
    print(f"| {cpu} | {ms:.0f} | {rounds_text} | {ms / first:.3f} | {max(rss):.0f} |")
PY
