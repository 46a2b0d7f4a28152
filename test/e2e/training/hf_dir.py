"""Hugging Face save_pretrained directories for the --init/--save-hf tests,
written and read with numpy alone (CI has no transformers).

  hf_dir.py make MODEL.onnx DIR --strip PREFIX --shard-bytes N
      DIR as save_pretrained writes it from the export's float
      initializers: their names without PREFIX (the export wrapper's "m."),
      shards of at most N bytes with model.safetensors.index.json, a
      config.json in bf16 with the literals a real one has (true, floats,
      null), a tokenizer.json.
  hf_dir.py merge DIR OUT.safetensors --prefix PREFIX
      DIR's tensors (one file or an index with shards) under PREFIX + name,
      in one file for compare.py; fails unless DIR looks as from_pretrained
      needs: the index's total_size and weight_map agree with the shards,
      config.json's dtype is float32, the tokenizer was copied.
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "reference"))
import safetensors_np  # noqa: E402
from checks import fail  # noqa: E402

CONFIG = {"architectures": ["Qwen2ForCausalLM"], "tie_word_embeddings": True,
          "rms_norm_eps": 1e-06, "rope_scaling": None,
          "torch_dtype": "bfloat16", "model_type": "qwen2"}
TOKENIZER = '{"version": "1.0", "model": {"type": "BPE"}}'


def make(o):
    import onnx
    from onnx import numpy_helper
    model = onnx.load(o.model)
    tensors = {}
    for init in model.graph.initializer:
        # RoPE's inv_freq is a non-persistent buffer: not in a checkpoint.
        if (init.data_type == onnx.TensorProto.FLOAT
                and not init.name.endswith("inv_freq")):
            name = init.name
            if name.startswith(o.strip):
                name = name[len(o.strip):]
            tensors[name] = numpy_helper.to_array(init)
    os.makedirs(o.dir, exist_ok=True)
    shards, size = [[]], 0
    for name in sorted(tensors):
        if shards[-1] and size + tensors[name].nbytes > o.shard_bytes:
            shards.append([])
            size = 0
        shards[-1].append(name)
        size += tensors[name].nbytes
    weight_map = {}
    for i, names in enumerate(shards):
        file = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        safetensors_np.save(os.path.join(o.dir, file),
                            {n: tensors[n] for n in names}, {"format": "pt"})
        weight_map.update({n: file for n in names})
    total = sum(t.nbytes for t in tensors.values())
    with open(os.path.join(o.dir, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total},
                   "weight_map": weight_map}, f, indent=2)
    with open(os.path.join(o.dir, "config.json"), "w") as f:
        json.dump(CONFIG, f, indent=2)
    with open(os.path.join(o.dir, "tokenizer.json"), "w") as f:
        f.write(TOKENIZER)
    print(f"{len(tensors)} tensors in {len(shards)} shards")


def merge(o):
    index_path = os.path.join(o.dir, "model.safetensors.index.json")
    tensors = {}
    if os.path.exists(index_path):
        if os.path.exists(os.path.join(o.dir, "model.safetensors")):
            fail("both model.safetensors and an index: from_pretrained "
                 "would read the stale single file")
        index = json.load(open(index_path))
        for file in sorted(set(index["weight_map"].values())):
            for name, value in safetensors_np.load(
                    os.path.join(o.dir, file)).items():
                if index["weight_map"].get(name) != file:
                    fail(f"{name} is in {file}, the index says "
                         f"{index['weight_map'].get(name)}")
                tensors[name] = value
        if set(tensors) != set(index["weight_map"]):
            fail("the index and the shards list different tensors")
        total = sum(t.nbytes for t in tensors.values())
        if index["metadata"]["total_size"] != total:
            fail(f"total_size {index['metadata']['total_size']} != {total}")
        print(f"{len(tensors)} tensors in "
              f"{len(set(index['weight_map'].values()))} shards")
    else:
        tensors = safetensors_np.load(os.path.join(o.dir, "model.safetensors"))
        print(f"{len(tensors)} tensors in model.safetensors")
    config = json.load(open(os.path.join(o.dir, "config.json")))
    if config.get("torch_dtype") != "float32":
        fail(f"config.json's torch_dtype is {config.get('torch_dtype')}")
    if {k: v for k, v in config.items() if k != "torch_dtype"} != \
            {k: v for k, v in CONFIG.items() if k != "torch_dtype"}:
        fail(f"config.json changed beyond its dtype: {config}")
    if open(os.path.join(o.dir, "tokenizer.json")).read() != TOKENIZER:
        fail("tokenizer.json was not copied")
    safetensors_np.save(o.out, {o.prefix + n: np.asarray(t)
                                for n, t in tensors.items()})


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("make")
    p.add_argument("model")
    p.add_argument("dir")
    p.add_argument("--strip", default="")
    p.add_argument("--shard-bytes", type=int, default=5_000_000_000)
    p = sub.add_parser("merge")
    p.add_argument("dir")
    p.add_argument("out")
    p.add_argument("--prefix", default="")
    o = parser.parse_args()
    make(o) if o.command == "make" else merge(o)


if __name__ == "__main__":
    main()
