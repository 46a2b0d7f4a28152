"""PyTorch's side of bench/gpt2.sh: GPT-2 (examples/gpt2/model.py, seed 0)
trained with AdamW as lmc's executable trains it (lr 1e-3, betas 0.9/0.999,
eps 1e-8, no weight decay, mean cross-entropy), on the same token shard
read as lmc reads it (windows of T+1 tokens at stride T, in order).

    python3 gpt2_torch.py --size 124M --context 256 --batch 4 --steps 5 \
        --threads 1 --mode eager|compile --tokens train.bin [--checkpoint]

--checkpoint recomputes each block in the backward pass
(torch.utils.checkpoint, non-reentrant): PyTorch's counterpart of
`lmc --remat per-block`, which bench/gpt2.sh passes along.

Prints one JSON line: median step ms (after the first step, which holds
torch.compile's compilation), the first step's ms, and peak RSS (MiB).
"""
import argparse
import json
import os
import resource
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples", "gpt2"))
from model import SIZES, GPT2, Config  # noqa: E402


def windows(path, batch, context):
    raw = np.fromfile(path, dtype=np.uint8)
    header = raw[:1024].view(np.int32)
    assert header[0] == 20240520, "an llm.c uint16 shard"
    tokens = raw[1024:].view(np.uint16).astype(np.int64)
    count = (len(tokens) - 1) // context
    sample = 0
    while True:
        rows = []
        for _ in range(batch):
            start = (sample % count) * context
            rows.append(tokens[start:start + context + 1])
            sample += 1
        block = torch.from_numpy(np.stack(rows))
        yield block[:, :-1], block[:, 1:]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--size", default="124M", choices=sorted(SIZES))
    p.add_argument("--context", type=int, default=256)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--mode", default="eager", choices=["eager", "compile"])
    p.add_argument("--tokens", required=True)
    p.add_argument("--checkpoint", action="store_true")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    base = SIZES[a.size]
    torch.manual_seed(0)
    model = GPT2(Config(base.layers, base.heads, base.width, a.context,
                        base.vocab))
    if a.checkpoint:
        from torch.utils.checkpoint import checkpoint

        def forward(tokens):  # GPT2.forward with each block checkpointed
            pos = torch.arange(tokens.shape[1], device=tokens.device)
            x = model.wte(tokens) + model.wpe(pos)
            for block in model.h:
                x = checkpoint(block, x, use_reentrant=False)
            return model.ln_f(x) @ model.wte.weight.t()
        model.forward = forward
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.999),
                            eps=1e-8, weight_decay=0.0)

    def step(x, y):
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                               y.reshape(-1))
        loss.backward()
        return loss

    if a.mode == "compile":
        step = torch.compile(step)
    data = windows(a.tokens, a.batch, a.context)
    times, losses = [], []
    for _ in range(a.steps):
        x, y = next(data)
        start = time.perf_counter()
        loss = step(x, y)
        opt.step()
        opt.zero_grad(set_to_none=True)
        times.append(1000 * (time.perf_counter() - start))
        losses.append(loss.item())
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"mode": a.mode, "torch": torch.__version__,
                      "checkpoint": a.checkpoint,
                      "first_ms": times[0],
                      "median_ms": statistics.median(times[1:] or times),
                      "peak_rss_mib": rss, "losses": losses}))


if __name__ == "__main__":
    main()
