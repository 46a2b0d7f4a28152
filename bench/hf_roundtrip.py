"""The Hugging Face round trip of bench/hf_roundtrip.sh (run it from there).

1. Qwen2ForCausalLM (tied head) with perturbed random weights,
   save_pretrained in bf16, sharded: what users download.
2. lmc_export.export of the model loaded from it in float32 (the logits
   behind a wrapper, so the export's names are `m.` + HF's).
3. lmc compiles it; the executable trains STEPS AdamW steps from
   `--init DIR` and writes `--save-hf OUT` in shards of the same size.
4. PyTorch trains the model loaded from DIR in float32 on the same
   batches with torch.optim.AdamW (same hyperparameters).
5. transformers' from_pretrained(OUT) (default dtype) must be float32 and
   give PyTorch's fine-tuned logits on a held-out batch to 1e-5.
"""
import argparse
import os
import subprocess
import sys
import time

import numpy as np
import torch

CONFIGS = {
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
BATCH, SEQ, LR, WD = 2, 32, 1e-4, 0.01


class Logits(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.m = model

    def forward(self, x):
        return self.m(x).logits


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="small")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--work", required=True)
    parser.add_argument("--shard", type=int, default=None,
                        help="bytes per shard, in and out")
    o = parser.parse_args()
    from transformers import Qwen2Config, Qwen2ForCausalLM
    import lmc_export

    shard = o.shard or (100_000 if o.config == "small" else 200_000_000)
    source = os.path.join(o.work, "source")
    out = os.path.join(o.work, "trained")
    config = Qwen2Config(tie_word_embeddings=True, attention_dropout=0.0,
                         **CONFIGS[o.config])
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(config)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.02 * torch.randn_like(p))
    model.to(torch.bfloat16).save_pretrained(source, max_shard_size=shard)
    shards = [f for f in os.listdir(source) if f.endswith(".safetensors")]
    print(f"source: {len(shards)} bf16 shards of at most {shard} bytes")

    rng = np.random.default_rng(0)
    x = rng.integers(0, config.vocab_size, (o.steps * BATCH + BATCH, SEQ),
                     dtype=np.int64)
    y = np.roll(x, -1, axis=1)
    np.save(os.path.join(o.work, "x.npy"), x[:o.steps * BATCH])
    np.save(os.path.join(o.work, "y.npy"), y[:o.steps * BATCH])
    probe = torch.from_numpy(x[o.steps * BATCH:])

    def load(path, **kw):
        return Qwen2ForCausalLM.from_pretrained(path, **kw)

    onnx_path = os.path.join(o.work, "model.onnx")
    exported = Logits(load(source, dtype=torch.float32))
    lmc_export.export(exported, (torch.from_numpy(x[:BATCH]),), onnx_path)
    del exported
    exe = os.path.join(o.work, "train")
    subprocess.run(["lmc", onnx_path, "-o", exe, "--batch", str(BATCH),
                    "--loss", "cross_entropy", "--optimizer", "adamw",
                    "--lr", str(LR), "--weight-decay", str(WD)], check=True)
    start = time.time()
    subprocess.run([exe, "--init", source, "--save-hf", out,
                    "--hf-shard-size", str(shard),
                    "--input", "x=" + os.path.join(o.work, "x.npy"),
                    "--input", "labels=" + os.path.join(o.work, "y.npy"),
                    "--steps", str(o.steps), "--log-every", "1"], check=True)
    print(f"lmc: {o.steps} steps and --save-hf in {time.time() - start:.1f} s")

    reference = load(source, dtype=torch.float32).train()
    opt = torch.optim.AdamW(reference.parameters(), lr=LR, weight_decay=WD)
    for step in range(o.steps):
        xb = torch.from_numpy(x[step * BATCH:(step + 1) * BATCH])
        yb = torch.from_numpy(y[step * BATCH:(step + 1) * BATCH])
        logits = reference(xb).logits
        loss = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), yb.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"PyTorch step {step + 1}: loss {loss.item():.6f}")

    def names(path):
        from safetensors import safe_open
        keys = set()
        for f in os.listdir(path):
            if f.endswith(".safetensors"):
                with safe_open(os.path.join(path, f), "pt") as st:
                    keys |= set(st.keys())
        return keys
    if names(out) != names(source):
        sys.exit(f"--save-hf's names differ from save_pretrained's: "
                 f"{sorted(names(out) ^ names(source))[:6]}")
    print(f"--save-hf wrote the {len(names(out))} tensors save_pretrained "
          f"wrote, under the same names")
    trained = load(out)
    dtype = next(trained.parameters()).dtype
    with torch.no_grad():
        want = reference.eval()(probe).logits
        got = trained.eval()(probe).logits
    err = (got.double() - want.double()).abs().max().item()
    scale = want.abs().max().item()
    print(f"from_pretrained(OUT): dtype {dtype}, files "
          f"{sorted(f for f in os.listdir(out) if 'safetensors' in f)}")
    print(f"logits max abs difference {err:.3g} (largest logit {scale:.3g})")
    if dtype != torch.float32 or err > 1e-5:
        sys.exit("round trip FAILED")
    print("round trip OK")


if __name__ == "__main__":
    main()
