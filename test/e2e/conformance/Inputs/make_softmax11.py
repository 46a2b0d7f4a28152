#!/usr/bin/env python3
"""Writes backend-test directories for Softmax and LogSoftmax at opset 11
with axis 1 on a [2, 3, 4] input: before opset 13 the input is coerced to
2-D [2, 12] and normalized over all 12 trailing values (numpy reference).

usage: make_softmax11.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out = sys.argv[1]
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    flat = x.reshape(2, 12).astype(np.float64)
    shifted = flat - flat.max(axis=1, keepdims=True)
    log_softmax = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    for op, y in (("Softmax", np.exp(log_softmax)), ("LogSoftmax", log_softmax)):
        node = helper.make_node(op, ["x"], ["y"], axis=1)
        graph = helper.make_graph(
            [node], "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
        test = os.path.join(out, f"test_{op.lower()}_opset11_axis1")
        os.makedirs(os.path.join(test, "test_data_set_0"), exist_ok=True)
        onnx.save(model, os.path.join(test, "model.onnx"))
        for name, value in (("input_0", x), ("output_0", y.reshape(2, 3, 4).astype(np.float32))):
            onnx.save_tensor(numpy_helper.from_array(value, name[:-2]),
                             os.path.join(test, "test_data_set_0", name + ".pb"))


if __name__ == "__main__":
    main()
