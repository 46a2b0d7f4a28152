#!/usr/bin/env python3
"""PyTorch reference trajectory for examples/cnn-digits/cnn.onnx.

Writes (this directory):
  losses.json             "losses": {"sgd": [loss of steps 1..20]} (the loss
                          of each step's batch, computed before that step's
                          update) and the settings below.
  sgd_step20.safetensors  the parameters after 20 steps of SGD(lr=0.1).
Step k (1-based) uses training samples [32(k-1), 32k) of
examples/cnn-digits/data/train_{x,labels}.npy in file order; the loss is
nn.CrossEntropyLoss (mean). Everything runs in float64 from the float32
initial weights (the ONNX initializers) and data; results are cast to
float32. Keys are the ONNX initializer names and shapes.
Needs torch, onnx, numpy (generation time only).
"""
import json
import os
import sys

import numpy as np
import onnx
import onnx.numpy_helper
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..", "..")
EXAMPLE = os.path.join(ROOT, "examples", "cnn-digits")
sys.path.insert(0, os.path.dirname(HERE))
import safetensors_np  # noqa: E402

BATCH, STEPS, LR = 32, 20, 0.1


def forward(p, x):
    h = F.max_pool2d(torch.relu(F.conv2d(x, p["conv1.weight"], p["conv1.bias"],
                                         padding=1)), 2)
    h = F.max_pool2d(torch.relu(F.conv2d(h, p["conv2.weight"], p["conv2.bias"],
                                         padding=1)), 2)
    return F.linear(torch.flatten(h, 1), p["fc.weight"], p["fc.bias"])


def main():
    model = onnx.load(os.path.join(EXAMPLE, "cnn.onnx"))
    p = {i.name: torch.tensor(onnx.numpy_helper.to_array(i), dtype=torch.float64,
                              requires_grad=True)
         for i in model.graph.initializer}
    xs = torch.tensor(np.load(os.path.join(EXAMPLE, "data", "train_x.npy")),
                      dtype=torch.float64)
    ys = torch.tensor(np.load(os.path.join(EXAMPLE, "data", "train_labels.npy")))
    opt = torch.optim.SGD(p.values(), lr=LR)
    losses = []
    for k in range(STEPS):
        x, y = xs[BATCH * k:BATCH * (k + 1)], ys[BATCH * k:BATCH * (k + 1)]
        opt.zero_grad()
        loss = F.cross_entropy(forward(p, x), y)
        loss.backward()
        losses.append(loss.item())
        opt.step()
    safetensors_np.save(os.path.join(HERE, "sgd_step20.safetensors"),
                        {k: v.detach().numpy().astype(np.float32)
                         for k, v in p.items()})
    out = {
        "losses": {"sgd": losses},
        "hparams": {"sgd": {"lr": LR, "batch": BATCH, "steps": STEPS}},
        "batching": "step k (1-based) uses train samples [32*(k-1), 32*k) in file order",
        "loss": "mean softmax cross-entropy, computed before the update of that step",
        "torch": torch.__version__,
    }
    with open(os.path.join(HERE, "losses.json"), "w") as f:
        json.dump(out, f, indent=1)
    print("losses", losses)


if __name__ == "__main__":
    main()
