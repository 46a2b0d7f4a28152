"""Checks that two metrics files (JSONL) log the same losses.

usage: same_losses.py A.jsonl B.jsonl [RTOL]
"""
import json
import sys

import numpy as np


def losses(path):
    return [r["loss"] for r in map(json.loads, open(path)) if "loss" in r]


a, b = losses(sys.argv[1]), losses(sys.argv[2])
rtol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-6
if not a or len(a) != len(b) or not np.allclose(a, b, rtol=rtol, atol=0):
    print(f"MISMATCH: losses {a} vs {b}")
    sys.exit(1)
print(f"{len(a)} losses agree: {a}")
