"""Independent check of lmc-lora's initial adapters against PEFT's
definition (peft.tuners.lora.layer.LoraLayer.reset_lora_parameters): A is
torch.nn.init.kaiming_uniform_(a=sqrt(5)), uniform in (-1/sqrt(in),
1/sqrt(in)), and B is zero.

  check_lora_init.py SAVED.safetensors MODULES...
      SAVED holds exactly MODULE.lora_A.weight and MODULE.lora_B.weight for
      each MODULE; every A value lies inside its bound, the A values of all
      modules together have the standard deviation of that uniform
      distribution (bound / sqrt(3)) within 5 standard errors and mean 0
      within 5 standard errors, and every B value is 0.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "reference"))
import safetensors_np  # noqa: E402
from checks import fail  # noqa: E402


def main():
    saved = safetensors_np.load(sys.argv[1])
    modules = sys.argv[2:]
    want = {f"{m}.lora_{ab}.weight" for m in modules for ab in "AB"}
    if set(saved) != want:
        fail(f"tensors {sorted(saved)}, expected {sorted(want)}")
    scaled = []  # every A value over its bound: uniform in (-1, 1)
    for m in modules:
        a = saved[f"{m}.lora_A.weight"].astype(np.float64)
        b = saved[f"{m}.lora_B.weight"]
        bound = 1.0 / np.sqrt(a.shape[1])
        if np.abs(a).max() >= bound:
            fail(f"{m}: |A| reaches {np.abs(a).max()} >= 1/sqrt(in) = {bound}")
        if np.any(b != 0):
            fail(f"{m}: B is not zero")
        scaled.append((a / bound).ravel())
    u = np.concatenate(scaled)
    n = u.size
    # uniform(-1, 1): mean 0, variance 1/3, variance of u^2 = 1/5 - 1/9.
    if abs(u.mean()) > 5 * np.sqrt(1 / 3 / n):
        fail(f"A's mean {u.mean()} over {n} values is not 0")
    if abs((u ** 2).mean() - 1 / 3) > 5 * np.sqrt((1 / 5 - 1 / 9) / n):
        fail(f"A's mean square {(u ** 2).mean()} over {n} values is not 1/3")
    print(f"{len(modules)} adapters, {n} A values: mean {u.mean():.4f}, "
          f"mean square {(u ** 2).mean():.4f} (uniform: 0, 0.3333)")


if __name__ == "__main__":
    main()
