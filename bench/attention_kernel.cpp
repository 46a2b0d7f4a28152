// The CPU attention kernel alone (runtime/kernels/attention.cpp): forward
// and backward times of lmc_rt_attention_f32 / _grad_f32 for causal masks
// at the benchmark GPT's shape (8 x 4 pairs, 128 tokens), GPT-2 124M's at
// 4 x 256 (48 pairs) and at 1 x 1024 (12 pairs), head width 64, each with
// the matrices dense ([pairs, rows, cols]) and as the compiler passes a
// GPT's (views inside the fused [B, T, 3, H, D] projection, the keys
// untransposed, out and the gradients [B, T, H, D] and [B, T, 3, H, D]),
// the exponentials recomputed by the backward or kept from the forward.
// Best of 7 calls after one warm-up, on the OpenMP threads
// OMP_NUM_THREADS gives.
// Built and run by bench/attention_kernel.sh.
#include "lmc/runtime/kernels.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <utility>
#include <vector>

int main() {
  struct Case {
    int64_t batch, heads, tokens;
  } cases[] = {{8, 4, 128}, {4, 12, 256}, {1, 12, 1024}};
  const int64_t D = 64;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (Case c : cases) {
    const int64_t B = c.batch, H = c.heads, P = B * H, T = c.tokens,
                  n = P * T * D;
    // Room for either layout: the views' projection holds q, k and v.
    std::vector<float> q(3 * n), kt(3 * n), v(3 * n), out(n),
        stats(P * T * 2), dout(n), dq(3 * n), dkt(3 * n), dv(3 * n);
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
    auto dense = [&](int64_t rows, int64_t cols) {
      return lmc_rt_matrix_layout{0, {0, rows * cols}, cols, 1};
    };
    const lmc_rt_matrix_layout rows = dense(T, D), cols = dense(D, T);
    const lmc_rt_attention_layout denseLayout{
        {1, P}, rows, cols, rows, rows, rows, rows, cols, rows};
    auto slice = [&](int64_t which) {
      return lmc_rt_matrix_layout{which * H * D, {T * 3 * H * D, D},
                                  3 * H * D, 1};
    };
    const lmc_rt_matrix_layout sq = slice(0), sk = slice(1), sv = slice(2),
                               skt{sk.offset, {sk.pair[0], sk.pair[1]}, 1,
                                   sk.row},
                               heads{0, {T * H * D, D}, H * D, 1};
    const lmc_rt_attention_layout views{{B, H}, sq, skt, sv, heads,
                                        heads,  sq, skt, sv};
    std::vector<float> exps(size_t(P * T * T));
    for (auto [layout, name] :
         {std::pair{&denseLayout, "dense"}, std::pair{&views, "views"}}) {
      // Recomputed exponentials (kept: null), then kept ones.
      for (float *kept : {(float *)nullptr, exps.data()}) {
        double forward = best([&] {
          lmc_rt_attention_f32(q.data(), kt.data(), v.data(), mask.data(),
                               out.data(), stats.data(), kept, layout, T, T,
                               D, D, scale);
        });
        double backward = best([&] {
          lmc_rt_attention_grad_f32(q.data(), kt.data(), v.data(),
                                    mask.data(), out.data(), stats.data(),
                                    kept, dout.data(), dq.data(), dkt.data(),
                                    dv.data(), layout, T, T, D, D, scale);
        });
        std::printf("%3lld pairs x %4lld tokens, %-5s, exponentials %-10s: "
                    "forward %8.3f ms, backward %8.3f ms\n",
                    (long long)P, (long long)T, name,
                    kept ? "kept" : "recomputed", forward, backward);
      }
    }
  }
}
