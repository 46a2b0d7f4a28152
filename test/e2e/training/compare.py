"""Compares lmc training outputs with reference data.

  compare.py params GOT.safetensors WANT.safetensors [--atol A] [--rtol R]
             [--loose SUBSTRING=ATOL]...
  compare.py sgd-step GOT.safetensors INIT.safetensors GRADS.safetensors LR
             [--grad-prefix P] [--atol A] [--rtol R]
      GOT must equal INIT - LR * GRADS (an independent SGD step) for every
      tensor GRADS has.
  compare.py losses METRICS.jsonl LOSSES.json OPTIMIZER [--rtol R]
             [--entry NAME] [--first N]
      --first N: only the first N steps' losses.
  compare.py grad-norms METRICS.jsonl LOSSES.json RUN [--rtol R]
  compare.py same-losses METRICS.jsonl OTHER.jsonl [--rtol R] [--first N]
             [--loss-only]
      the two runs logged the same steps with the same losses and norms
      (--loss-only: losses; --first N: the first N steps).
  compare.py loss-value METRICS.jsonl VALUE [--rtol R]
      the first logged loss equals VALUE.
  compare.py loss-differs METRICS.jsonl VALUE [--rtol R]
      the first logged loss is finite and not VALUE (another model's).
  compare.py eval-loss METRICS.jsonl LOSSES.json [--rtol R] [--entry NAME]
      the last eval loss equals LOSSES.json's "eval_loss".
  compare.py dropped METRICS.jsonl [--rtol R]
      the first training loss differs from the last eval loss by more than
      R relative: the step dropped something its evaluation keeps.
  compare.py eval-is-loss METRICS.jsonl OTHER.jsonl [--rtol R]
      the last eval loss of METRICS equals the first training loss of
      OTHER (a run without what evaluation leaves out).
  compare.py loss-falls METRICS.jsonl FACTOR
      the last logged loss is below FACTOR times the first.
  compare.py smaller-step-memory INFO OTHER_INFO
      the train_step arena `--info` reports in INFO is below OTHER_INFO's.

Exits 1 with the worst mismatch on failure.
"""
import argparse
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "reference"))
import safetensors_np  # noqa: E402
from checks import fail  # noqa: E402



def compare_arrays(got, want, atol, rtol, loose=()):
    """`loose`: (substring, atol) pairs, a looser absolute tolerance for the
    tensors whose name contains the substring."""
    if set(got) != set(want):
        fail(f"keys differ: {sorted(got)} vs {sorted(want)}")
    for name in sorted(want):
        g, w = got[name], want[name]
        atol_here = max([a for part, a in loose if part in name], default=atol)
        if g.shape != w.shape:
            fail(f"{name}: shape {g.shape} vs {w.shape}")
        g64, w64 = g.astype(np.float64), w.astype(np.float64)
        # NaN and Inf compare False with everything: a tolerance test alone
        # would pass them. Non-finite values must sit where the reference
        # has the same ones.
        finite = np.isfinite(w64)
        odd = (np.isfinite(g64) != finite) | (
            ~finite & ~((g64 == w64) | (np.isnan(g64) & np.isnan(w64))))
        if odd.any():
            at = int(np.argmax(odd))
            fail(f"{name}: {g.flat[at]} where the reference has {w.flat[at]}")
        err = np.where(finite, np.abs(g64 - w64), 0.0)
        bound = atol_here + rtol * np.where(finite, np.abs(w64), 0.0)
        worst = int(np.argmax(err - bound))
        if (err > bound).any():
            fail(f"{name}: |{g.flat[worst]} - {w.flat[worst]}| = "
                 f"{err.flat[worst]:.3g} > {bound.flat[worst]:.3g}")
        print(f"{name}: {g.size} values, max abs error {err.max():.3g}")


def read_metrics(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    return [r for r in rows if "loss" in r]


def close(got, want, rtol):
    """|got - want| <= rtol |want|, both finite (NaN fails, unlike a bare
    comparison)."""
    return (math.isfinite(got) and math.isfinite(want)
            and abs(got - want) <= rtol * abs(want))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode")
    parser.add_argument("args", nargs="+")
    parser.add_argument("--atol", type=float, default=1e-6)
    parser.add_argument("--rtol", type=float, default=1e-5)
    parser.add_argument("--grad-prefix", default="")
    parser.add_argument("--loose", action="append", default=[],
                        help="params: SUBSTRING=ATOL, a looser absolute "
                             "tolerance for tensors whose name has it")
    parser.add_argument("--loss-only", action="store_true",
                        help="same-losses: compare the losses, not the "
                             "gradient norms")
    parser.add_argument("--first", type=int, default=0,
                        help="losses, same-losses: compare only the first "
                             "N steps")
    parser.add_argument("--entry", default="",
                        help="losses: LOSSES.json's entry of this name "
                             "holds the losses (one file, many models)")
    o = parser.parse_args()

    if o.mode == "params":
        got, want = (safetensors_np.load(p) for p in o.args[:2])
        loose = [(part, float(a)) for part, a in
                 (item.rsplit("=", 1) for item in o.loose)]
        compare_arrays(got, want, o.atol, o.rtol, loose)
    elif o.mode == "sgd-step":
        got, init, grads = (safetensors_np.load(p) for p in o.args[:3])
        lr = float(o.args[3])
        # Tensors without a gradient (model buffers such as BatchNorm's
        # running statistics) are not trained: not compared here.
        want = {k: (init[k].astype(np.float64)
                    - lr * grads[o.grad_prefix + k].astype(np.float64))
                for k in init if o.grad_prefix + k in grads}
        untrained = sorted(set(got) - set(want))
        if untrained:
            print("not compared (no gradient): " + ", ".join(untrained))
        compare_arrays({k: got[k] for k in got if k in want}, want, o.atol,
                       o.rtol)
    elif o.mode == "losses":
        rows = read_metrics(o.args[0])
        reference = json.load(open(o.args[1]))
        if o.entry:
            reference = reference[o.entry]
        want = reference["losses"][o.args[2]]
        if o.first:
            want = want[:o.first]
        got = [r["loss"] for r in rows[:len(want)]]
        if len(got) != len(want) or not np.allclose(got, want, rtol=o.rtol, atol=0):
            fail(f"losses {got} vs {want}")
        print(f"losses {got} match {want}")
    elif o.mode == "grad-norms":
        rows = read_metrics(o.args[0])
        want = json.load(open(o.args[1]))["grad_norms"][o.args[2]]
        got = [r["grad_norm"] for r in rows[:len(want)]]
        if len(got) != len(want) or not np.allclose(got, want, rtol=o.rtol, atol=0):
            fail(f"gradient norms {got} vs {want}")
        print(f"gradient norms {got} match {want}")
    elif o.mode == "same-losses":
        a, b = (read_metrics(p) for p in o.args[:2])
        if o.first:
            a, b = a[:o.first], b[:o.first]
        if not a or not b:
            fail(f"no logged steps to compare ({len(a)} and {len(b)})")
        keys = ("step", "loss") if o.loss_only else ("step", "loss",
                                                      "grad_norm")
        for key in keys:
            got = [r.get(key, 0) for r in a]
            want = [r.get(key, 0) for r in b]
            if len(got) != len(want) or not np.allclose(got, want, rtol=o.rtol, atol=0):
                fail(f"{key}: {got} vs {want}")
        print(f"{len(a)} logged steps agree (loss"
              f"{'' if o.loss_only else ' and gradient norm'})")
    elif o.mode == "eval-loss":
        rows = [json.loads(line) for line in open(o.args[0]) if line.strip()]
        got = [r["eval_loss"] for r in rows if "eval_loss" in r][-1]
        reference = json.load(open(o.args[1]))
        want = (reference[o.entry] if o.entry else reference)["eval_loss"]
        if not close(got, want, o.rtol):
            fail(f"eval loss {got} vs {want}")
        print(f"eval loss {got} matches {want}")
    elif o.mode == "dropped":
        rows = [json.loads(line) for line in open(o.args[0]) if line.strip()]
        train = [r["loss"] for r in rows if "loss" in r][0]
        evaluated = [r["eval_loss"] for r in rows if "eval_loss" in r][-1]
        if (not (math.isfinite(train) and math.isfinite(evaluated))
                or abs(train - evaluated) <= o.rtol * abs(evaluated)):
            fail(f"training loss {train} equals the eval loss {evaluated}")
        print(f"training loss {train}, eval loss {evaluated}")
    elif o.mode == "eval-is-loss":
        rows = [json.loads(line) for line in open(o.args[0]) if line.strip()]
        evaluated = [r["eval_loss"] for r in rows if "eval_loss" in r][-1]
        train = read_metrics(o.args[1])[0]["loss"]
        if not close(evaluated, train, o.rtol):
            fail(f"eval loss {evaluated} vs the training loss {train}")
        print(f"eval loss {evaluated} matches the training loss {train}")
    elif o.mode == "loss-value":
        got = read_metrics(o.args[0])[0]["loss"]
        want = float(o.args[1])
        if not close(got, want, o.rtol):
            fail(f"loss {got} vs {want}")
        print(f"loss {got} matches {want}")
    elif o.mode == "loss-differs":
        # The other direction of loss-value, as its own check: a test that
        # wrote `not compare.py loss-value` would pass on any crash too.
        got = read_metrics(o.args[0])[0]["loss"]
        want = float(o.args[1])
        if not math.isfinite(got) or abs(got - want) <= o.rtol * abs(want):
            fail(f"loss {got} is {want} within {o.rtol} relative")
        print(f"loss {got} differs from {want}")
    elif o.mode == "loss-falls":
        rows = read_metrics(o.args[0])
        first, last = rows[0]["loss"], rows[-1]["loss"]
        if not last < float(o.args[1]) * first:
            fail(f"loss went from {first} to {last}")
        print(f"loss fell from {first} to {last} over {rows[-1]['step']} steps")
    elif o.mode == "smaller-step-memory":
        import re
        got, other = (float(re.search(r"train_step ([0-9.]+) MiB",
                                      open(p).read()).group(1))
                      for p in o.args[:2])
        if not got < other:
            fail(f"train_step arena {got} MiB is not below {other} MiB")
        print(f"train_step arena {got} MiB < {other} MiB")
    else:
        fail(f"unknown mode {o.mode}")


if __name__ == "__main__":
    main()
