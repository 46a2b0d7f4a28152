"""Data and checks for test/e2e/precision/loss-scaling.test.

  check_loss_scaling.py data DIR
      DIR/x.npy [6, 4] and DIR/t.npy [6, 1]: sample 2 is 3e17 times larger,
      so that the gradient of step 3 (batch 1) overflows f32 once scaled by
      2^16 while its loss (~1e35) stays finite; DIR/x_clean.npy and
      DIR/t_clean.npy are the same without sample 2.
  check_loss_scaling.py checkpoints CKDIR
      CKDIR holds the checkpoint of every step of the run on DIR's data with
      --loss-scale-growth-interval 3. Step 3's update is skipped (the params
      equal step 2's bit for bit), the scale goes 2^16 -> 2^15 at step 3 and
      back to 2^16 after 3 clean steps (step 6); the growth tracker counts
      the clean steps since the last change.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "reference"))
import safetensors_np  # noqa: E402
from checks import fail  # noqa: E402

# (scale, growth tracker) after each step 1..6.
EXPECTED = [(65536, 1), (65536, 2), (32768, 0), (32768, 1), (32768, 2),
            (65536, 0)]



def main():
    mode, directory = sys.argv[1], sys.argv[2]
    if mode == "data":
        rng = np.random.default_rng(5)
        x = rng.standard_normal((6, 4)).astype(np.float32)
        t = rng.standard_normal((6, 1)).astype(np.float32)
        x[2] = np.float32(3e17)
        np.save(os.path.join(directory, "x.npy"), x)
        np.save(os.path.join(directory, "t.npy"), t)
        np.save(os.path.join(directory, "x_clean.npy"), np.delete(x, 2, axis=0))
        np.save(os.path.join(directory, "t_clean.npy"), np.delete(t, 2, axis=0))
        return
    if mode != "checkpoints":
        fail(f"unknown mode {mode}")
    steps = [safetensors_np.load(os.path.join(directory, f"step_{k:08d}.safetensors"))
             for k in range(1, 7)]
    for k, (state, (scale, tracker)) in enumerate(zip(steps, EXPECTED), 1):
        got = (float(state["loss_scaler.scale"]),
               float(state["loss_scaler.growth_tracker"]))
        if got != (scale, tracker):
            fail(f"step {k}: scale, tracker = {got}, expected {(scale, tracker)}")
    for name in ("W",):
        if not np.array_equal(steps[1][name], steps[2][name]):
            fail(f"{name} changed in the skipped step 3")
        if np.array_equal(steps[2][name], steps[3][name]):
            fail(f"{name} did not change in step 4")
    print("scale and tracker per step:", EXPECTED, "; step 3 skipped")


if __name__ == "__main__":
    main()
