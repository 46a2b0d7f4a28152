"""PyTorch's own f32 products, one line per shape read on stdin as
"batch M N K transA transB" (the format of bench/gemm_libraries.sh), timed
with torch.matmul on torch.set_num_threads(THREADS): what the peer's
products run at on this machine, beside lmc's (`./train --profile`) and
the libraries' alone (gemm_libraries.sh). Best of 5 means of 10 calls
after 5 warm-up calls. Run by bench/torch_gemm.sh."""
import os
import sys
import time

import torch

torch.set_num_threads(int(os.environ.get("THREADS", "1")))
print(f"PyTorch {torch.__version__}, {torch.get_num_threads()} thread(s)")
for line in sys.stdin:
    if not line.strip():
        continue
    batch, m, n, k, trans_a, trans_b = (int(x) for x in line.split())
    a = torch.randn(batch, k, m) if trans_a else torch.randn(batch, m, k)
    b = torch.randn(batch, n, k) if trans_b else torch.randn(batch, k, n)
    op_a = a.transpose(1, 2) if trans_a else a
    op_b = b.transpose(1, 2) if trans_b else b
    for _ in range(5):
        torch.matmul(op_a, op_b)
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(10):
            torch.matmul(op_a, op_b)
        best = min(best, (time.perf_counter() - start) / 10)
    flops = 2 * batch * m * n * k
    print(f"{batch} {m} {n} {k} {trans_a} {trans_b}: {best * 1e3:.3f} ms, "
          f"{flops / best / 1e9:.1f} GFLOP/s")
