"""Writes each batch of a dataset twice in a row:

    duplicate_batches.py IN.npy OUT.npy BATCH

Rows [k·BATCH, (k+1)·BATCH) become rows [2k·BATCH, (2k+2)·BATCH), the
block twice. A model trained on OUT at batch 2·BATCH sees the same mean
loss and the same mean gradient as on IN at batch BATCH (each row counted
twice, in numerator and denominator), so PyTorch's trajectory at BATCH is
the oracle for an executable compiled with --batch 2·BATCH.
"""
import sys

import numpy as np

source, target, batch = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = np.load(source)
assert len(rows) % batch == 0, (len(rows), batch)
blocks = [rows[i:i + batch] for i in range(0, len(rows), batch)]
np.save(target, np.concatenate([np.concatenate([b, b]) for b in blocks]))
