"""LoRA fine-tuning, lmc against Hugging Face PEFT (run it from
bench/lora_peft.sh).

1. Qwen2ForCausalLM (CONFIG: small, or Qwen2.5-0.5B's configuration) with
   perturbed random weights, float32 (BASE_PRECISION=bf16: its matrices
   rounded to bf16, which lmc then holds in bf16); PEFT's LoraConfig(r, lora_alpha =
   2 r, target_modules TARGETS, dropout 0) on it. PEFT's initial adapters
   are saved under the export's names for lmc's --init.
2. lmc_export.export of the base model (logits behind a wrapper: the
   export's names are `m.` + HF's); lmc compiles it with --lora.
3. Both train STEPS AdamW steps (lr 1e-4, weight decay 0.01) on the same
   batches, each in a process of its own (peak RSS per process), THREADS
   threads; the step time is the median after the first step.
4. lmc's --save-adapter directory is loaded by PeftModel.from_pretrained
   into the base: its logits on a held-out batch must equal those of the
   model PEFT trained (1e-5 relative to their scale), and the losses must
   agree to 1e-4 relative.
5. The base as users have it: save_pretrained's directory, loaded at run
   time (--init DIR; lmc's own initial adapters); --merge-adapter
   --save-hf writes the merged model, whose from_pretrained logits must
   equal PeftModel.from_pretrained(base, lmc's --save-adapter)'s (1e-5).
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

import numpy as np
import torch

from hf_models import CONFIGS, Logits, hf_model, train_step

LR, WD = 1e-4, 0.01


def base_model(o):
    """With --base-precision bf16 the matrices are rounded to bf16 (what lmc
    holds), the model still float32: PEFT computes what lmc does."""
    return hf_model(o.config, bf16_matrices=o.base_precision == "bf16")


def lora_config(o):
    from peft import LoraConfig
    targets = o.targets if o.targets == "all-linear" else o.targets.split(",")
    # GPT-2's Conv1D weights are stored [in, out].
    return LoraConfig(r=o.rank, lora_alpha=2 * o.rank, lora_dropout=0.0,
                      target_modules=targets,
                      fan_in_fan_out=o.config.startswith("gpt2"))


def batches(o):
    x = np.load(os.path.join(o.work, "x.npy"))
    y = np.load(os.path.join(o.work, "y.npy"))
    for step in range(o.steps):
        rows = slice(step * o.batch, (step + 1) * o.batch)
        yield torch.from_numpy(x[rows]), torch.from_numpy(y[rows])


def peft_train(o):
    """PEFT's fine-tuning in this process (--role peft): losses, step ms,
    the trained adapters (PEFT's save_pretrained) and the peak RSS."""
    from peft import get_peft_model
    torch.set_num_threads(o.threads)
    model = get_peft_model(base_model(o), lora_config(o)).train()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad],
                            lr=LR, weight_decay=WD)
    losses, ms = [], []
    for xb, yb in batches(o):
        start = time.perf_counter()
        losses.append(train_step(model, opt, xb, yb))
        ms.append((time.perf_counter() - start) * 1e3)
    model.save_pretrained(os.path.join(o.work, "peft-adapter"))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"losses": losses, "ms": statistics.median(ms[1:]),
                      "peak_rss_mib": rss}))


def run_peak_rss(command):
    """Runs `command` in a child of a small process of its own; its peak
    RSS in MiB."""
    probe = ("import os, subprocess, sys\n"
             "c = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
             "_, s, u = os.wait4(c.pid, 0)\n"
             "sys.exit(f'{sys.argv[1]} failed ({s})') if s else "
             "print(u.ru_maxrss)\n")
    out = subprocess.run([sys.executable, "-c", probe] + command, check=True,
                         capture_output=True, text=True).stdout
    return int(out) / 1024


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="small")
    parser.add_argument("--targets", default=None,
                        help="default: q/k/v/o_proj (Qwen2), c_attn,c_proj "
                             "(GPT-2)")
    parser.add_argument("--rank", type=int, default=8)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--seq", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--work", required=True)
    parser.add_argument("--base-precision", default="f32")
    parser.add_argument("--role", default="main")
    o = parser.parse_args()
    if o.targets is None:
        o.targets = ("c_attn,c_proj" if o.config.startswith("gpt2")
                     else "q_proj,k_proj,v_proj,o_proj")
    if o.role == "peft":
        return peft_train(o)
    from peft import PeftModel, get_peft_model
    import lmc_export
    import safetensors.torch

    vocab = CONFIGS[o.config]["vocab_size"]
    rng = np.random.default_rng(0)
    x = rng.integers(0, vocab, ((o.steps + 1) * o.batch, o.seq),
                     dtype=np.int64)
    y = np.roll(x, -1, axis=1)
    np.save(os.path.join(o.work, "x.npy"), x[:o.steps * o.batch])
    np.save(os.path.join(o.work, "y.npy"), y[:o.steps * o.batch])
    probe = torch.from_numpy(x[o.steps * o.batch:])

    # PEFT's initial adapters under the export's names, then the export.
    peft_model = get_peft_model(base_model(o), lora_config(o))
    init = {"m." + k[len("base_model.model."):].replace(".default.", "."):
            v.detach().clone() for k, v in peft_model.named_parameters()
            if v.requires_grad}
    init_path = os.path.join(o.work, "adapters-init.safetensors")
    safetensors.torch.save_file(init, init_path)
    # The export (minutes at 0.5 B) is kept for the next run of this shape.
    onnx_path = os.path.join(o.work, f"model-{o.batch}x{o.seq}.onnx")
    if not os.path.exists(onnx_path):
        lmc_export.export(Logits(base_model(o)), (torch.from_numpy(
            x[:o.batch]),), onnx_path)
    del peft_model
    exe = os.path.join(o.work, "train")
    start = time.time()
    subprocess.run(["lmc", onnx_path, "-o", exe, "--batch", str(o.batch),
                    "--optimizer", "adamw", "--lr", str(LR),
                    "--weight-decay", str(WD), "--lora", o.targets,
                    "--lora-rank", str(o.rank), "--lora-alpha",
                    str(2 * o.rank), "--base-precision", o.base_precision],
                   check=True)
    print(f"lmc compile: {time.time() - start:.0f} s")
    metrics = os.path.join(o.work, "lmc.jsonl")
    adapter = os.path.join(o.work, "lmc-adapter")
    lmc_rss = run_peak_rss(
        [exe, "--init", init_path, "--threads", str(o.threads),
         "--input", "x=" + os.path.join(o.work, "x.npy"),
         "--input", "labels=" + os.path.join(o.work, "y.npy"),
         "--steps", str(o.steps), "--log-every", "1", "--metrics", metrics,
         "--save-adapter", adapter, "--adapter-strip-prefix", "m."])
    rows = [json.loads(line) for line in open(metrics) if '"loss"' in line]
    lmc_losses = [r["loss"] for r in rows]
    lmc_ms = statistics.median([r["ms"] for r in rows][1:])
    # PEFT in a process of its own (its peak RSS is its own).
    peft_run = subprocess.run([sys.executable, __file__, "--role", "peft"] +
                              [a for a in sys.argv[1:]],
                              check=True, capture_output=True, text=True)
    peft = json.loads(peft_run.stdout.strip().splitlines()[-1])
    for step, (got, want) in enumerate(zip(lmc_losses, peft["losses"])):
        print(f"step {step + 1}: loss lmc {got:.7f}, PEFT {want:.7f}")
    loss_err = max(abs(g - w) / abs(w)
                   for g, w in zip(lmc_losses, peft["losses"]))

    # The round trip: lmc's adapters in PEFT, against PEFT's own.
    torch.set_num_threads(o.threads)
    with torch.no_grad():
        ours = PeftModel.from_pretrained(base_model(o), adapter).eval()
        theirs = PeftModel.from_pretrained(
            base_model(o), os.path.join(o.work, "peft-adapter")).eval()
        base = base_model(o).eval()
        got, want, before = (m(probe).logits for m in (ours, theirs, base))
    scale = want.abs().max().item()
    logit_err = (got - want).abs().max().item() / scale
    moved = (want - before).abs().max().item() / scale
    print(f"round trip: PeftModel.from_pretrained(lmc's --save-adapter) "
          f"logits vs PEFT's trained model: {logit_err:.2e} of their scale "
          f"(fine-tuning moved them {moved:.2e})")
    print(f"losses: worst relative difference {loss_err:.2e}")

    # 5. The base from its save_pretrained directory; merged out.
    from transformers import AutoModelForCausalLM
    base_dir = os.path.join(o.work, "base")
    base_model(o).save_pretrained(base_dir)
    merged_dir = os.path.join(o.work, "merged")
    adapter2 = os.path.join(o.work, "lmc-adapter-from-base")
    subprocess.run([exe, "--init", base_dir, "--threads", str(o.threads),
                    "--input", "x=" + os.path.join(o.work, "x.npy"),
                    "--input", "labels=" + os.path.join(o.work, "y.npy"),
                    "--steps", str(o.steps), "--merge-adapter",
                    "--save-hf", merged_dir, "--save-adapter", adapter2,
                    "--adapter-strip-prefix", "m."], check=True,
                   stdout=subprocess.DEVNULL)
    with torch.no_grad():
        merged = AutoModelForCausalLM.from_pretrained(merged_dir).eval()
        adapted = PeftModel.from_pretrained(
            AutoModelForCausalLM.from_pretrained(base_dir), adapter2).eval()
        got, want = merged(probe).logits, adapted(probe).logits
    merge_err = (got - want).abs().max().item() / want.abs().max().item()
    print(f"merged: from_pretrained(--merge-adapter --save-hf) logits vs "
          f"PeftModel(base, --save-adapter): {merge_err:.2e} of their scale")
    cpu = next((line.split(":", 1)[1].strip() for line in
                open("/proc/cpuinfo") if line.startswith("model name")), "?")
    print(f"{o.config} (lmc's base in {o.base_precision}), {o.targets}, "
          f"r {o.rank}, batch {o.batch} x "
          f"{o.seq}, {o.threads} thread(s), {cpu}, torch {torch.__version__}")
    print(f"step time (median after the first): lmc {lmc_ms:.1f} ms, PEFT "
          f"eager {peft['ms']:.1f} ms: {lmc_ms / peft['ms']:.2f}x")
    print(f"peak RSS: lmc {lmc_rss:.0f} MiB, PEFT {peft['peak_rss_mib']:.0f} "
          f"MiB: {lmc_rss / peft['peak_rss_mib']:.2f}x")
    if loss_err > 1e-4 or logit_err > 1e-5 or merge_err > 1e-5:
        sys.exit("MISMATCH")


if __name__ == "__main__":
    main()
