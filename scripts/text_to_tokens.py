#!/usr/bin/env python3
"""Turn a text file into an llm.c-format token shard (byte-level vocabulary).

Every byte of the file is one token (vocab 256), written as uint16 after the
256 x int32 header llm.c uses (magic 20240520, version 1, token count), so
`./train --tokens out.bin` reads it. Needs only the standard library.

usage: text_to_tokens.py INPUT.txt OUT.bin [--val-fraction F VAL.bin]
"""
import argparse
import struct
import sys

MAGIC_U16 = 20240520


def write_shard(path, tokens):
    header = [0] * 256
    header[0], header[1], header[2] = MAGIC_U16, 1, len(tokens)
    with open(path, "wb") as f:
        f.write(struct.pack("<256i", *header))
        f.write(struct.pack(f"<{len(tokens)}H", *tokens))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--val-fraction", type=float, default=0.0,
                   help="put this trailing fraction of the bytes into --val")
    p.add_argument("--val", help="output path for the validation shard")
    args = p.parse_args()
    with open(args.input, "rb") as f:
        data = f.read()
    if len(data) >= 2**31:
        sys.exit("error: input too large for one llm.c shard")
    split = len(data)
    if args.val_fraction > 0:
        if not args.val:
            sys.exit("error: --val-fraction needs --val PATH")
        split = len(data) - int(len(data) * args.val_fraction)
        write_shard(args.val, list(data[split:]))
    write_shard(args.output, list(data[:split]))
    print(f"{args.output}: {split} tokens (vocab 256)")


if __name__ == "__main__":
    main()
