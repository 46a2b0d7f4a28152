"""Reads a --log-dir that a run and its --resume wrote, with TensorBoard's
own reader: the loss curve is one, steps 1..N, each value the one the
JSONL metrics of the run that made it logged. Usage:
check_tb_resume.py LOGDIR FIRST.jsonl RESUMED.jsonl"""
import glob
import json
import os
import sys

from tensorboard.backend.event_processing import event_accumulator

logdir, first, resumed = sys.argv[1:]
files = glob.glob(os.path.join(logdir, "events.out.tfevents.*"))
assert len(files) == 2, f"expected an event file per run, found {files}"
acc = event_accumulator.EventAccumulator(logdir)
acc.Reload()
rows = [json.loads(l) for path in (first, resumed) for l in open(path)]
want = {m["step"]: m["loss"] for m in rows if "loss" in m}
got = {e.step: e.value for e in acc.Scalars("loss")}
assert sorted(got) == sorted(want) == list(range(1, len(want) + 1)), (
    sorted(got), sorted(want))
for step, loss in want.items():
    assert abs(got[step] - loss) <= 1e-6 * max(1.0, abs(loss)), (step, got[step], loss)
print(f"ok: {len(files)} event files, loss at steps 1..{len(want)}")
