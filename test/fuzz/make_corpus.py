#!/usr/bin/env python3
"""Writes the seed corpora of the runtime readers' fuzz targets into
test/fuzz/corpus/<target>/ (the ONNX corpus is copied from test/Import/Inputs,
examples/ and libonnx-testdata; see docs/security.md). Needs numpy.

    python3 test/fuzz/make_corpus.py
"""
import io
import json
import os
import struct

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def put(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def npy(array, version=None, fortran=False):
    buf = io.BytesIO()
    if fortran:
        array = np.asfortranarray(array)
    if version is None:
        np.save(buf, array, allow_pickle=False)
    else:
        np.lib.format.write_array(buf, array, version=version,
                                  allow_pickle=False)
    return buf.getvalue()


def safetensors(tensors, metadata=None):
    header, blobs, offset = {}, [], 0
    for name, array in tensors:
        raw = np.ascontiguousarray(array).tobytes()
        dtype = {"float32": "F32", "float64": "F64", "int64": "I64",
                 "int32": "I32"}[str(array.dtype)]
        header[name] = {"dtype": dtype, "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def main():
    # .npy
    put("npy", "f32-2d", npy(np.arange(6, dtype="<f4").reshape(2, 3)))
    put("npy", "f64-1d", npy(np.array([1.5, -2.0], dtype="<f8")))
    put("npy", "i64-3d", npy(np.arange(8, dtype="<i8").reshape(2, 2, 2)))
    put("npy", "i32-scalar", npy(np.array(7, dtype="<i4")))
    put("npy", "v2", npy(np.zeros((2, 2), dtype="<f4"), version=(2, 0)))
    put("npy", "fortran", npy(np.zeros((2, 3), dtype="<f4"), fortran=True))
    put("npy", "empty", npy(np.zeros((0, 3), dtype="<f4")))
    obj = npy(np.zeros((2,), dtype="<f4")).replace(b"'<f4'", b"'|O' ")
    put("npy", "object-dtype", obj)
    put("npy", "big-endian", npy(np.zeros((2,), dtype=">f4")))

    # safetensors
    w = np.array([[1.0, 2.0]], dtype=np.float32)
    b = np.array([0.5, 0.25, 0.125], dtype=np.float64)
    put("safetensors", "two", safetensors([("w", w), ("b", b)]))
    put("safetensors", "meta", safetensors([("i", np.arange(3, dtype=np.int64))],
                                           {"format": "pt"}))
    put("safetensors", "empty", safetensors([]))
    put("safetensors", "i32-scalar",
        safetensors([("s", np.array(3, dtype=np.int32))]))

    # checkpoints of the fuzz target's model (w f32 [1,2], b f64 [3])
    meta = {"lmc.checkpoint": "1", "lmc.fingerprint": "0123456789abcdef",
            "lmc.data_crc32c": "0", "lmc.step": "10",
            "lmc.data_cursor": "10", "lmc.num_samples": "10",
            "lmc.seed": "7", "lmc.shuffle": "1", "lmc.skipped_steps": "0",
            "lmc.schedule": "cosine", "lmc.lr": "0.1", "lmc.lr_min": "0",
            "lmc.warmup": "0", "lmc.total_steps": "20"}
    tensors = [("w", w), ("b", b), ("w.momentum_buffer", w * 0),
               ("b.momentum_buffer", b * 0)]
    put("checkpoint", "full", safetensors(tensors, meta))
    put("checkpoint", "params-only", safetensors(tensors[:2], meta))
    put("checkpoint", "no-meta", safetensors(tensors))

    # token shards
    toks = np.arange(40, dtype=np.uint16)
    hdr = np.zeros(256, dtype="<i4")
    hdr[0], hdr[1], hdr[2] = 20240520, 1, len(toks)
    put("tokens", "llmc-u16", hdr.tobytes() + toks.tobytes())
    hdr[0], hdr[1] = 20240801, 2
    put("tokens", "llmc-u32", hdr.tobytes() + toks.astype("<u4").tobytes())
    put("tokens", "nanogpt", toks.tobytes())

    # descriptors: 2 bytes of weights size, then the text
    desc = ("lmc-model 1\nloss mse\noptimizer momentum\nhparam lr 0.1\n"
            "hparam momentum 0.9\nflops 12\n"
            "train arg param w f32 1 2\n"
            "train arg state w.momentum_buffer f32 1 2\n"
            "train arg hyper lr f32 0\n"
            "train arg input x f32 2 4 2\n"
            "train result param w f32 1 2\n"
            "train result state w.momentum_buffer f32 1 2\n"
            "train result loss loss f32 0\n"
            "eval arg param w f32 1 2\neval arg input x f32 2 4 2\n"
            "eval result loss loss f32 0\n"
            "init w 0 8\nend\n")
    put("descriptor", "momentum", struct.pack("<H", 8) + desc.encode())
    desc2 = ("lmc-model 1\nloss cross_entropy\noptimizer adamw\n"
             "hparam lr 0.001\nflops 0\n"
             "train arg param fc.weight f32 2 3 2\n"
             "train arg input x f32 2 4 2\ntrain arg input labels i64 1 4\n"
             "train result param fc.weight f32 2 3 2\n"
             "train result loss loss f32 0\n"
             "train result grad_norm grad_norm f32 0\n"
             "init fc.weight 0 24\nend\n")
    put("descriptor", "adamw", struct.pack("<H", 24) + desc2.encode())
    # A model buffer, the dynamic loss scaler's states (the scale with an
    # init line), the random key, and the split step.
    desc3 = ("lmc-model 1\nloss output:loss\noptimizer sgd\n"
             "hparam lr 0.1\nflops 8\nprecision f16\n"
             "train arg param w f32 1 2\n"
             "train arg state loss_scaler.scale f32 0\n"
             "train arg state loss_scaler.growth_tracker f32 0\n"
             "train arg buffer m f32 1 2\n"
             "train arg input x f32 2 4 2\n"
             "train arg hyper lr f32 0\ntrain arg hyper max_grad_norm f32 0\n"
             "train arg hyper rng_key i64 0\n"
             "train result param w f32 1 2\n"
             "train result state loss_scaler.scale f32 0\n"
             "train result state loss_scaler.growth_tracker f32 0\n"
             "train result buffer m f32 1 2\n"
             "train result loss loss f32 0\n"
             "train result grad_norm grad_norm f32 0\n"
             "eval arg param w f32 1 2\neval arg buffer m f32 1 2\n"
             "eval arg input x f32 2 4 2\neval result loss loss f32 0\n"
             "grad arg param w f32 1 2\n"
             "grad arg state loss_scaler.scale f32 0\n"
             "grad arg buffer m f32 1 2\ngrad arg input x f32 2 4 2\n"
             "grad arg hyper rng_key i64 0\n"
             "grad result grad w f32 1 2\ngrad result buffer m f32 1 2\n"
             "grad result loss loss f32 0\n"
             "apply arg param w f32 1 2\n"
             "apply arg state loss_scaler.scale f32 0\n"
             "apply arg state loss_scaler.growth_tracker f32 0\n"
             "apply arg grad w f32 1 2\n"
             "apply arg hyper lr f32 0\napply arg hyper max_grad_norm f32 0\n"
             "apply result param w f32 1 2\n"
             "apply result state loss_scaler.scale f32 0\n"
             "apply result state loss_scaler.growth_tracker f32 0\n"
             "apply result grad_norm grad_norm f32 0\n"
             "init w 0 8\ninit m 8 8\ninit loss_scaler.scale 16 4\nend\n")
    put("descriptor", "buffers-loss-scaling", struct.pack("<H", 20) + desc3.encode())


if __name__ == "__main__":
    main()
