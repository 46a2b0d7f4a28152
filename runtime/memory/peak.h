//===- peak.h - The default peak FLOP/s behind MFU -----------------------===//
//
// Without --peak-flops, MFU is reported against what this machine's matmul
// kernel reaches on a 512^3 product, measured in a fraction of a second at
// startup with the run's thread count and the model's matmul precision —
// on the GPU for a --target cuda executable (cuBLAS, 4096^3).
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_PEAK_H
#define LMC_RUNTIME_PEAK_H

#include <string>

namespace lmc::rt {

/// Best FLOP/s of a few 512x512x512 lmc_rt_matmul_f32 calls (bf16 or f16:
/// the matching kernel), after one warm-up call; about 50 ms on one
/// thread, 200 on several.
double measureMatmulFlops(const std::string &precision);

} // namespace lmc::rt

#endif // LMC_RUNTIME_PEAK_H
