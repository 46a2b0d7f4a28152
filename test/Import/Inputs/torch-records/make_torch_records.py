"""Writes small ONNX models carrying the dynamo exporter's FX records
(`pkg.torch.onnx.fx_node` node metadata) as torch.onnx.export writes them,
for the importer's checks of what they say (test/Import/torch-records.test):

  embedding-scale-grad.onnx   aten.embedding(..., padding_idx, True): lmc
                              cannot train scale_grad_by_freq
  embedding-sparse.onnx       aten.embedding(..., -1, False, True)
  embedding-padding-range.onnx  padding_idx 9 of a 4-row table
  embedding-axis.onnx         a padding_idx on a Gather along axis 1
  batchnorm-eval.onnx         _native_batch_norm_legit_no_training:
                              inference, the running statistics constants
  batchnorm-one-value.onnx    a training-mode record over one value per
                              channel (PyTorch refuses to train it too)

    python3 make_torch_records.py    # needs onnx (any recent version)
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def fx(node, record):
    entry = node.metadata_props.add()
    entry.key = "pkg.torch.onnx.fx_node"
    entry.value = record
    return node


def save(name, nodes, inputs, outputs, initializers):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 10
    onnx.save(model, os.path.join(HERE, name + ".onnx"))


def embedding(name, args, axis=0):
    table = numpy_helper.from_array(
        np.arange(12, dtype=np.float32).reshape(4, 3), "m.embed.weight")
    gather = fx(helper.make_node("Gather", ["m.embed.weight", "ids"], ["y"],
                                 name="node_embedding", axis=axis),
                "%embedding : call_function[target=torch.ops.aten.embedding."
                f"default](args = (%p_m_embed_weight, %ids{args}), kwargs = {{}})")
    save(name, [gather],
         [helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 2])],
         [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
         [table])


def batch_norm(name, shape, target, options):
    """A BatchNormalization over 2 channels whose FX record names `target`
    with the trailing arguments `options`."""
    inits = [numpy_helper.from_array(np.full(2, v, np.float32), n) for n, v in
             (("m.bn.weight", 1.0), ("m.bn.bias", 0.0),
              ("m.bn.running_mean", 0.5), ("m.bn.running_var", 2.0))]
    norm = fx(helper.make_node(
        "BatchNormalization", ["x", "m.bn.weight", "m.bn.bias",
                               "m.bn.running_mean", "m.bn.running_var"],
        ["y"], name="node_batch_norm", epsilon=1e-5, momentum=0.9),
        f"%bn : call_function[target=torch.ops.aten.{target}.default](args = "
        "(%x, %p_m_bn_weight, %p_m_bn_bias, %b_m_bn_running_mean, "
        f"%b_m_bn_running_var, {options}), kwargs = {{}})")
    save(name, [norm],
         [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
         [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)


def main():
    embedding("embedding-scale-grad", ", 0, True")
    embedding("embedding-sparse", ", -1, False, True")
    embedding("embedding-padding-range", ", 9")
    embedding("embedding-axis", ", 1", axis=1)
    batch_norm("batchnorm-eval", [4, 2, 3], "_native_batch_norm_legit_"
               "no_training", "0.1, 1e-05")
    batch_norm("batchnorm-one-value", [1, 2, 1], "_native_batch_norm_legit_"
               "functional", "True, 0.1, 1e-05")

if __name__ == "__main__":
    main()
