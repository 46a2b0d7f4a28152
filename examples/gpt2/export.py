"""Export GPT-2 (model.py) to ONNX for lmc.

    python3 export.py --size 124M --context 1024 -o gpt2-124M.onnx
    python3 export.py --size 774M --width 128 --heads 4 --vocab 256 -o deep.onnx

(--layers, --width, --heads, --vocab override the size's: bench/compile.sh
compiles a model of GPT-2's depth with tiny weights beside it.)

Input `tokens` i64 [batch, context] (dynamic batch), output `logits` f32
[batch, context, 50304]. TorchScript exporter, opset 17, training mode,
no constant folding (the head stays tied to `wte.weight`); models above
2 GB get their initializers as ONNX external data next to the file, as the
format requires. torch.manual_seed fixes the initial weights. Needs torch
and onnx at export time only.
"""
import argparse
import os

import torch

from model import SIZES, GPT2, Config


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="124M")
    parser.add_argument("--context", type=int, default=1024)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-o", "--output", required=True)
    for field in ("layers", "width", "heads", "vocab"):
        parser.add_argument(f"--{field}", type=int, help=f"override the size's {field}")
    args = parser.parse_args()

    base = SIZES[args.size]
    config = Config(args.layers or base.layers, args.heads or base.heads,
                    args.width or base.width, args.context, args.vocab or base.vocab)
    torch.manual_seed(args.seed)
    model = GPT2(config)
    params = sum(p.numel() for p in model.parameters())
    print(f"GPT-2 {args.size} ({config.layers} layers, width {config.width}, "
          f"{config.heads} heads, vocabulary {config.vocab}): "
          f"{params / 1e6:.1f} M parameters, context {args.context}")
    tokens = torch.zeros(1, args.context, dtype=torch.long)
    torch.onnx.export(model, (tokens,), args.output,
                      input_names=["tokens"], output_names=["logits"],
                      dynamic_axes={"tokens": {0: "batch"}, "logits": {0: "batch"}},
                      opset_version=17, dynamo=False, do_constant_folding=False,
                      training=torch.onnx.TrainingMode.TRAINING)
    size = os.path.getsize(args.output)
    print(f"wrote {args.output} ({size / 2**20:.0f} MiB)")


if __name__ == "__main__":
    main()
