#!/usr/bin/env bash
# The model families users train, at benchmark size, next to PyTorch on the
# same model, weights, batches, AdamW and threads: each exported with
# torch.onnx.export(..., dynamo=True, optimize=False) (bench/families.py),
# compiled by lmc and trained STEPS steps; PyTorch trains the same model
# eager and (PEERS=eager,compile) torch.compile'd. Prints one table row per
# model: parameters, the largest relative loss difference over the steps,
# median step ms after the first, the ratio to the best PyTorch step, and
# peak RSS.
#
#   MODELS="llama bert resnet" BATCH=4 STEPS=5 THREADS=2 bash bench/families.sh
#   MODELS=qwen2 SIZE=qwen2.5-0.5b BATCH=1 STEPS=3 PEERS=eager bash bench/families.sh
#
# PyTorch, transformers and torchvision come from PyPI into the bench
# scripts' virtual environment (benchmark peers, not test dependencies).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MODELS=${MODELS:-"llama qwen2 qwen3 mistral phi3 bert distilbert resnet vit"}
SIZE=${SIZE:-bench} BATCH=${BATCH:-4} STEPS=${STEPS:-5}
THREADS=${THREADS:-2} PEERS=${PEERS:-eager,compile}
WORK=${WORK:-$ROOT/build/bench-families}
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
mkdir -p "$WORK"
source "$ROOT/bench/common.sh"
bench_pip_need transformers transformers
bench_pip_need torchvision torchvision
FAMILIES=("$PY" "$ROOT/bench/families.py")
echo "$(lscpu | sed -n 's/^Model name: *//p'), $THREADS thread(s), batch $BATCH, $STEPS AdamW steps, $(date -u +%F)"
echo "| model | parameters | loss vs PyTorch | lmc ms | PyTorch eager ms | torch.compile ms | lmc / best | lmc RSS MiB | PyTorch eager RSS MiB | compile s |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for name in $MODELS; do
  # The export writes STEPS batches of data: a cached one is reused only
  # for the same batch and step count (PyTorch regenerates its data).
  dir=$WORK/$name-$SIZE-b$BATCH-s$STEPS
  common=(--size "$SIZE" --dir "$dir" --batch "$BATCH" --steps "$STEPS")
  [ -f "$dir/model.onnx" ] ||
    "${FAMILIES[@]}" export "$name" "${common[@]}" > "$dir.export.log" 2>&1
  /usr/bin/time -f "%e %M" -o "$dir.compile.time" \
    "$ROOT/build/bin/lmc" "$dir/model.onnx" --batch "$BATCH" --optimizer adamw \
    --lr 1e-3 --weight-decay 0.01 -o "$dir.train" --quiet
  # Alternating runs: lmc, eager, compiled.
  /usr/bin/time -f "%e %M" -o "$dir.lmc.time" "$dir.train" --input x="$dir/x.npy" \
    --input labels="$dir/y.npy" --steps "$STEPS" --log-every 1 --threads "$THREADS" \
    --metrics "$dir.lmc.jsonl" > /dev/null
  for peer in ${PEERS//,/ }; do
    flag=(); [ "$peer" = compile ] && flag=(--compile)
    "${FAMILIES[@]}" train "$name" "${common[@]}" --threads "$THREADS" "${flag[@]}" \
      > "$dir.$peer.json" 2> "$dir.$peer.log"
  done
  "$PY" - "$dir" "$name" "$PEERS" <<'PY'
import json, os, statistics, sys
dir, name, peers = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
def timed(suffix):
    seconds, kib = open(dir + suffix).read().split()
    return float(seconds), int(kib) / 1024
rows = [json.loads(l) for l in open(dir + ".lmc.jsonl") if '"loss"' in l]
lmc_ms = statistics.median(r["ms"] for r in rows[1:] or rows)
torch_runs = {p: json.load(open(f"{dir}.{p}.json")) for p in peers}
eager = torch_runs.get("eager") or next(iter(torch_runs.values()))
worst = max(abs(r["loss"] - t) / abs(t) for r, t in zip(rows, eager["losses"]))
best = min(run["median_ms"] for run in torch_runs.values())
params = json.load(open(os.path.join(dir, "export.json")))["params"]
ms = {p: f"{torch_runs[p]['median_ms']:.0f}" if p in torch_runs else "-" for p in ("eager", "compile")}
rss = eager["peak_rss_mib"]
print(f"| {name} | {params / 1e6:.1f} M | {worst:.1e} | {lmc_ms:.0f} | {ms['eager']} | "
      f"{ms['compile']} | {lmc_ms / best:.2f} | {timed('.lmc.time')[1]:.0f} | {rss:.0f} | "
      f"{timed('.compile.time')[0]:.0f} |")
PY
done
