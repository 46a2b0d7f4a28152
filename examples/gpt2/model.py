"""GPT-2 as nanoGPT writes it: pre-LayerNorm blocks, fused QKV projection,
tanh GELU, learned positions, tied input/output embedding, biases.

Sizes (`SIZES`) follow the GPT-2 paper; the vocabulary is padded to 50304
(a multiple of 64) as nanoGPT and llm.c do. Parameter names are the ones a
Hugging Face GPT-2 checkpoint uses below its `transformer.` prefix
(`h.0.attn.c_attn.weight`, ...), so `--init model.safetensors` of a
`save_pretrained` checkpoint matches them; HF's Conv1D stores the
projections transposed ([in, out]) and this model does too.
"""
import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    layers: int
    heads: int
    width: int
    context: int = 1024
    vocab: int = 50304


SIZES = {
    "124M": Config(layers=12, heads=12, width=768),
    "350M": Config(layers=24, heads=16, width=1024),
    "774M": Config(layers=36, heads=20, width=1280),
}


class Conv1D(nn.Module):
    """HF's GPT-2 projection: y = x @ weight + bias, weight [in, out]."""

    def __init__(self, inputs, outputs):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(inputs, outputs))
        self.bias = nn.Parameter(torch.zeros(outputs))

    def forward(self, x):
        return x @ self.weight + self.bias


class Attention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.heads = config.heads
        self.c_attn = Conv1D(config.width, 3 * config.width)
        self.c_proj = Conv1D(config.width, config.width)
        mask = torch.tril(torch.ones(config.context, config.context))
        self.register_buffer("mask", mask.view(1, 1, config.context, config.context),
                             persistent=False)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        v = v.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(C // self.heads))
        att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_fc = Conv1D(config.width, 4 * config.width)
        self.c_proj = Conv1D(4 * config.width, config.width)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.width)
        self.attn = Attention(config)
        self.ln_2 = nn.LayerNorm(config.width)
        self.mlp = MLP(config)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT2(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab, config.width)
        self.wpe = nn.Embedding(config.context, config.width)
        self.h = nn.ModuleList([Block(config) for _ in range(config.layers)])
        self.ln_f = nn.LayerNorm(config.width)
        # GPT-2's initialization: N(0, 0.02), residual projections scaled
        # by 1/sqrt(2 * layers).
        for name, p in self.named_parameters():
            if p.dim() == 2:
                std = 0.02
                if name.endswith("c_proj.weight"):
                    std /= math.sqrt(2 * config.layers)
                nn.init.normal_(p, std=std)

    def forward(self, tokens):
        T = tokens.shape[1]
        pos = torch.arange(T, device=tokens.device)
        x = self.wte(tokens) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        return self.ln_f(x) @ self.wte.weight.t()
