"""The model families of test/e2e/reference/families at benchmark size, for
bench/families.sh: the same builders (transformers, torchvision), larger
configurations, and PyTorch's own training as the peer.

  families.py export NAME --size SIZE --dir DIR --batch B --steps N
      builds the model (seed 0, weights perturbed as in the tests), exports
      it with torch.onnx.export(..., dynamo=True, optimize=False) to
      DIR/model.onnx (weights as external data) and writes DIR/x.npy,
      DIR/y.npy (N batches of B rows) and DIR/export.json (the parameter
      count).
  families.py train NAME --size SIZE --dir DIR --batch B --steps N
      --threads T [--compile]
      trains the same model (rebuilt from the same seed) with
      torch.optim.AdamW(lr=1e-3, weight_decay=0.01), as lmc's executable
      does, on the same batches, eager or torch.compile'd. Prints one JSON
      line: losses, median step ms after the first, peak RSS (MiB).

SIZE is `bench` (a few tens of millions of parameters per family) or, for
qwen2, `qwen2.5-0.5b` (Qwen2.5-0.5B's configuration: 24 layers, width
896, 14 query and 2 key/value heads, vocabulary 151936, tied head; random
weights: this machine cannot download the released ones).
"""
import argparse
import json
import os
import resource
import statistics
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "test",
                                "e2e", "reference", "families"))
import make_families as families  # noqa: E402

SEQ = {"bench": 256, "qwen2.5-0.5b": 256}
IMAGE = 64


def decoder_config(config_class, size, **extra):
    if size == "qwen2.5-0.5b":
        return config_class(vocab_size=151936, hidden_size=896,
                            intermediate_size=4864, num_hidden_layers=24,
                            num_attention_heads=14, num_key_value_heads=2,
                            max_position_embeddings=32768,
                            rope_theta=1000000.0, tie_word_embeddings=True,
                            rms_norm_eps=1e-6)
    return config_class(vocab_size=8192, hidden_size=512,
                        intermediate_size=1376, num_hidden_layers=4,
                        num_attention_heads=8, num_key_value_heads=2,
                        max_position_embeddings=1024, **extra)


def build(name, size):
    """(model, is a transformers model, input kind)."""
    import transformers as tf
    if name in ("llama", "qwen2", "qwen3", "mistral", "phi3"):
        config_class, model_class, extra = {
            "llama": (tf.LlamaConfig, tf.LlamaForCausalLM, {}),
            "qwen2": (tf.Qwen2Config, tf.Qwen2ForCausalLM,
                      {"tie_word_embeddings": True}),
            "qwen3": (tf.Qwen3Config, tf.Qwen3ForCausalLM,
                      {"head_dim": 64, "tie_word_embeddings": True}),
            "mistral": (tf.MistralConfig, tf.MistralForCausalLM,
                        {"sliding_window": 128}),
            "phi3": (tf.Phi3Config, tf.Phi3ForCausalLM,
                     {"partial_rotary_factor": 0.5, "pad_token_id": 0}),
        }[name]
        return model_class(decoder_config(config_class, size, **extra)), \
            True, "tokens"
    if name in ("bert", "distilbert"):
        if name == "bert":
            config = tf.BertConfig(vocab_size=8192, hidden_size=512,
                                   intermediate_size=2048,
                                   num_hidden_layers=4, num_attention_heads=8,
                                   num_labels=3, hidden_dropout_prob=0.0,
                                   attention_probs_dropout_prob=0.0)
            return tf.BertForSequenceClassification(config), True, "sequence"
        config = tf.DistilBertConfig(vocab_size=8192, dim=512, hidden_dim=2048,
                                     n_layers=4, n_heads=8, num_labels=3,
                                     dropout=0.0, attention_dropout=0.0,
                                     seq_classif_dropout=0.0)
        return tf.DistilBertForSequenceClassification(config), True, \
            "sequence"
    if name == "resnet":
        import torchvision
        return torchvision.models.resnet18(num_classes=10), False, "image"
    if name == "vit":
        from torchvision.models.vision_transformer import VisionTransformer
        return VisionTransformer(image_size=IMAGE, patch_size=8, num_layers=6,
                                 num_heads=8, hidden_dim=512, mlp_dim=2048,
                                 num_classes=10), False, "image"
    raise SystemExit(f"unknown model {name}")


def model_and_data(a):
    torch.manual_seed(0)
    inner, hf, kind = build(a.name, a.size)
    families.perturb(inner)
    model = families.Logits(inner, hf).train()
    rng = np.random.default_rng(0)
    rows = a.steps * a.batch
    seq = SEQ.get(a.size, 256)
    vocab = getattr(getattr(inner, "config", None), "vocab_size", 0)
    if kind == "image":
        x = rng.standard_normal((rows, 3, IMAGE, IMAGE)).astype(np.float32)
        y = rng.integers(0, 10, size=(rows,), dtype=np.int64)
    elif kind == "sequence":
        seq = 128
        x = rng.integers(2, vocab, size=(rows, seq), dtype=np.int64)
        y = rng.integers(0, 3, size=(rows,), dtype=np.int64)
    else:
        x = rng.integers(0, vocab, size=(rows, seq), dtype=np.int64)
        y = rng.integers(0, vocab, size=(rows, seq), dtype=np.int64)
    return model, x, y


def export(a):
    model, x, y = model_and_data(a)
    os.makedirs(a.dir, exist_ok=True)
    np.save(os.path.join(a.dir, "x.npy"), x)
    np.save(os.path.join(a.dir, "y.npy"), y)
    program = torch.onnx.export(model, (torch.from_numpy(x[:a.batch]),),
                                dynamo=True, optimize=False,
                                input_names=["x"], output_names=["logits"])
    program.save(os.path.join(a.dir, "model.onnx"), external_data=True)
    with open(os.path.join(a.dir, "export.json"), "w") as f:
        json.dump({"params": sum(p.numel() for p in model.parameters())}, f)


def train(a):
    torch.set_num_threads(a.threads)
    model, x, y = model_and_data(a)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    step_model = torch.compile(model) if a.compile else model
    times, losses = [], []
    for step in range(a.steps):
        xb = torch.from_numpy(x[step * a.batch:(step + 1) * a.batch])
        yb = torch.from_numpy(y[step * a.batch:(step + 1) * a.batch])
        start = time.perf_counter()
        logits = step_model(xb)
        loss = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), yb.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        times.append((time.perf_counter() - start) * 1e3)
        losses.append(loss.item())
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"losses": losses,
                      "median_ms": statistics.median(times[1:] or times),
                      "peak_rss_mib": rss, "torch": torch.__version__}))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["export", "train"])
    parser.add_argument("name")
    parser.add_argument("--size", default="bench")
    parser.add_argument("--dir", required=True)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--compile", action="store_true")
    a = parser.parse_args()
    export(a) if a.mode == "export" else train(a)


if __name__ == "__main__":
    main()
