"""The Hugging Face round trip of bench/hf_roundtrip.sh (run it from there).

1. Qwen2ForCausalLM (tied head) with perturbed random weights,
   save_pretrained in bf16, sharded: what users download.
2. lmc_export.export of the model loaded from it in float32 (the logits
   behind a wrapper, so the export's names are `m.` + HF's).
3. lmc compiles it; the executable trains STEPS AdamW steps from
   `--init DIR` and writes `--save-hf OUT` in shards of the same size.
4. PyTorch trains the model loaded from DIR in float32 on the same
   batches with torch.optim.AdamW (same hyperparameters).
5. transformers' from_pretrained(OUT) (default dtype) must be float32,
   hold exactly the tensors lmc trained (its `--save` file, under the
   export's names) and give their logits on a held-out batch to 1e-6: the
   round trip. Beside it, how far PyTorch's own fine-tuning is: losses
   (must agree to 1e-5 relative) and logits (reported: Adam turns the
   rounding noise of gradients that are zero in exact arithmetic, such as
   the key biases', into steps of up to lr, so at real size the fine-tuned
   weights of the two differ by about lr).
"""
import argparse
import os
import subprocess
import sys
import time

import numpy as np
import torch

from hf_models import Logits, hf_model, train_step

BATCH, SEQ, LR, WD = 2, 32, 1e-4, 0.01


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="small")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--work", required=True)
    parser.add_argument("--shard", type=int, default=None,
                        help="bytes per shard, in and out")
    o = parser.parse_args()
    from transformers import Qwen2ForCausalLM
    import lmc_export

    shard = o.shard or (100_000 if o.config == "small" else 200_000_000)
    source = os.path.join(o.work, "source")
    out = os.path.join(o.work, "trained")
    model = hf_model(o.config)
    config = model.config
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
    saved = os.path.join(o.work, "lmc.safetensors")
    subprocess.run([exe, "--init", source, "--save-hf", out,
                    "--hf-shard-size", str(shard), "--save", saved,
                    "--metrics", os.path.join(o.work, "lmc.jsonl"),
                    "--input", "x=" + os.path.join(o.work, "x.npy"),
                    "--input", "labels=" + os.path.join(o.work, "y.npy"),
                    "--steps", str(o.steps), "--log-every", "1"], check=True)
    print(f"lmc: {o.steps} steps and --save-hf in {time.time() - start:.1f} s")

    import json
    lmc_losses = [json.loads(line)["loss"] for line in
                  open(os.path.join(o.work, "lmc.jsonl"))
                  if '"loss"' in line]
    torch_losses = []
    reference = load(source, dtype=torch.float32).train()
    opt = torch.optim.AdamW(reference.parameters(), lr=LR, weight_decay=WD)
    for step in range(o.steps):
        xb = torch.from_numpy(x[step * BATCH:(step + 1) * BATCH])
        yb = torch.from_numpy(y[step * BATCH:(step + 1) * BATCH])
        torch_losses.append(train_step(reference, opt, xb, yb))
    for step, (got, want) in enumerate(zip(lmc_losses, torch_losses)):
        print(f"step {step + 1}: loss lmc {got:.7f}, PyTorch {want:.7f}")
    loss_err = max(abs(g - w) / abs(w) for g, w in zip(lmc_losses,
                                                       torch_losses))

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
    # What lmc trained, in the HF model built from the source: the export's
    # names without the wrapper's "m.", the tied head as the embedding.
    import safetensors.torch
    own = load(source, dtype=torch.float32)
    state = {k[len("m."):]: v for k, v in
             safetensors.torch.load_file(saved).items()}
    state.setdefault("model.embed_tokens.weight", state.get("lm_head.weight"))
    missing, unexpected = own.load_state_dict(state, strict=False)
    if unexpected or [k for k in missing if k != "lm_head.weight"]:
        sys.exit(f"lmc's --save names: missing {missing}, unexpected "
                 f"{unexpected}")
    with torch.no_grad():
        want = own.eval()(probe).logits
        got = trained.eval()(probe).logits
        torch_logits = reference.eval()(probe).logits
    err = (got.double() - want.double()).abs().max().item()
    torch_err = (got.double() - torch_logits.double()).abs().max().item()
    scale = want.abs().max().item()
    print(f"from_pretrained(OUT): dtype {dtype}, files "
          f"{sorted(f for f in os.listdir(out) if 'safetensors' in f)}")
    print(f"logits of from_pretrained(OUT) against lmc's trained weights: "
          f"max abs difference {err:.3g} (largest logit {scale:.3g})")
    print(f"against PyTorch's own fine-tuning: losses within {loss_err:.2g} "
          f"relative, logits within {torch_err:.3g}")
    if dtype != torch.float32 or err > 1e-6 or loss_err > 1e-5:
        sys.exit("round trip FAILED")
    print("round trip OK")


if __name__ == "__main__":
    main()
