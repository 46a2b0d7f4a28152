//===- cpu_check.cpp - Does this CPU run the compiled code? --------------===//

#include "base/cpu_check.h"

#include "lmc/runtime/cpu_features.h"

#include <cstring>
#include <sstream>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace lmc::rt {
namespace {

std::vector<std::string> splitCommas(const std::string &list) {
  std::vector<std::string> items;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty())
      items.push_back(item);
  return items;
}

#if defined(__x86_64__)
bool cpuidRegs(uint32_t leaf, uint32_t subleaf, uint32_t regs[4]) {
  return __get_cpuid_count(leaf, subleaf, &regs[0], &regs[1], &regs[2],
                           &regs[3]) != 0;
}

/// XCR0, the register state the OS saves; 0 without OSXSAVE.
uint64_t enabledState() {
  uint32_t regs[4];
  if (!cpuidRegs(1, 0, regs) || !(regs[2] & (1u << 27)))
    return 0;
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t(hi) << 32) | lo;
}

bool stateEnabled(CpuState state) {
  constexpr uint64_t kAvx = 0x6;      // SSE and AVX registers
  constexpr uint64_t kAvx512 = 0xe6;  // and opmask, ZMM upper halves, ZMM16-31
  switch (state) {
  case CpuState::None:
    return true;
  case CpuState::Avx:
    return (enabledState() & kAvx) == kAvx;
  case CpuState::Avx512:
    return (enabledState() & kAvx512) == kAvx512;
  }
  return false;
}
#endif

} // namespace

bool cpuSupports(const std::string &feature) {
#if defined(__x86_64__)
  for (const CpuFeature &f : kCpuFeatures) {
    if (feature != f.name)
      continue;
    uint32_t max[4];
    if (!cpuidRegs(f.leaf & 0x80000000u, 0, max) || max[0] < f.leaf)
      return false;
    uint32_t regs[4];
    if (!cpuidRegs(f.leaf, f.subleaf, regs))
      return false;
    return (regs[f.reg] >> f.bit & 1u) && stateEnabled(f.state);
  }
#else
  (void)feature;
#endif
  return false;
}

std::string cpuBrand() {
#if defined(__x86_64__)
  uint32_t regs[4];
  if (cpuidRegs(0x80000000u, 0, regs) && regs[0] >= 0x80000004u) {
    char brand[49] = {};
    for (uint32_t i = 0; i < 3; ++i) {
      cpuidRegs(0x80000002u + i, 0, regs);
      std::memcpy(brand + 16 * i, regs, 16);
    }
    std::string text(brand);
    size_t first = text.find_first_not_of(' ');
    size_t last = text.find_last_not_of(' ');
    if (first != std::string::npos)
      return text.substr(first, last - first + 1);
  }
#endif
  return "unknown CPU";
}

std::string cpuLevel() {
  // A level counts only with every level below it.
  std::string best = "x86-64";
  for (size_t i = std::size(kCpuLevels); i-- > 0;) {
    if (!missingCpuFeatures(kCpuLevels[i].adds).empty())
      break;
    best = kCpuLevels[i].name;
  }
  return best;
}

std::vector<std::string> missingCpuFeatures(const std::string &features) {
  std::vector<std::string> missing;
  for (const std::string &feature : splitCommas(features))
    if (!cpuSupports(feature))
      missing.push_back(feature);
  return missing;
}

std::string checkTargetCpu(const std::string &cpu,
                           const std::string &features) {
  std::vector<std::string> missing = missingCpuFeatures(features);
  if (missing.empty())
    return "";
  std::string lacks;
  for (const std::string &feature : missing)
    lacks += (lacks.empty() ? "" : ", ") + feature;
  return "this executable was compiled for " + cpu + " (needs " + lacks +
         "), this CPU (" + cpuBrand() + ") lacks: " + lacks +
         " — recompile with --cpu " + cpuLevel() + " or --cpu native";
}

} // namespace lmc::rt
