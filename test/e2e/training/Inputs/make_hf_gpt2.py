"""Write hf-gpt2.test's inputs: a tiny Hugging Face GPT-2 (2 layers, width
32, 2 heads, vocabulary 64, context 16) exported with PyTorch's dynamo
exporter (torch.export, opset 20, external data; optimize=False keeps every
weight an initializer: the default optimizer folds the position embedding
and the head's transpose into constants), and a *different* instance's
save_pretrained checkpoint in bf16 with the loss HF's own forward computes
from it. lmc must load the checkpoint into the export (its initializers are
`m.transformer.h.0...`, the wrapper's prefix before HF's names; the tied
head is the export's `m.lm_head.weight`, absent from the file) and compute
that loss.

    python3 make_hf_gpt2.py    # needs torch 2.x, transformers, onnx

CI needs none of them: the outputs are checked in.
"""
import json
import os

import numpy as np
import torch
from transformers import GPT2Config, GPT2LMHeadModel

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = GPT2Config(vocab_size=64, n_positions=16, n_embd=32, n_layer=2,
                    n_head=2, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)


class Logits(torch.nn.Module):
    """What a user exports: the logits of input_ids (lmc adds the loss)."""

    def __init__(self, model):
        super().__init__()
        self.m = model

    def forward(self, input_ids):
        return self.m(input_ids=input_ids).logits


def main():
    torch.manual_seed(1)
    exported = Logits(GPT2LMHeadModel(CONFIG).eval())
    torch.manual_seed(0)
    pretrained = GPT2LMHeadModel(CONFIG).eval().to(torch.bfloat16)
    pretrained.save_pretrained(os.path.join(HERE, "hf-gpt2-bf16"))
    for extra in ("config.json", "generation_config.json"):
        os.remove(os.path.join(HERE, "hf-gpt2-bf16", extra))

    rng = np.random.default_rng(0)
    x = rng.integers(0, 64, size=(2, 16), dtype=np.int64)
    y = rng.integers(0, 64, size=(2, 16), dtype=np.int64)
    np.save(os.path.join(HERE, "hf-gpt2-x.npy"), x)
    np.save(os.path.join(HERE, "hf-gpt2-y.npy"), y)
    with torch.no_grad():  # HF's forward in f32 on the bf16 weights
        logits = Logits(pretrained.float())(torch.from_numpy(x))
        loss = torch.nn.functional.cross_entropy(
            logits.reshape(-1, 64), torch.from_numpy(y).reshape(-1))
    with open(os.path.join(HERE, "hf-gpt2-loss.json"), "w") as f:
        json.dump({"loss": loss.item(), "torch": torch.__version__}, f)
        f.write("\n")

    # Weights as a pretrained model has them: no two initializers equal
    # (the exporter would merge equal ones, as fresh LayerNorms' ones).
    with torch.no_grad():
        for p in exported.parameters():
            p.add_(0.01 * torch.randn_like(p))
    program = torch.onnx.export(exported, (torch.from_numpy(x),), dynamo=True,
                                optimize=False, input_names=["input_ids"],
                                output_names=["logits"])
    # The exporter's default optimization, with its folding limited as it
    # is at real size: a GPT-2's position embedding and head (786 k and
    # 38 M elements) are above its 262 k limit and stay initializers; this
    # model's 512 and 2048 would fold.
    import onnxscript.optimizer
    onnxscript.optimizer.optimize(program.model, input_size_limit=256,
                                  output_size_limit=256)
    program.save(os.path.join(HERE, "hf-gpt2-dynamo.onnx"),
                 external_data=True)


if __name__ == "__main__":
    main()
