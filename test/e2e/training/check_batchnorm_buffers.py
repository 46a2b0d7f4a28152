"""Independent numpy oracle for BatchNormalization's running statistics as
model buffers (test/e2e/training/batchnorm-buffers.test).

The model: y = BatchNormalization(x, scale, bias, mean, var) in training
mode (momentum 0.9, epsilon 1e-3) on x [N, 3, 4, 4], loss = mse(y, t). With
SGD, scale and bias follow from the normalized batch alone, and the running
statistics from the batches alone:

  running <- 0.9 * running + 0.1 * batch statistic (biased variance, as the
  ONNX reference implementation computes it).

  check_batchnorm_buffers.py data DIR
      writes DIR/x.npy [8, 3, 4, 4] and DIR/t.npy
  check_batchnorm_buffers.py params DIR GOT.safetensors LR BATCH PER_STEP
                             [--processes N]
      GOT must hold scale and bias after SGD steps with learning rate LR on
      consecutive batches of BATCH samples (PER_STEP: how many batches each
      optimizer step averages), and mean/var after the running updates of
      every batch, in order. With N data-parallel processes each step's
      PER_STEP batches are split over them and the running statistics
      continue from rank 0's, which saw the first PER_STEP / N batches.
  check_batchnorm_buffers.py eval-loss DIR GOT.safetensors METRICS.jsonl
      the last eval loss in METRICS equals the mse of the evaluation-mode
      forward (running statistics) over all of DIR's samples with GOT's
      tensors.
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "reference"))
import safetensors_np  # noqa: E402
from checks import fail  # noqa: E402

MOMENTUM, EPS = 0.9, 1e-3
INITIAL = {
    "scale": np.array([1.0, 2.0, 3.0]),
    "bias": np.array([0.0, 0.5, 1.0]),
    "mean": np.array([0.1, 0.2, 0.3]),
    "var": np.array([1.0, 1.5, 2.0]),
}


def channel(v):
    return v.reshape(1, -1, 1, 1)


def load(directory):
    return (np.load(os.path.join(directory, "x.npy")).astype(np.float64),
            np.load(os.path.join(directory, "t.npy")).astype(np.float64))


def simulate(x, t, lr, batch, per_step, processes):
    p = {k: v.copy() for k, v in INITIAL.items()}
    samples = x.shape[0]
    for start in range(0, samples, batch * per_step):
        grads = {"scale": 0.0, "bias": 0.0}
        for k in range(per_step):
            xb = x[start + k * batch:start + (k + 1) * batch]
            tb = t[start + k * batch:start + (k + 1) * batch]
            mean = xb.mean(axis=(0, 2, 3))
            var = xb.var(axis=(0, 2, 3))
            xhat = (xb - channel(mean)) / np.sqrt(channel(var) + EPS)
            y = xhat * channel(p["scale"]) + channel(p["bias"])
            g = 2.0 * (y - tb) / y.size
            grads["scale"] += (g * xhat).sum(axis=(0, 2, 3)) / per_step
            grads["bias"] += g.sum(axis=(0, 2, 3)) / per_step
            if k < per_step // processes:  # rank 0's micro-batches
                p["mean"] = MOMENTUM * p["mean"] + (1 - MOMENTUM) * mean
                p["var"] = MOMENTUM * p["var"] + (1 - MOMENTUM) * var
        p["scale"] = p["scale"] - lr * grads["scale"]
        p["bias"] = p["bias"] - lr * grads["bias"]
    return p



def main():
    mode, directory = sys.argv[1], sys.argv[2]
    if mode == "data":
        rng = np.random.default_rng(7)
        np.save(os.path.join(directory, "x.npy"),
                (rng.standard_normal((8, 3, 4, 4)) * 2 + 1).astype(np.float32))
        np.save(os.path.join(directory, "t.npy"),
                rng.standard_normal((8, 3, 4, 4)).astype(np.float32))
        return
    x, t = load(directory)
    got = safetensors_np.load(sys.argv[3])
    if mode == "params":
        lr, batch, per_step = float(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
        processes = int(sys.argv[8]) if sys.argv[7:8] == ["--processes"] else 1
        want = simulate(x, t, lr, batch, per_step, processes)
        if sorted(got) != sorted(want):
            fail(f"keys {sorted(got)} vs {sorted(want)}")
        for name in sorted(want):
            err = np.abs(got[name] - want[name]).max()
            if err > 1e-6 * max(1.0, np.abs(want[name]).max()):
                fail(f"{name}: {got[name]} vs {want[name]}")
            print(f"{name}: max abs error {err:.3g}")
    elif mode == "eval-loss":
        p = {k: v.astype(np.float64) for k, v in got.items()}
        y = ((x - channel(p["mean"])) / np.sqrt(channel(p["var"]) + EPS)
             * channel(p["scale"]) + channel(p["bias"]))
        want = float(((y - t) ** 2).mean())
        rows = [json.loads(line) for line in open(sys.argv[4])]
        loss = [r["eval_loss"] for r in rows if "eval_loss" in r][-1]
        if abs(loss - want) > 1e-5 * abs(want):
            fail(f"eval loss {loss} vs {want}")
        print(f"eval loss {loss} matches {want}")
    else:
        fail(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
