"""Checks for run.sh. Usage: check_outputs.py COMMAND ARGS...
  save SAVED.safetensors SOLUTION.npy TOL   params match the closed form
  same A.safetensors B.safetensors          identical tensors
  values SAVED.safetensors w0 w1 w2 b       exact values
  metrics FILE.jsonl                        every line parses, has the keys
Exits non-zero with a message on failure."""
import json
import struct
import sys

import numpy as np


def read_safetensors(path):
    blob = open(path, "rb").read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    data = blob[8 + n:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        assert info["dtype"] == "F32", info
        begin, end = info["data_offsets"]
        out[name] = np.frombuffer(data[begin:end], dtype="<f4").reshape(
            info["shape"])
    return out


def fail(msg):
    print(f"check_outputs: {msg}")
    sys.exit(1)


cmd = sys.argv[1]
if cmd == "save":
    params = read_safetensors(sys.argv[2])
    if set(params) != {"w", "b"}:
        fail(f"unexpected keys {sorted(params)}")
    if params["w"].shape != (3, 1) or params["b"].shape != (1,):
        fail(f"bad shapes {params['w'].shape} {params['b'].shape}")
    got = np.concatenate([params["w"].ravel(), params["b"].ravel()])
    want = np.load(sys.argv[3])
    if not np.allclose(got, want, atol=float(sys.argv[4])):
        fail(f"trained params {got} differ from closed form {want}")
elif cmd == "same":
    a, b = read_safetensors(sys.argv[2]), read_safetensors(sys.argv[3])
    if set(a) != set(b) or any(not np.array_equal(a[k], b[k]) for k in a):
        fail(f"{sys.argv[2]} and {sys.argv[3]} differ")
elif cmd == "values":
    params = read_safetensors(sys.argv[2])
    got = np.concatenate([params["w"].ravel(), params["b"].ravel()])
    want = np.array([float(v) for v in sys.argv[3:]], dtype=np.float32)
    if not np.array_equal(got, want):
        fail(f"params {got} != {want}")
elif cmd == "metrics":
    lines = open(sys.argv[2]).read().splitlines()
    steps = [json.loads(l) for l in lines]
    train = [m for m in steps if "loss" in m]
    evals = [m for m in steps if "eval_loss" in m]
    for m in train:
        for key in ("step", "loss", "lr", "ms", "samples_per_s"):
            if key not in m:
                fail(f"metrics line {m} lacks '{key}'")
    if not train or not evals:
        fail("metrics file lacks train or eval lines")
    if not train[-1]["loss"] < train[0]["loss"]:
        fail("loss did not fall")
    if train[0]["step"] != 1:
        fail("first logged step is not 1")
else:
    fail(f"unknown command {cmd}")
