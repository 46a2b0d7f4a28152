"""Throughput of a GPU training run from its metrics.

  throughput.py METRICS.jsonl FLOPS_PER_STEP

Prints the median step time after a 10 % warm-up, samples/s and the model
FLOP utilization against the H100/H200 SXM dense f32 peak (67 TFLOP/s) and
against the peak the runtime states at startup (SMs x FLOP/cycle x clock,
its "mfu" column).
"""
import json
import statistics
import sys

H200_F32_PEAK = 67e12

rows = [r for r in map(json.loads, open(sys.argv[1])) if "ms" in r]
flops = float(sys.argv[2])
steady = rows[len(rows) // 10:]
ms = statistics.median(r["ms"] for r in steady)
samples = statistics.median(r["samples_per_s"] for r in steady)
stated = statistics.median(r["mfu"] for r in steady if "mfu" in r)
print(f"GPT on the GPU: {ms:.3f} ms/step, {samples:.0f} samples/s, "
      f"{flops / (ms / 1e3) / 1e9:.1f} GFLOP/s, "
      f"MFU {100 * flops / (ms / 1e3) / H200_F32_PEAK:.3f}% of 67 TFLOP/s f32, "
      f"{100 * stated:.3f}% of the runtime's stated f32 peak")
