// lmc_rt_conv_f32 and its two adjoints against the definition computed in
// double by direct loops over (n, f, o..., c, k...) — the forward's sum, and
// each adjoint as the scatter of that same sum onto the input or the weight
// — over 1-D to 3-D geometries with strides, dilations, asymmetric
// padding, groups and depthwise channels, 1 x 1 kernels, products big
// enough for oneDNN and parts, images side by side in one product, and the
// weight gradient's windows in chunks; and the same bits on 1 and 2
// threads.
#include "on_threads.h"
#include "lmc/runtime/kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace {

struct Case {
  const char *name;
  int64_t batch, channels, filters, groups;
  std::vector<int64_t> input, kernel, strides, dilations, padLow, padHigh;
};

lmc_rt_conv_geometry geometryOf(const Case &c) {
  lmc_rt_conv_geometry g{};
  g.batch = c.batch;
  g.channels = c.channels;
  g.filters = c.filters;
  g.groups = c.groups;
  const size_t spatial = c.input.size(), first = 3 - spatial;
  for (int d = 0; d < 3; ++d) {
    g.input[d] = g.kernel[d] = g.output[d] = g.strides[d] = g.dilations[d] = 1;
    g.pad_low[d] = 0;
  }
  for (size_t i = 0; i < spatial; ++i) {
    const size_t d = first + i;
    g.input[d] = c.input[i];
    g.kernel[d] = c.kernel[i];
    g.strides[d] = c.strides[i];
    g.dilations[d] = c.dilations[i];
    g.pad_low[d] = c.padLow[i];
    int64_t extent = c.dilations[i] * (c.kernel[i] - 1) + 1;
    g.output[d] =
        (c.input[i] + c.padLow[i] + c.padHigh[i] - extent) / c.strides[i] + 1;
  }
  return g;
}

int64_t volume(const int64_t (&dims)[3]) { return dims[0] * dims[1] * dims[2]; }

struct Sizes {
  size_t x, w, y;
};

Sizes sizesOf(const lmc_rt_conv_geometry &g) {
  return {size_t(g.batch * g.channels * volume(g.input)),
          size_t(g.filters * (g.channels / g.groups) * volume(g.kernel)),
          size_t(g.batch * g.filters * volume(g.output))};
}

/// The row-major index of element (i0, i1, i2) of slice `outer` of a
/// [..., dims[0], dims[1], dims[2]] tensor.
int64_t flat(int64_t outer, const int64_t (&dims)[3], int64_t i0, int64_t i1,
             int64_t i2) {
  return ((outer * dims[0] + i0) * dims[1] + i1) * dims[2] + i2;
}

/// Calls visit(xIndex, wIndex, yIndex) for every term of the convolution's
/// sum: y[yIndex] += x[xIndex] * w[wIndex], padding terms left out.
template <typename Visit>
void forEachTerm(const lmc_rt_conv_geometry &g, Visit visit) {
  const int64_t Cg = g.channels / g.groups, Fg = g.filters / g.groups;
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t f = 0; f < g.filters; ++f)
      for (int64_t o0 = 0; o0 < g.output[0]; ++o0)
        for (int64_t o1 = 0; o1 < g.output[1]; ++o1)
          for (int64_t o2 = 0; o2 < g.output[2]; ++o2)
            for (int64_t c = 0; c < Cg; ++c)
              for (int64_t k0 = 0; k0 < g.kernel[0]; ++k0)
                for (int64_t k1 = 0; k1 < g.kernel[1]; ++k1)
                  for (int64_t k2 = 0; k2 < g.kernel[2]; ++k2) {
                    const int64_t i0 = o0 * g.strides[0] +
                                       k0 * g.dilations[0] - g.pad_low[0];
                    const int64_t i1 = o1 * g.strides[1] +
                                       k1 * g.dilations[1] - g.pad_low[1];
                    const int64_t i2 = o2 * g.strides[2] +
                                       k2 * g.dilations[2] - g.pad_low[2];
                    if (i0 < 0 || i0 >= g.input[0] || i1 < 0 ||
                        i1 >= g.input[1] || i2 < 0 || i2 >= g.input[2])
                      continue;
                    const int64_t channel = (f / Fg) * Cg + c;
                    visit(flat(n * g.channels + channel, g.input, i0, i1, i2),
                          flat(f * Cg + c, g.kernel, k0, k1, k2),
                          flat(n * g.filters + f, g.output, o0, o1, o2));
                  }
}

std::vector<float> random(size_t n, std::mt19937 &rng) {
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(n);
  for (float &e : v)
    e = dist(rng);
  return v;
}

/// Every element of `got` within `tolerance` (relative to the reference's
/// largest magnitude) of `want`, NaN failing.
void expectClose(const std::vector<float> &got, const std::vector<double> &want,
                 const char *what, const char *name) {
  ASSERT_EQ(got.size(), want.size());
  double scale = 1e-30;
  for (double v : want)
    scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_TRUE(std::abs(double(got[i]) - want[i]) <= 1e-5 * scale)
        << name << " " << what << "[" << i << "]: " << got[i] << " vs "
        << want[i];
}

const std::vector<Case> &cases() {
  static const std::vector<Case> all = {
      {"3x3 same", 2, 3, 4, 1, {6, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
      {"stride 2, asymmetric pad", 2, 3, 5, 1, {7, 8}, {3, 2}, {2, 2}, {1, 1},
       {1, 0}, {0, 1}},
      {"dilation 2", 1, 2, 3, 1, {9, 7}, {3, 3}, {1, 2}, {2, 2}, {2, 1},
       {2, 1}},
      {"groups 2", 2, 4, 6, 2, {5, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
      {"depthwise 7x7", 2, 4, 4, 4, {9, 9}, {7, 7}, {1, 1}, {1, 1}, {3, 3},
       {3, 3}},
      {"1-D", 3, 2, 3, 1, {11}, {4}, {3}, {1}, {2}, {1}},
      // Stride 1: the input gradient as a convolution of dy.
      {"dilated, stride 1", 2, 3, 4, 1, {9, 8}, {3, 2}, {1, 1}, {2, 3}, {2, 1},
       {1, 2}},
      {"padding past the kernel", 2, 2, 3, 1, {5}, {2}, {1}, {1}, {2}, {2}},
      {"3-D", 1, 2, 3, 1, {4, 5, 4}, {2, 3, 2}, {1, 2, 1}, {1, 1, 2}, {1, 0, 1},
       {0, 1, 1}},
      {"1x1", 2, 5, 3, 1, {4, 6}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}},
      {"1x1 stride 2", 2, 5, 3, 1, {5, 6}, {1, 1}, {2, 2}, {1, 1}, {0, 0},
       {0, 0}},
      {"window past the padding", 1, 1, 2, 1, {3, 3}, {3, 3}, {4, 4}, {1, 1},
       {2, 2}, {2, 2}},
      // Over a million multiply-adds per image: oneDNN, the weight
      // gradient in parts; one image per product (576 positions).
      {"oneDNN, parts", 3, 32, 64, 1, {24, 24}, {3, 3}, {1, 1}, {1, 1}, {1, 1},
       {1, 1}},
      // 81 positions: tiles of 3 and 2 images side by side.
      {"tiles of images", 5, 4, 6, 1, {9, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1},
       {1, 1}},
      // 38 MB of windows per image: the weight gradient gathers one image
      // at a time and sums them across chunks.
      {"chunks of windows", 3, 64, 2, 1, {128, 128}, {3, 3}, {1, 1}, {1, 1},
       {1, 1}, {1, 1}},
  };
  return all;
}

/// A case's geometry and random operands.
struct Problem {
  lmc_rt_conv_geometry g;
  Sizes n;
  std::vector<float> x, w, dy;
};

Problem problemOf(const Case &c, unsigned seed) {
  Problem p{geometryOf(c), {}, {}, {}, {}};
  p.n = sizesOf(p.g);
  std::mt19937 rng(seed);
  p.x = random(p.n.x, rng);
  p.w = random(p.n.w, rng);
  p.dy = random(p.n.y, rng);
  return p;
}

/// y, dx and dw from the three kernels, into buffers filled with `fill`.
std::vector<std::vector<float>> runKernels(const Problem &p, float fill) {
  std::vector<float> y(p.n.y, fill), dx(p.n.x, fill), dw(p.n.w, fill);
  lmc_rt_conv_f32(p.x.data(), p.w.data(), y.data(), &p.g);
  lmc_rt_conv_input_grad_f32(p.dy.data(), p.w.data(), dx.data(), &p.g);
  lmc_rt_conv_weight_grad_f32(p.x.data(), p.dy.data(), dw.data(), &p.g);
  return {y, dx, dw};
}

TEST(Convolution, MatchesTheDefinition) {
  for (const Case &c : cases()) {
    const Problem p = problemOf(c, 7);
    std::vector<double> y(p.n.y), dx(p.n.x), dw(p.n.w);
    forEachTerm(p.g, [&](int64_t xi, int64_t wi, int64_t yi) {
      y[yi] += double(p.x[xi]) * p.w[wi];
      dx[xi] += double(p.dy[yi]) * p.w[wi];
      dw[wi] += double(p.dy[yi]) * p.x[xi];
    });
    // NaN in the results' places: every element must be written.
    auto got = runKernels(p, std::nanf(""));
    expectClose(got[0], y, "y", c.name);
    expectClose(got[1], dx, "dx", c.name);
    expectClose(got[2], dw, "dw", c.name);
  }
}

TEST(Convolution, SameBitsOnOneAndTwoThreads) {
  for (const Case &c : cases()) {
    const Problem p = problemOf(c, 11);
    auto one = lmc::test::onThreads(1, [&] { return runKernels(p, 0); });
    auto two = lmc::test::onThreads(2, [&] { return runKernels(p, 0); });
    for (size_t i = 0; i < one.size(); ++i)
      EXPECT_EQ(0, std::memcmp(one[i].data(), two[i].data(),
                               one[i].size() * sizeof(float)))
          << c.name << " result " << i;
  }
}

} // namespace
