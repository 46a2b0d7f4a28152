"""Checks the model FLOPs an executable reports (`--info`: "flops per
step") against the field's own count, computed here from the model's
architecture alone:

    check_model_flops.py gpt INFO LAYERS DIM VOCAB TOKENS_PER_STEP CONTEXT
    check_model_flops.py cnn-digits INFO BATCH

gpt: a GPT-2-style decoder with tied head (PaLM, appendix B; llm.c):
6·N per token for N the matmul weights (four per block, 12·d² with the
MLP's 4·d, and the tied head's V·d), plus 12·L·T·d per token for the
attention's products over all T scores (the mask does not reduce them).

cnn-digits: examples/cnn-digits (conv 1→8 and 8→16, 3×3, pad 1, each after
a 2×2 pool, then linear 64→10), counted per layer as 2 FLOPs per
multiply-add of the forward product, the weight gradient's and the input
gradient's (none for the first layer: the images need none).
"""
import re
import sys


def reported(info_path):
    match = re.search(r"^flops per step: (\d+)$", open(info_path).read(), re.M)
    assert match, f"{info_path}: no 'flops per step' line"
    return int(match[1])


def gpt(layers, dim, vocab, tokens, context):
    n = layers * 12 * dim * dim + vocab * dim
    return 6 * n * tokens + 12 * layers * context * dim * tokens


def cnn_digits(batch):
    conv1 = 2 * (batch * 8 * 8 * 8) * (1 * 3 * 3)
    conv2 = 2 * (batch * 16 * 4 * 4) * (8 * 3 * 3)
    fc = 2 * batch * 64 * 10
    return 2 * conv1 + 3 * conv2 + 3 * fc


def main(argv):
    kind, info = argv[1], argv[2]
    numbers = [int(a) for a in argv[3:]]
    want = gpt(*numbers) if kind == "gpt" else cnn_digits(*numbers)
    got = reported(info)
    if got != want:
        sys.exit(f"{info}: {got} model FLOPs per step, the architecture's "
                 f"count is {want}")


if __name__ == "__main__":
    main(sys.argv)
