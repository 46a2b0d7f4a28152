"""Checks a --profile report against the run's own step timing.

    check_profile.py OUT METRICS.jsonl

OUT is the executable's output with --profile and --log-every 1, METRICS
its --metrics file. The profiled steps (2..N) took, per step, what the
metrics say those steps took (they also count the batch assembly, so the
profile may be a little lower, never higher); the kinds and the time
outside every region add up to the step; every top-table row's calls per
step are whole numbers (a region runs the same times every step).
"""
import json
import re
import sys


def main(out_path, metrics_path):
    text = open(out_path).read()
    head = re.search(r"profile: steps (\d+)-(\d+) \((\d+) timed\), "
                     r"([0-9.]+) ms per step", text)
    assert head, "no profile header"
    first, last, count, step_ms = (int(head[1]), int(head[2]), int(head[3]),
                                   float(head[4]))
    assert count == last - first + 1, head[0]
    metrics = [json.loads(line) for line in open(metrics_path)]
    ms = [m["ms"] for m in metrics if "ms" in m and first <= m["step"] <= last]
    assert len(ms) == count, f"{len(ms)} metric lines for {count} steps"
    mean = sum(ms) / len(ms)
    assert 0.5 * mean <= step_ms <= 1.02 * mean, (step_ms, mean)

    kinds = re.search(r"by kind: (.*)", text)[1]
    parts = [float(m) for m in re.findall(r" ([0-9.]+) ms \(", kinds)]
    assert abs(sum(parts) - step_ms) <= 0.01 * step_ms + 0.01, (parts, step_ms)

    table = text[head.end():text.index("by node")]
    rows = re.findall(r"^ +([0-9.]+) +([0-9.]+)% +([0-9.]+) +(\S+) +(\S+) +(\S+)$",
                      table, re.M)
    assert rows, "no region rows"
    for row in rows:
        assert float(row[2]).is_integer(), row
    times = [float(row[0]) for row in rows]
    assert times == sorted(times, reverse=True), "rows not by time"
    print(f"profile ok: {step_ms} ms per step vs {mean:.3f} from the metrics; "
          f"{len(rows)} rows")


if __name__ == "__main__":
    main(*sys.argv[1:])
