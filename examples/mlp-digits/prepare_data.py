#!/usr/bin/env python3
"""Write the 8x8 digits data set (bundled with scikit-learn, no download) as .npy.

x      = pixel intensities / 16, float32 [N, 64] (values in [0, 1])
labels = digit class 0..9, int64 [N]

The 1797 samples are split deterministically: a numpy RandomState(0)
permutation, first 1437 -> train, remaining 360 -> test.
Needs numpy and scikit-learn (generation time only; the .npy files are checked in).
"""
import os

import numpy as np
from sklearn.datasets import load_digits

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "data")
N_TRAIN, N_TEST, SEED = 1437, 360, 0


def main():
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    assert x.shape == (N_TRAIN + N_TEST, 64), x.shape
    perm = np.random.RandomState(SEED).permutation(len(x))
    tr, te = perm[:N_TRAIN], perm[N_TRAIN:]
    os.makedirs(OUT, exist_ok=True)
    for name, arr in [("train_x", x[tr]), ("train_labels", y[tr]),
                      ("test_x", x[te]), ("test_labels", y[te])]:
        arr = np.ascontiguousarray(arr)
        np.save(os.path.join(OUT, name + ".npy"), arr)
        print(f"{name}.npy {arr.dtype} {list(arr.shape)}")


if __name__ == "__main__":
    main()
