"""Write the fixed-batch test's models: a one-block character GPT (the
examples/gpt-char architecture at width 32, 4 heads, context 16) exported
twice with the same weights, as torch.onnx.export does by default (fixed
shapes, constant folding: the Reshape targets are constants like
[4, 16, 4, 8] whose leading 4 is the batch and third 4 the heads) and with
dynamic_axes. `lmc --batch 8` must train the first like the second.

    python3 make_fixed_batch.py    # writes gpt-fixed-b4.onnx, gpt-dynamic.onnx

Needs torch and onnx at generation time only; the files are checked in.
"""
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../../../../examples/gpt-char"))
import export as gpt  # noqa: E402

gpt.CTX, gpt.DIM, gpt.HEADS, gpt.LAYERS = 16, 32, 4, 1


def export(path, dynamic):
    torch.manual_seed(0)
    model = gpt.GPT().eval()
    tokens = torch.zeros(4, gpt.CTX, dtype=torch.long)
    axes = {"tokens": {0: "batch"}, "logits": {0: "batch"}} if dynamic else None
    torch.onnx.export(model, (tokens,), path, input_names=["tokens"],
                      output_names=["logits"], dynamic_axes=axes,
                      opset_version=17, dynamo=False,
                      training=torch.onnx.TrainingMode.TRAINING)


export(os.path.join(HERE, "gpt-fixed-b4.onnx"), dynamic=False)
export(os.path.join(HERE, "gpt-dynamic.onnx"), dynamic=True)
