"""The Hugging Face models bench/hf_roundtrip.py and bench/lora_peft.py
build: transformers' Qwen2ForCausalLM (head tied to the embedding) at a
small size or Qwen2.5-0.5B's configuration, or GPT2LMHeadModel at GPT-2
124M's (dropout 0), random weights perturbed so that no two tensors are
equal, and the wrapper lmc exports (the logits).
"""
import torch

CONFIGS = {
    "gpt2-124m": dict(n_embd=768, n_layer=12, n_head=12, vocab_size=50257,
                      n_positions=1024),
    "small": dict(vocab_size=256, hidden_size=64, intermediate_size=128,
                  num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, max_position_embeddings=128),
    # Qwen2.5-0.5B's configuration (its config.json), random weights.
    "qwen2.5-0.5b": dict(vocab_size=151936, hidden_size=896,
                         intermediate_size=4864, num_hidden_layers=24,
                         num_attention_heads=14, num_key_value_heads=2,
                         max_position_embeddings=32768, rope_theta=1e6,
                         rms_norm_eps=1e-6),
}


class Logits(torch.nn.Module):
    """What lmc trains: the logits of the model (names `m.` + HF's)."""

    def __init__(self, model):
        super().__init__()
        self.m = model

    def forward(self, x):
        return self.m(x).logits


def hf_model(name, bf16_matrices=False):
    """The model of CONFIGS[name] (a GPT-2 one for `gpt2-*`), seed 0; with
    `bf16_matrices` its 2-D weights rounded to bf16 (the model stays
    float32)."""
    torch.manual_seed(0)
    if name.startswith("gpt2"):
        from transformers import GPT2Config, GPT2LMHeadModel
        model = GPT2LMHeadModel(GPT2Config(
            resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, **CONFIGS[name]))
    else:
        from transformers import Qwen2Config, Qwen2ForCausalLM
        model = Qwen2ForCausalLM(Qwen2Config(
            tie_word_embeddings=True, attention_dropout=0.0, **CONFIGS[name]))
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.02 * torch.randn_like(p))
            if bf16_matrices and p.dim() >= 2:
                p.copy_(p.to(torch.bfloat16).to(p.dtype))
    return model


def train_step(model, opt, xb, yb):
    """One step of PyTorch's own fine-tuning: the causal LM's cross-entropy
    of the logits against the (already shifted) labels, then `opt`'s
    update; the loss."""
    logits = model(xb).logits
    loss = torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), yb.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()
