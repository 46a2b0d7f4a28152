"""Independent oracle for one bf16 mixed-precision SGD step of the digits MLP.

  bf16_step.py INIT.safetensors X.npy LABELS.npy BATCH LR GOT.safetensors
               F32.safetensors

Recomputes the step in numpy with lmc's documented policy: every matmul
(forward and backward) rounds its two operands to bf16 (round to nearest
even) and accumulates in f32; everything else is f32. GOT (lmc --precision
bf16) must match it to f32 summation-order noise, and must differ from the
f32 step F32 by clearly more, so the test would notice bf16 being skipped.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "reference"))
import safetensors_np  # noqa: E402


def bf16(a):
    """Rounds float32 values to bfloat16 (nearest even), kept as float32."""
    bits = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return rounded.astype(np.uint32).view(np.float32)


def mm(a, b):
    """bf16 operands, exact products, float64 sums rounded once to f32."""
    return (bf16(a).astype(np.float64) @ bf16(b).astype(np.float64)).astype(np.float32)


def main():
    init_path, x_path, labels_path, batch, lr, got_path, f32_path = sys.argv[1:]
    batch, lr = int(batch), np.float32(lr)
    p = safetensors_np.load(init_path)
    x = np.load(x_path)[:batch].astype(np.float32)
    labels = np.load(labels_path)[:batch]
    w1, b1, w2, b2 = (p[k].astype(np.float32) for k in
                      ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"))

    h = mm(x, w1.T) + b1
    a = np.maximum(h, 0)
    logits = mm(a, w2.T) + b2
    z = logits - logits.max(axis=1, keepdims=True)
    prob = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    dlogits = prob.copy()
    dlogits[np.arange(batch), labels] -= 1
    dlogits = (dlogits / batch).astype(np.float32)
    grads = {"fc2.weight": mm(dlogits.T, a), "fc2.bias": dlogits.sum(0)}
    dh = mm(dlogits, w2) * (h > 0)
    grads["fc1.weight"] = mm(dh.T, x)
    grads["fc1.bias"] = dh.sum(0)
    want = {k: p[k] - lr * grads[k] for k in grads}

    got = safetensors_np.load(got_path)
    f32 = safetensors_np.load(f32_path)
    worst = max(float(np.abs(got[k] - want[k]).max()) for k in want)
    gap = max(float(np.abs(f32[k] - want[k]).max()) for k in want)
    print(f"bf16 step vs oracle: max abs error {worst:.3g}; "
          f"f32 step vs oracle: {gap:.3g}")
    if worst > 2e-7 or gap < 20 * max(worst, 1e-9):
        print("MISMATCH")
        sys.exit(1)


if __name__ == "__main__":
    main()
