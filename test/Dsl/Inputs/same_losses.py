"""Checks that two metrics files (JSONL) log the same losses.

usage: same_losses.py A.jsonl B.jsonl [RTOL] [--key KEY]

KEY is the logged value compared (default "loss"; "eval_loss" for
evaluations).
"""
import argparse
import json
import sys

import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("a")
parser.add_argument("b")
parser.add_argument("rtol", nargs="?", type=float, default=1e-6)
parser.add_argument("--key", default="loss")
args = parser.parse_args()


def losses(path):
    return [r[args.key] for r in map(json.loads, open(path)) if args.key in r]


a, b = losses(args.a), losses(args.b)
if not a or len(a) != len(b) or not np.allclose(a, b, rtol=args.rtol, atol=0):
    print(f"MISMATCH: {args.key} {a} vs {b}")
    sys.exit(1)
print(f"{len(a)} values of {args.key} agree: {a}")
