"""batchnorm-sum.test's data and check.

  check_batchnorm_sum.py write DIR   x.npy [4, 2, 3] and labels.npy [4]
  check_batchnorm_sum.py check DIR   DIR/step1.safetensors after one step:
      a's and b's running means are 0.1 x the per-channel batch mean of x
      (PyTorch's momentum, from zeros), their running variances
      0.9 + 0.1 x the unbiased batch variance, and a's parameters equal
      b's (equal gradients from equal initial values).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "e2e",
                                "reference"))
import safetensors_np  # noqa: E402


def main():
    mode, out = sys.argv[1:]
    if mode == "write":
        rng = np.random.default_rng(3)
        np.save(os.path.join(out, "x.npy"),
                rng.standard_normal((4, 2, 3)).astype(np.float32))
        np.save(os.path.join(out, "labels.npy"), np.array([0, 1, 1, 0]))
        return
    x = np.load(os.path.join(out, "x.npy")).astype(np.float64)
    got = safetensors_np.load(os.path.join(out, "step1.safetensors"))
    mean = 0.1 * x.mean(axis=(0, 2))
    var = 0.9 + 0.1 * x.var(axis=(0, 2), ddof=1)
    for norm in ("a", "b"):
        for name, want in (("running_mean", mean), ("running_var", var)):
            value = got[f"{norm}.{name}"]
            if not np.allclose(value, want, rtol=1e-5, atol=1e-7):
                sys.exit(f"{norm}.{name}: {value} != {want}")
    for name in ("weight", "bias"):
        if not np.array_equal(got[f"a.{name}"], got[f"b.{name}"]):
            sys.exit(f"a.{name} {got[f'a.{name}']} != b.{name} "
                     f"{got[f'b.{name}']}")
    print("running statistics and parameters as expected")


if __name__ == "__main__":
    main()
