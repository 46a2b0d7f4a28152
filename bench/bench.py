"""Side-by-side training-step benchmark: lmc's executable vs PyTorch.

    python3 bench/bench.py [--threads T] [--runs R] [--models digits,mlp,gpt]

For each model: export from PyTorch to ONNX, compile with build/bin/lmc,
then alternate R runs of lmc's executable and of PyTorch's own training loop
(same initial weights, same data, same optimizer, same thread count) and
report the median step time, achieved GFLOP/s (FLOPs per step as lmc's
--info counts them), the ratio lmc/PyTorch, the share of the measured
OpenBLAS sgemm peak, the matmul floor (the step's matrix products timed
alone through OpenBLAS, bench/gemm_floor.c: what no step calling this BLAS
can beat) and its ratio to PyTorch's step, and the peak resident memory of each side's training
process (a separate run of each: lmc's executable, and a Python process
that imports torch and trains). Needs torch and numpy (bench only, not the
tests).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LMC = os.path.join(ROOT, "build", "bin", "lmc")


class MLP(torch.nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = torch.nn.ModuleList(
            torch.nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i + 1 < len(self.layers):
                x = torch.relu(x)
        return x


def gpt_module():
    """examples/gpt-char's GPT at issue 9's size: 4 layers, width 256, 4
    heads, context 128, vocabulary 256 (its classes read these module
    constants when they are built)."""
    sys.path.insert(0, os.path.join(ROOT, "examples", "gpt-char"))
    import export as gpt
    gpt.CTX, gpt.DIM, gpt.HEADS, gpt.LAYERS = 128, 256, 4, 4
    return gpt


# name: (layer sizes, or "gpt"; batch; steps per run)
MODELS = {
    "digits": ([64, 64, 10], 32, 2000),
    "mlp": ([784, 2048, 2048, 10], 256, 30),
    "gpt": ("gpt", 8, 20),
}


def make_model(name):
    """The model with its initial weights (torch.manual_seed(0))."""
    sizes = MODELS[name][0]
    torch.manual_seed(0)
    return gpt_module().GPT() if sizes == "gpt" else MLP(sizes)


def export(name, work):
    """Exports the model with its initial weights and writes 8 batches of
    data: x / labels as .npy, class labels for the MLPs, next-byte targets
    for the GPT."""
    sizes, batch, _ = MODELS[name]
    model = make_model(name)
    rng = np.random.default_rng(0)
    path = os.path.join(work, f"{name}.onnx")
    if sizes == "gpt":
        gpt = gpt_module()
        example = torch.zeros(batch, gpt.CTX, dtype=torch.long)
        torch.onnx.export(model, (example,), path, dynamo=False,
                          opset_version=17, input_names=["x"],
                          output_names=["logits"],
                          training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False)
        x = rng.integers(0, gpt.VOCAB, (batch * 8, gpt.CTX)).astype(np.int64)
        y = rng.integers(0, gpt.VOCAB, (batch * 8, gpt.CTX)).astype(np.int64)
    else:
        torch.onnx.export(model, torch.zeros(batch, sizes[0]), path,
                          dynamo=False, opset_version=17, input_names=["x"],
                          output_names=["logits"])
        x = rng.standard_normal((batch * 8, sizes[0])).astype(np.float32)
        y = rng.integers(0, sizes[-1], batch * 8).astype(np.int64)
    np.save(os.path.join(work, f"{name}_x.npy"), x)
    np.save(os.path.join(work, f"{name}_y.npy"), y)
    return model, x, y


def compile_lmc(name, work):
    _, batch, _ = MODELS[name]
    exe = os.path.join(work, f"{name}_train")
    t0 = time.perf_counter()
    subprocess.run([LMC, os.path.join(work, f"{name}.onnx"), "--batch",
                    str(batch), "--optimizer", "adamw", "--lr", "1e-3", "-o",
                    exe], check=True)
    compile_s = time.perf_counter() - t0
    info = subprocess.run([exe, "--info"], check=True, capture_output=True,
                          text=True).stdout
    flops = int(next(l for l in info.splitlines()
                     if l.startswith("flops per step")).split(":")[1])
    return exe, flops, compile_s


def lmc_command(name, work, exe, threads):
    return [exe, "--threads", str(threads), "--input",
            f"x={work}/{name}_x.npy", "--input", f"labels={work}/{name}_y.npy",
            "--steps", str(MODELS[name][2])]


# Runs argv[1:] and prints its peak RSS in KiB. A small process of its own:
# a child forked from this one (torch loaded) would count this process's
# pages in its peak until it execs.
RSS_PROBE = """
import os, subprocess, sys
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(child.pid, 0)
sys.exit(f"{sys.argv[1]} failed ({status})") if status else print(usage.ru_maxrss)
"""


def peak_rss_mib(command):
    """Peak resident memory of one run of `command`."""
    out = subprocess.run([sys.executable, "-c", RSS_PROBE] + command,
                         check=True, capture_output=True, text=True).stdout
    return int(out) / 1024


def time_lmc(name, work, exe, threads):
    metrics = os.path.join(work, f"{name}_metrics.jsonl")
    subprocess.run(lmc_command(name, work, exe, threads) +
                   ["--log-every", "1", "--metrics", metrics], check=True,
                   stdout=subprocess.DEVNULL)
    ms = [json.loads(l)["ms"] for l in open(metrics) if '"ms"' in l]
    return statistics.median(ms[len(ms) // 10:])


def time_torch(name, model, x, y, threads):
    sizes, batch, steps = MODELS[name]
    torch.set_num_threads(threads)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0)
    lossf = torch.nn.CrossEntropyLoss()
    xs, ys = torch.from_numpy(x), torch.from_numpy(y)
    times = []
    for step in range(steps):
        s = (step * batch) % len(x)
        t0 = time.perf_counter()
        opt.zero_grad()
        logits = model(xs[s:s + batch])
        loss = lossf(logits.reshape(-1, logits.shape[-1]),
                     ys[s:s + batch].reshape(-1))
        loss.backward()
        opt.step()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times[len(times) // 10:])


def run_blas_tool(work, name, threads, stdin=None):
    """Builds bench/NAME.c against OpenBLAS and runs it on `threads`
    threads; returns its one printed number."""
    exe = os.path.join(work, name)
    subprocess.run(["cc", "-O2", os.path.join(ROOT, "bench", f"{name}.c"),
                    "-I/usr/include/x86_64-linux-gnu/openblas-pthread",
                    "-lopenblas", "-o", exe], check=True)
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads))
    return float(subprocess.run([exe], check=True, capture_output=True,
                                text=True, env=env, input=stdin).stdout)


def sgemm_peak(work, threads):
    return run_blas_tool(work, "sgemm_peak", threads)


# A matmul of the step in lmc's linalg form (--mlir-print-local-scope): the
# loop dimensions, the operands' index lists, their types and the result's.
MATMUL = re.compile(
    r"linalg\.(?:batch_)?matmul (?:indexing_maps = \["
    r"affine_map<\((?P<dims>[^)]*)\) -> \((?P<a>[^)]*)\)>, "
    r"affine_map<\([^)]*\) -> \((?P<b>[^)]*)\)>, "
    r"affine_map<\([^)]*\) -> \([^)]*\)>\] )?"
    r"ins\([^:]*: tensor<(?P<at>[0-9x]+)xf32>, tensor<[0-9x]+xf32>\) "
    r"outs\([^:]*: tensor<(?P<ct>[0-9x]+)xf32>\)")


def gemm_shapes(name, work):
    """The training step's matrix products, one "batch M N K transA transB"
    line each, as lmc's runtime hands them to BLAS."""
    ir = subprocess.run(
        [LMC, os.path.join(work, f"{name}.onnx"), "--batch",
         str(MODELS[name][1]), "--optimizer", "adamw", "--compile-to=shard",
         "--emit=mlir", "--mlir-print-local-scope", "-o", "-"],
        check=True, capture_output=True, text=True).stdout
    step = ir[ir.index("func.func @train_step("):]
    step = step[:step.index("\n  }\n")]
    lines = []
    for m in MATMUL.finditer(step):
        a_shape = [int(d) for d in m["at"].split("x")]
        c_shape = [int(d) for d in m["ct"].split("x")]
        # Without maps, the default: A is [.., M, K], B is [.., K, N].
        k_dim = m["dims"].split(", ")[-1] if m["dims"] else None
        trans_a = bool(k_dim) and m["a"].split(", ")[-1] != k_dim
        trans_b = bool(k_dim) and m["b"].split(", ")[-1] == k_dim
        k = a_shape[-2] if trans_a else a_shape[-1]
        batch = c_shape[0] if len(c_shape) == 3 else 1
        lines.append(f"{batch} {c_shape[-2]} {c_shape[-1]} {k} "
                     f"{int(trans_a)} {int(trans_b)}")
    return "\n".join(lines) + "\n"


def gemm_floor_ms(name, work, threads):
    """The step's matmuls timed alone through OpenBLAS (bench/gemm_floor.c)."""
    return run_blas_tool(work, "gemm_floor", threads,
                         stdin=gemm_shapes(name, work))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--models", default="digits,mlp,gpt")
    # Internal: the PyTorch side of the memory measurement, in a process
    # of its own.
    parser.add_argument("--torch-train", nargs=2, metavar=("MODEL", "DIR"))
    o = parser.parse_args()
    if o.torch_train:
        name, work = o.torch_train
        time_torch(name, make_model(name), np.load(f"{work}/{name}_x.npy"),
                   np.load(f"{work}/{name}_y.npy"), o.threads)
        return
    work = tempfile.mkdtemp(prefix="lmc-bench-")
    peak = sgemm_peak(work, o.threads)
    print(f"sgemm peak: {peak:.0f} GFLOP/s on {o.threads} thread(s)")
    print("| model | batch | lmc ms | PyTorch ms | lmc/PyTorch | lmc GFLOP/s "
          "| % of sgemm peak | matmul floor ms | floor/PyTorch | compile s "
          "| lmc peak MiB | PyTorch peak MiB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in o.models.split(","):
        model, x, y = export(name, work)
        exe, flops, compile_s = compile_lmc(name, work)
        lmc_ms, torch_ms = [], []
        for _ in range(o.runs):
            lmc_ms.append(time_lmc(name, work, exe, o.threads))
            torch_ms.append(time_torch(name, model, x, y, o.threads))
        a, t = statistics.median(lmc_ms), statistics.median(torch_ms)
        gflops = flops / (a * 1e-3) / 1e9
        floor = gemm_floor_ms(name, work, o.threads)
        lmc_mib = peak_rss_mib(lmc_command(name, work, exe, o.threads))
        torch_mib = peak_rss_mib([sys.executable, __file__, "--threads",
                                  str(o.threads), "--torch-train", name, work])
        print(f"| {name} | {MODELS[name][1]} | {a:.3f} | {t:.3f} | {a / t:.2f} "
              f"| {gflops:.1f} | {100 * gflops / peak:.0f}% | {floor:.3f} "
              f"| {floor / t:.2f} | {compile_s:.1f} "
              f"| {lmc_mib:.0f} | {torch_mib:.0f} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
