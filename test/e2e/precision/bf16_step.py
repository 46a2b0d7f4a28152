"""Independent oracle for one bf16 mixed-precision SGD step of the digits
MLP or CNN.

  bf16_step.py mlp|cnn INIT.safetensors X.npy LABELS.npy BATCH LR
               GOT.safetensors F32.safetensors

Recomputes the step in numpy with lmc's documented policy: every matmul and
convolution (forward and backward) rounds its two operands to bf16 (round to
nearest even) and accumulates in f32; everything else is f32. GOT (lmc --precision
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


def conv(x, w):
    """3x3 convolution, stride 1, zero padding 1, in bf16 with f32 sums:
    x [N, C, H, W], w [F, C, 3, 3] -> [N, F, H, W]."""
    n, c, h, wd = x.shape
    xp = np.pad(bf16(x), ((0, 0), (0, 0), (1, 1), (1, 1))).astype(np.float64)
    out = np.zeros((n, w.shape[0], h, wd))
    for i in range(3):
        for j in range(3):
            out += np.einsum("nchw,fc->nfhw", xp[:, :, i:i + h, j:j + wd],
                             bf16(w[:, :, i, j]).astype(np.float64))
    return out.astype(np.float32)


def conv_weight_grad(x, g):
    """The weight cotangent of conv(x, w) given the result cotangent g."""
    h, wd = x.shape[2:]
    xp = np.pad(bf16(x), ((0, 0), (0, 0), (1, 1), (1, 1))).astype(np.float64)
    g64 = bf16(g).astype(np.float64)
    out = np.zeros((g.shape[1], x.shape[1], 3, 3))
    for i in range(3):
        for j in range(3):
            out[:, :, i, j] = np.einsum("nchw,nfhw->fc",
                                        xp[:, :, i:i + h, j:j + wd], g64)
    return out.astype(np.float32)


def conv_input_grad(g, w):
    """The input cotangent of conv(x, w): the convolution of g with the
    flipped, transposed kernel."""
    flipped = w[:, :, ::-1, ::-1].transpose(1, 0, 2, 3)
    return conv(g, np.ascontiguousarray(flipped))


def max_pool(x):
    """2x2 max pooling, stride 2, and the mask of each window's first
    maximum (the position its cotangent goes to)."""
    n, c, h, w = x.shape
    windows = x.reshape(n, c, h // 2, 2, w // 2, 2).transpose(0, 1, 2, 4, 3, 5)
    windows = windows.reshape(n, c, h // 2, w // 2, 4)
    first = windows.argmax(axis=-1)
    mask = np.eye(4, dtype=np.float32)[first]
    return windows.max(axis=-1), mask


def max_pool_grad(g, mask):
    n, c, h, w, _ = mask.shape
    spread = (mask * g[..., None]).reshape(n, c, h, w, 2, 2)
    return spread.transpose(0, 1, 2, 4, 3, 5).reshape(n, c, 2 * h, 2 * w)


def cross_entropy_grad(logits, labels):
    z = logits - logits.max(axis=1, keepdims=True)
    prob = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    prob[np.arange(len(labels)), labels] -= 1
    return (prob / len(labels)).astype(np.float32)


def mlp_grads(p, x, labels):
    h = mm(x, p["fc1.weight"].T) + p["fc1.bias"]
    a = np.maximum(h, 0)
    logits = mm(a, p["fc2.weight"].T) + p["fc2.bias"]
    dlogits = cross_entropy_grad(logits, labels)
    grads = {"fc2.weight": mm(dlogits.T, a), "fc2.bias": dlogits.sum(0)}
    dh = mm(dlogits, p["fc2.weight"]) * (h > 0)
    grads["fc1.weight"] = mm(dh.T, x)
    grads["fc1.bias"] = dh.sum(0)
    return grads


def cnn_grads(p, x, labels):
    """examples/cnn-digits: conv-relu-pool, conv-relu-pool, flatten, linear."""
    h1 = conv(x, p["conv1.weight"]) + p["conv1.bias"][:, None, None]
    a1, mask1 = max_pool(np.maximum(h1, 0))
    h2 = conv(a1, p["conv2.weight"]) + p["conv2.bias"][:, None, None]
    a2, mask2 = max_pool(np.maximum(h2, 0))
    flat = a2.reshape(len(x), -1)
    logits = mm(flat, p["fc.weight"].T) + p["fc.bias"]
    dlogits = cross_entropy_grad(logits, labels)
    grads = {"fc.weight": mm(dlogits.T, flat), "fc.bias": dlogits.sum(0)}
    dh2 = max_pool_grad(mm(dlogits, p["fc.weight"]).reshape(a2.shape),
                        mask2) * (h2 > 0)
    grads["conv2.weight"] = conv_weight_grad(a1, dh2)
    grads["conv2.bias"] = dh2.sum((0, 2, 3))
    dh1 = max_pool_grad(conv_input_grad(dh2, p["conv2.weight"]),
                        mask1) * (h1 > 0)
    grads["conv1.weight"] = conv_weight_grad(x, dh1)
    grads["conv1.bias"] = dh1.sum((0, 2, 3))
    return grads


def main():
    (model, init_path, x_path, labels_path, batch, lr, got_path,
     f32_path) = sys.argv[1:]
    batch, lr = int(batch), np.float32(lr)
    p = {k: v.astype(np.float32) for k, v in
         safetensors_np.load(init_path).items()}
    x = np.load(x_path)[:batch].astype(np.float32)
    labels = np.load(labels_path)[:batch]
    grads = {"mlp": mlp_grads, "cnn": cnn_grads}[model](p, x, labels)
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
