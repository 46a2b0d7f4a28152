//===- half_libcalls.cpp - The bf16/f16 conversion helpers LLVM calls ----===//
//
// Where a CPU has no instruction for a conversion, LLVM's x86 backend calls
// a helper of compiler-rt's or libgcc's: `__truncsfbf2` (f32 -> bf16),
// `__truncsfhf2` and `__extendhfsf2` (f32 <-> f16, without F16C). lmc
// converts f32 to bf16 with integer arithmetic of its own
// (lmc-expand-arith), but the backend still widens some bf16 vectors it
// loads and stores (masked loop tails, lane shuffles) to f32 and narrows
// them back through `__truncsfbf2`, which Debian 12's libgcc 12 lacks: every
// `--precision bf16` executable for a CPU without AVX512-BF16 failed to
// link. Every executable links lmc_kernels, so it defines all three itself,
// rounding as lmc's own conversions do, and depends on no compiler's
// runtime for them whatever `--cpu` it was compiled for.
//
// The x86-64 ABI passes and returns a bf16 or f16 in the low 16 bits of an
// XMM register. A float whose low 16 bits are the value's is passed and
// returned in the same place (the upper bits of an argument are not
// defined; of a result, zero here); _Float16, the natural type, is not
// available to every compiler that builds the runtime (clang before 15,
// the fuzzing build).
//
//===----------------------------------------------------------------------===//

#include "lmc/runtime/half.h"

#include <cstring>

#if defined(__x86_64__)
namespace {

float inLowBits(uint16_t bits) {
  const uint32_t wide = bits;
  float register_;
  std::memcpy(&register_, &wide, sizeof register_);
  return register_;
}

uint16_t lowBits(float register_) {
  uint32_t wide;
  std::memcpy(&wide, &register_, sizeof wide);
  return uint16_t(wide);
}

} // namespace

extern "C" float __truncsfbf2(float value) {
  return inLowBits(lmc::rt::floatToBf16(value));
}

extern "C" float __truncsfhf2(float value) {
  return inLowBits(lmc::rt::floatToF16(value));
}

extern "C" float __extendhfsf2(float half) {
  return lmc::rt::f16ToFloat(lowBits(half));
}
#endif
