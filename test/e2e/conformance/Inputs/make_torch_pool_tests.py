#!/usr/bin/env python3
"""Writes backend-test directories for AveragePool with ceil_mode whose
expected outputs come from PyTorch (torch.nn.functional.avg_pool2d), the
semantics lmc follows: the positions ceil_mode adds never count, explicit
padding counts with count_include_pad. Checked in under Inputs/torch/;
rerun (needs torch and onnx) to regenerate.

usage: make_torch_pool_tests.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

CASES = {
    # name: (kernel, stride, pads, count_include_pad)
    "test_torch_averagepool_ceil_pad_include": ([3, 3], [2, 2], [1, 1], 1),
    "test_torch_averagepool_ceil_pad_exclude": ([3, 3], [2, 2], [1, 1], 0),
    "test_torch_averagepool_ceil_nopad": ([2, 3], [2, 2], [0, 0], 1),
}


def main():
    out = sys.argv[1]
    x = np.random.default_rng(0).standard_normal((1, 2, 6, 7)).astype(np.float32)
    for name, (kernel, stride, pads, include) in CASES.items():
        y = torch.nn.functional.avg_pool2d(
            torch.from_numpy(x), kernel, stride, pads, ceil_mode=True,
            count_include_pad=bool(include)).numpy()
        node = helper.make_node(
            "AveragePool", ["x"], ["y"], kernel_shape=kernel, strides=stride,
            pads=pads + pads, ceil_mode=1, count_include_pad=include)
        graph = helper.make_graph(
            [node], "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y.shape))])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        test = os.path.join(out, name)
        os.makedirs(os.path.join(test, "test_data_set_0"), exist_ok=True)
        onnx.save(model, os.path.join(test, "model.onnx"))
        for file, value in (("input_0", x), ("output_0", y)):
            onnx.save_tensor(numpy_helper.from_array(value, file[:-2]),
                             os.path.join(test, "test_data_set_0", file + ".pb"))


if __name__ == "__main__":
    main()
