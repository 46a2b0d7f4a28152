//===- peak.cpp - The peak FLOP/s behind MFU -----------------------------===//

#include "memory/peak.h"

#include "base/cpu_check.h"
#include "memory/device_hooks.h"

#include "lmc/runtime/kernels.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <sched.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace lmc::rt {
namespace {

using Clock = std::chrono::steady_clock;

/// The shortest of `windows` timings of `run()` in seconds: the core's own
/// speed, not a moment the host held the thread off it.
template <typename Run> double fastest(int windows, Run run) {
  double best = 0;
  for (int w = 0; w < windows; ++w) {
    Clock::time_point start = Clock::now();
    run();
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (seconds > 0 && (best == 0 || seconds < best))
      best = seconds;
  }
  return best;
}

/// FLOPs one core retires per cycle and its clock in Hz, as the register
/// loops below read them (0, 0 where they cannot: not x86-64).
struct CorePeak {
  double flopsPerCycle = 0;
  double hertz = 0;
  std::string units; // "AVX-512 FMA", "AVX2 FMA", "AVX512-BF16 dot products"
};

/// The cores this process may run on (its affinity mask), at least 1.
int usableCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0)
    return 1;
  return std::max(1, CPU_COUNT(&set));
}

#if defined(__x86_64__)

constexpr int64_t kIterations = 1 << 19; // about 1-2 ms per window
constexpr int kWindows = 12;

/// A chain of 8 dependent register adds per iteration: one cycle each on
/// every x86-64 core (a register operand, not an immediate, which newer
/// cores may fold at rename), so cycles = 8 × iterations.
void addChain(int64_t iterations) {
  uint64_t x = 0, one = 1;
  __asm__ volatile("1:\n\t"
                   "addq %2, %0\n\taddq %2, %0\n\taddq %2, %0\n\taddq %2, %0\n\t"
                   "addq %2, %0\n\taddq %2, %0\n\taddq %2, %0\n\taddq %2, %0\n\t"
                   "decq %1\n\t"
                   "jnz 1b"
                   : "+r"(x), "+r"(iterations)
                   : "r"(one)
                   : "cc");
}

double measureHertz() {
  return 8.0 * kIterations / fastest(kWindows, [] { addChain(kIterations); });
}

// One throughput loop: twelve independent accumulators of type VEC (more
// than the FMA latency, 4 cycles, × the FMA units, 2, of any x86-64 core:
// the loop is bound by throughput), each started at SPLAT(1 + k) and
// updated by STEP(a) every iteration, then summed with ADD and one lane
// kept through FIRST, so that nothing is optimized away. Used inside
// functions with the loop's target attribute (the intrinsics need it).
#define LMC_THROUGHPUT_LOOP(VEC, SPLAT, STEP, ADD, FIRST, iterations)          \
  do {                                                                         \
    VEC a[12];                                                                 \
    for (int k = 0; k < 12; ++k)                                               \
      a[k] = SPLAT(1.0f + float(k));                                           \
    for (int64_t i = 0; i < (iterations); ++i) {                               \
      a[0] = STEP(a[0]); a[1] = STEP(a[1]); a[2] = STEP(a[2]);                 \
      a[3] = STEP(a[3]); a[4] = STEP(a[4]); a[5] = STEP(a[5]);                 \
      a[6] = STEP(a[6]); a[7] = STEP(a[7]); a[8] = STEP(a[8]);                 \
      a[9] = STEP(a[9]); a[10] = STEP(a[10]); a[11] = STEP(a[11]);             \
    }                                                                          \
    VEC sum = a[0];                                                            \
    for (int k = 1; k < 12; ++k)                                               \
      sum = ADD(sum, a[k]);                                                    \
    volatile float keep = FIRST(sum);                                          \
    (void)keep;                                                                \
  } while (false)

__attribute__((target("avx512f"))) float firstLane512(__m512 v) {
  return _mm512_cvtss_f32(v);
}

/// FLOPs of `iterations` of twelve independent 512-bit f32 FMAs.
__attribute__((target("avx512f"))) double fma512(int64_t iterations) {
  const __m512 m = _mm512_set1_ps(0.9999999f), c = _mm512_set1_ps(1e-7f);
  auto step = [&](__m512 v) __attribute__((target("avx512f"))) {
    return _mm512_fmadd_ps(v, m, c);
  };
  LMC_THROUGHPUT_LOOP(__m512, _mm512_set1_ps, step, _mm512_add_ps,
                      firstLane512, iterations);
  return double(iterations) * 12 * 16 * 2;
}

/// FLOPs of `iterations` of twelve independent 256-bit f32 FMAs.
__attribute__((target("avx2,fma"))) double fma256(int64_t iterations) {
  const __m256 m = _mm256_set1_ps(0.9999999f), c = _mm256_set1_ps(1e-7f);
  auto step = [&](__m256 v) __attribute__((target("avx2,fma"))) {
    return _mm256_fmadd_ps(v, m, c);
  };
  auto first = [](__m256 v) __attribute__((target("avx2,fma"))) {
    return _mm256_cvtss_f32(v);
  };
  LMC_THROUGHPUT_LOOP(__m256, _mm256_set1_ps, step, _mm256_add_ps, first,
                      iterations);
  return double(iterations) * 12 * 8 * 2;
}

/// FLOPs of `iterations` of twelve independent bf16 dot products (each
/// f32 lane adds two products: 64 FLOPs per instruction).
__attribute__((target("avx512f,avx512bf16"))) double
dotBf16(int64_t iterations) {
  const __m512bh x =
      _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f), _mm512_set1_ps(1e-3f));
  auto step = [&](__m512 v) __attribute__((target("avx512f,avx512bf16"))) {
    return _mm512_dpbf16_ps(v, x, x);
  };
  LMC_THROUGHPUT_LOOP(__m512, _mm512_set1_ps, step, _mm512_add_ps,
                      firstLane512, iterations);
  return double(iterations) * 12 * 16 * 4;
}

/// SSE2's multiply and add, for an x86-64 core without FMA.
double mulAdd128(int64_t iterations) {
  const __m128 m = _mm_set1_ps(0.9999999f), c = _mm_set1_ps(1e-7f);
  auto step = [&](__m128 v) { return _mm_add_ps(_mm_mul_ps(v, m), c); };
  LMC_THROUGHPUT_LOOP(__m128, _mm_set1_ps, step, _mm_add_ps, _mm_cvtss_f32,
                      iterations);
  return double(iterations) * 12 * 4 * 2;
}
#undef LMC_THROUGHPUT_LOOP

/// CPUID leaf 7's AMX bits (not in kCpuFeatures: compiled loops never use
/// AMX, only libraries' kernels do).
bool hasAmx(bool fp16) {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid_count(7, fp16 ? 1 : 0, &eax, &ebx, &ecx, &edx))
    return false;
  return fp16 ? (eax >> 21 & 1u) : (edx >> 22 & 1u);
}

/// The power of two nearest to `x` (FLOPs per cycle: vector lanes × 2 ×
/// units, which a measurement misses by the clock's drift).
double nearestPowerOfTwo(double x) { return std::exp2(std::round(std::log2(x))); }

#endif // __x86_64__

/// This core's FLOPs per cycle for `precision`'s products, and its clock.
CorePeak measureCorePeak(const std::string &precision) {
  CorePeak core;
#if defined(__x86_64__)
  core.hertz = measureHertz();
  // Products in bf16/f16 on tiles: the vendor's figure, not measured
  // (a tile instruction needs the OS's permission first).
  if ((precision == "bf16" && hasAmx(false)) ||
      (precision == "f16" && hasAmx(true))) {
    core.flopsPerCycle = 1024;
    core.units = precision == "bf16" ? "AMX-BF16 tiles" : "AMX-FP16 tiles";
    return core;
  }
  double (*loop)(int64_t) = mulAdd128;
  core.units = "SSE multiplies and adds";
  if (precision == "bf16" && cpuSupports("avx512bf16")) {
    loop = dotBf16;
    core.units = "AVX512-BF16 dot products";
  } else if (cpuSupports("avx512f")) {
    loop = fma512;
    core.units = "AVX-512 FMA";
  } else if (cpuSupports("avx2") && cpuSupports("fma")) {
    loop = fma256;
    core.units = "AVX2 FMA";
  }
  double flops = loop(kIterations / 8); // the vector units' warm-up
  double seconds = fastest(kWindows, [&] { flops = loop(kIterations); });
  core.flopsPerCycle = nearestPowerOfTwo(flops / seconds / core.hertz);
#else
  (void)precision;
#endif
  return core;
}

} // namespace

PeakFlops hardwarePeakFlops(const std::string &precision, int threads) {
  PeakFlops peak;
  char text[256] = "";
  if (lmc_rt_device_peak_flops) {
    peak.flops = lmc_rt_device_peak_flops(precision.c_str(), text, sizeof text);
    peak.source = text;
    return peak;
  }
  CorePeak core = measureCorePeak(precision);
  if (core.flopsPerCycle <= 0) {
    peak.source = "no peak is known for this CPU";
    return peak;
  }
  int cores = std::max(1, std::min(threads, usableCores()));
  peak.flops = cores * core.flopsPerCycle * core.hertz;
  std::snprintf(text, sizeof text,
                "%d core%s x %.0f %s FLOP/cycle (%s) x %.2f GHz", cores,
                cores == 1 ? "" : "s", core.flopsPerCycle, precision.c_str(),
                core.units.c_str(), core.hertz / 1e9);
  peak.source = text;
  return peak;
}

double measureMatmulFlops(const std::string &precision) {
  // A --target cuda executable: the GPU's matmul (cuBLAS).
  if (lmc_rt_device_matmul_flops)
    return lmc_rt_device_matmul_flops(precision.c_str());
  constexpr int64_t n = 512;
  constexpr double flops = 2.0 * n * n * n;
  const bool low = precision == "bf16" || precision == "f16";
  // 0x3c00 is 1.0 in f16, ~1.0e-2 in bf16: finite products either way.
  std::vector<uint16_t> a16(low ? n * n : 0, 0x3c00), b16(a16);
  std::vector<float> a(low ? 0 : n * n, 0.5f), b(a), c(n * n, 0.0f);
  auto multiply = [&] {
    if (precision == "bf16")
      lmc_rt_matmul_bf16(a16.data(), b16.data(), c.data(), 1, n, n, n, 0, 0, 1);
    else if (precision == "f16")
      lmc_rt_matmul_f16(a16.data(), b16.data(), c.data(), 1, n, n, n, 0, 0, 1);
    else
      lmc_rt_matmul_f32(a.data(), b.data(), c.data(), 1, n, n, n, 0, 0, 1);
  };
  multiply(); // thread pool start-up, page faults
  // On several threads a short window sometimes saw one of them held off
  // its core by the host (a shared 2-core VM): the best of a longer
  // window is the machine's.
  const bool threaded = lmc_rt_thread_count() > 1;
  const int maxReps = threaded ? 200 : 20;
  double best = 0;
  const Clock::time_point deadline =
      Clock::now() + std::chrono::milliseconds(threaded ? 200 : 50);
  for (int rep = 0; rep < maxReps && (rep < 3 || Clock::now() < deadline);
       ++rep) {
    Clock::time_point start = Clock::now();
    multiply();
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (seconds > 0)
      best = std::max(best, flops / seconds);
  }
  return best;
}

} // namespace lmc::rt
