"""Converts the running variances of test/e2e/reference/cnn-bn-digits (stored
in the ONNX convention, biased batch variance) back to PyTorch's own
(unbiased), which the DSL's batch_norm follows:

  torch_running_var.py REF.safetensors INIT.safetensors OUT.safetensors

The inverse of make_reference.py's conversion: after K steps with old-value
weight 0.9, torch_var = 0.9^K var_0 + n / (n - 1) (onnx_var - 0.9^K var_0),
n = 32*8*8 (bn1) or 32*4*4 (bn2); var_0 comes from INIT.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "e2e",
                                "reference"))
import safetensors_np  # noqa: E402

STEPS, BATCH = 20, 32


def main():
    ref_path, init_path, out_path = sys.argv[1:]
    ref = safetensors_np.load(ref_path)
    init = safetensors_np.load(init_path)
    decay = 0.9 ** STEPS
    for name, n in (("bn1", BATCH * 8 * 8), ("bn2", BATCH * 4 * 4)):
        key = name + ".running_var"
        var0 = init[key].astype(np.float64)
        onnx_var = ref[key].astype(np.float64)
        ref[key] = (decay * var0 + n / (n - 1) * (onnx_var - decay * var0)
                    ).astype(np.float32)
    safetensors_np.save(out_path, ref)


if __name__ == "__main__":
    main()
