#!/usr/bin/env python3
"""Writes the hostile ONNX models the importer's security tests load
(test/Import/hostile.test, test/Import/external-data.test) into
test/Import/Inputs/security/. Needs the `onnx` package; the tests do not.

    python3 test/Import/Inputs/make_security_inputs.py
"""
import os
import struct

import onnx
from onnx import TensorProto, helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "security")


def save(model, name):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(model.SerializeToString(deterministic=True))


def model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="make_security_inputs")
    m.ir_version = 8
    return m


def fvi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def matmul_model(weight):
    """y[2,2] = MatMul(x[2,3], w[3,2]) with the given initializer for w."""
    return model([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
                 [fvi("x", [2, 3])], [fvi("y", [2, 2])], [weight])


def external_weight(entries, data_location=TensorProto.EXTERNAL):
    w = TensorProto()
    w.name = "w"
    w.data_type = TensorProto.FLOAT
    w.dims.extend([3, 2])
    w.data_location = data_location
    for key, value in entries:
        e = w.external_data.add()
        e.key, e.value = key, value
    return w


def main():
    os.makedirs(OUT, exist_ok=True)

    # --- protobuf nesting: If -> then_branch -> If -> ... (3 levels each).
    leaf = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])],
                             "leaf", [], [fvi("y", [1])])
    inner = leaf
    for depth in range(30):
        body = [helper.make_node("If", ["c"], ["y"], then_branch=inner,
                                 else_branch=leaf)]
        inner = helper.make_graph(body, "g%d" % depth, [], [fvi("y", [1])])
    c = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
    save(model([helper.make_node("If", ["c"], ["y"], then_branch=inner,
                                 else_branch=leaf)],
               [c, fvi("x", [1])], [fvi("y", [1])]), "deep-nesting.onnx")

    # --- names and graph structure.
    w = helper.make_tensor("w", TensorProto.FLOAT, [3, 2], [0.5] * 6)
    save(matmul_model_with([w, w]), "duplicate-initializer.onnx")
    save(model([helper.make_node("Relu", ["b"], ["a"], name="first"),
                helper.make_node("Relu", ["a"], ["b"], name="second")],
               [fvi("x", [2])], [fvi("b", [2])]), "cycle.onnx")
    save(model([helper.make_node("Relu", ["x"], ["x"], name="shadow")],
               [fvi("x", [2])], [fvi("x", [2])]), "redefine-input.onnx")
    save(model([helper.make_node("Relu", ["x"], ["y"], name="r1"),
                helper.make_node("Relu", ["x"], ["y"], name="r2")],
               [fvi("x", [2])], [fvi("y", [2])]), "duplicate-output.onnx")
    save(model([helper.make_node("Relu", ["x"], ["y"], name="r")],
               [fvi("x", [2]), fvi("x", [2])], [fvi("y", [2])]),
         "duplicate-input.onnx")
    save(model([helper.make_node("Relu", ["x"], ["y"], name="r")],
               [fvi("", [2])], [fvi("y", [2])]), "unnamed-input.onnx")

    # --- attribute whose type disagrees with the op's schema.
    save(model([helper.make_node("Softmax", ["x"], ["y"], name="sm",
                                 axis="last")],
               [fvi("x", [2, 3])], [fvi("y", [2, 3])]), "attr-string.onnx")
    save(model([helper.make_node("Transpose", ["x"], ["y"], name="tr",
                                 perm=1.5)],
               [fvi("x", [2, 3])], [fvi("y", [3, 2])]), "attr-float.onnx")

    # --- tensor sizes: a 4 GiB declared tensor with 4 bytes of raw_data
    # (must not allocate 4 GiB), a declared petabyte (over the budget).
    big = TensorProto()
    big.name, big.data_type = "w", TensorProto.FLOAT
    big.dims.extend([1 << 30])
    big.raw_data = struct.pack("<f", 1.0)
    save(model([helper.make_node("Identity", ["w"], ["y"], name="id")],
               [], [fvi("y", [1 << 30])], [big]), "raw-size-mismatch.onnx")
    peta = TensorProto()
    peta.name, peta.data_type = "w", TensorProto.FLOAT
    peta.dims.extend([1 << 48])
    save(model([helper.make_node("Identity", ["w"], ["y"], name="id")],
               [], [fvi("y", [1 << 48])], [peta]), "petabyte.onnx")
    typed = TensorProto()
    typed.name, typed.data_type = "w", TensorProto.FLOAT
    typed.dims.extend([1 << 20, 3])
    typed.float_data.append(1.0)
    save(matmul_model(typed), "float-data-mismatch.onnx")

    # --- external data (the test copies these next to weights.bin).
    data = b"LMCWHDR\0" + struct.pack("<6f", 1, 2, 3, 4, 5, 6)
    with open(os.path.join(OUT, "weights.bin"), "wb") as f:
        f.write(data)
    ok = [("location", "weights.bin"), ("offset", "8"), ("length", "24")]
    cases = {
        "ext-ok": ok,
        "ext-dot": [("location", "./sub/weights.bin"), ("offset", "8")],
        "ext-subdir": [("location", "sub/weights.bin"), ("offset", "8"),
                       ("length", "24")],
        "ext-parent": [("location", "../weights.bin"), ("offset", "8")],
        "ext-parent-nested": [("location", "a/../../weights.bin"),
                              ("offset", "8")],
        "ext-absolute": [("location", "/etc/passwd")],
        "ext-symlink": [("location", "link.bin"), ("offset", "8")],
        "ext-symlink-dir": [("location", "linkdir/weights.bin"),
                            ("offset", "8")],
        "ext-hardlink": [("location", "hard.bin"), ("offset", "8")],
        "ext-missing": [("location", "nope.bin")],
        "ext-offset": [("location", "weights.bin"), ("offset", "1000")],
        "ext-length": [("location", "weights.bin"), ("offset", "8"),
                       ("length", "100")],
        "ext-overflow": [("location", "weights.bin"), ("offset", "8"),
                         ("length", "18446744073709551615")],
        "ext-size": [("location", "weights.bin"), ("offset", "0"),
                     ("length", "32")],
        "ext-negative": [("location", "weights.bin"), ("offset", "-8")],
        "ext-no-location": [("offset", "8")],
        "ext-unknown-key": ok + [("compression", "zstd")],
        "ext-fifo": [("location", "fifo.bin")],
    }
    for name, entries in cases.items():
        save(matmul_model(external_weight(entries)), name + ".onnx")
    # A Constant node's value in external data (torch.onnx.export writes
    # large constants of models above 2 GB so), held to the same rules.
    for name, entries in {"ext-constant": ok,
                          "ext-constant-parent": cases["ext-parent"]}.items():
        value = external_weight(entries)
        value.name = ""
        constant = helper.make_node("Constant", [], ["w"], name="c",
                                    value=value)
        save(model([constant,
                    helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
                   [fvi("x", [2, 3])], [fvi("y", [2, 2])]), name + ".onnx")


def matmul_model_with(initializers):
    return model([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
                 [fvi("x", [2, 3])], [fvi("y", [2, 2])], initializers)


if __name__ == "__main__":
    main()
