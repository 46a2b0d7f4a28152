//===- half.h - bf16 and f16 to f32 --------------------------------------===//
//
// Exact widenings (every bf16 and f16 value is an f32): the matmul
// kernels' inputs in mixed precision, and Hugging Face checkpoints stored
// in bf16/f16 loaded into f32 parameters (--init).
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_HALF_H
#define LMC_RUNTIME_HALF_H

#include <cstdint>
#include <cstring>

namespace lmc::rt {

inline float bf16ToFloat(uint16_t bits) {
  uint32_t wide = uint32_t(bits) << 16;
  float f;
  std::memcpy(&f, &wide, sizeof f);
  return f;
}

inline float f16ToFloat(uint16_t bits) {
  uint32_t sign = uint32_t(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  uint32_t wide;
  if (exponent == 0x1f) { // inf / nan
    wide = sign | 0x7f800000 | (mantissa << 13);
  } else if (exponent != 0) {
    wide = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    wide = sign;
  } else { // subnormal: normalize
    int shift = 0;
    while (!(mantissa & 0x400)) {
      mantissa <<= 1;
      ++shift;
    }
    wide = sign | (uint32_t(113 - shift) << 23) | ((mantissa & 0x3ff) << 13);
  }
  float f;
  std::memcpy(&f, &wide, sizeof f);
  return f;
}

/// f32 -> bf16 bits, rounded to nearest even; a NaN becomes the canonical
/// quiet NaN 0x7fc0 (sign kept), as lmc-expand-arith's conversion does.
inline uint16_t floatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return uint16_t(((bits >> 16) & 0x8000u) | 0x7fc0u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return uint16_t(bits >> 16);
}

} // namespace lmc::rt

#endif // LMC_RUNTIME_HALF_H
