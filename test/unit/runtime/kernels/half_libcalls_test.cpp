#include "lmc/runtime/half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

#if defined(__x86_64__)
// As runtime/kernels/half_libcalls.cpp defines them: a bf16's or f16's
// bits are the low 16 of the register.
extern "C" float __truncsfbf2(float value);
extern "C" float __truncsfhf2(float value);
extern "C" float __extendhfsf2(float half);

namespace {

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t viaLibcall(float f) {
  const uint32_t bits = bitsOf(__truncsfbf2(f));
  EXPECT_EQ(bits >> 16, 0u) << "upper bits of the returned register";
  return uint16_t(bits);
}

uint16_t toF16(float f) {
  const uint32_t bits = bitsOf(__truncsfhf2(f));
  EXPECT_EQ(bits >> 16, 0u) << "upper bits of the returned register";
  return uint16_t(bits);
}

/// The nearest f16 by distance in double arithmetic, ties to the even
/// pattern: positive finite f16 patterns 0x0000-0x7bff are in increasing
/// order of value, so a binary search finds the two neighbours; infinity
/// counts as 2^16, where IEEE rounding puts the next step past 65504.
uint16_t nearestF16(float f) {
  const double x = std::fabs(double(f));
  auto value = [](uint32_t pattern) {
    return pattern == 0x7c00u ? 65536.0 : double(lmc::rt::f16ToFloat(uint16_t(pattern)));
  };
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  if (x >= 65536.0)
    return sign | 0x7c00;
  uint32_t lo = 0, hi = 0x7c00; // value(lo) <= x < value(hi)
  while (hi - lo > 1) {
    uint32_t mid = (lo + hi) / 2;
    (value(mid) <= x ? lo : hi) = mid;
  }
  const double dLo = x - value(lo), dHi = value(hi) - x;
  if (dLo != dHi)
    return sign | uint16_t(dLo < dHi ? lo : hi);
  return sign | uint16_t((lo & 1u) ? hi : lo);
}

/// The nearest bf16 by distance in double arithmetic (ties to the even
/// mantissa; past the largest finite bf16's halfway point, infinity): an
/// oracle independent of the bit trick under test.
uint16_t nearestBf16(float f) {
  const uint32_t u = bitsOf(f);
  const uint16_t down = uint16_t(u >> 16), up = uint16_t(down + 1);
  if ((u & 0xffffu) == 0)
    return down;
  const double x = f;
  const double lo = lmc::rt::bf16ToFloat(down);
  const double hi = (up & 0x7fffu) == 0x7f80u
                        ? std::copysign(std::ldexp(1.0, 128), x)
                        : double(lmc::rt::bf16ToFloat(up));
  const double dLo = std::fabs(x - lo), dHi = std::fabs(hi - x);
  if (dLo != dHi)
    return dLo < dHi ? down : up;
  return (down & 1u) ? up : down;
}

TEST(HalfLibcalls, Bf16RoundsToNearestEven) {
  EXPECT_EQ(viaLibcall(1.0f), 0x3f80);
  EXPECT_EQ(viaLibcall(floatOf(0x3f808000u)), 0x3f80); // tie, even below
  EXPECT_EQ(viaLibcall(floatOf(0x3f818000u)), 0x3f82); // tie, odd below
  EXPECT_EQ(viaLibcall(floatOf(0x3f808001u)), 0x3f81);
  EXPECT_EQ(viaLibcall(floatOf(0x7f7fffffu)), 0x7f80); // FLT_MAX -> inf
  EXPECT_EQ(viaLibcall(-INFINITY), 0xff80);
  EXPECT_EQ(viaLibcall(floatOf(0x00000001u)), 0x0000); // tiny denormal
  EXPECT_EQ(viaLibcall(std::nanf("")), 0x7fc0);
  EXPECT_EQ(viaLibcall(-std::nanf("")), 0xffc0);
  EXPECT_EQ(viaLibcall(floatOf(0x7f800001u)), 0x7fc0); // signaling NaN
  std::mt19937 rng(3);
  for (int i = 0; i < 200000; ++i) {
    float f = floatOf(rng());
    if (std::isnan(f))
      continue;
    ASSERT_EQ(viaLibcall(f), nearestBf16(f)) << std::hex << bitsOf(f);
  }
}

TEST(HalfLibcalls, F16RoundsToNearestEvenAndWidensExactly) {
  EXPECT_EQ(toF16(1.0f), 0x3c00);
  EXPECT_EQ(toF16(65504.0f), 0x7bff);
  EXPECT_EQ(toF16(65519.99f), 0x7bff);
  EXPECT_EQ(toF16(65520.0f), 0x7c00); // the tie rounds to even: infinity
  EXPECT_EQ(toF16(-INFINITY), 0xfc00);
  EXPECT_EQ(toF16(std::ldexp(1.0f, -24)), 0x0001); // the least subnormal
  EXPECT_EQ(toF16(std::ldexp(1.0f, -25)), 0x0000); // its half: tie to even
  EXPECT_EQ(toF16(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(toF16(std::ldexp(3.0f, -25)), 0x0002); // 1.5 ulp: tie to even
  EXPECT_EQ(toF16(std::nanf("")), 0x7e00);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-30, 17);
  for (int i = 0; i < 200000; ++i) {
    float f = std::ldexp(mantissa(rng), exponent(rng)) * (i % 2 ? -1 : 1);
    ASSERT_EQ(toF16(f), nearestF16(f)) << std::hex << bitsOf(f);
  }
  // Every f16 widens exactly and narrows back to itself; the upper bits
  // of the argument's register are ignored.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu))
      continue; // NaNs
    float wide = __extendhfsf2(floatOf(0xabcd0000u | h));
    ASSERT_EQ(bitsOf(wide), bitsOf(lmc::rt::f16ToFloat(uint16_t(h)))) << h;
    ASSERT_EQ(toF16(wide), h) << h;
  }
}

} // namespace
#endif
