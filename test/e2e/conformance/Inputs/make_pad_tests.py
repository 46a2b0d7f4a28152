#!/usr/bin/env python3
"""Writes backend-test directories for Pad on float data (the ONNX suite
pads int32 data in its edge and reflect cases): constant, edge, reflect
and wrap borders, with a negative pad that crops, and the axes input;
numpy.pad is the reference.

usage: make_pad_tests.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# (name, mode, pads [begin..., end...], axes or None, opset)
CASES = [
    ("constant", "constant", [0, 1, 2, 0, 2, 1], None, 13),
    ("edge", "edge", [1, 0, 2, 2, 1, 0], None, 13),
    ("reflect", "reflect", [0, 2, 1, 1, 0, 3], None, 13),
    ("wrap", "wrap", [1, 1, 0, 0, 2, 4], None, 19),
    ("crop", "edge", [0, -1, 2, 1, 1, -2], None, 13),
    ("axes", "reflect", [2, 1], [-1], 18),
]


def reference(x, mode, pads, axes, value):
    rank = x.ndim
    axes = list(range(rank)) if axes is None else [a % rank for a in axes]
    width = [(0, 0)] * rank
    for i, a in enumerate(axes):
        width[a] = (pads[i], pads[i + len(axes)])
    # Negative pads crop first.
    index = tuple(slice(max(-b, 0), x.shape[d] - max(-e, 0))
                  for d, (b, e) in enumerate(width))
    x = x[index]
    width = [(max(b, 0), max(e, 0)) for b, e in width]
    if mode == "constant":
        return np.pad(x, width, mode="constant", constant_values=value)
    return np.pad(x, width, mode=mode)


def main():
    out = sys.argv[1]
    x = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)
    for name, mode, pads, axes, opset in CASES:
        value = np.float32(0.5)
        y = reference(x, mode, pads, axes, value).astype(np.float32)
        inputs = ["x", "pads"] + (["value"] if mode == "constant" else [""])
        initializers = [numpy_helper.from_array(np.array(pads, np.int64), "pads")]
        if mode == "constant":
            initializers.append(numpy_helper.from_array(np.array(value), "value"))
        if axes is not None:
            inputs.append("axes")
            initializers.append(numpy_helper.from_array(np.array(axes, np.int64), "axes"))
        while inputs and inputs[-1] == "":
            inputs.pop()
        node = helper.make_node("Pad", inputs, ["y"], mode=mode)
        graph = helper.make_graph(
            [node], "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, y.shape)],
            initializer=initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        test = os.path.join(out, f"test_pad_float_{name}")
        os.makedirs(os.path.join(test, "test_data_set_0"), exist_ok=True)
        onnx.save(model, os.path.join(test, "model.onnx"))
        onnx.save_tensor(numpy_helper.from_array(x, "x"),
                         os.path.join(test, "test_data_set_0", "input_0.pb"))
        onnx.save_tensor(numpy_helper.from_array(y, "y"),
                         os.path.join(test, "test_data_set_0", "output_0.pb"))


if __name__ == "__main__":
    main()
