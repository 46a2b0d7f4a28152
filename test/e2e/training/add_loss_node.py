#!/usr/bin/env python3
"""Appends a loss node to a classifier exported without one, as
torch.onnx.export does for a module that returns its loss.

usage: add_loss_node.py IN.onnx OUT.onnx sce|nll
  sce: loss = SoftmaxCrossEntropyLoss(logits, labels)
  nll: loss = NegativeLogLikelihoodLoss(LogSoftmax(logits, axis=1), labels)
The graph gains the int64 input `labels` [batch] and the output `loss`.
"""
import sys

import onnx
from onnx import TensorProto, helper


def main():
    source, target, kind = sys.argv[1:]
    model = onnx.load(source)
    graph = model.graph
    logits = graph.output[0].name
    batch = graph.input[0].type.tensor_type.shape.dim[0]
    labels = helper.make_tensor_value_info("labels", TensorProto.INT64, [None])
    labels.type.tensor_type.shape.dim[0].CopyFrom(batch)
    graph.input.append(labels)
    if kind == "sce":
        graph.node.append(helper.make_node(
            "SoftmaxCrossEntropyLoss", [logits, "labels"], ["loss"]))
    else:
        graph.node.append(helper.make_node(
            "LogSoftmax", [logits], ["log_prob"], axis=1))
        graph.node.append(helper.make_node(
            "NegativeLogLikelihoodLoss", ["log_prob", "labels"], ["loss"]))
    graph.output.append(helper.make_tensor_value_info("loss", TensorProto.FLOAT, []))
    if model.opset_import[0].version < 13:
        model.opset_import[0].version = 13
    onnx.checker.check_model(model)
    onnx.save(model, target)


if __name__ == "__main__":
    main()
