"""Prints the name of a CPU (LLVM's, as `lmc --cpu` takes it) with an
extension this machine lacks, so that a test can see an executable refuse
to start here. No x86-64 CPU so far has both Intel's AVX512-FP16 (Sapphire
Rapids and later) and AMD's SSE4a (every AMD CPU since K10)."""
import sys

flags = set()
with open("/proc/cpuinfo") as cpuinfo:
    for line in cpuinfo:
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
            break
if "avx512_fp16" not in flags:
    print("sapphirerapids")
elif "sse4a" not in flags:
    print("znver3")
else:
    sys.exit("this CPU has both avx512_fp16 and sse4a: no CPU to pick")
