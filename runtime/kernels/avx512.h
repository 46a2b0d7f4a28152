//===- avx512.h - Where the kernels' AVX-512 code runs ----------*- C++ -*-===//
//
// small_gemm.cpp and softmax_rows.cpp carry hand-written AVX-512 paths
// beside the ones other CPUs take; each picks its path once, here, and
// has an environment switch that runs the other CPUs' path on this one, so
// that the tests cover both.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_KERNELS_AVX512_H
#define LMC_RUNTIME_KERNELS_AVX512_H

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__)
/// A function compiled for AVX-512 whatever the file's target.
#define LMC_AVX512 __attribute__((target("avx512f")))
#endif

namespace lmc::rt {

/// Whether the AVX-512 path runs: on CPUs with AVX-512F, unless the
/// environment variable `variable` is `otherPath`.
inline bool runsAvx512(const char *variable, const char *otherPath) {
#if defined(__x86_64__)
  const char *choice = std::getenv(variable);
  if (choice && std::strcmp(choice, otherPath) == 0)
    return false;
  return bool(__builtin_cpu_supports("avx512f"));
#else
  (void)variable;
  (void)otherPath;
  return false;
#endif
}

} // namespace lmc::rt

#endif // LMC_RUNTIME_KERNELS_AVX512_H
