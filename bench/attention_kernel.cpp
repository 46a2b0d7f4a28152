// The CPU attention kernel alone (runtime/kernels/attention.cpp): forward
// and backward times of lmc_rt_attention_f32 / _grad_f32 for causal masks
// at the benchmark GPT's shape (8 x 4 pairs, 128 tokens), GPT-2 124M's at
// 4 x 256 (48 pairs) and at 1 x 1024 (12 pairs), head width 64. Best of 7
// calls after one warm-up, on the OpenMP threads OMP_NUM_THREADS gives.
// Built and run by bench/attention_kernel.sh.
#include "lmc/runtime/kernels.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

int main() {
  struct Case {
    int64_t pairs, tokens;
  } cases[] = {{32, 128}, {48, 256}, {12, 1024}};
  const int64_t D = 64;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (Case c : cases) {
    const int64_t P = c.pairs, T = c.tokens, n = P * T * D;
    std::vector<float> q(n), kt(n), v(n), out(n), stats(P * T * 2), dout(n),
        dq(n), dkt(n), dv(n);
    for (auto *x : {&q, &kt, &v, &dout})
      for (float &e : *x)
        e = dist(rng);
    std::vector<uint8_t> mask(size_t(T * T));
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = 0; j < T; ++j)
        mask[size_t(i * T + j)] = j > i;
    const float scale = 1.0f / std::sqrt(float(D));
    auto best = [](auto call) {
      call();
      double ms = 1e30;
      for (int r = 0; r < 7; ++r) {
        auto start = std::chrono::steady_clock::now();
        call();
        ms = std::min(ms, std::chrono::duration<double, std::milli>(
                              std::chrono::steady_clock::now() - start)
                              .count());
      }
      return ms;
    };
    double forward = best([&] {
      lmc_rt_attention_f32(q.data(), kt.data(), v.data(), mask.data(),
                           out.data(), stats.data(), P, T, T, D, D, scale);
    });
    double backward = best([&] {
      lmc_rt_attention_grad_f32(q.data(), kt.data(), v.data(), mask.data(),
                                out.data(), stats.data(), dout.data(),
                                dq.data(), dkt.data(), dv.data(), P, T, T, D,
                                D, scale);
    });
    std::printf("%3lld pairs x %4lld tokens: forward %8.3f ms, backward "
                "%8.3f ms\n",
                (long long)P, (long long)T, forward, backward);
  }
}
