#!/usr/bin/env python3
"""Op-coverage model for checking lmc's forward pass and gradients against PyTorch.

Writes (this directory):
  opzoo.onnx        opset 17, TorchScript exporter (dynamo=False), no constant
                    folding, static shapes; input "x" float32 [4, 6], output
                    "loss" float32 scalar (rank 0, shape []).
  x.npy             the input, float32 [4, 6] (torch.manual_seed(0)).
  reference.safetensors
                    "loss" (F32, shape [] i.e. rank 0) and "grad.<param>" for
                    every parameter (F32, the parameter's shape), computed by
                    torch autograd in float64 from the float32 initial values
                    and x, then cast to float32.
Parameter names (= ONNX initializer names): w0 [6,6], b0 [6], w1 [6,8], b1 [8],
w2 [3,5], scale [5].
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


class OpZoo(nn.Module):
    def __init__(self):
        super().__init__()
        self.w0 = nn.Parameter(torch.randn(6, 6) * 0.4)    # F.linear -> Gemm transB=1
        self.b0 = nn.Parameter(torch.randn(6) * 0.1)
        self.w1 = nn.Parameter(torch.randn(6, 8) * 0.4)    # MatMul + Add
        self.b1 = nn.Parameter(torch.randn(8) * 0.1)
        self.w2 = nn.Parameter(torch.randn(3, 5) * 0.5)    # batched 3-D MatMul
        self.scale = nn.Parameter(1.0 + 0.1 * torch.randn(5))

    def forward(self, x):                                    # x [4, 6]
        h = torch.relu(F.linear(x, self.w0, self.b0))        # Gemm, Relu    [4,6]
        m = h @ self.w1 + self.b1                            # MatMul, Add   [4,8]
        t = torch.tanh(m)                                    # Tanh
        s = torch.sigmoid(m)                                 # Sigmoid
        e = torch.exp(-t)                                    # Neg, Exp
        sp = torch.log(1.0 + torch.exp(m))                   # Exp, Add, Log (softplus)
        q = torch.sqrt(s + 1.0)                              # Add, Sqrt
        d = (t - s) / (1.0 + e)                              # Sub, Add, Div
        p2 = m ** 2                                          # Pow (const 2)
        p3 = t ** 3                                          # Pow (const 3)
        r = x.reshape(4, 2, 3)                               # Reshape
        bm = torch.matmul(r, self.w2) * self.scale           # MatMul [4,2,3]x[3,5], Mul
        sm = torch.softmax(bm, dim=-1)                       # Softmax axis=-1
        ls = torch.log_softmax(bm, dim=1)                    # LogSoftmax axis=1
        tr = bm.transpose(1, 2)                              # Transpose [4,5,2]
        fl = torch.flatten(tr, 1)                            # Flatten axis=1 [4,10]
        u = torch.unsqueeze(d, 1)                            # Unsqueeze [4,1,8]
        sq = torch.squeeze(u * q.unsqueeze(1), 1)            # Squeeze [4,8]
        r1 = torch.sum(sq, dim=1, keepdim=True)              # ReduceSum keepdims=1 [4,1]
        r2 = torch.mean(p2 + p3, dim=1)                      # ReduceMean keepdims=0 [4]
        r3 = torch.mean(fl * fl, dim=1, keepdim=True)        # ReduceMean keepdims=1 [4,1]
        r4 = torch.sum(sm * ls, dim=(1, 2))                  # ReduceSum keepdims=0 [4]
        per = r1 + r2.unsqueeze(1) + r3 + r4.unsqueeze(1) + torch.mean(sp, 1, True)
        return torch.mean(per)                               # ReduceMean (all) -> scalar


def build():
    torch.manual_seed(0)
    model = OpZoo()
    x = torch.randn(4, 6)
    return model, x


def export(model, x, path, opset):
    torch.onnx.export(model, (x,), path, dynamo=False, opset_version=opset,
                      input_names=["x"], output_names=["loss"],
                      do_constant_folding=False, keep_initializers_as_inputs=False)
    m = onnx.load(path)
    onnx.checker.check_model(m, full_check=True)
    return m


def describe(m):
    lines = []
    for n in m.graph.node:
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
        if n.op_type == "Constant":
            v = onnx.numpy_helper.to_array(attrs["value"])
            attrs = {"value": f"{v.dtype}{list(v.shape)}={v.tolist()}"}
        lines.append(f"{n.op_type} {list(n.input)} -> {list(n.output)} {attrs}")
    return lines


def main():
    model, x = build()
    model.eval()
    names = [k for k, _ in model.named_parameters()]
    np.save(os.path.join(HERE, "x.npy"), x.numpy().astype(np.float32))
    print("torch", torch.__version__, "onnx", onnx.__version__)
    models = {}
    # Opset 13 was checked too: the graph is identical except that Reshape has
    # no allowzero attribute (it exists from opset 14), so it is not kept.
    for opset, fn in [(17, "opzoo.onnx")]:
        m = export(model, x, os.path.join(HERE, fn), opset)
        models[fn] = m
        print(f"== {fn} (opset {opset})")
        print("  initializers:", [(i.name, list(i.dims)) for i in m.graph.initializer])
        for line in describe(m):
            print("  " + line)
        assert sorted(i.name for i in m.graph.initializer) == sorted(names)

    # Reference in float64.
    m64 = OpZoo().double()
    m64.load_state_dict({k: v.double() for k, v in model.state_dict().items()})
    loss = m64(x.double())
    loss.backward()
    ref = {"loss": np.array(loss.item(), dtype=np.float32)}
    for k, p in m64.named_parameters():
        ref["grad." + k] = p.grad.numpy().astype(np.float32)
    safetensors_np.save(os.path.join(HERE, "reference.safetensors"), ref,
                        {"generator": "test/e2e/reference/opzoo/make_opzoo.py",
                         "torch": torch.__version__,
                         "precision": "computed in float64, stored float32"})
    print("loss", loss.item())

    # Self-checks: the ONNX graphs compute the same loss; file reads back.
    from onnx.reference import ReferenceEvaluator
    for fn, m in models.items():
        (out,) = ReferenceEvaluator(m).run(None, {"x": x.numpy()})
        print(f"{fn}: onnx reference evaluator loss {float(out)} shape {list(np.shape(out))}")
        assert abs(float(out) - loss.item()) < 1e-5
    back = safetensors_np.load(os.path.join(HERE, "reference.safetensors"))
    for k, v in ref.items():
        assert back[k].shape == v.shape and np.array_equal(back[k], v), k
    print("ok")


if __name__ == "__main__":
    main()
