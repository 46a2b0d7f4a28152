"""Writes one ONNX backend-test directory whose expected outputs come from
the ONNX reference evaluator (onnx.reference), for the generators beside
this file (make_integer_tests.py, make_resize_tests.py):

    OUT/test_NAME/model.onnx
    OUT/test_NAME/test_data_set_0/input_N.pb, output_N.pb
"""
import os

import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator


def write_reference_test(out, name, nodes, inputs, outputs, opset):
    """`inputs`: {name: array}; `outputs`: [(name, element type, shape)]."""
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info(
            n, helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)
         for n, x in inputs.items()],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs])
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    with np.errstate(over="ignore"):  # integer min / -1 wraps, as intended
        expected = ReferenceEvaluator(model).run(None, inputs)
    for (n, _, shape), y in zip(outputs, expected):
        assert tuple(np.shape(y)) == tuple(shape), (name, n, np.shape(y))
    test = os.path.join(out, f"test_{name}")
    data = os.path.join(test, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.save(model, os.path.join(test, "model.onnx"))
    for i, (n, x) in enumerate(inputs.items()):
        onnx.save_tensor(numpy_helper.from_array(x, n),
                         os.path.join(data, f"input_{i}.pb"))
    for i, ((n, _, _), y) in enumerate(zip(outputs, expected)):
        onnx.save_tensor(numpy_helper.from_array(np.asarray(y), n),
                         os.path.join(data, f"output_{i}.pb"))
