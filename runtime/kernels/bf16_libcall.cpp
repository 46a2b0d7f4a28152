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
// The x86-64 ABI returns a bf16 in the low 16 bits of XMM0. A float whose
// low 16 bits are the bf16's (and whose upper ones are zero) is returned in
// the same place; _Float16, the natural type, is not available to every
// compiler that builds the runtime (clang before 15, the fuzzing build).
//
//===----------------------------------------------------------------------===//

#include "lmc/runtime/half.h"

#include <cstring>

#if defined(__x86_64__)
extern "C" float __truncsfbf2(float value) {
  const uint32_t bits = lmc::rt::floatToBf16(value);
  float result;
  std::memcpy(&result, &bits, sizeof result);
  return result;
}
#endif
