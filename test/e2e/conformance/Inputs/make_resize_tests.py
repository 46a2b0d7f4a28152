#!/usr/bin/env python3
"""Writes backend-test directories for Resize's opset 18 attributes, which
Debian's test data (ONNX 1.12, opset 13) lacks; the ONNX reference
evaluator, onnx.reference, writes the expected outputs: antialias on
linear and cubic downsampling, axes, keep_aspect_ratio_policy,
half_pixel_symmetric, a non-integer bicubic upsampling of a grid of
embeddings as DINOv2 resizes its position embeddings (3 x 3 to 4 x 4,
pytorch_half_pixel, cubic_coeff_a -0.75), and exclude_outside.

usage: make_resize_tests.py OUT_DIR
"""
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from backend_test import write_reference_test

F32 = TensorProto.FLOAT


def const(name, value):
    return helper.make_node("Constant", [], [name],
                            value=numpy_helper.from_array(np.asarray(value)))


def image(*shape):
    return np.random.default_rng(0).standard_normal(shape).astype(np.float32)


def resize(out_shape, sizes=None, scales=None, x_shape=(1, 2, 6, 7), **attrs):
    def case():
        nodes = []
        inputs = ["x", ""]
        if scales is not None:
            nodes.append(const("scales", np.array(scales, np.float32)))
            inputs += ["scales"]
        else:
            nodes.append(const("sizes", np.array(sizes, np.int64)))
            inputs += ["", "sizes"]
        nodes.append(helper.make_node("Resize", inputs, ["y"], **attrs))
        return nodes, {"x": image(*x_shape)}, [("y", F32, out_shape)]
    return case


CASES = {
    "linear_antialias_down": resize((1, 2, 3, 4), sizes=[1, 2, 3, 4],
                                    mode="linear", antialias=1),
    "cubic_antialias_down": resize((1, 2, 2, 3), scales=[1, 1, 0.4, 0.5],
                                   mode="cubic", antialias=1),
    "linear_axes": resize((1, 2, 6, 10), sizes=[10], axes=[3],
                          mode="linear",
                          coordinate_transformation_mode="align_corners"),
    "cubic_not_larger": resize((1, 2, 3, 4), sizes=[3, 5], axes=[2, 3],
                               mode="cubic",
                               keep_aspect_ratio_policy="not_larger"),
    "nearest_not_smaller": resize((1, 2, 9, 11), sizes=[9, 9], axes=[2, 3],
                                  mode="nearest",
                                  keep_aspect_ratio_policy="not_smaller"),
    "linear_half_pixel_symmetric": resize(
        (1, 2, 4, 11), scales=[1, 1, 0.7, 1.6], mode="linear",
        coordinate_transformation_mode="half_pixel_symmetric"),
    "cubic_dinov2_positions": resize(
        (1, 8, 4, 4), sizes=[1, 8, 4, 4], x_shape=(1, 8, 3, 3),
        mode="cubic", cubic_coeff_a=-0.75,
        coordinate_transformation_mode="pytorch_half_pixel"),
    "cubic_exclude_outside_up": resize(
        (1, 2, 10, 9), scales=[1, 1, 1.7, 1.3], mode="cubic",
        exclude_outside=1, cubic_coeff_a=-0.5),
}


def main():
    out = sys.argv[1]
    for name, case in CASES.items():
        nodes, inputs, outputs = case()
        write_reference_test(out, "resize18_" + name, nodes, inputs, outputs,
                             opset=18)


if __name__ == "__main__":
    main()
