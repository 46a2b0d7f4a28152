#!/usr/bin/env python3
"""Writes backend-test directories for integer tensors computed at run time
(the ONNX reference evaluator, onnx.reference, writes the expected
outputs): the position ids RoBERTa computes from its tokens, CumSum's four
modes on int32 and int64, Add/Sub/Mul/Neg/Abs/Max/Min with broadcasting and
wrapping, Div and Mod (both fmod modes, signs mixed, min / -1), Where, Concat, Slice, Transpose and Gather of integers, and
GatherElements of integer data at run-time indices.

usage: make_integer_tests.py OUT_DIR
"""
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from backend_test import write_reference_test

I32, I64 = TensorProto.INT32, TensorProto.INT64


def const(name, value):
    return helper.make_node("Constant", [], [name],
                            value=numpy_helper.from_array(np.asarray(value)))


def position_ids():
    """transformers' create_position_ids_from_input_ids (padding_idx 1)."""
    ids = np.array([[5, 7, 9, 1, 1], [1, 4, 1, 6, 2]], np.int64)
    nodes = [
        const("pad", np.int64(1)), const("axis", np.int64(1)),
        helper.make_node("Equal", ["ids", "pad"], ["eq"]),
        helper.make_node("Not", ["eq"], ["ne"]),
        helper.make_node("Cast", ["ne"], ["mask"], to=I32),
        helper.make_node("CumSum", ["mask", "axis"], ["count"]),
        helper.make_node("Mul", ["count", "mask"], ["masked"]),
        helper.make_node("Cast", ["masked"], ["wide"], to=I64),
        helper.make_node("Add", ["wide", "pad"], ["y"]),
    ]
    return nodes, {"ids": ids}, [("y", I64, ids.shape)]


def cumsum(exclusive, reverse, axis, dtype):
    x = np.array([[3, -1, 4, 1], [5, 9, -2, 6], [5, 3, 5, 8]], dtype)
    kind = I32 if dtype == np.int32 else I64
    nodes = [const("axis", np.int32(axis)),
             helper.make_node("CumSum", ["x", "axis"], ["y"],
                              exclusive=exclusive, reverse=reverse)]
    return nodes, {"x": x}, [("y", kind, x.shape)]


def arithmetic():
    """Broadcasting, and int32 products that wrap as numpy's do."""
    a = np.array([[2, -3, 7], [40000, 5, -6]], np.int32)
    b = np.array([60000, -2, 3], np.int32)
    nodes = [
        helper.make_node("Mul", ["a", "b"], ["product"]),
        helper.make_node("Sub", ["product", "b"], ["difference"]),
        helper.make_node("Neg", ["difference"], ["negated"]),
        helper.make_node("Abs", ["a"], ["magnitude"]),
        helper.make_node("Max", ["negated", "magnitude"], ["upper"]),
        helper.make_node("Min", ["upper", "b"], ["y"]),
    ]
    return nodes, {"a": a, "b": b}, [("product", I32, a.shape),
                                     ("y", I32, a.shape)]


def data_movement():
    x = np.arange(24, dtype=np.int64).reshape(2, 3, 4) * 7 - 40
    idx = np.array([[2, 0], [1, 1]], np.int64)
    nodes = [
        const("zero", np.int64(0)),
        const("starts", np.array([1], np.int64)),
        const("ends", np.array([4], np.int64)),
        const("axes", np.array([2], np.int64)),
        helper.make_node("Greater", ["x", "zero"], ["positive"]),
        helper.make_node("Neg", ["x"], ["minus"]),
        helper.make_node("Where", ["positive", "x", "minus"], ["absolute"]),
        helper.make_node("Transpose", ["absolute"], ["t"], perm=[2, 0, 1]),
        helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["s"]),
        helper.make_node("Concat", ["s", "x"], ["c"], axis=2),
        helper.make_node("Gather", ["x", "idx"], ["g"], axis=1),
    ]
    return nodes, {"x": x, "idx": idx}, [("t", I64, (4, 2, 3)),
                                         ("c", I64, (2, 3, 7)),
                                         ("g", I64, (2, 2, 2, 4))]


def gather_elements():
    """Integer data at run-time indices (RoBERTa's token-type buffer read at
    its position ids); negative indices count from the end."""
    data = np.array([[10, 11, 12, 13], [20, 21, 22, 23]], np.int64)
    idx = np.array([[3, -1, 0], [1, 2, -4]], np.int64)
    nodes = [helper.make_node("GatherElements", ["data", "idx"], ["y"],
                              axis=1)]
    return nodes, {"data": data, "idx": idx}, [("y", I64, idx.shape)]


def division(dtype):
    """Div truncating toward zero, Mod with the divisor's sign (fmod 0) and
    the dividend's (fmod 1), on signs mixed and broadcast; min / -1 wraps."""
    kind = I32 if dtype == np.int32 else I64
    low = np.iinfo(dtype).min
    a = np.array([[7, -7, 7, -7, 0, low], [9, -9, 2, -3, 13, low]], dtype)
    b = np.array([[2, 2, -2, -2, 5, -1], [4, 4, -4, -4, 5, 7]], dtype)
    c = np.array([3, -3, 5, -5, 7, -7], dtype)
    nodes = [
        helper.make_node("Div", ["a", "b"], ["quotient"]),
        helper.make_node("Mod", ["a", "b"], ["python_mod"], fmod=0),
        helper.make_node("Mod", ["a", "b"], ["c_mod"], fmod=1),
        helper.make_node("Div", ["a", "c"], ["broadcast"]),
    ]
    return nodes, {"a": a, "b": b, "c": c}, [
        ("quotient", kind, a.shape), ("python_mod", kind, a.shape),
        ("c_mod", kind, a.shape), ("broadcast", kind, a.shape)]


CASES = {
    "position_ids": position_ids,
    "cumsum_int64": lambda: cumsum(0, 0, 1, np.int64),
    "cumsum_int32_exclusive": lambda: cumsum(1, 0, 1, np.int32),
    "cumsum_int64_reverse_axis0": lambda: cumsum(0, 1, 0, np.int64),
    "cumsum_int32_exclusive_reverse": lambda: cumsum(1, 1, 1, np.int32),
    "arithmetic_int32": arithmetic,
    "data_movement_int64": data_movement,
    "gather_elements_int64": gather_elements,
    "division_int64": lambda: division(np.int64),
    "division_int32": lambda: division(np.int32),
}


def main():
    out = sys.argv[1]
    for name, case in CASES.items():
        nodes, inputs, outputs = case()
        write_reference_test(out, "integer_" + name, nodes, inputs, outputs,
                             opset=17)


if __name__ == "__main__":
    main()
