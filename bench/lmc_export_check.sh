#!/usr/bin/env bash
# lmc_export (python/) on models users train: installs it into the bench
# scripts' virtual environment, exports the small Llama, BERT and ResNet of
# test/e2e/reference/families with verify=True (lmc's first loss against
# PyTorch's) and prints both losses.
#
#   bash bench/lmc_export_check.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=${WORK:-$ROOT/build/bench-lmc-export}
mkdir -p "$WORK"
source "$ROOT/bench/common.sh"
bench_pip_need transformers transformers
bench_pip_need torchvision torchvision
"$VENV/bin/pip" install -q "$ROOT/python"
PATH=$ROOT/build/bin:$PATH "$PY" - "$ROOT" "$WORK" <<'PY'
import os, sys
import numpy as np
import torch
root, work = sys.argv[1:]
sys.path.insert(0, os.path.join(root, "test", "e2e", "reference", "families"))
import make_families as families
import lmc_export
for name in ("llama", "bert", "resnet"):
    build, kind, batch = families.MODELS[name]
    torch.manual_seed(0)
    inner, hf = build()
    families.perturb(inner)
    model = families.Logits(inner, hf)
    x, y = families.make_data(kind, batch, np.random.default_rng(0))
    path = os.path.join(work, name + ".onnx")
    example, labels = torch.from_numpy(x[:batch]), torch.from_numpy(y[:batch])
    lmc_export.export(model, (example,), path, labels=labels, verify=True)
    got, want = lmc_export.first_losses(model, (example,), path, labels)
    print(f"{name}: lmc's first loss {got:.7f}, PyTorch's {want:.7f}")
PY
