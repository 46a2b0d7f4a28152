"""Compares the losses of a GPU run with the CPU run of the same model.

  compare_losses.py GPU.jsonl CPU.jsonl RTOL

Both runs start from the same embedded weights and read the same batches;
every logged step's loss must agree within RTOL (relative).
"""
import json
import sys


def losses(path):
    return {r["step"]: r["loss"] for r in map(json.loads, open(path))
            if "loss" in r and "step" in r}


gpu, cpu, rtol = losses(sys.argv[1]), losses(sys.argv[2]), float(sys.argv[3])
if not cpu or sorted(gpu) != sorted(cpu):
    print(f"  steps differ: GPU {sorted(gpu)[:5]}..., CPU {sorted(cpu)[:5]}...")
    sys.exit(1)
worst = max(abs(gpu[s] - cpu[s]) / max(abs(cpu[s]), 1e-12) for s in cpu)
last = max(cpu)
print(f"  {len(cpu)} steps, worst relative loss difference {worst:.2e} "
      f"(limit {rtol:g}); last loss GPU {gpu[last]:.6f} CPU {cpu[last]:.6f}")
sys.exit(0 if worst <= rtol else 1)
