"""Write what docs/tutorials/finetune-hf.md's Python steps produce, for a
tiny GPT-2 (2 layers, width 32, vocabulary 64, context 16), so that
tutorial-finetune.test can run the tutorial's shell steps without PyTorch:

  finetune/gpt2.onnx, gpt2.onnx.data   lmc_export.export(model, (ids,), ...)
  finetune/gpt2-hf/                    model.save_pretrained (config.json,
                                       model.safetensors)
  finetune/x.npy, y.npy                token windows and next-token labels

    python3 make_finetune_inputs.py    # needs torch, transformers, onnx,
                                       # and lmc_export (pip install ./python)
"""
import os

import numpy as np
import torch
from transformers import GPT2Config, GPT2LMHeadModel

import lmc_export

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "finetune")


def main():
    os.makedirs(HERE, exist_ok=True)
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=64, n_positions=16, n_embd=32, n_layer=2,
                        n_head=2, resid_pdrop=0.0, embd_pdrop=0.0,
                        attn_pdrop=0.0, use_cache=False)
    model = GPT2LMHeadModel(config)
    model.save_pretrained(os.path.join(HERE, "gpt2-hf"))
    # As the tutorial: the export starts from other weights than the
    # checkpoint --init loads (a fresh model of the same configuration).
    torch.manual_seed(1)
    fresh = GPT2LMHeadModel(config)
    ids = torch.zeros(4, 16, dtype=torch.long)
    lmc_export.export(fresh, (ids,), os.path.join(HERE, "gpt2.onnx"))
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, 64, size=16 * 40 + 1)
    x = tokens[:-1].reshape(40, 16)
    y = tokens[1:].reshape(40, 16)
    np.save(os.path.join(HERE, "x.npy"), x.astype(np.int64))
    np.save(os.path.join(HERE, "y.npy"), y.astype(np.int64))


if __name__ == "__main__":
    main()
