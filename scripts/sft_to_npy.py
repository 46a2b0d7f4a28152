#!/usr/bin/env python3
"""Supervised fine-tuning data (JSON lines) to the two arrays a causal LM's
lmc executable trains on: `./train --input x=X.npy --input labels=Y.npy`.

Each line of INPUT.jsonl is one example, in one of the forms Hugging Face's
tools write:

  {"input_ids": [...], "labels": [...]}     tokenized, labels aligned with
                                           the ids, -100 where nothing is
                                           learned (HF's convention);
                                           without "labels" every token is
  {"input_ids": [...], "completion_mask": [0, 1, ...]}   TRL's mask (or
                                           "loss_mask"): 1 where learned
  {"prompt": "...", "completion": "..."}   text, with --tokenizer: the
                                           completion is learned
  {"text": "..."}                          text, with --tokenizer: all of
                                           it is learned

X[i, t] is the example's token t and Y[i, t] the label of the position t
predicts, token t + 1 — or -100 (PyTorch's ignore_index, lmc's default)
where that token is not learned, is padding or lies past the end: the
shift Hugging Face's causal LMs make inside their loss. Rows are padded to
--context with --pad-id; a longer example is cut (counted in the summary),
or with --pack all examples are laid end to end and cut into rows of
--context tokens, the last one padded (the last token of an example
predicts nothing: -100).

--tokenizer NAME_OR_PATH loads `transformers.AutoTokenizer` (a tokenizer.json
file: `tokenizers.Tokenizer`); the tokenized forms need only the standard
library. An EOS id (--eos-id, else the tokenizer's) ends each text example
and is learned with the completion.

usage: sft_to_npy.py INPUT.jsonl X.npy Y.npy --context T [--pad-id P]
                     [--pack] [--tokenizer NAME] [--eos-id E]
"""
import argparse
import json
import struct
import sys

IGNORE = -100


def write_npy(path, rows, width):
    """An int64 [len(rows), width] array in NumPy's .npy format (v1.0)."""
    header = ("{'descr': '<i8', 'fortran_order': False, 'shape': (%d, %d), }"
              % (len(rows), width))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode("latin1"))
        for row in rows:
            f.write(struct.pack(f"<{width}q", *row))


class Tokenizer:
    def __init__(self, name, eos_id):
        if name.endswith(".json"):
            from tokenizers import Tokenizer as Raw
            raw = Raw.from_file(name)
            self.encode = lambda text: raw.encode(
                text, add_special_tokens=False).ids
            self.eos = eos_id
        else:
            from transformers import AutoTokenizer
            tok = AutoTokenizer.from_pretrained(name)
            self.encode = lambda text: tok.encode(text,
                                                  add_special_tokens=False)
            self.eos = eos_id if eos_id is not None else tok.eos_token_id


def example(record, tokenizer):
    """(ids, learned): the tokens and whether each is learned."""
    if "input_ids" in record:
        ids = record["input_ids"]
        if "labels" in record:
            labels = record["labels"]
            if len(labels) != len(ids):
                raise ValueError(f"{len(labels)} labels for {len(ids)} "
                                 f"input_ids")
            learned = [label != IGNORE for label in labels]
            if any(l != i for l, i, k in zip(labels, ids, learned) if k):
                raise ValueError("a label that is not -100 differs from its "
                                 "input_id (labels are the ids, masked)")
        else:
            mask = record.get("completion_mask", record.get("loss_mask"))
            if mask is not None and len(mask) != len(ids):
                raise ValueError(f"{len(mask)} mask values for {len(ids)} "
                                 f"input_ids")
            learned = [bool(m) for m in mask] if mask is not None else \
                [True] * len(ids)
        if not all(isinstance(i, int) and i >= 0 for i in ids):
            raise ValueError("input_ids must be non-negative integers")
        return ids, learned
    if tokenizer is None:
        raise ValueError("a text example needs --tokenizer")
    if "prompt" in record and "completion" in record:
        prompt = tokenizer.encode(record["prompt"])
        completion = tokenizer.encode(record["completion"])
    elif "text" in record:
        prompt, completion = [], tokenizer.encode(record["text"])
    else:
        raise ValueError("expected input_ids, prompt and completion, or text")
    if tokenizer.eos is not None:
        completion = completion + [tokenizer.eos]
    return prompt + completion, [False] * len(prompt) + [True] * len(completion)


def shifted_labels(ids, learned):
    """Label of position t: token t + 1 where it is learned, else -100."""
    return [ids[t + 1] if learned[t + 1] else IGNORE
            for t in range(len(ids) - 1)] + [IGNORE]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("input")
    p.add_argument("x")
    p.add_argument("y")
    p.add_argument("--context", type=int, required=True)
    p.add_argument("--pad-id", type=int, default=0)
    p.add_argument("--pack", action="store_true")
    p.add_argument("--tokenizer")
    p.add_argument("--eos-id", type=int)
    o = p.parse_args()
    if o.context < 1:
        sys.exit("error: --context must be at least 1")
    tokenizer = Tokenizer(o.tokenizer, o.eos_id) if o.tokenizer else None

    examples = []
    with open(o.input) as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                if not isinstance(record, dict):
                    raise ValueError("expected a JSON object")
                ids, learned = example(record, tokenizer)
            except ValueError as e:  # JSONDecodeError is one
                sys.exit(f"error: {o.input}:{number}: {e}")
            if ids:
                examples.append((ids, learned))
    if not examples:
        sys.exit(f"error: {o.input}: no examples")

    xs, ys, cut = [], [], 0
    T = o.context
    if o.pack:
        # Each example's own labels: no position predicts the first token of
        # the next example.
        ids = [i for e in examples for i in e[0]]
        labels = [label for e in examples for label in shifted_labels(*e)]
        for start in range(0, len(ids), T):
            xs.append(ids[start:start + T])
            ys.append(labels[start:start + T])
    else:
        for ids, learned in examples:
            labels = shifted_labels(ids, learned)
            cut += len(ids) > T
            xs.append(ids[:T])
            ys.append(labels[:T])
    for x, y in zip(xs, ys):
        pad = T - len(x)
        x.extend([o.pad_id] * pad)
        y.extend([IGNORE] * pad)
    write_npy(o.x, xs, T)
    write_npy(o.y, ys, T)
    learned_count = sum(label != IGNORE for y in ys for label in y)
    print(f"{len(examples)} examples -> {len(xs)} rows of {T} tokens"
          f"{' (packed)' if o.pack else ''}, {learned_count} labels learned"
          f"{f', {cut} cut at {T} tokens' if cut else ''}")


if __name__ == "__main__":
    main()
