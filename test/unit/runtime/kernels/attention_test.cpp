// lmc_rt_attention_f32 / lmc_rt_attention_grad_f32 against attention
// computed whole in double (the scores, the masked softmax, the product),
// and their gradients against central finite differences of that double
// reference: causal and arbitrary masks, more than one block of query
// rows, a row with every key masked (NaN, as the unfused softmax gives it;
// its gradient is NaN everywhere, there as here, so it is checked forward
// only), views inside a fused projection against dense blocks, the same
// bits with the exponentials kept by the forward as recomputed by the
// backward, and the same bits on 1 and 2 threads.
#include "finite_differences.h"
#include "on_threads.h"
#include "lmc/runtime/kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace {

struct Problem {
  int64_t pairs, T, S, D, Dv;
  float scale;
  std::vector<float> q, kt, v;
  std::vector<uint8_t> mask; // T x S, 1: masked
};

Problem makeProblem(int64_t pairs, int64_t T, int64_t S, int64_t D,
                    int64_t Dv, std::mt19937 &rng) {
  std::uniform_real_distribution<float> dist(-1, 1);
  Problem p{pairs, T, S, D, Dv, 1.0f / std::sqrt(float(D)), {}, {}, {}, {}};
  for (auto *x : {&p.q, &p.kt, &p.v}) {
    int64_t n = x == &p.q ? T * D : x == &p.kt ? D * S : S * Dv;
    x->resize(size_t(pairs * n));
    for (float &e : *x)
      e = 2 * dist(rng);
  }
  return p;
}

/// out (pairs x T x Dv) in double, whole: row by row over all keys.
std::vector<double> reference(const Problem &p, const std::vector<double> &q,
                              const std::vector<double> &kt,
                              const std::vector<double> &v) {
  std::vector<double> out(size_t(p.pairs * p.T * p.Dv));
  for (int64_t b = 0; b < p.pairs; ++b)
    for (int64_t i = 0; i < p.T; ++i) {
      std::vector<double> s(size_t(p.S));
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < p.S; ++j) {
        double dot = 0;
        for (int64_t d = 0; d < p.D; ++d)
          dot += q[b * p.T * p.D + i * p.D + d] * kt[b * p.D * p.S + d * p.S + j];
        s[j] = p.mask[i * p.S + j] ? -std::numeric_limits<double>::infinity()
                                   : dot * p.scale;
        max = std::max(max, s[j]);
      }
      double sum = 0;
      for (double &e : s)
        sum += (e = std::exp(e - max));
      for (int64_t c = 0; c < p.Dv; ++c) {
        double o = 0;
        for (int64_t j = 0; j < p.S; ++j)
          o += s[j] / sum * v[b * p.S * p.Dv + j * p.Dv + c];
        out[b * p.T * p.Dv + i * p.Dv + c] = o;
      }
    }
  return out;
}

std::vector<double> widen(const std::vector<float> &x) {
  return std::vector<double>(x.begin(), x.end());
}

struct Result {
  std::vector<float> out, stats, dq, dkt, dv;
};

/// Every matrix dense, [pairs, rows, cols].
lmc_rt_attention_layout denseLayout(const Problem &p) {
  auto dense = [&](int64_t rows, int64_t cols) {
    return lmc_rt_matrix_layout{0, {0, rows * cols}, cols, 1};
  };
  lmc_rt_matrix_layout q = dense(p.T, p.D), kt = dense(p.D, p.S),
                       v = dense(p.S, p.Dv), out = dense(p.T, p.Dv);
  return {{1, p.pairs}, q, kt, v, out, out, q, kt, v};
}

/// Forward and backward; with `keepExponentials` the backward reads the
/// forward's (a buffer of NaN before: an entry read but not written poisons
/// the gradients).
Result run(const Problem &p, const std::vector<float> &dout,
           bool keepExponentials = false) {
  const lmc_rt_attention_layout layout = denseLayout(p);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Result r;
  r.out.resize(size_t(p.pairs * p.T * p.Dv));
  r.stats.resize(size_t(p.pairs * p.T * 2));
  std::vector<float> exps;
  if (keepExponentials)
    exps.assign(size_t(p.pairs * p.T * p.S), nan);
  lmc_rt_attention_f32(p.q.data(), p.kt.data(), p.v.data(), p.mask.data(),
                       r.out.data(), r.stats.data(),
                       keepExponentials ? exps.data() : nullptr, &layout, p.T,
                       p.S, p.D, p.Dv, p.scale);
  // NaN before the call: every gradient entry must be written.
  r.dq.assign(p.q.size(), nan);
  r.dkt.assign(p.kt.size(), nan);
  r.dv.assign(p.v.size(), nan);
  lmc_rt_attention_grad_f32(p.q.data(), p.kt.data(), p.v.data(),
                            p.mask.data(), r.out.data(), r.stats.data(),
                            keepExponentials ? exps.data() : nullptr,
                            dout.data(), r.dq.data(), r.dkt.data(),
                            r.dv.data(), &layout, p.T, p.S, p.D, p.Dv,
                            p.scale);
  return r;
}

/// The same floats bit for bit (NaNs included).
void expectSameBits(const std::vector<float> &got,
                    const std::vector<float> &want, const char *name) {
  ASSERT_EQ(got.size(), want.size()) << name;
  for (size_t i = 0; i < got.size(); ++i) {
    uint32_t g, w;
    std::memcpy(&g, &got[i], sizeof g);
    std::memcpy(&w, &want[i], sizeof w);
    EXPECT_EQ(g, w) << name << "[" << i << "]: " << got[i] << " vs "
                    << want[i];
  }
}

/// The kept exponentials give the recomputed ones' results, bitwise.
void expectKeptSameAsRecomputed(const Problem &p,
                                const std::vector<float> &dout,
                                const Result &recomputed) {
  const Result kept = run(p, dout, /*keepExponentials=*/true);
  expectSameBits(kept.out, recomputed.out, "out");
  expectSameBits(kept.stats, recomputed.stats, "stats");
  expectSameBits(kept.dq, recomputed.dq, "dq");
  expectSameBits(kept.dkt, recomputed.dkt, "dkt");
  expectSameBits(kept.dv, recomputed.dv, "dv");
}

/// Checks the forward against the double reference and each gradient
/// entry against d(sum(out * dout)) / dx by central differences.
void check(const Problem &p, std::mt19937 &rng, bool gradients = true) {
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> dout(size_t(p.pairs * p.T * p.Dv));
  for (float &e : dout)
    e = dist(rng);
  Result r = run(p, dout);
  expectKeptSameAsRecomputed(p, dout, r);
  std::vector<double> q = widen(p.q), kt = widen(p.kt), v = widen(p.v);
  std::vector<double> want = reference(p, q, kt, v);
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(r.out[i])) << "out[" << i << "]";
      continue;
    }
    EXPECT_NEAR(r.out[i], want[i], 1e-5 * (1 + std::fabs(want[i])))
        << "out[" << i << "]";
  }
  if (!gradients)
    return;
  auto loss = [&](const std::vector<double> &q, const std::vector<double> &kt,
                  const std::vector<double> &v) {
    std::vector<double> out = reference(p, q, kt, v);
    double l = 0;
    for (size_t i = 0; i < out.size(); ++i)
      l += out[i] * dout[i];
    return l;
  };
  lmc::test::expectFiniteDifferences(
      [&] { return loss(q, kt, v); },
      {{&q, &r.dq, "dq"}, {&kt, &r.dkt, "dkt"}, {&v, &r.dv, "dv"}},
      /*h=*/1e-4, /*tolerance=*/2e-4);
}

std::vector<uint8_t> causal(int64_t T, int64_t S) {
  std::vector<uint8_t> mask(size_t(T * S));
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j < S; ++j)
      mask[i * S + j] = j > i;
  return mask;
}

TEST(Attention, CausalOverTwoBlocksOfQueries) {
  std::mt19937 rng(7);
  Problem p = makeProblem(2, 70, 70, 5, 3, rng);
  p.mask = causal(p.T, p.S);
  check(p, rng);
}

/// A random mask in which row 5 sees key 17 only and the block of rows
/// 64..66 only keys 40..44 (key 42 at least).
std::vector<uint8_t> arbitraryMask(int64_t T, int64_t S, std::mt19937 &rng) {
  std::bernoulli_distribution masked(0.4);
  std::vector<uint8_t> mask(size_t(T * S));
  for (auto &m : mask)
    m = masked(rng);
  for (int64_t j = 0; j < S; ++j) {
    mask[5 * S + j] = j != 17;
    for (int64_t i = 64; i < T; ++i)
      mask[i * S + j] = j < 40 || mask[i * S + j];
  }
  for (int64_t i = 0; i < T; ++i) // no row with every key masked
    mask[i * S + 42] = 0;
  mask[5 * S + 42] = 1;
  return mask;
}

TEST(Attention, ArbitraryMask) {
  std::mt19937 rng(11);
  Problem p = makeProblem(2, 67, 45, 4, 6, rng);
  p.mask = arbitraryMask(p.T, p.S, rng);
  check(p, rng);
}

TEST(Attention, RowWithEveryKeyMaskedIsNaN) {
  std::mt19937 rng(17);
  Problem p = makeProblem(2, 67, 45, 4, 6, rng);
  p.mask = arbitraryMask(p.T, p.S, rng);
  for (int64_t j = 0; j < p.S; ++j)
    p.mask[3 * p.S + j] = 1;
  check(p, rng, /*gradients=*/false);
}

TEST(Attention, NoMask) {
  std::mt19937 rng(5);
  Problem p = makeProblem(1, 9, 13, 8, 8, rng);
  p.mask.assign(size_t(p.T * p.S), 0);
  check(p, rng);
}

/// Rows that see the keys [i - window, i]: one run each, not starting at
/// key 0, and the block with the most keys is the middle one (the
/// backward overwrites its key columns first and zeroes the others).
TEST(Attention, SlidingWindowOverThreeBlocks) {
  std::mt19937 rng(19);
  Problem p = makeProblem(1, 140, 140, 3, 2, rng);
  p.mask.assign(size_t(p.T * p.S), 1);
  for (int64_t i = 0; i < p.T; ++i)
    for (int64_t j = std::max<int64_t>(0, i - 12); j <= i; ++j)
      p.mask[i * p.S + j] = 0;
  check(p, rng);
}

/// Key padding (the last keys masked for every row) with one row that sees
/// no key: the one-run path's empty row is NaN, the others exact.
TEST(Attention, PaddingMaskWithAnEmptyRow) {
  std::mt19937 rng(23);
  Problem p = makeProblem(2, 70, 45, 4, 6, rng);
  p.mask.assign(size_t(p.T * p.S), 0);
  for (int64_t i = 0; i < p.T; ++i)
    for (int64_t j = 40; j < p.S; ++j)
      p.mask[i * p.S + j] = 1;
  std::fill(p.mask.begin() + 66 * p.S, p.mask.begin() + 67 * p.S, 1);
  check(p, rng, /*gradients=*/false);
}

/// A NaN query makes its row's scores NaN: that row's output is NaN (as
/// the unfused softmax makes it), the other rows are unaffected.
TEST(Attention, NaNScoreReachesOnlyItsRow) {
  std::mt19937 rng(29);
  Problem p = makeProblem(1, 70, 70, 4, 3, rng);
  p.mask = causal(p.T, p.S);
  p.q[size_t(65 * p.D + 1)] = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> dout(size_t(p.T * p.Dv), 1.0f);
  Result r = run(p, dout);
  expectKeptSameAsRecomputed(p, dout, r);
  for (int64_t i = 0; i < p.T; ++i)
    for (int64_t c = 0; c < p.Dv; ++c)
      EXPECT_EQ(std::isnan(r.out[size_t(i * p.Dv + c)]), i == 65)
          << "out[" << i << ", " << c << "]";
}

/// A GPT's layout: q, k and v of pair (b, h) inside one [B, T, 3, H, D]
/// projection (the keys untransposed: kt's row stride 1), out and dout
/// [B, T, H, D], dq, dk and dv into one [B, T, 3, H, D] buffer as the
/// projection's gradient, each row followed by `pad` unused floats. The
/// same values as with dense blocks.
void checkViewsOfAFusedProjection(int64_t pad, bool keepExponentials) {
  std::mt19937 rng(31);
  const int64_t B = 2, H = 3, T = 70, D = 8;
  Problem p = makeProblem(B * H, T, T, D, D, rng);
  p.mask = causal(T, T);
  std::vector<float> dout(size_t(B * H * T * D));
  std::uniform_real_distribution<float> dist(-1, 1);
  for (float &e : dout)
    e = dist(rng);
  const Result want = run(p, dout);

  // Element (b, t, which, h, d) of the projection and of its gradient;
  // (b, t, h, d) of out and dout.
  const int64_t projRow = 3 * H * D + pad, headsRow = H * D + pad;
  auto proj = [&](int64_t b, int64_t t, int64_t which, int64_t h, int64_t d) {
    return size_t((b * T + t) * projRow + (which * H + h) * D + d);
  };
  auto heads = [&](int64_t b, int64_t t, int64_t h, int64_t d) {
    return size_t((b * T + t) * headsRow + h * D + d);
  };
  std::vector<float> qkv(size_t(B * T * projRow)),
      doutHeads(size_t(B * T * headsRow));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t d = 0; d < D; ++d) {
          int64_t pair = b * H + h;
          qkv[proj(b, t, 0, h, d)] = p.q[size_t((pair * T + t) * D + d)];
          qkv[proj(b, t, 1, h, d)] = p.kt[size_t((pair * D + d) * T + t)];
          qkv[proj(b, t, 2, h, d)] = p.v[size_t((pair * T + t) * D + d)];
          doutHeads[heads(b, t, h, d)] = dout[size_t((pair * T + t) * D + d)];
        }
  auto slice = [&](int64_t which) {
    return lmc_rt_matrix_layout{which * H * D, {T * projRow, D}, projRow, 1};
  };
  const lmc_rt_matrix_layout q = slice(0), k = slice(1), v = slice(2),
                             kt{k.offset, {k.pair[0], k.pair[1]}, 1, k.row},
                             out{0, {T * headsRow, D}, headsRow, 1};
  const lmc_rt_attention_layout layout{{B, H}, q, kt, v, out, out, q, kt, v};

  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> outHeads(doutHeads.size(), nan),
      stats(size_t(B * H * T * 2), nan), grad(qkv.size(), nan);
  std::vector<float> exps(keepExponentials ? size_t(B * H * T * T) : 0, nan);
  float *kept = keepExponentials ? exps.data() : nullptr;
  lmc_rt_attention_f32(qkv.data(), qkv.data(), qkv.data(), p.mask.data(),
                       outHeads.data(), stats.data(), kept, &layout, T, T, D,
                       D, p.scale);
  lmc_rt_attention_grad_f32(qkv.data(), qkv.data(), qkv.data(),
                            p.mask.data(), outHeads.data(), stats.data(), kept,
                            doutHeads.data(), grad.data(), grad.data(),
                            grad.data(), &layout, T, T, D, D, p.scale);
  auto near = [](float got, float expected) {
    return std::fabs(got - expected) <= 1e-5f * (1 + std::fabs(expected));
  };
  // The keys are read untransposed: the score sums may round differently.
  for (size_t i = 0; i < stats.size(); ++i)
    EXPECT_PRED2(near, stats[i], want.stats[i]) << "stats[" << i << "]";
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t d = 0; d < D; ++d) {
          size_t dense = size_t(((b * H + h) * T + t) * D + d);
          size_t denseKt = size_t(((b * H + h) * D + d) * T + t);
          EXPECT_PRED2(near, outHeads[heads(b, t, h, d)], want.out[dense]);
          EXPECT_PRED2(near, grad[proj(b, t, 0, h, d)], want.dq[dense]);
          EXPECT_PRED2(near, grad[proj(b, t, 1, h, d)], want.dkt[denseKt]);
          EXPECT_PRED2(near, grad[proj(b, t, 2, h, d)], want.dv[dense]);
        }
}

// Rows 72 and 24 floats apart: the kernel reads and writes them in place.
TEST(Attention, StridedViewsOfAFusedProjection) {
  checkViewsOfAFusedProjection(0, false);
  checkViewsOfAFusedProjection(0, true);
}

// Rows over 4000 floats apart (each matrix spans more than 1 MiB): the
// kernel copies each pair's operands dense and its results out.
TEST(Attention, ViewsWithRowsFarApartAreCopied) {
  checkViewsOfAFusedProjection(4000, false);
  checkViewsOfAFusedProjection(4000, true);
}

TEST(Attention, SameBitsOnOneAndTwoThreads) {
  std::mt19937 rng(13);
  Problem p = makeProblem(6, 130, 130, 16, 16, rng);
  p.mask = causal(p.T, p.S);
  std::vector<float> dout(size_t(p.pairs * p.T * p.Dv), 0.5f);
  const Result one = lmc::test::onThreads(1, [&] { return run(p, dout); });
  const Result two = lmc::test::onThreads(2, [&] { return run(p, dout); });
  EXPECT_EQ(one.out, two.out);
  EXPECT_EQ(one.stats, two.stats);
  EXPECT_EQ(one.dq, two.dq);
  EXPECT_EQ(one.dkt, two.dkt);
  EXPECT_EQ(one.dv, two.dv);
}

} // namespace
