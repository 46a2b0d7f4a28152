#!/usr/bin/env python3
"""Export the digits MLP (64 -> 64 -> ReLU -> 10) to ONNX as mlp.onnx.

torch.manual_seed(0) fixes the initial weights, which become the ONNX
initializers fc1.weight [64,64], fc1.bias [64], fc2.weight [10,64], fc2.bias [10]
(torch layout; the Gemm nodes use transB=1). Input "x" [batch, 64] float32,
output "logits" [batch, 10]. Opset 17, TorchScript exporter (dynamo=False).
Needs torch and onnx (generation time only; mlp.onnx is checked in).
"""
import os
import sys

import onnx
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def build_model():
    torch.manual_seed(0)
    return MLP()


def export(model, path):
    model.eval()
    torch.onnx.export(
        model, (torch.zeros(2, 64),), path,
        dynamo=False, opset_version=17,
        input_names=["x"], output_names=["logits"],
        dynamic_axes={"x": {0: "batch"}, "logits": {0: "batch"}},
        do_constant_folding=True,
        keep_initializers_as_inputs=False,
    )


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "mlp.onnx")
    model = build_model()
    export(model, path)
    m = onnx.load(path)
    onnx.checker.check_model(m, full_check=True)
    params = dict(model.named_parameters())
    print("torch", torch.__version__, "onnx", onnx.__version__)
    print("initializers:")
    for init in m.graph.initializer:
        shape = list(init.dims)
        print(f"  {init.name} {shape}")
        assert init.name in params, f"unexpected initializer name {init.name}"
        assert shape == list(params[init.name].shape), (init.name, shape)
    assert sorted(i.name for i in m.graph.initializer) == sorted(params)
    print("nodes:")
    for n in m.graph.node:
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
        print(f"  {n.op_type} {list(n.input)} -> {list(n.output)} {attrs}")
    print("wrote", path)


if __name__ == "__main__":
    main()
