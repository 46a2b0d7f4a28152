//===- half.h - bf16 and f16 to f32 --------------------------------------===//
//
// Exact widenings (every bf16 and f16 value is an f32): the matmul
// kernels' inputs in mixed precision, and Hugging Face checkpoints stored
// in bf16/f16 loaded into f32 parameters (--init). The narrowings, rounded
// to nearest even, back the conversion helpers LLVM may call
// (kernels/half_libcalls.cpp).
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

/// f32 -> f16 bits, rounded to nearest even (subnormals included; from
/// 65520 up, infinity); a NaN becomes the quiet NaN 0x7e00 (sign kept).
inline uint16_t floatToF16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  const uint16_t sign = uint16_t((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u)
    return sign | 0x7e00u;
  if (magnitude >= 0x477ff000u) // 65520: halfway past the largest, 65504
    return sign | 0x7c00u;
  const int exponent = int(magnitude >> 23);
  if (exponent >= 113) { // normal: rebias, round away the 13 low bits
    uint32_t rebiased = magnitude - (112u << 23);
    rebiased += 0xfffu + ((rebiased >> 13) & 1u);
    return sign | uint16_t(rebiased >> 13);
  }
  if (exponent < 102) // below 2^-25, the halfway point to the least: zero
    return sign;
  // Subnormal: the 24-bit significand times 2^(exponent - 126).
  const uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
  const int shift = 126 - exponent;
  uint32_t rounded = significand >> shift;
  const uint32_t rest = significand & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1);
  if (rest > half || (rest == half && (rounded & 1u)))
    ++rounded;
  return sign | uint16_t(rounded);
}

} // namespace lmc::rt

#endif // LMC_RUNTIME_HALF_H
