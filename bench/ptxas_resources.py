#!/usr/bin/env python3
"""What ptxas can tell without a GPU: the resources of every kernel of a
`--target cuda` executable, checked against the architecture's limits.

    ptxas_resources.py LOWERED.mlir --arch sm_90 [--ptxas PATH] [--top N]

LOWERED.mlir is `lmc MODEL --target cuda --gpu-format=ptx --compile-to=lower`
(the gpu.binary ops carry the PTX of each step function's kernels). Each
module is assembled with `ptxas -v` for the architecture; the table lists
registers, spill stores/loads, shared and local (stack) memory per kernel,
and the script fails when a kernel cannot launch with lmc's blocks of 256
threads (registers x 256 > 65536 per block, more than 255 registers,
shared memory over the architecture's 227 KiB per block) or spills
registers to local memory.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

BLOCK = 256                    # lmc-linalg-to-gpu-loops' threads per block
REGS_PER_BLOCK = 65536         # sm_80, sm_90
MAX_REGS_PER_THREAD = 255
SMEM_PER_BLOCK = 227 * 1024    # sm_90 (sm_80: 163 KiB)


def modules(text):
    """(name, ptx) of every gpu.binary's assembly."""
    for m in re.finditer(r'gpu\.binary @(\w+)\s.*?assembly = "((?:[^"\\]|\\.)*)"',
                         text):
        ptx = re.sub(r"\\([0-9A-Fa-f]{2})",
                     lambda h: chr(int(h.group(1), 16)), m.group(2))
        yield m.group(1), ptx.replace('\\"', '"')


def resources(ptxas, arch, ptx):
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(ptx)
    try:
        out = subprocess.run([ptxas, "-v", f"-arch={arch}", "-o", os.devnull,
                              f.name], capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    if out.returncode != 0:
        sys.exit(f"ptxas failed:\n{out.stderr}")
    kernels, name = {}, None
    for line in out.stderr.splitlines():
        if m := re.search(r"Compiling entry function '(\w+)'", line):
            name = m.group(1)
            kernels[name] = dict(regs=0, spill_st=0, spill_ld=0, smem=0,
                                 stack=0)
        elif name and (m := re.search(
                r"(\d+) bytes stack frame, (\d+) bytes spill stores, "
                r"(\d+) bytes spill loads", line)):
            k = kernels[name]
            k["stack"], k["spill_st"], k["spill_ld"] = map(int, m.groups())
        elif name and (m := re.search(r"Used (\d+) registers", line)):
            kernels[name]["regs"] = int(m.group(1))
            if s := re.search(r"(\d+) bytes smem", line):
                kernels[name]["smem"] = int(s.group(1))
    return kernels


def main():
    p = argparse.ArgumentParser()
    p.add_argument("lowered")
    p.add_argument("--arch", default="sm_90")
    p.add_argument("--ptxas", default="/usr/local/cuda/bin/ptxas")
    p.add_argument("--top", type=int, default=10)
    o = p.parse_args()
    text = open(o.lowered).read()
    rows, problems = [], []
    for module, ptx in modules(text):
        for kernel, r in resources(o.ptxas, o.arch, ptx).items():
            rows.append((module, kernel, r))
            if r["regs"] > MAX_REGS_PER_THREAD or r["regs"] * BLOCK > REGS_PER_BLOCK:
                problems.append(f"{kernel}: {r['regs']} registers x {BLOCK} threads")
            if r["smem"] > SMEM_PER_BLOCK:
                problems.append(f"{kernel}: {r['smem']} bytes of shared memory")
            if r["spill_st"] or r["spill_ld"]:
                problems.append(f"{kernel}: spills {r['spill_st']} / {r['spill_ld']} bytes")
    if not rows:
        sys.exit("no gpu.binary with PTX in the input (--gpu-format=ptx?)")
    regs = sorted(r["regs"] for _, _, r in rows)
    print(f"{o.arch}: {len(rows)} kernels in {len(set(m for m, _, _ in rows))} "
          f"modules; registers per thread: median {regs[len(regs) // 2]}, "
          f"max {regs[-1]} (limit {min(MAX_REGS_PER_THREAD, REGS_PER_BLOCK // BLOCK)} "
          f"for blocks of {BLOCK}); spilling kernels: "
          f"{sum(1 for *_, r in rows if r['spill_st'] or r['spill_ld'])}; "
          f"max shared memory {max(r['smem'] for *_, r in rows)} B, "
          f"max stack {max(r['stack'] for *_, r in rows)} B")
    print(f"{'module':<22} {'kernel':<34} {'regs':>5} {'spill st/ld':>12} "
          f"{'smem':>6} {'stack':>6}")
    for module, kernel, r in sorted(rows, key=lambda x: -x[2]["regs"])[:o.top]:
        print(f"{module:<22} {kernel:<34} {r['regs']:>5} "
              f"{r['spill_st']:>5}/{r['spill_ld']:<6} {r['smem']:>6} {r['stack']:>6}")
    if problems:
        print("kernels that cannot launch as compiled, or spill:\n  "
              + "\n  ".join(problems))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
