"""A deterministic byte stream with structure a GPT can learn, as an llm.c
token shard (no data files needed).

    python3 tokens.py OUT.bin
"""
import struct
import sys

COUNT = 80 * 64 + 1  # 80 windows of 64 (+1 target): 20 steps of batch 4


def stream():
    # A repeating sentence with a slowly varying counter: mostly
    # predictable from the previous bytes.
    text = b""
    i = 0
    while len(text) < COUNT:
        text += b"the lmc step %d trains a tiny gpt. " % (i % 17)
        i += 1
    return list(text[:COUNT])


def main():
    data = stream()
    header = [0] * 256
    header[0], header[1], header[2] = 20240520, 1, len(data)
    with open(sys.argv[1], "wb") as f:
        f.write(struct.pack("<256i", *header))
        f.write(struct.pack(f"<{len(data)}H", *data))


if __name__ == "__main__":
    main()
