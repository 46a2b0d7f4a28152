// lmc_rt_layer_norm_f32 / lmc_rt_layer_norm_grad_f32 against layer
// normalization computed in double, and the gradients against central
// finite differences of that reference: widths with and without a tail of
// fewer than 16 columns, rows over several chunks of the scale and bias
// gradients, a cotangent accumulated into dx, and the same bits on 1 and 2
// threads.
#include "finite_differences.h"
#include "on_threads.h"
#include "lmc/runtime/kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace {

struct Problem {
  int64_t rows, C;
  float epsilon;
  std::vector<float> x, scale, bias, dy;
};

Problem makeProblem(int64_t rows, int64_t C, std::mt19937 &rng) {
  std::uniform_real_distribution<float> dist(-1, 1);
  Problem p{rows, C, 1e-5f, {}, {}, {}, {}};
  p.x.resize(size_t(rows * C));
  p.dy.resize(p.x.size());
  p.scale.resize(size_t(C));
  p.bias.resize(size_t(C));
  for (float &e : p.x)
    e = 3 * dist(rng) + 0.5f; // rows with a mean away from 0
  for (auto *v : {&p.dy, &p.scale, &p.bias})
    for (float &e : *v)
      e = dist(rng);
  return p;
}

/// sum(y * dy) in double, y the layer norm of x.
double loss(const Problem &p, const std::vector<double> &x,
            const std::vector<double> &scale, const std::vector<double> &bias,
            std::vector<double> *y = nullptr) {
  double l = 0;
  for (int64_t r = 0; r < p.rows; ++r) {
    const double *xr = x.data() + r * p.C;
    double mean = 0, var = 0;
    for (int64_t j = 0; j < p.C; ++j)
      mean += xr[j];
    mean /= double(p.C);
    for (int64_t j = 0; j < p.C; ++j)
      var += (xr[j] - mean) * (xr[j] - mean);
    var /= double(p.C);
    double rstd = 1 / std::sqrt(var + double(p.epsilon));
    for (int64_t j = 0; j < p.C; ++j) {
      double out = (xr[j] - mean) * rstd * scale[j] + bias[j];
      if (y)
        (*y)[size_t(r * p.C + j)] = out;
      l += out * p.dy[size_t(r * p.C + j)];
    }
  }
  return l;
}

struct Result {
  std::vector<float> y, stats, dx, dscale, dbias;
};

/// Forward and backward; dx plus `accumulate` unless it is null.
Result run(const Problem &p, const float *accumulate = nullptr) {
  Result r;
  r.y.resize(p.x.size());
  r.stats.resize(size_t(2 * p.rows));
  r.dx.resize(p.x.size());
  r.dscale.assign(size_t(p.C), NAN); // every entry must be written
  r.dbias.assign(size_t(p.C), NAN);
  lmc_rt_layer_norm_f32(p.x.data(), p.scale.data(), p.bias.data(),
                        r.y.data(), r.stats.data(), p.rows, p.C, p.epsilon);
  lmc_rt_layer_norm_grad_f32(p.x.data(), p.scale.data(), r.stats.data(),
                             p.dy.data(), accumulate, r.dx.data(),
                             r.dscale.data(),
                             r.dbias.data(), p.rows, p.C);
  return r;
}

void check(const Problem &p) {
  Result r = run(p);
  std::vector<double> x(p.x.begin(), p.x.end()),
      scale(p.scale.begin(), p.scale.end()),
      bias(p.bias.begin(), p.bias.end()), y(p.x.size());
  loss(p, x, scale, bias, &y);
  for (size_t i = 0; i < y.size(); ++i)
    EXPECT_NEAR(r.y[i], y[i], 2e-5 * (1 + std::fabs(y[i]))) << "y[" << i << "]";
  for (int64_t row = 0; row < p.rows; ++row) {
    double mean = 0;
    for (int64_t j = 0; j < p.C; ++j)
      mean += x[size_t(row * p.C + j)];
    mean /= double(p.C);
    EXPECT_NEAR(r.stats[size_t(2 * row)], mean, 1e-5 * (1 + std::fabs(mean)));
  }
  lmc::test::expectFiniteDifferences(
      [&] { return loss(p, x, scale, bias); },
      {{&x, &r.dx, "dx"}, {&scale, &r.dscale, "dscale"},
       {&bias, &r.dbias, "dbias"}},
      /*h=*/1e-3, /*tolerance=*/1e-4);
}

// 37 columns: two lanes' worth and a tail of 5; 70 rows: three chunks, the
// last partial.
TEST(LayerNorm, MatchesDoubleAndFiniteDifferences) {
  std::mt19937 rng(3);
  check(makeProblem(70, 37, rng));
}

// Whole lanes only; one row.
TEST(LayerNorm, WholeLanesOneRow) {
  std::mt19937 rng(5);
  check(makeProblem(1, 64, rng));
}

// The accumulated cotangent is added to each dx as the row is written:
// the same floats as adding it afterwards.
TEST(LayerNorm, AccumulatesIntoTheInputGradient) {
  std::mt19937 rng(11);
  Problem p = makeProblem(40, 21, rng);
  std::vector<float> residual(p.x.size());
  std::uniform_real_distribution<float> dist(-1, 1);
  for (float &e : residual)
    e = dist(rng);
  Result plain = run(p), accumulated = run(p, residual.data());
  for (size_t i = 0; i < residual.size(); ++i)
    EXPECT_EQ(accumulated.dx[i], residual[i] + plain.dx[i]) << "dx[" << i << "]";
  EXPECT_EQ(accumulated.dscale, plain.dscale);
  EXPECT_EQ(accumulated.dbias, plain.dbias);
}

TEST(LayerNorm, SameBitsOnOneAndTwoThreads) {
  std::mt19937 rng(7);
  Problem p = makeProblem(200, 96, rng);
  const Result one = lmc::test::onThreads(1, [&] { return run(p); });
  const Result two = lmc::test::onThreads(2, [&] { return run(p); });
  EXPECT_EQ(one.y, two.y);
  EXPECT_EQ(one.stats, two.stats);
  EXPECT_EQ(one.dx, two.dx);
  EXPECT_EQ(one.dscale, two.dscale);
  EXPECT_EQ(one.dbias, two.dbias);
}

} // namespace
