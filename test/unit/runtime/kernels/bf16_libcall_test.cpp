#include "lmc/runtime/half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

#if defined(__x86_64__)
// As runtime/kernels/bf16_libcall.cpp defines it: the bf16's bits are the
// low 16 of the returned register.
extern "C" float __truncsfbf2(float value);

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

TEST(Bf16Libcall, RoundsToNearestEven) {
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

} // namespace
#endif
