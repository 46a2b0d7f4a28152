#include "base/cpu_check.h"

#include "lmc/runtime/cpu_features.h"

#include <gtest/gtest.h>

using namespace lmc::rt;

namespace {

#if defined(__x86_64__)
// libgcc's own CPUID decoding is the oracle for the extensions both know.
TEST(CpuCheck, AgreesWithTheCompilersCpuSupports) {
  EXPECT_EQ(cpuSupports("sse4.2"), bool(__builtin_cpu_supports("sse4.2")));
  EXPECT_EQ(cpuSupports("popcnt"), bool(__builtin_cpu_supports("popcnt")));
  EXPECT_EQ(cpuSupports("avx"), bool(__builtin_cpu_supports("avx")));
  EXPECT_EQ(cpuSupports("avx2"), bool(__builtin_cpu_supports("avx2")));
  EXPECT_EQ(cpuSupports("fma"), bool(__builtin_cpu_supports("fma")));
  EXPECT_EQ(cpuSupports("bmi2"), bool(__builtin_cpu_supports("bmi2")));
  EXPECT_EQ(cpuSupports("avx512f"), bool(__builtin_cpu_supports("avx512f")));
  EXPECT_EQ(cpuSupports("avx512bw"), bool(__builtin_cpu_supports("avx512bw")));
  EXPECT_EQ(cpuSupports("avx512vl"), bool(__builtin_cpu_supports("avx512vl")));
  EXPECT_EQ(cpuSupports("avx512bf16"),
            bool(__builtin_cpu_supports("avx512bf16")));
  EXPECT_EQ(cpuSupports("avx512vnni"),
            bool(__builtin_cpu_supports("avx512vnni")));
  EXPECT_EQ(cpuLevel() == "x86-64-v3" || cpuLevel() == "x86-64-v4",
            bool(__builtin_cpu_supports("x86-64-v3")));
  EXPECT_EQ(cpuLevel() == "x86-64-v4",
            bool(__builtin_cpu_supports("x86-64-v4")));
}
#endif

TEST(CpuCheck, EveryTableEntryIsUnique) {
  for (const CpuFeature &a : kCpuFeatures)
    for (const CpuFeature &b : kCpuFeatures)
      if (&a != &b)
        EXPECT_STRNE(a.name, b.name);
}

TEST(CpuCheck, AcceptsWhatThisCpuHasAndNamesWhatItLacks) {
  EXPECT_EQ(checkTargetCpu("x86-64", ""), "");
  std::string has;
  for (const CpuFeature &feature : kCpuFeatures)
    if (cpuSupports(feature.name))
      has += std::string(has.empty() ? "" : ",") + feature.name;
  EXPECT_EQ(checkTargetCpu("native", has), "");
  // A name no CPU reports stands for an extension this one lacks.
  std::string message =
      checkTargetCpu("futurelake", has + ",no-such-extension");
  EXPECT_EQ(message, "this executable was compiled for futurelake (needs "
                     "no-such-extension), this CPU (" +
                         cpuBrand() +
                         ") lacks: no-such-extension — recompile with --cpu " +
                         cpuLevel() + " or --cpu native");
  EXPECT_EQ(missingCpuFeatures("no-such-extension,,also-missing"),
            (std::vector<std::string>{"no-such-extension", "also-missing"}));
}

} // namespace
