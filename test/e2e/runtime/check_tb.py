"""Reads a --log-dir with TensorBoard's own reader and checks it against the
run's JSONL metrics. Usage: check_tb.py LOGDIR METRICS.jsonl"""
import json
import sys

from tensorboard.backend.event_processing import event_accumulator

logdir, metrics = sys.argv[1], sys.argv[2]
acc = event_accumulator.EventAccumulator(logdir)
acc.Reload()
tags = set(acc.Tags()["scalars"])
want = {"loss", "lr", "grad_norm", "samples_per_s", "tokens_per_s", "eval_loss"}
missing = want - tags
assert not missing, f"missing scalar tags {missing}; have {tags}"
steps = [json.loads(l) for l in open(metrics)]
train = [m for m in steps if "loss" in m]
evals = [m for m in steps if "eval_loss" in m]
for tag, key, rows in [("loss", "loss", train), ("lr", "lr", train),
                       ("grad_norm", "grad_norm", train),
                       ("eval_loss", "eval_loss", evals)]:
    events = acc.Scalars(tag)
    assert [e.step for e in events] == [m["step"] for m in rows], (
        tag, [e.step for e in events], [m["step"] for m in rows])
    for e, m in zip(events, rows):
        assert abs(e.value - m[key]) <= 1e-6 * max(1.0, abs(m[key])), (tag, e, m)
print(f"ok: {len(tags)} tags, {len(train)} logged steps, {len(evals)} evals")
