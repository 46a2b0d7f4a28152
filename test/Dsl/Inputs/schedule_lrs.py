"""Checks the learning rates logged by schedule-e2e.test against the
formulas of docs/training.md (peak 1e-3, floor 1e-4, warmup 2, 8 steps)."""
import json
import math
import sys

PEAK, FLOOR, WARMUP, STEPS = 1e-3, 1e-4, 2, 8


def lrs(path):
    rows = [json.loads(line) for line in open(path)]
    return {r["step"]: r["lr"] for r in rows if "lr" in r}


def check(path, want):
    got = lrs(f"{sys.argv[1]}/{path}")
    assert sorted(got) == list(range(1, STEPS + 1)), (path, got)
    for t, lr in got.items():
        assert abs(lr - want(t)) <= 1e-7 * want(t), (path, t, lr, want(t))


def warmup(t):
    return PEAK * t / WARMUP if t <= WARMUP else None


check("compiled.jsonl", lambda t: warmup(t) or FLOOR + (PEAK - FLOOR) * 0.5 *
      (1 + math.cos(math.pi * (t - WARMUP) / (STEPS - WARMUP))))
# --schedule constant keeps the compiled warmup; --warmup 0 drops it too.
check("constant.jsonl", lambda t: warmup(t) or PEAK)
check("nowarmup.jsonl", lambda t: PEAK)
print("learning rates match")
