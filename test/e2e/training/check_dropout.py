"""Independent numpy oracle for Dropout in training mode
(test/e2e/training/dropout.test).

The model: loss = ReduceSum(Dropout(x * w, ratio 0.25, training_mode 1,
seed 42)) with w [256] trained by SGD. This script re-implements, from
their documented formulas, the runtime's per-micro-batch key (hyper
`rng_key`, docs/runtime-abi.md) and lmc.random_uniform (docs/dialect.md),
and so predicts every mask exactly: the losses and the weights after each
step follow.

  check_dropout.py model DIR
      writes DIR/dropout.onnxtxt and DIR/x.npy [8, 256]
  check_dropout.py check DIR GOT.safetensors METRICS.jsonl LR STEPS BATCH
                   SEED MICRO_BATCHES [STREAM]
      GOT and the logged losses must equal STEPS SGD steps, each averaging
      MICRO_BATCHES micro-batches of BATCH consecutive samples (job
      micro-batch j of step t uses key rng_key(SEED, t, j); STREAM is the
      random stream, 42 as the ONNX model's seed attribute, 0 for the first
      dropout of a DSL model); the share of kept elements must be within 5
      standard deviations of 0.75.
  check_dropout.py eval DIR GOT.safetensors METRICS.jsonl
      the last eval loss is ReduceSum(x * w) over all samples (evaluation
      is the identity).
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "reference"))
import safetensors_np  # noqa: E402
from checks import fail  # noqa: E402

FEATURES, SAMPLES, RATIO, STREAM = 256, 8, np.float32(0.25), 42
MASK64 = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15


def mix(x):
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def rng_key(seed, step, micro_batch):
    return mix(mix(mix(seed) ^ step) ^ micro_batch)


def random_uniform(key, count, stream):
    base = mix((key * GAMMA + stream) & MASK64)
    bits = [mix((base + i * GAMMA) & MASK64) for i in range(count)]
    return np.array([b >> 40 for b in bits], dtype=np.float32) * np.float32(2.0 ** -24)



def write_model(directory):
    ones = ", ".join(["1.0"] * FEATURES)
    with open(os.path.join(directory, "dropout.onnxtxt"), "w") as f:
        f.write(f"""<ir_version: 8, opset_import: ["" : 17]>
g (float[N, {FEATURES}] x) => (float loss)
    <float[{FEATURES}] w = {{{ones}}}, float ratio = {{0.25}}, bool training = {{1}}>
{{
  h = Mul(x, w)
  y, mask = Dropout <seed = {STREAM}> (h, ratio, training)
  loss = ReduceSum <keepdims = 0> (y)
}}
""")
    rng = np.random.default_rng(11)
    np.save(os.path.join(directory, "x.npy"),
            rng.standard_normal((SAMPLES, FEATURES)).astype(np.float32))


def check(directory, got_path, metrics, lr, steps, batch, seed, micro_batches,
          stream):
    x = np.load(os.path.join(directory, "x.npy"))
    w = np.ones(FEATURES, dtype=np.float32)
    scale = np.float32(1.0 / (1.0 - 0.25))
    losses, kept, total = [], 0, 0
    sample = 0
    for step in range(1, steps + 1):
        grad = np.zeros(FEATURES, dtype=np.float64)
        loss = 0.0
        for j in range(micro_batches):
            xb = x[sample % SAMPLES:sample % SAMPLES + batch]
            sample += batch
            u = random_uniform(rng_key(seed, step, j), batch * FEATURES, stream)
            keep = (u >= RATIO).reshape(batch, FEATURES)
            kept += int(keep.sum())
            total += keep.size
            y = np.where(keep, (xb * w) * scale, np.float32(0))
            loss += float(y.astype(np.float64).sum()) / micro_batches
            grad += np.where(keep, xb * scale, 0).astype(np.float64).sum(0) / micro_batches
        losses.append(loss)
        w = (w.astype(np.float64) - lr * grad).astype(np.float32)
    got = safetensors_np.load(got_path)["w"]
    err = np.abs(got - w).max()
    if err > 1e-5:
        fail(f"w differs by {err}")
    rows = [json.loads(line) for line in open(metrics)]
    logged = [r["loss"] for r in rows if "loss" in r]
    if not np.allclose(logged, losses, rtol=1e-5, atol=1e-4):
        fail(f"losses {logged} vs {losses}")
    share, sigma = kept / total, np.sqrt(0.75 * 0.25 / total)
    if abs(share - 0.75) > 5 * sigma:
        fail(f"kept {share} of the elements, expected 0.75 +- {5 * sigma}")
    print(f"w max abs error {err:.3g}; losses {losses} match; kept {share:.4f}")


def check_eval(directory, got_path, metrics):
    x = np.load(os.path.join(directory, "x.npy")).astype(np.float64)
    w = safetensors_np.load(got_path)["w"].astype(np.float64)
    want = float((x * w).sum())
    rows = [json.loads(line) for line in open(metrics)]
    got = [r["eval_loss"] for r in rows if "eval_loss" in r][-1]
    if abs(got - want) > 1e-5 * max(1.0, abs(want)):
        fail(f"eval loss {got} vs {want}")
    print(f"eval loss {got} matches {want}")


def main():
    mode, directory = sys.argv[1], sys.argv[2]
    if mode == "model":
        write_model(directory)
    elif mode == "check":
        a = sys.argv[3:]
        check(directory, a[0], a[1], float(a[2]), int(a[3]), int(a[4]),
              int(a[5]), int(a[6]), int(a[7]) if len(a) > 7 else STREAM)
    elif mode == "eval":
        check_eval(directory, sys.argv[3], sys.argv[4])
    else:
        fail(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
