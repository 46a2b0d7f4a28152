"""Side-by-side training-step benchmark: lmc's executable vs PyTorch eager
and torch.compile.

    bash bench/run.sh [--threads 1,2] [--runs R] [--models digits,mlp,gpt,cnn]

For each model: export from PyTorch to ONNX, compile with build/bin/lmc,
then alternate R runs of lmc's executable, of PyTorch's own training loop
in eager mode and of the same loop with forward and backward under
torch.compile (compiled once, before the timed runs; its compile time is
reported apart) — same initial weights, data, optimizer (AdamW) and thread
count — and report the median step time of each, the ratio of lmc to the
best PyTorch, lmc's achieved GFLOP/s (FLOPs per step as lmc's --info
counts them) and its share of the measured OpenBLAS sgemm peak, the matmul
floor (the step's matrix products timed alone through the faster of
OpenBLAS and oneDNN per shape, bench/gemm_floor.c: what no step calling
these libraries can beat) and its ratio
to the best PyTorch, and the peak resident memory of each side's training
process (separate runs). Needs torch and numpy (bench/run.sh installs them
into a virtual environment of the benchmark's own; not a test dependency).
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
import warnings

# The TorchScript exporter (dynamo=False, as the ONNX files lmc's tests
# use) warns that it is legacy on every export.
warnings.filterwarnings("ignore", category=DeprecationWarning)

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


class VggCnn(torch.nn.Module):
    """A plain VGG-style CNN on 32 x 32 images: conv 3->64, 64->64, pool,
    64->128, pool, linear (3 x 3 convolutions, padding 1)."""

    def __init__(self):
        super().__init__()
        conv = torch.nn.Conv2d
        self.features = torch.nn.Sequential(
            conv(3, 64, 3, padding=1), torch.nn.ReLU(),
            conv(64, 64, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
            conv(64, 128, 3, padding=1), torch.nn.ReLU(),
            torch.nn.MaxPool2d(2))
        self.head = torch.nn.Linear(128 * 8 * 8, 10)

    def forward(self, x):
        return self.head(torch.flatten(self.features(x), 1))


def gpt_module():
    """examples/gpt-char's GPT at issue 9's size: 4 layers, width 256, 4
    heads, context 128, vocabulary 256 (its classes read these module
    constants when they are built)."""
    sys.path.insert(0, os.path.join(ROOT, "examples", "gpt-char"))
    import export as gpt
    gpt.CTX, gpt.DIM, gpt.HEADS, gpt.LAYERS = 128, 256, 4, 4
    return gpt


PEERS = ("eager", "compile")

# name: (layer sizes, or "gpt" / "cnn"; batch; steps per run)
MODELS = {
    "digits": ([64, 64, 10], 32, 2000),
    "mlp": ([784, 2048, 2048, 10], 256, 30),
    "gpt": ("gpt", 8, 20),
    "cnn": ("cnn", 32, 10),
}


def make_model(name):
    """The model with its initial weights (torch.manual_seed(0))."""
    sizes = MODELS[name][0]
    torch.manual_seed(0)
    if sizes == "cnn":
        return VggCnn()
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
    elif sizes == "cnn":
        torch.onnx.export(model, torch.zeros(batch, 3, 32, 32), path,
                          dynamo=False, opset_version=17, input_names=["x"],
                          output_names=["logits"])
        x = rng.standard_normal((batch * 8, 3, 32, 32)).astype(np.float32)
        y = rng.integers(0, 10, batch * 8).astype(np.int64)
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


def torch_step(model, mode):
    """One training step's forward and backward: eager, or under
    torch.compile (Inductor), as users write it; AdamW stays eager."""
    lossf = torch.nn.CrossEntropyLoss()

    def step(xb, yb):
        logits = model(xb)
        loss = lossf(logits.reshape(-1, logits.shape[-1]), yb.reshape(-1))
        loss.backward()
        return loss

    return torch.compile(step) if mode == "compile" else step


class TorchSide:
    """A PyTorch model, its optimizer and its (compiled) step, built once;
    `compile_s` is the first step's time under torch.compile."""

    def __init__(self, name, mode, threads):
        torch.set_num_threads(threads)
        self.name, self.mode = name, mode
        self.model = make_model(name)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-3,
                                     weight_decay=0.0)
        self.step = torch_step(self.model, mode)
        self.compile_s = None

    def time(self, x, y, threads):
        """Median step time in ms over the model's steps (after 10 %)."""
        torch.set_num_threads(threads)
        _, batch, steps = MODELS[self.name]
        xs, ys = torch.from_numpy(x), torch.from_numpy(y)
        times = []
        for i in range(steps):
            s = (i * batch) % len(x)
            t0 = time.perf_counter()
            self.opt.zero_grad()
            self.step(xs[s:s + batch], ys[s:s + batch])
            self.opt.step()
            times.append((time.perf_counter() - t0) * 1e3)
            if self.compile_s is None:
                self.compile_s = times[0] / 1e3
        return statistics.median(times[max(1, len(times) // 10):])


def run_blas_tool(work, name, threads, stdin=None):
    """Builds bench/NAME.c against OpenBLAS and oneDNN and runs it on
    `threads` threads; returns its one printed number."""
    exe = os.path.join(work, name)
    subprocess.run(["cc", "-O2", os.path.join(ROOT, "bench", f"{name}.c"),
                    "-I/usr/include/x86_64-linux-gnu/openblas-pthread",
                    "-lopenblas", "-ldnnl", "-o", exe], check=True)
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads),
               OMP_NUM_THREADS=str(threads))
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


def gemm_floor_ms(name, shapes, work, threads):
    """The step's matmuls (gemm_shapes) timed alone through the faster of
    OpenBLAS and oneDNN (bench/gemm_floor.c); None for the CNN, whose
    products are mostly convolutions (bench/conv_kernel.sh times those)."""
    if MODELS[name][0] == "cnn":
        return None
    return run_blas_tool(work, "gemm_floor", threads, stdin=shapes)


class Prepared:
    """A model exported, compiled by lmc and its matmul shapes read, once
    for all its rows."""

    def __init__(self, name, work):
        _, self.x, self.y = export(name, work)
        self.exe, self.flops, self.compile_s = compile_lmc(name, work)
        self.shapes = gemm_shapes(name, work)


def row(name, work, prepared, threads, runs, peak):
    """One table row: lmc, eager and compiled PyTorch on `threads` threads."""
    _, batch, _ = MODELS[name]
    x, y, exe = prepared.x, prepared.y, prepared.exe
    flops, compile_s = prepared.flops, prepared.compile_s
    sides = {mode: TorchSide(name, mode, threads) for mode in PEERS}
    for side in sides.values():  # compile (and warm) outside the timing
        side.time(x[:batch], y[:batch], threads)
    ms = {"lmc": []} | {mode: [] for mode in PEERS}
    for _ in range(runs):  # alternating: lmc, eager, compile, lmc, ...
        ms["lmc"].append(time_lmc(name, work, exe, threads))
        for mode, side in sides.items():
            ms[mode].append(side.time(x, y, threads))
    med = {k: statistics.median(v) for k, v in ms.items()}
    best = min(med[mode] for mode in PEERS)
    gflops = flops / (med["lmc"] * 1e-3) / 1e9
    floor = gemm_floor_ms(name, prepared.shapes, work, threads)
    floor_cells = ("– | –" if floor is None
                   else f"{floor:.4g} | {floor / best:.2f}")
    rss = {"lmc": peak_rss_mib(lmc_command(name, work, exe, threads))}
    for mode in PEERS:
        rss[mode] = peak_rss_mib([sys.executable, __file__, "--threads",
                                  str(threads), "--torch-train", name, work,
                                  mode])
    return (f"| {name} | {batch} | {threads} | {med['lmc']:.4g} "
            f"| {med['eager']:.4g} | {med['compile']:.4g} "
            f"({sides['compile'].compile_s:.0f} s) | {med['lmc'] / best:.2f} "
            f"| {gflops:.1f} | {100 * gflops / peak[threads]:.0f}% "
            f"| {floor_cells} | {compile_s:.1f} "
            f"| {rss['lmc']:.0f} | {rss['eager']:.0f} | {rss['compile']:.0f} |")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", default="1",
                        help="comma-separated thread counts (a row each)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--models", default="digits,mlp,gpt")
    # Internal: the PyTorch side of the memory measurement, in a process
    # of its own.
    parser.add_argument("--torch-train", nargs=3,
                        metavar=("MODEL", "DIR", "MODE"))
    o = parser.parse_args()
    threads = [int(t) for t in o.threads.split(",")]
    if o.torch_train:
        name, work, mode = o.torch_train
        side = TorchSide(name, mode, threads[0])
        side.time(np.load(f"{work}/{name}_x.npy"),
                  np.load(f"{work}/{name}_y.npy"), threads[0])
        return
    work = tempfile.mkdtemp(prefix="lmc-bench-")
    peak = {t: sgemm_peak(work, t) for t in threads}
    print(f"PyTorch {torch.__version__}; OpenBLAS sgemm peak "
          + ", ".join(f"{peak[t]:.0f} GFLOP/s on {t} thread(s)"
                      for t in threads))
    print("| model | batch | threads | lmc ms | eager ms | compile ms (first step) "
          "| lmc / best | lmc GFLOP/s | % of sgemm peak | matmul floor ms "
          "| floor / best | lmc compile s | lmc MiB | eager MiB | compile MiB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in o.models.split(","):
        prepared = Prepared(name, work)
        for t in threads:
            print(row(name, work, prepared, t, o.runs, peak))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
