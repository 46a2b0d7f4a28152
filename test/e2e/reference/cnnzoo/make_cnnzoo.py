#!/usr/bin/env python3
"""Convolution/pooling/batch-norm model for checking lmc against PyTorch.

Writes (this directory):
  cnnzoo-eval.onnx   the model in eval mode (BatchNormalization uses the
                     running statistics, which are not trained)
  cnnzoo-train.onnx  the same model exported with TrainingMode.TRAINING
                     (BatchNormalization with training_mode = 1: batch
                     statistics)
                     Both: opset 17, TorchScript exporter (dynamo=False), no
                     constant folding, static shapes; inputs "x" float32
                     [2, 4, 9, 9] and "s" float32 [2, 3, 12], output "loss"
                     float32 scalar.
  x.npy, s.npy       the inputs (torch.manual_seed(0)).
  reference-eval.safetensors, reference-train.safetensors
                     "loss" and "grad.<param>" for every trainable parameter,
                     computed by torch autograd in float64 from the float32
                     initial values and inputs, then cast to float32.
Needs torch, onnx, numpy (generation time only).
"""
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import safetensors_np  # noqa: E402


class CnnZoo(nn.Module):
    def __init__(self):
        super().__init__()
        # stride 2, padding 1, groups 2, bias
        self.c1 = nn.Conv2d(4, 6, 3, stride=2, padding=1, groups=2)
        # asymmetric stride/dilation, padding along H only, no bias
        self.c2 = nn.Conv2d(6, 6, (3, 2), stride=(1, 2), padding=(2, 0),
                            dilation=(2, 1), bias=False)
        # 1-D: stride 2, padding 1, dilation 2
        self.c3 = nn.Conv1d(3, 4, 3, stride=2, padding=1, dilation=2)
        self.bn = nn.BatchNorm2d(6)
        with torch.no_grad():
            self.bn.weight.copy_(1.0 + 0.2 * torch.randn(6))
            self.bn.bias.copy_(0.1 * torch.randn(6))
            self.bn.running_mean.copy_(0.1 * torch.randn(6))
            self.bn.running_var.copy_(1.0 + 0.3 * torch.rand(6))

    def forward(self, x, s):                                  # x [2,4,9,9], s [2,3,12]
        h1 = torch.tanh(self.c1(x))                           # Conv, Tanh [2,6,5,5]
        h2 = self.c2(h1)                                      # Conv [2,6,5,2]
        b = self.bn(h1)                                       # BatchNormalization
        m1 = F.max_pool2d(h1, 3, stride=2, padding=1)         # MaxPool [2,6,3,3]
        m2 = F.max_pool2d(b, 2, stride=2, ceil_mode=True)     # MaxPool ceil [2,6,3,3]
        a1 = F.avg_pool2d(h1, 3, stride=1, padding=1,
                          count_include_pad=False)            # AveragePool [2,6,5,5]
        a2 = F.avg_pool2d(b, 3, stride=2, padding=1,
                          count_include_pad=True)             # AveragePool [2,6,3,3]
        g = F.adaptive_avg_pool2d(h2, 1)                      # GlobalAveragePool [2,6,1,1]
        t = self.c3(s)                                        # Conv 1-D [2,4,5]
        m3 = F.max_pool1d(t, 2)                               # MaxPool 1-D [2,4,2]
        parts = [h2, b, m1, m2, a1, a2, g, t, m3]
        return sum(torch.mean(p * p + 0.5 * p) for p in parts)


def build():
    torch.manual_seed(0)
    model = CnnZoo()
    x = torch.randn(2, 4, 9, 9)
    s = torch.randn(2, 3, 12)
    return model, x, s


def export(model, args, path, training):
    mode = (torch.onnx.TrainingMode.TRAINING if training
            else torch.onnx.TrainingMode.EVAL)
    torch.onnx.export(model, args, path, dynamo=False, opset_version=17,
                      input_names=["x", "s"], output_names=["loss"],
                      do_constant_folding=False, training=mode,
                      keep_initializers_as_inputs=False)
    m = onnx.load(path)
    onnx.checker.check_model(m, full_check=True)
    for n in m.graph.node:
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute
                 if n.op_type != "Constant"}
        print(f"  {n.op_type} {list(n.input)} -> {list(n.output)} {attrs}")
    return m


def reference(model, x, s, training, path):
    m64 = CnnZoo().double()
    m64.load_state_dict({k: v.double() if v.is_floating_point() else v
                         for k, v in model.state_dict().items()})
    m64.train(training)
    loss = m64(x.double(), s.double())
    loss.backward()
    ref = {"loss": np.array(loss.item(), dtype=np.float32)}
    for k, p in m64.named_parameters():
        ref["grad." + k] = p.grad.numpy().astype(np.float32)
    safetensors_np.save(path, ref)
    print(f"  loss {loss.item():.9g}")


def main():
    model, x, s = build()
    np.save(os.path.join(HERE, "x.npy"), x.numpy().astype(np.float32))
    np.save(os.path.join(HERE, "s.npy"), s.numpy().astype(np.float32))
    print("torch", torch.__version__, "onnx", onnx.__version__)
    for training, tag in [(False, "eval"), (True, "train")]:
        print(f"== cnnzoo-{tag}.onnx")
        model.train(training)
        export(model, (x, s), os.path.join(HERE, f"cnnzoo-{tag}.onnx"), training)
        # Exporting in training mode runs the model once; restore the
        # running statistics so both references start from the same state.
        model, _, _ = build()
        reference(model, x, s, training,
                  os.path.join(HERE, f"reference-{tag}.safetensors"))


if __name__ == "__main__":
    main()
