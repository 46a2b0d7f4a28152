#!/usr/bin/env python3
"""Checks `lmc --activation-budget` against explicit `--remat` compiles.
usage: check_activation_budget.py MODEL.onnx BATCH
`lmc --remat P --emit=llvm` gives each policy's descriptor and its
`activations` estimate, for none, selective, per-block and per-block:N
(the first N segments whole, N from 1 to the segment count, read off the
per-block descriptor's `remat` line). Budgets just at and just below each
estimate must pick none, else selective, else the smallest N whose
estimate fits (written `per-block` when that is every segment), and
compile to that policy's descriptor byte for byte (the same step). A
budget below every estimate is refused, naming none's, selective's and
per-block's estimates.
"""
import re
import subprocess
import sys


def descriptor(model, batch, *flags):
    run = subprocess.run(["lmc", model, "--batch", batch, "--emit=llvm", "-o", "-", *flags],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return re.search(r'@lmc_model_descriptor = [^"]*"([^"]*)"', run.stdout).group(1), run.stderr


def activations(text):
    return int(re.search(r"\\0Aactivations (\d+)\\0A", text).group(1))


def main():
    model, batch = sys.argv[1:]
    explicit = {p: descriptor(model, batch, "--remat", p)[0]
                for p in ("none", "selective", "per-block")}
    cuts = int(re.search(r"\\0Aremat per-block cuts (\d+) ", explicit["per-block"]).group(1))
    segments = cuts + 1
    for n in range(1, segments):
        explicit[f"per-block:{n}"] = descriptor(model, batch, "--remat", f"per-block:{n}")[0]
    estimate = {p: activations(d) for p, d in explicit.items()}
    # What bisection relies on: more segments whole never need more.
    ladder = ([estimate["selective"]] + [estimate[f"per-block:{n}"] for n in range(1, segments)]
              + [estimate["per-block"]])
    assert ladder == sorted(ladder, reverse=True), ladder
    assert estimate["none"] > estimate["selective"] > estimate["per-block"], estimate
    # per-block:N with every segment is per-block.
    order = ["none", "selective"] + [f"per-block:{n}" for n in range(1, segments)] + ["per-block"]
    for budget in sorted({estimate[p] + delta for p in order for delta in (0, -1)}):
        want = next((p for p in order if estimate[p] <= budget), None)
        if want is None:
            continue
        got, note = descriptor(model, batch, "--activation-budget", str(budget))
        assert f"--remat {want}, step activations estimated at {estimate[want]} bytes" in note, \
            f"budget {budget}: expected --remat {want}: {note}"
        assert got == explicit[want], f"budget {budget}: expected --remat {want}'s step"
        print(f"budget {budget}: --remat {want}")
    low = estimate["per-block"] - 1
    run = subprocess.run(["lmc", model, "--batch", batch, "--activation-budget", str(low),
                          "-o", "/dev/null"], capture_output=True, text=True)
    assert run.returncode != 0
    for p in ("none", "selective", "per-block"):
        assert f"{p} {estimate[p]} bytes" in run.stderr, run.stderr


if __name__ == "__main__":
    main()
