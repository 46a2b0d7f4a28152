//===- bf16_libcall.cpp - The f32 -> bf16 helper LLVM may call -----------===//
//
// lmc converts f32 to bf16 with integer arithmetic of its own
// (lmc-expand-arith), but on CPUs without AVX512-BF16 LLVM's x86 backend
// still widens some bf16 vectors it loads and stores (masked tails, lane
// shuffles) to f32 and narrows them back through the libcall
// `__truncsfbf2`, which compiler-rt and libgcc 13 define and Debian 12's
// libgcc 12 does not: every `--precision bf16` executable for such a CPU
// failed to link. Every executable links lmc_kernels, so it defines the
// helper itself, with the rounding of lmc's own conversion.
//
// The x86-64 ABI passes and returns a bf16 in the low half of an XMM
// register, as it does _Float16: the result is returned as a _Float16 with
// the bf16's bits.
//
//===----------------------------------------------------------------------===//

#include "lmc/runtime/half.h"

#include <cstring>

#if defined(__x86_64__)
extern "C" _Float16 __truncsfbf2(float value) {
  const uint16_t bits = lmc::rt::floatToBf16(value);
  _Float16 result;
  std::memcpy(&result, &bits, sizeof result);
  return result;
}
#endif
