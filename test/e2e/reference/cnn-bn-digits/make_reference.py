#!/usr/bin/env python3
"""A digits CNN with BatchNorm exported by PyTorch in training mode, and
PyTorch's own trajectory for it.

    conv(1->8, 3x3, pad 1) -> BatchNorm2d -> relu -> maxpool 2
    -> conv(8->16, 3x3, pad 1) -> BatchNorm2d -> relu -> maxpool 2
    -> flatten -> linear(64 -> 10)

Writes (this directory):
  cnn-bn.onnx             torch.onnx.export(training=TrainingMode.TRAINING,
                          opset 17, dynamo=False) of the model made with
                          torch.manual_seed(0): BatchNormalization nodes with
                          training_mode = 1 whose running statistics
                          (bn1.running_mean, ...) are initializers.
  losses.json             "losses": {"sgd": [loss of steps 1..20]} (each
                          step's batch, before its update), "eval_loss" and
                          the settings.
  sgd_step20.safetensors  parameters and running statistics after 20 steps.

Training is PyTorch's own: nn.Module in train() mode (nn.BatchNorm2d with
batch statistics, momentum 0.1), torch.optim.SGD(lr=0.1), batch 32, step k
(1-based) on samples [32(k-1), 32k) of examples/cnn-digits/data/train_*.npy
in file order, nn.CrossEntropyLoss; in float64 from the float32 initial
values, results cast to float32.

Running variance: PyTorch updates it with the unbiased batch variance
(n / (n - 1) times the biased one, n = N*H*W), the ONNX specification with
the biased one (its reference implementation, and lmc). Both recurrences
are linear, so after K steps
    onnx_var = momentum^K * var_0 + (n - 1) / n * (torch_var - momentum^K * var_0)
with momentum = 0.9 (the weight of the old value) and n = 32*8*8 (bn1) or
32*4*4 (bn2). The stored running_var is that value; the running means agree
as they are. "eval_loss" is model.eval()'s mean cross-entropy on the first
352 (= 11 batches of 32) samples of test_*.npy with those statistics.
Needs torch, onnx, numpy (generation time only; the outputs are checked in).
"""
import json
import os
import sys

import numpy as np
import onnx
import onnx.numpy_helper
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..", "..")
DATA = os.path.join(ROOT, "examples", "cnn-digits", "data")
sys.path.insert(0, os.path.dirname(HERE))
import safetensors_np  # noqa: E402

BATCH, STEPS, LR, EVAL_SAMPLES = 32, 20, 0.1, 352


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(16)
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        h = F.max_pool2d(torch.relu(self.bn1(self.conv1(x))), 2)
        h = F.max_pool2d(torch.relu(self.bn2(self.conv2(h))), 2)
        return self.fc(torch.flatten(h, 1))


def main():
    torch.manual_seed(0)
    model = CNN()
    # Non-trivial starting statistics, so that the recurrence is exercised.
    with torch.no_grad():
        for bn in (model.bn1, model.bn2):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
    model.train()
    path = os.path.join(HERE, "cnn-bn.onnx")
    torch.onnx.export(
        model, (torch.zeros(2, 1, 8, 8),), path, dynamo=False,
        opset_version=17, training=torch.onnx.TrainingMode.TRAINING,
        input_names=["x"], output_names=["logits"],
        dynamic_axes={"x": {0: "batch"}, "logits": {0: "batch"}},
        do_constant_folding=False)
    onnx.checker.check_model(onnx.load(path), full_check=True)

    # Tracing ran a training-mode forward; start from the exported values.
    initial = {i.name: torch.tensor(onnx.numpy_helper.to_array(i))
               for i in onnx.load(path).graph.initializer}
    model.load_state_dict(initial, strict=False)
    model = model.double()
    xs = torch.tensor(np.load(os.path.join(DATA, "train_x.npy")), dtype=torch.float64)
    ys = torch.tensor(np.load(os.path.join(DATA, "train_labels.npy")))
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    losses = []
    for k in range(STEPS):
        x, y = xs[BATCH * k:BATCH * (k + 1)], ys[BATCH * k:BATCH * (k + 1)]
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        losses.append(loss.item())
        opt.step()

    state = {k: v.detach().clone() for k, v in model.state_dict().items()
             if not k.endswith("num_batches_tracked")}
    decay = 0.9 ** STEPS
    for name, n in (("bn1", BATCH * 8 * 8), ("bn2", BATCH * 4 * 4)):
        var0 = initial[name + ".running_var"].double()
        torch_var = state[name + ".running_var"]
        state[name + ".running_var"] = (decay * var0 + (n - 1) / n
                                        * (torch_var - decay * var0))
    with torch.no_grad():
        model.load_state_dict(state, strict=False)
        model.eval()
        tx = torch.tensor(np.load(os.path.join(DATA, "test_x.npy"))[:EVAL_SAMPLES],
                          dtype=torch.float64)
        ty = torch.tensor(np.load(os.path.join(DATA, "test_labels.npy"))[:EVAL_SAMPLES])
        eval_loss = F.cross_entropy(model(tx), ty).item()

    safetensors_np.save(os.path.join(HERE, "sgd_step20.safetensors"),
                        {k: v.numpy().astype(np.float32) for k, v in state.items()})
    out = {
        "losses": {"sgd": losses},
        "eval_loss": eval_loss,
        "hparams": {"sgd": {"lr": LR, "batch": BATCH, "steps": STEPS}},
        "batching": "step k (1-based) uses train samples [32*(k-1), 32*k) in file order",
        "eval": f"first {EVAL_SAMPLES} test samples, model.eval() with ONNX-convention running_var",
        "torch": torch.__version__,
    }
    with open(os.path.join(HERE, "losses.json"), "w") as f:
        json.dump(out, f, indent=1)
    print("losses", losses)
    print("eval loss", eval_loss)


if __name__ == "__main__":
    main()
