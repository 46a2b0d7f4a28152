#!/usr/bin/env python3
"""Export the digits CNN to ONNX as cnn.onnx.

    conv(1->8, 3x3, pad 1) -> relu -> maxpool 2 -> conv(8->16, 3x3, pad 1)
    -> relu -> maxpool 2 -> flatten -> linear(64 -> 10)

torch.manual_seed(0) fixes the initial weights, which become the ONNX
initializers conv1.weight [8,1,3,3], conv1.bias [8], conv2.weight [16,8,3,3],
conv2.bias [16], fc.weight [10,64], fc.bias [10]. Input "x" [batch, 1, 8, 8]
float32, output "logits" [batch, 10]. Opset 17, TorchScript exporter
(dynamo=False), dynamic batch. Needs torch and onnx (generation time only;
cnn.onnx is checked in).
"""
import os
import sys

import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        h = F.max_pool2d(torch.relu(self.conv1(x)), 2)   # [B, 8, 4, 4]
        h = F.max_pool2d(torch.relu(self.conv2(h)), 2)   # [B, 16, 2, 2]
        return self.fc(torch.flatten(h, 1))


def build_model():
    torch.manual_seed(0)
    return CNN()


def export(model, path):
    model.eval()
    torch.onnx.export(
        model, (torch.zeros(2, 1, 8, 8),), path,
        dynamo=False, opset_version=17,
        input_names=["x"], output_names=["logits"],
        dynamic_axes={"x": {0: "batch"}, "logits": {0: "batch"}},
        do_constant_folding=True,
        keep_initializers_as_inputs=False,
    )


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "cnn.onnx")
    model = build_model()
    export(model, path)
    m = onnx.load(path)
    onnx.checker.check_model(m, full_check=True)
    params = dict(model.named_parameters())
    print("torch", torch.__version__, "onnx", onnx.__version__)
    print("initializers:")
    for init in m.graph.initializer:
        print(f"  {init.name} {list(init.dims)}")
        assert list(init.dims) == list(params[init.name].shape), init.name
    assert sorted(i.name for i in m.graph.initializer) == sorted(params)
    print("nodes:")
    for n in m.graph.node:
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
        print(f"  {n.op_type} {list(n.input)} -> {list(n.output)} {attrs}")
    print("wrote", path)


if __name__ == "__main__":
    main()
