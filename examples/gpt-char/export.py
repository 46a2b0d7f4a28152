"""Export a small character-level GPT (nanoGPT's architecture) to ONNX.

    python3 export.py    # writes gpt.onnx and gpt-folded.onnx next to this file

Byte-level vocabulary (256, as scripts/text_to_tokens.py writes), context 64,
width 128, 4 heads, 2 pre-LayerNorm blocks (causal self-attention + GELU
MLP), tied input/output embeddings. torch.manual_seed(0) fixes the initial
weights, which become the ONNX initializers (the checkpoint keys, e.g.
`blocks.0.attn.qkv.weight`). Input `tokens` i64 [batch, 64], output `logits`
f32 [batch, 64, 256]. Opset 17, TorchScript exporter (dynamo=False). Needs
torch and onnx at generation time only; gpt.onnx is checked in.
"""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
VOCAB, CTX, DIM, HEADS, LAYERS = 256, 64, 128, 4, 2


class CausalSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.proj = nn.Linear(DIM, DIM)
        self.register_buffer("mask", torch.tril(torch.ones(CTX, CTX)).view(1, 1, CTX, CTX))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(DIM, dim=2)
        q = q.view(B, T, HEADS, C // HEADS).transpose(1, 2)
        k = k.view(B, T, HEADS, C // HEADS).transpose(1, 2)
        v = v.view(B, T, HEADS, C // HEADS).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(C // HEADS))
        att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(DIM)
        self.attn = CausalSelfAttention()
        self.ln2 = nn.LayerNorm(DIM)
        self.fc = nn.Linear(DIM, 4 * DIM)
        self.fc_proj = nn.Linear(4 * DIM, DIM)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.fc_proj(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, DIM)
        self.wpe = nn.Embedding(CTX, DIM)
        self.blocks = nn.ModuleList([Block() for _ in range(LAYERS)])
        self.ln_f = nn.LayerNorm(DIM)
        for name, p in self.named_parameters():
            if name.endswith("weight") and p.dim() == 2:
                nn.init.normal_(p, std=0.02)

    def forward(self, tokens):
        T = tokens.shape[1]
        pos = torch.arange(T, device=tokens.device)
        x = self.wte(tokens) + self.wpe(pos)
        for block in self.blocks:
            x = block(x)
        return self.ln_f(x) @ self.wte.weight.t()


def export(path, fold):
    """Without folding (`gpt.onnx`) the graph computes `wte.t()` and the head
    stays tied to the embedding. With PyTorch's constant folding
    (`gpt-folded.onnx`) the exporter evaluates `wte.weight.t()` into an
    initializer of its own (`onnx::MatMul_…`): the file holds an untied
    copy, which trains as a separate parameter."""
    torch.manual_seed(0)
    model = GPT().eval()
    tokens = torch.zeros(2, CTX, dtype=torch.long)
    # Training mode in both: in eval mode the exporter also merges
    # initializers of equal value (every LayerNorm's ones and zeros at
    # initialization), which ties them in the file.
    torch.onnx.export(model, (tokens,), path,
                      input_names=["tokens"], output_names=["logits"],
                      dynamic_axes={"tokens": {0: "batch"}, "logits": {0: "batch"}},
                      opset_version=17, dynamo=False,
                      do_constant_folding=fold,
                      training=torch.onnx.TrainingMode.TRAINING)


def main():
    export(os.path.join(HERE, "gpt.onnx"), fold=False)
    export(os.path.join(HERE, "gpt-folded.onnx"), fold=True)


if __name__ == "__main__":
    main()
