"""Compares an adapter directory lmc wrote (--save-adapter) with the one
PEFT's PeftModel.save_pretrained wrote for the same fine-tuning
(test/e2e/reference/families/NAME-peft).

  check_peft_adapter.py GOT_DIR WANT_DIR [--atol A] [--rtol R]
      adapter_model.safetensors: the same keys (PEFT's
      base_model.model.<module>.lora_A.weight), each tensor within
      A + R * |want|; adapter_config.json: the same peft_type, r,
      lora_alpha, lora_dropout, use_rslora, bias and fan_in_fan_out, and
      target_modules that select the same modules under PEFT's rule (a
      module is its name or ends with "." and it).
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "reference"))
import safetensors_np  # noqa: E402
from checks import fail  # noqa: E402

SAME_FIELDS = ("peft_type", "r", "lora_alpha", "lora_dropout", "use_rslora",
               "bias", "fan_in_fan_out")


def selected(targets, modules):
    if isinstance(targets, str):
        fail(f"target_modules {targets!r}: expected a list")
    return {m for m in modules
            if any(m == t or m.endswith("." + t) for t in targets)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("got")
    parser.add_argument("want")
    parser.add_argument("--atol", type=float, default=1e-5)
    parser.add_argument("--rtol", type=float, default=1e-4)
    args = parser.parse_args()
    got = safetensors_np.load(os.path.join(args.got,
                                           "adapter_model.safetensors"))
    want = safetensors_np.load(os.path.join(args.want,
                                            "adapter_model.safetensors"))
    if set(got) != set(want):
        fail(f"keys differ: {sorted(set(got) ^ set(want))}")
    for key in sorted(want):
        g, w = got[key].astype(np.float64), want[key].astype(np.float64)
        if g.shape != w.shape:
            fail(f"{key}: shape {g.shape} vs {w.shape}")
        err = np.abs(g - w)
        if not (err <= args.atol + args.rtol * np.abs(w)).all():
            fail(f"{key}: max abs error {err.max():.3g}")
    print(f"{len(want)} adapter tensors match PEFT's "
          f"(worst abs error {max(np.abs(got[k] - want[k]).max() for k in want):.3g})")
    config = {d: json.load(open(os.path.join(d, "adapter_config.json")))
              for d in (args.got, args.want)}
    for field in SAME_FIELDS:
        if config[args.got].get(field) != config[args.want].get(field):
            fail(f"adapter_config.json {field}: {config[args.got].get(field)!r}"
                 f" vs PEFT's {config[args.want].get(field)!r}")
    modules = {k[len("base_model.model."):].rsplit(".lora_", 1)[0]
               for k in want}
    mine = selected(config[args.got]["target_modules"], modules)
    peft = selected(config[args.want]["target_modules"], modules)
    if mine != peft or mine != modules:
        fail(f"target_modules select {sorted(mine)}, PEFT's {sorted(peft)}")
    print(f"adapter_config.json: {', '.join(SAME_FIELDS)} and the "
          f"{len(modules)} target modules agree")


if __name__ == "__main__":
    main()
