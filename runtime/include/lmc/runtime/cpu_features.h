//===- cpu_features.h - The x86-64 extensions an executable may need ------===//
//
// The compiler names, in LLVM's spelling, which of these its code for the
// chosen `--cpu` may use (lmc_target_cpu_features); the executable checks
// them with CPUID before the first step, so that a CPU without one gets a
// message instead of SIGILL. Header-only: both sides include it (the
// compiler does not link the runtime).
//
// Only extensions that LLVM's code generation can emit for plain loops are
// listed: AMX and the like are reached through intrinsics alone, which
// compiled models do not contain.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_CPU_FEATURES_H
#define LMC_RUNTIME_CPU_FEATURES_H

#include <cstdint>

namespace lmc::rt {

/// Which OS-enabled register state (XCR0) an extension needs besides its
/// CPUID bit.
enum class CpuState : uint8_t { None, Avx, Avx512 };

struct CpuFeature {
  const char *name; // LLVM's feature name (`-mattr`, `--cpu-features`)
  uint32_t leaf, subleaf;
  uint8_t reg; // 0 EAX, 1 EBX, 2 ECX, 3 EDX
  uint8_t bit;
  CpuState state;
};

inline constexpr CpuFeature kCpuFeatures[] = {
    {"sse3", 1, 0, 2, 0, CpuState::None},
    {"pclmul", 1, 0, 2, 1, CpuState::None},
    {"ssse3", 1, 0, 2, 9, CpuState::None},
    {"fma", 1, 0, 2, 12, CpuState::Avx},
    {"cx16", 1, 0, 2, 13, CpuState::None},
    {"sse4.1", 1, 0, 2, 19, CpuState::None},
    {"sse4.2", 1, 0, 2, 20, CpuState::None},
    {"movbe", 1, 0, 2, 22, CpuState::None},
    {"popcnt", 1, 0, 2, 23, CpuState::None},
    {"aes", 1, 0, 2, 25, CpuState::None},
    {"avx", 1, 0, 2, 28, CpuState::Avx},
    {"f16c", 1, 0, 2, 29, CpuState::Avx},
    {"bmi", 7, 0, 1, 3, CpuState::None},
    {"avx2", 7, 0, 1, 5, CpuState::Avx},
    {"bmi2", 7, 0, 1, 8, CpuState::None},
    {"avx512f", 7, 0, 1, 16, CpuState::Avx512},
    {"avx512dq", 7, 0, 1, 17, CpuState::Avx512},
    {"adx", 7, 0, 1, 19, CpuState::None},
    {"avx512ifma", 7, 0, 1, 21, CpuState::Avx512},
    {"avx512cd", 7, 0, 1, 28, CpuState::Avx512},
    {"sha", 7, 0, 1, 29, CpuState::None},
    {"avx512bw", 7, 0, 1, 30, CpuState::Avx512},
    {"avx512vl", 7, 0, 1, 31, CpuState::Avx512},
    {"avx512vbmi", 7, 0, 2, 1, CpuState::Avx512},
    {"avx512vbmi2", 7, 0, 2, 6, CpuState::Avx512},
    {"gfni", 7, 0, 2, 8, CpuState::None},
    {"vaes", 7, 0, 2, 9, CpuState::Avx},
    {"vpclmulqdq", 7, 0, 2, 10, CpuState::Avx},
    {"avx512vnni", 7, 0, 2, 11, CpuState::Avx512},
    {"avx512bitalg", 7, 0, 2, 12, CpuState::Avx512},
    {"avx512vpopcntdq", 7, 0, 2, 14, CpuState::Avx512},
    {"avx512fp16", 7, 0, 3, 23, CpuState::Avx512},
    {"avxvnni", 7, 1, 0, 4, CpuState::Avx},
    {"avx512bf16", 7, 1, 0, 5, CpuState::Avx512},
    {"lzcnt", 0x80000001u, 0, 2, 5, CpuState::None},
    {"sse4a", 0x80000001u, 0, 2, 6, CpuState::None},
    {"fma4", 0x80000001u, 0, 2, 16, CpuState::Avx},
};

/// The x86-64 microarchitecture levels, highest first, by the extensions
/// each adds to the one below (what the startup message recommends).
struct CpuLevel {
  const char *name;
  const char *adds; // comma-separated feature names of kCpuFeatures
};

inline constexpr CpuLevel kCpuLevels[] = {
    {"x86-64-v4", "avx512f,avx512bw,avx512cd,avx512dq,avx512vl"},
    {"x86-64-v3", "avx,avx2,bmi,bmi2,f16c,fma,lzcnt,movbe"},
    {"x86-64-v2", "cx16,popcnt,sse3,sse4.1,sse4.2,ssse3"},
};

} // namespace lmc::rt

#endif // LMC_RUNTIME_CPU_FEATURES_H
