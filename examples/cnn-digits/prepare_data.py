#!/usr/bin/env python3
"""Reshape the digits data of examples/mlp-digits/data to images.

Reads ../mlp-digits/data/{train,test}_x.npy ([N, 64] float32, scaled to
[0, 1]) and writes data/{train,test}_x.npy as [N, 1, 8, 8] float32 (row-major
8x8 images) and copies the labels ([N] int64) unchanged. Needs numpy only.
"""
import os
import shutil

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "mlp-digits", "data")
DST = os.path.join(HERE, "data")


def main():
    os.makedirs(DST, exist_ok=True)
    for split in ("train", "test"):
        x = np.load(os.path.join(SRC, f"{split}_x.npy"))
        assert x.ndim == 2 and x.shape[1] == 64, x.shape
        images = np.ascontiguousarray(x.reshape(-1, 1, 8, 8).astype(np.float32))
        np.save(os.path.join(DST, f"{split}_x.npy"), images)
        shutil.copyfile(os.path.join(SRC, f"{split}_labels.npy"),
                        os.path.join(DST, f"{split}_labels.npy"))
        print(split, images.shape)


if __name__ == "__main__":
    main()
