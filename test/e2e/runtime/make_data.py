"""Test data for run.sh: a linear-regression set with an exact solution, plus
malformed .npy and safetensors files. Usage: make_data.py OUTDIR"""
import json
import struct
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(0)

# Noise-free targets, so the least-squares solution is exactly w_true, b_true.
x = rng.standard_normal((64, 3)).astype(np.float32)
w_true = np.array([[1.5], [-2.0], [0.5]], dtype=np.float32)
b_true = np.float32(0.25)
y = (x @ w_true + b_true).astype(np.float32)
np.save(f"{out}/x.npy", x)
np.save(f"{out}/y.npy", y)
# An eval set whose size (10) is not a multiple of the batch size (4).
np.save(f"{out}/x_eval.npy", x[:10])
np.save(f"{out}/y_eval.npy", y[:10])

# Closed-form least-squares solution, for comparing --save output.
design = np.hstack([x.astype(np.float64), np.ones((64, 1))])
solution, *_ = np.linalg.lstsq(design, y.astype(np.float64), rcond=None)
np.save(f"{out}/solution.npy", solution.ravel())

# Wrong but well-formed inputs.
np.save(f"{out}/x_f64.npy", x.astype(np.float64))
np.save(f"{out}/x_badshape.npy", x[:, :2].copy())
np.save(f"{out}/y_short.npy", y[:32])
np.save(f"{out}/x_fortran.npy", np.asfortranarray(x))
np.save(f"{out}/x_object.npy", np.array([None] * 4, dtype=object),
        allow_pickle=True)
np.save(f"{out}/x_v2.npy", x)  # rewritten below as format 2.0
with open(f"{out}/x_v2.npy", "wb") as f:
    np.lib.format.write_array(f, x, version=(2, 0))

good = open(f"{out}/x.npy", "rb").read()
with open(f"{out}/bad_magic.npy", "wb") as f:
    f.write(b"\x93NUMPZ" + good[6:])
with open(f"{out}/truncated.npy", "wb") as f:
    f.write(good[:-10])
with open(f"{out}/bad_version.npy", "wb") as f:
    f.write(good[:6] + b"\x07\x00" + good[8:])


def safetensors(tensors, header_override=None, length_override=None):
    """tensors: list of (name, dtype, shape, bytes)."""
    header, data, offset = {}, b"", 0
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        data += raw
    text = header_override if header_override is not None else json.dumps(header)
    text = text.encode()
    n = length_override if length_override is not None else len(text)
    return struct.pack("<Q", n) + text + data


w = np.array([[1.0], [2.0], [3.0]], dtype=np.float32)
b = np.array([4.0], dtype=np.float32)
files = {
    "init_good": safetensors([("w", "F32", [3, 1], w.tobytes()),
                              ("b", "F32", [1], b.tobytes())]),
    "init_missing": safetensors([("w", "F32", [3, 1], w.tobytes())]),
    "init_shape": safetensors([("w", "F32", [1, 3], w.tobytes()),
                               ("b", "F32", [1], b.tobytes())]),
    "init_dtype": safetensors([("w", "F64", [3, 1], w.astype(np.float64).tobytes()),
                               ("b", "F32", [1], b.tobytes())]),
    "st_badjson": safetensors([], header_override='{"w": '),
    "st_huge_header": safetensors([], header_override="{}",
                                  length_override=1 << 40),
    "st_past_end": safetensors([], header_override="{}", length_override=500),
    "st_dup": b"",
    "st_overlap": b"",
    "st_bytes": safetensors([("w", "F32", [3, 2], w.tobytes()),
                             ("b", "F32", [1], b.tobytes())]),
}
raw = w.tobytes() + b.tobytes()
dup = ('{"w":{"dtype":"F32","shape":[3,1],"data_offsets":[0,12]},'
       '"w":{"dtype":"F32","shape":[1],"data_offsets":[12,16]}}').encode()
files["st_dup"] = struct.pack("<Q", len(dup)) + dup + raw
overlap = ('{"w":{"dtype":"F32","shape":[3,1],"data_offsets":[0,12]},'
           '"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}').encode()
files["st_overlap"] = struct.pack("<Q", len(overlap)) + overlap + raw
for name, content in files.items():
    with open(f"{out}/{name}.safetensors", "wb") as f:
        f.write(content)
