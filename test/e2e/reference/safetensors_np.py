"""Minimal safetensors reader/writer using only numpy (no safetensors package).

File layout: 8-byte little-endian u64 N, then N bytes of JSON header
{"<name>": {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, ...,
 "__metadata__": {str: str}}, padded with spaces to a multiple of 8, then the
raw little-endian row-major tensor bytes (offsets relative to the end of the
header). Tensors are written in sorted key order.
"""
import json
import struct

import numpy as np

_DTYPES = {"F32": np.float32, "F64": np.float64, "I64": np.int64, "I32": np.int32}
_NAMES = {np.dtype(v): k for k, v in _DTYPES.items()}


def save(path, tensors, metadata=None):
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        a = np.asarray(tensors[name], order="C")  # keeps rank 0 (ascontiguousarray would not)
        dt = _NAMES[a.dtype]
        b = a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": dt, "shape": list(a.shape),
                        "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def metadata(path):
    """The file's __metadata__ (str -> str)."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        return json.loads(f.read(n)).get("__metadata__", {})


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    base = 8 + n
    out = {}
    for name, info in header.items():
        b, e = info["data_offsets"]
        dt = np.dtype(_DTYPES[info["dtype"]]).newbyteorder("<")
        out[name] = np.frombuffer(data[base + b:base + e], dtype=dt).reshape(info["shape"]).copy()
    return out


if __name__ == "__main__":
    # safetensors_np.py metadata FILE KEY: prints one metadata value.
    import sys
    if len(sys.argv) != 4 or sys.argv[1] != "metadata":
        sys.exit("usage: safetensors_np.py metadata FILE KEY")
    print(metadata(sys.argv[2])[sys.argv[3]])
