"""The per-family accuracy table: every model of
test/e2e/reference/families (references.json), every export of it that
exists (dynamo optimize=False, legacy, optimize=True), compiled by lmc and
trained the references' five AdamW steps; prints the compile status, the
first loss's and the worst of the five losses' relative error against
PyTorch's float64 trajectory, and the worst parameter error after the
fifth step (dynamo exports, whose names the reference uses); for models
with dropout, the error of the eval loss against PyTorch's eval mode.
Needs only
the build (no PyTorch):

    python3 bench/families_accuracy.py [NAME...]
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REF = os.path.join(ROOT, "test", "e2e", "reference", "families")
sys.path.insert(0, os.path.join(ROOT, "test", "e2e", "reference"))
import safetensors_np  # noqa: E402

LMC = os.path.join(ROOT, "build", "bin", "lmc")
SUFFIX = {"dynamo": "", "legacy": "-legacy", "optimized": "-optimized"}


def run(name, entry, export, work):
    model = os.path.join(REF, entry.get("export_of", name) + SUFFIX[export]
                         + ".onnx")
    exe = os.path.join(work, f"{name}-{export}")
    compiled = subprocess.run(
        [LMC, model, "--batch", str(entry["batch"]), "--optimizer", "adamw",
         "--lr", "1e-3", "--weight-decay", "0.01", "-o", exe, "--quiet"],
        capture_output=True, text=True)
    if compiled.returncode != 0:
        error = [l for l in compiled.stderr.splitlines() if "error" in l]
        return "refused: " + (error[0] if error else compiled.stderr)[:160]
    metrics = exe + ".jsonl"
    saved = exe + ".safetensors"
    if "eval_loss" in entry:  # dropout: PyTorch's eval mode on batch 1
        batch = entry["batch"]
        for part in ("x", "y"):
            np.save(f"{exe}-{part}.npy",
                    np.load(f"{REF}/{name}-{part}.npy")[:batch])
        data = [f"x={exe}-x.npy", f"labels={exe}-y.npy"]
        subprocess.run([exe, "--input", data[0], "--input", data[1],
                        "--eval-input", data[0], "--eval-input", data[1],
                        "--steps", "1", "--lr", "0", "--metrics", metrics],
                       check=True, capture_output=True)
        got = [json.loads(l)["eval_loss"] for l in open(metrics)
               if '"eval_loss"' in l][-1]
        want = entry["eval_loss"]
        return f"eval loss (dropout) {abs(got - want) / abs(want):.1e}"
    subprocess.run([exe, "--input", f"x={REF}/{name}-x.npy", "--input",
                    f"labels={REF}/{name}-y.npy", "--steps", "5",
                    "--log-every", "1", "--threads", "1", "--metrics",
                    metrics, "--save", saved], check=True,
                   capture_output=True)
    got = [json.loads(l)["loss"] for l in open(metrics) if '"loss"' in l]
    want = entry["losses"]["adamw"]
    errors = [abs(g - w) / abs(w) for g, w in zip(got, want)]
    line = f"first loss {errors[0]:.1e}, 5 steps {max(errors):.1e}"
    reference = os.path.join(REF, f"{name}-adamw5.safetensors")
    if export == "dynamo" and os.path.exists(reference):
        trained, wanted = safetensors_np.load(saved), \
            safetensors_np.load(reference)
        worst = max(float(np.max(np.abs(trained[k].astype(np.float64) -
                                        wanted[k]) /
                                 (1e-3 + np.abs(wanted[k]))))
                    for k in wanted if k in trained)
        line += f", parameters {worst:.1e} (|error| / (1e-3 + |value|))"
    return line


def main():
    refs = json.load(open(os.path.join(REF, "references.json")))
    names = sys.argv[1:] or sorted(k for k in refs if not k.startswith("_"))
    with tempfile.TemporaryDirectory() as work:
        for name in names:
            entry = refs[name]
            if "lora" in entry:  # the adapters' trajectory, not full training
                print(f"{name:12s} lora      see test/e2e/training/lora.test "
                      "(PEFT's trajectory of the adapters)", flush=True)
                continue
            exports = entry.get("exports", {"dynamo": True})
            for export in ("dynamo", "legacy", "optimized"):
                if exports.get(export):
                    print(f"{name:12s} {export:9s} "
                          f"{run(name, entry, export, work)}", flush=True)


if __name__ == "__main__":
    main()
