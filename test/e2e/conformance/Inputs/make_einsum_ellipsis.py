#!/usr/bin/env python3
"""Writes backend-test directories for Einsum equations with an ellipsis
(numpy.einsum is the reference): a batched matmul with "..." on both sides,
"..." on one side only, a transpose under "...", an implicit output, and a
contraction of the leading dimensions.

usage: make_einsum_ellipsis.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

CASES = [
    ("batch_matmul", "...ij,...jk->...ik", [(2, 3, 4, 5), (2, 3, 5, 6)]),
    ("one_side", "...j,jk->...k", [(2, 3, 4), (4, 5)]),
    ("transpose", "...ij->...ji", [(2, 3, 4)]),
    ("implicit", "...ij,jk", [(3, 2, 4), (4, 5)]),
    ("leading_sum", "i...,i...->...", [(3, 2, 4), (3, 2, 4)]),
]


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(0)
    for name, equation, shapes in CASES:
        xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        y = np.einsum(equation, *[x.astype(np.float64) for x in xs]).astype(np.float32)
        names = [f"x{i}" for i in range(len(xs))]
        node = helper.make_node("Einsum", names, ["y"], equation=equation)
        graph = helper.make_graph(
            [node], "g",
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, x.shape)
             for n, x in zip(names, xs)],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, y.shape)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
        test = os.path.join(out, f"test_einsum_ellipsis_{name}")
        os.makedirs(os.path.join(test, "test_data_set_0"), exist_ok=True)
        onnx.save(model, os.path.join(test, "model.onnx"))
        for i, x in enumerate(xs):
            onnx.save_tensor(numpy_helper.from_array(x, names[i]),
                             os.path.join(test, "test_data_set_0", f"input_{i}.pb"))
        onnx.save_tensor(numpy_helper.from_array(y, "y"),
                         os.path.join(test, "test_data_set_0", "output_0.pb"))


if __name__ == "__main__":
    main()
