#!/usr/bin/env python3
"""Checks `lmc --activation-budget` against explicit `--remat` compiles.
usage: check_activation_budget.py MODEL.onnx BATCH
For each policy, `lmc --remat P --emit=llvm` gives the descriptor and its
`activations` estimate; then budgets just at and just below each estimate
must pick the first policy of none, selective, per-block that fits, and
compile to that policy's descriptor byte for byte (the same step). A budget
below every estimate is refused, naming the three estimates.
"""
import re
import subprocess
import sys

POLICIES = ["none", "selective", "per-block"]


def descriptor(model, batch, *flags):
    run = subprocess.run(["lmc", model, "--batch", batch, "--emit=llvm", "-o", "-", *flags],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return re.search(r'@lmc_model_descriptor = [^"]*"([^"]*)"', run.stdout).group(1), run.stderr


def main():
    model, batch = sys.argv[1:]
    explicit = {p: descriptor(model, batch, "--remat", p)[0] for p in POLICIES}
    estimate = {p: int(re.search(r"\\0Aactivations (\d+)\\0A", d).group(1))
                for p, d in explicit.items()}
    assert estimate["none"] > estimate["selective"] > estimate["per-block"], estimate
    for budget in sorted({estimate[p] + delta for p in POLICIES for delta in (0, -1)}):
        want = next((p for p in POLICIES if estimate[p] <= budget), None)
        if want is None:
            continue
        got, note = descriptor(model, batch, "--activation-budget", str(budget))
        assert got == explicit[want], f"budget {budget}: expected --remat {want}"
        assert f"--remat {want}, step activations estimated at" in note, note
        print(f"budget {budget}: --remat {want}")
    low = estimate["per-block"] - 1
    run = subprocess.run(["lmc", model, "--batch", batch, "--activation-budget", str(low),
                          "-o", "/dev/null"], capture_output=True, text=True)
    assert run.returncode != 0
    for p in POLICIES:
        assert f"{p} " in run.stderr and f"({estimate[p]} bytes)" in run.stderr, run.stderr


if __name__ == "__main__":
    main()
