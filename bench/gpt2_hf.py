"""Hugging Face's side of bench/gpt2_finetune.sh: a GPT-2 checkpoint as
`save_pretrained` writes it, and Hugging Face's own fine-tuning of it.

    python3 gpt2_hf.py save --size 124M --context 1024 --out DIR
    python3 gpt2_hf.py export --dir DIR --batch 1 -o model.onnx
    python3 gpt2_hf.py train --dir DIR --batch 1 --steps 5 --threads 2 \
        --tokens train.bin

`save` builds `transformers.GPT2LMHeadModel` at one of examples/gpt2's
sizes with GPT-2's own vocabulary (50257), initialized as HF initializes it
(seed 0; this machine cannot download the released weights, so these stand
in for them), and writes DIR/model.safetensors in bf16 (`transformer.h.0...`
names, no `lm_head`: it is tied), as checkpoints are often shared.

`export` writes that model as a user of Hugging Face exports it today:
PyTorch's dynamo exporter (`torch.onnx.export(..., dynamo=True,
optimize=False)`, opset 18+, weights as external data next to the model:
the default optimization folds weights into unnamed constants, which lmc
refuses) of the logits of `input_ids` [batch, context]; the weights are
perturbed first (as a pretrained model's, no two equal), which --init
replaces anyway.

`train` loads DIR back in f32 (the bf16 values widened, as lmc's `--init`
widens them) and fine-tunes it with AdamW as lmc's executable does (lr
1e-3, betas 0.9/0.999, eps 1e-8, no weight decay, mean cross-entropy) on
the windows lmc reads from the shard (gpt2_torch.py's `windows`). Prints
one JSON line: losses, median step ms after the first, peak RSS (MiB).
"""
import argparse
import json
import os
import resource
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from transformers import GPT2Config, GPT2LMHeadModel

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "examples", "gpt2"))
from gpt2_torch import windows  # noqa: E402
from model import SIZES  # noqa: E402

GPT2_VOCAB = 50257


def save(a):
    size = SIZES[a.size]
    config = GPT2Config(vocab_size=GPT2_VOCAB, n_positions=a.context,
                        n_embd=size.width, n_layer=size.layers,
                        n_head=size.heads, resid_pdrop=0.0, embd_pdrop=0.0,
                        attn_pdrop=0.0)
    torch.manual_seed(0)
    model = GPT2LMHeadModel(config).to(torch.bfloat16)
    model.save_pretrained(a.out)


class Logits(torch.nn.Module):
    """What a user exports: the logits of input_ids (lmc adds the loss)."""

    def __init__(self, model):
        super().__init__()
        self.m = model

    def forward(self, input_ids):
        return self.m(input_ids=input_ids).logits


def export(a):
    model = GPT2LMHeadModel.from_pretrained(a.dir, dtype=torch.float32)
    torch.manual_seed(1)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.01 * torch.randn_like(p))
    tokens = torch.zeros(a.batch, model.config.n_positions, dtype=torch.long)
    program = torch.onnx.export(Logits(model.eval()), (tokens,), dynamo=True,
                                optimize=False, input_names=["input_ids"],
                                output_names=["logits"])
    program.save(a.output, external_data=True)


def train(a):
    torch.set_num_threads(a.threads)
    model = GPT2LMHeadModel.from_pretrained(a.dir, dtype=torch.float32)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.999),
                            eps=1e-8, weight_decay=0.0)
    data = windows(a.tokens, a.batch, model.config.n_positions)
    times, losses = [], []
    for _ in range(a.steps):
        x, y = next(data)
        start = time.perf_counter()
        logits = model(input_ids=x).logits
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                               y.reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        times.append(1000 * (time.perf_counter() - start))
        losses.append(loss.item())
    import transformers
    print(json.dumps({"torch": torch.__version__,
                      "transformers": transformers.__version__,
                      "median_ms": statistics.median(times[1:] or times),
                      "peak_rss_mib": resource.getrusage(
                          resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "losses": losses}))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("save")
    s.add_argument("--size", default="124M", choices=sorted(SIZES))
    s.add_argument("--context", type=int, default=1024)
    s.add_argument("--out", required=True)
    e = sub.add_parser("export")
    e.add_argument("--dir", required=True)
    e.add_argument("--batch", type=int, default=1)
    e.add_argument("-o", "--output", required=True)
    t = sub.add_parser("train")
    t.add_argument("--dir", required=True)
    t.add_argument("--batch", type=int, default=1)
    t.add_argument("--steps", type=int, default=5)
    t.add_argument("--threads", type=int, default=1)
    t.add_argument("--tokens", required=True)
    a = p.parse_args()
    {"save": save, "export": export, "train": train}[a.command](a)


if __name__ == "__main__":
    main()
