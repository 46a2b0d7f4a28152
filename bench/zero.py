"""ZeRO-1 against plain data parallelism on 2 processes: samples/s and the
peak resident memory of the largest process, alternating runs.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python3 bench/zero.py [--runs R]

The model is bench.py's 5.8 M-parameter MLP (784-2048-2048-10, AdamW),
compiled for batch 128 per process (global batch 256). Needs
build/bin/lmc, mpirun, torch and numpy (for the export).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402

MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to",
          "none", "-np", "2"]


def run(exe, work, zero, metrics):
    """Mean samples/s after the first step, and the peak RSS (MiB) of the
    largest process: mpirun waits for its processes, so the rusage of its
    wait covers them (measured by bench.py's probe process)."""
    command = MPIRUN + [exe, "--input", f"x={work}/mlp_x.npy", "--input",
                        f"labels={work}/mlp_y.npy", "--steps", "30",
                        "--log-every", "1", "--threads", "1", "--zero",
                        str(zero), "--metrics", metrics]
    rss = bench.peak_rss_mib(command)
    rows = [json.loads(l) for l in open(metrics) if '"samples_per_s"' in l]
    rate = sum(r["samples_per_s"] for r in rows[1:]) / len(rows[1:])
    return rate, rss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    o = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        bench.export("mlp", work)
        exe = os.path.join(work, "mlp_train")
        subprocess.run([bench.LMC, os.path.join(work, "mlp.onnx"), "--batch",
                        "128", "--optimizer", "adamw", "-o", exe], check=True)
        results = {0: [], 1: []}
        for _ in range(o.runs):
            for zero in (0, 1):
                results[zero].append(
                    run(exe, work, zero, os.path.join(work, "m.jsonl")))
        for zero, name in ((0, "data parallel"), (1, "--zero 1")):
            rates = sorted(r for r, _ in results[zero])
            rss = max(m for _, m in results[zero])
            print(f"{name:14} median {rates[len(rates) // 2]:7.0f} samples/s, "
                  f"peak RSS {rss:5.0f} MiB per process")


if __name__ == "__main__":
    main()
