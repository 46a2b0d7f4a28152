"""Checks MFU's denominator and its values over runs of one executable:

    check_mfu.py OUT1 METRICS1.jsonl OUT2 METRICS2.jsonl ...

Each OUT is a run's output, with the line that states the peak
("MFU is against a peak of P GFLOP/s: ..."), each METRICS its --metrics
file. The peak must be the same in every run (within 5 %: the clock's own
drift; a peak measured off a matmul kernel varied by 30 % between starts),
stated with its cores, FLOPs per cycle and clock, and no step's MFU may
reach 100 % — model FLOPs over the hardware's peak cannot.
"""
import json
import math
import re
import sys

PEAK = re.compile(r"MFU is against a peak of ([0-9.]+) GFLOP/s: (\d+) cores? "
                  r"x (\d+) \w+ FLOP/cycle \([^)]*\) x ([0-9.]+) GHz")


def main(args):
    assert args and len(args) % 2 == 0, __doc__
    peaks = []
    for out, metrics in zip(args[::2], args[1::2]):
        match = PEAK.search(open(out).read())
        assert match, f"{out}: no peak line"
        peak, cores, per_cycle, ghz = (float(match[1]), int(match[2]),
                                       int(match[3]), float(match[4]))
        # The stated factors multiply to the peak (the clock is rounded to
        # 10 MHz in the line).
        assert abs(cores * per_cycle * ghz - peak) <= 0.01 * peak, match[0]
        assert per_cycle & (per_cycle - 1) == 0, f"{per_cycle} FLOP/cycle"
        peaks.append(peak)
        lines = [json.loads(line) for line in open(metrics)]
        mfus = [m["mfu"] for m in lines if "mfu" in m]
        assert mfus, f"{metrics}: no mfu"
        for mfu in mfus:
            assert math.isfinite(mfu) and 0 < mfu < 1, f"{metrics}: MFU {mfu}"
    assert max(peaks) <= 1.05 * min(peaks), f"peaks {peaks}"


if __name__ == "__main__":
    main(sys.argv[1:])
