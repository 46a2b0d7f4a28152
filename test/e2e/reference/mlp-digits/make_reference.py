#!/usr/bin/env python3
"""PyTorch reference trajectory for examples/mlp-digits/mlp.onnx.

Initial weights are read from the ONNX initializers (so they are exactly the
exported ones). Loss: mean softmax cross-entropy (nn.CrossEntropyLoss) of the
logits against int64 labels. Batching: step k (k = 1, 2, 3) uses training
samples [32(k-1), 32k) of examples/mlp-digits/data/train_{x,labels}.npy, in
file order, no shuffle. All arithmetic is done in float64 in torch, results
are cast to float32. Keys = ONNX initializer names, shapes = ONNX shapes
(which equal the torch parameter shapes: weight [out, in], Gemm transB=1).

Outputs (this directory):
  grads_step1.safetensors   gradient of the batch-0 loss at the initial weights
  sgd_step1.safetensors     params after 1 step  SGD(lr=0.1)
  sgd_step3.safetensors     params after 3 steps SGD(lr=0.1)
  momentum_step3.safetensors params after 3 steps SGD(lr=0.05, momentum=0.9)
  adam_step3.safetensors    params after 3 steps Adam(lr=0.01)  (betas .9/.999, eps 1e-8)
  adamw_step1.safetensors   params after 1 step  AdamW(lr=0.01, betas=(0.9,0.999), eps=1e-8, wd=0.01)
  adamw_step3.safetensors   params after 3 steps of the same AdamW
  sgd_clip_step3.safetensors params after 3 steps SGD(lr=0.1) with
                            clip_grad_norm_(max_norm=0.5) before each step
  sgd_frozen_fc1_step3.safetensors fc2.* after 3 steps SGD(lr=0.1) with
                            fc1.* frozen (requires_grad=False, as
                            lmc --freeze 'fc1\..*'): only fc2.* are stored
  losses.json               loss before each update, per run
Needs torch, onnx, numpy (generation time only).
"""
import json
import os
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
EXAMPLE = os.path.join(ROOT, "examples", "mlp-digits")
sys.path.insert(0, os.path.dirname(HERE))
import safetensors_np  # noqa: E402

BATCH = 32
DT = torch.float64


def load_init():
    m = onnx.load(os.path.join(EXAMPLE, "mlp.onnx"))
    return {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}


def forward(p, x):
    h = torch.relu(x @ p["fc1.weight"].T + p["fc1.bias"])
    return h @ p["fc2.weight"].T + p["fc2.bias"]


def batch(k):
    x = np.load(os.path.join(EXAMPLE, "data", "train_x.npy"))
    y = np.load(os.path.join(EXAMPLE, "data", "train_labels.npy"))
    s = slice(BATCH * k, BATCH * (k + 1))
    return torch.tensor(x[s], dtype=DT), torch.tensor(y[s], dtype=torch.int64)


def make_params(init):
    return {k: torch.tensor(v, dtype=DT, requires_grad=True) for k, v in init.items()}


def to_f32(p, names):
    return {k: p[k].detach().numpy().astype(np.float32) for k in names}


def run(init, make_opt, steps, clip=None, norms=None, frozen=()):
    p = make_params(init)
    for name in frozen:
        p[name].requires_grad_(False)
    opt = make_opt([v for k, v in p.items() if k not in frozen])
    lossf = torch.nn.CrossEntropyLoss()
    losses = []
    for k in range(steps):
        x, y = batch(k)
        opt.zero_grad()
        loss = lossf(forward(p, x), y)
        loss.backward()
        losses.append(loss.item())
        if clip is not None:
            norm = torch.nn.utils.clip_grad_norm_(
                [v for k, v in p.items() if k not in frozen], max_norm=clip)
            if norms is not None:
                norms.append(norm.item())
        opt.step()
    return p, losses


def main():
    init = load_init()
    names = list(init)
    meta = {"generator": "test/e2e/reference/mlp-digits/make_reference.py",
            "torch": torch.__version__, "precision": "computed in float64, stored float32"}

    # Gradient at the initial weights on batch 0.
    p = make_params(init)
    x, y = batch(0)
    loss = torch.nn.CrossEntropyLoss()(forward(p, x), y)
    loss.backward()
    safetensors_np.save(os.path.join(HERE, "grads_step1.safetensors"),
                        {k: p[k].grad.numpy().astype(np.float32) for k in names},
                        dict(meta, loss=repr(loss.item())))
    out = {"initial_loss_batch0": loss.item()}

    O = torch.optim
    runs = [
        ("sgd", lambda ps: O.SGD(ps, lr=0.1), [1, 3]),
        ("momentum", lambda ps: O.SGD(ps, lr=0.05, momentum=0.9), [3]),
        ("adam", lambda ps: O.Adam(ps, lr=0.01, betas=(0.9, 0.999), eps=1e-8), [3]),
        ("adamw", lambda ps: O.AdamW(ps, lr=0.01, betas=(0.9, 0.999), eps=1e-8,
                                     weight_decay=0.01), [1, 3]),
    ]
    losses = {}
    for name, make_opt, step_counts in runs:
        for steps in step_counts:
            p, ls = run(init, make_opt, steps)
            safetensors_np.save(os.path.join(HERE, f"{name}_step{steps}.safetensors"),
                                to_f32(p, names), meta)
            # Shorter runs are prefixes of the longer one; keep the longest list.
            if len(ls) > len(losses.get(name, [])):
                losses[name] = ls
            print(f"{name}_step{steps}: losses {ls}")
    # Global gradient-norm clipping (torch.nn.utils.clip_grad_norm_) with SGD.
    norms = []
    p, ls = run(init, lambda ps: O.SGD(ps, lr=0.1), 3, clip=0.5, norms=norms)
    safetensors_np.save(os.path.join(HERE, "sgd_clip_step3.safetensors"),
                        to_f32(p, names), meta)
    losses["sgd_clip"] = ls
    out["grad_norms"] = {"sgd_clip": norms}
    print(f"sgd_clip_step3: losses {ls}, grad norms {norms}")
    # Fine-tuning the head: fc1 frozen.
    frozen = ["fc1.weight", "fc1.bias"]
    p, ls = run(init, lambda ps: O.SGD(ps, lr=0.1), 3, frozen=frozen)
    assert all(np.array_equal(p[k].detach().numpy().astype(np.float32), init[k])
               for k in frozen)
    safetensors_np.save(os.path.join(HERE, "sgd_frozen_fc1_step3.safetensors"),
                        to_f32(p, [k for k in names if k not in frozen]), meta)
    losses["sgd_frozen_fc1"] = ls
    print(f"sgd_frozen_fc1_step3: losses {ls}")
    out["losses"] = losses
    out["hparams"] = {
        "sgd": {"lr": 0.1},
        "momentum": {"lr": 0.05, "momentum": 0.9},
        "adam": {"lr": 0.01, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8},
        "adamw": {"lr": 0.01, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.01},
        "sgd_clip": {"lr": 0.1, "clip_grad_norm": 0.5},
        "sgd_frozen_fc1": {"lr": 0.1, "frozen": frozen},
    }
    out["batching"] = "step k (1-based) uses train samples [32*(k-1), 32*k) in file order"
    out["loss"] = "mean softmax cross-entropy, computed before the update of that step"
    out["torch"] = torch.__version__
    with open(os.path.join(HERE, "losses.json"), "w") as f:
        json.dump(out, f, indent=2)
        f.write("\n")

    # Self-check: everything reads back with numpy and has the ONNX shapes.
    for fn in sorted(os.listdir(HERE)):
        if fn.endswith(".safetensors"):
            t = safetensors_np.load(os.path.join(HERE, fn))
            stored = [k for k in names if "frozen_fc1" not in fn or k not in frozen]
            assert sorted(t) == sorted(stored), fn
            for k in stored:
                assert t[k].shape == init[k].shape and t[k].dtype == np.float32, (fn, k)
                assert np.all(np.isfinite(t[k])), (fn, k)
    print("ok")


if __name__ == "__main__":
    main()
