"""PyTorch reference trajectories for examples/gpt-char/gpt.onnx and
gpt-folded.onnx.

    python3 make_reference.py      # writes losses.json next to this file

Builds the same model as examples/gpt-char/export.py (torch.manual_seed(0),
so the same initial weights as the ONNX initializers), trains it with
torch.optim.SGD(lr=0.1) ("sgd") and with torch.optim.AdamW(lr=1e-3,
weight_decay=0.1) ("adamw") for 20 steps of batch 4 on the token stream of
tokens.py (windows of 65 tokens with stride 64, in order, as
`./train --tokens` reads them), and records the losses in float64.

"sgd_untied" is the model gpt-folded.onnx describes: PyTorch's constant
folding turns the tied head `wte.weight.t()` into an initializer of its own,
so the head is an untied copy of the embedding's initial value, trained
separately (the folded linear weights are merely transposed).
Needs torch (generation time only; losses.json is checked in).
"""
import json
import os
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "examples", "gpt-char"))
sys.path.insert(0, HERE)
import export  # noqa: E402
import tokens  # noqa: E402

BATCH, STEPS = 4, 20


class UntiedGPT(export.GPT):
    """export.GPT with the head an untied copy of wte's initial value."""

    def __init__(self):
        super().__init__()
        self.head = torch.nn.Parameter(self.wte.weight.detach().t().clone())

    def forward(self, tokens):
        pos = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.wte(tokens) + self.wpe(pos)
        for block in self.blocks:
            x = block(x)
        return self.ln_f(x) @ self.head


def trajectory(make_optimizer, model_class=export.GPT):
    torch.manual_seed(0)
    model = model_class().double()
    opt = make_optimizer(model.parameters())
    stream = torch.tensor(tokens.stream(), dtype=torch.long)
    T = export.CTX
    losses = []
    for step in range(STEPS):
        rows = [stream[(step * BATCH + i) * T:(step * BATCH + i) * T + T + 1]
                for i in range(BATCH)]
        batch = torch.stack(rows)
        logits = model(batch[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, export.VOCAB),
                               batch[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def main():
    out = {
        "sgd": trajectory(lambda p: torch.optim.SGD(p, lr=0.1)),
        "adamw": trajectory(lambda p: torch.optim.AdamW(p, lr=1e-3, weight_decay=0.1)),
        "sgd_untied": trajectory(lambda p: torch.optim.SGD(p, lr=0.1), UntiedGPT),
    }
    with open(os.path.join(HERE, "losses.json"), "w") as f:
        json.dump({"losses": out}, f, indent=1)
    print(out)


if __name__ == "__main__":
    main()
