//===- peak.h - The peak FLOP/s behind MFU -------------------------------===//
//
// MFU is model FLOPs per second over the hardware's peak, as PaLM,
// Megatron, torchtitan and llm.c report it. The peak is the hardware's
// figure, not what a kernel happens to reach at startup: on a CPU, the
// cores the run uses × the FLOPs one core's vector units retire per cycle
// × its clock, both read off the core by register-only loops (a chain of
// dependent adds for the clock, independent FMAs of the widest vector
// width for FLOPs per cycle, rounded to the power of two the units
// deliver) — loops that touch no memory repeat to within the clock's own
// variation, where a measured sgemm varied by 30 % between starts. On a
// GPU, the streaming multiprocessors × their FLOPs per cycle for the
// compute capability × the peak clock. `--peak-flops` replaces either.
//
// What the matmul kernel reaches on a large product is still measured and
// printed beside it, as the achieved BLAS rate.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_PEAK_H
#define LMC_RUNTIME_PEAK_H

#include <string>

namespace lmc::rt {

struct PeakFlops {
  double flops = 0;   // FLOP/s; 0 when no peak is known (MFU not reported)
  std::string source; // how it was found, for the line printed at start
};

/// The peak of the hardware the model's products run on, for their
/// precision ("f32", "bf16", "f16"): the GPU's in a `--target cuda`
/// executable, else that of `threads` cores of this CPU (at most the cores
/// this process may run on).
PeakFlops hardwarePeakFlops(const std::string &precision, int threads);

/// Best FLOP/s of a few 512x512x512 lmc_rt_matmul_f32 calls (bf16 or f16:
/// the matching kernel; the GPU's cuBLAS on 4096^3 in a `--target cuda`
/// executable), after one warm-up call; about 50 ms on one thread, 200 on
/// several.
double measureMatmulFlops(const std::string &precision);

} // namespace lmc::rt

#endif // LMC_RUNTIME_PEAK_H
