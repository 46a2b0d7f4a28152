#include "lmc/runtime/kernels.h"

#include "kernels/matmul_parts.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace {

/// Reference: C[b] += op(A[b]) op(B[b]) with a naive triple loop in double.
template <typename T>
std::vector<T> naive(const std::vector<T> &A, const std::vector<T> &B,
                     std::vector<T> C, int64_t batch, int64_t M, int64_t N,
                     int64_t K, bool ta, bool tb) {
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double sum = 0;
        for (int64_t k = 0; k < K; ++k) {
          double a = ta ? A[b * M * K + k * M + i] : A[b * M * K + i * K + k];
          double v = tb ? B[b * K * N + j * K + k] : B[b * K * N + k * N + j];
          sum += a * v;
        }
        C[b * M * N + i * N + j] += T(sum);
      }
  return C;
}

template <typename T> std::vector<T> random(size_t n, std::mt19937 &rng) {
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<T> v(n);
  for (T &x : v)
    x = T(dist(rng));
  return v;
}

template <typename T, typename Fn>
void checkAllTransposes(Fn matmul, double tolerance) {
  std::mt19937 rng(3);
  const int64_t batch = 3, M = 5, N = 7, K = 4;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      auto A = random<T>(batch * M * K, rng);
      auto B = random<T>(batch * K * N, rng);
      auto C = random<T>(batch * M * N, rng); // non-zero: checks beta = 1
      auto want = naive(A, B, C, batch, M, N, K, ta, tb);
      matmul(A.data(), B.data(), C.data(), batch, M, N, K, ta, tb, 1);
      for (size_t i = 0; i < C.size(); ++i)
        ASSERT_NEAR(C[i], want[i], tolerance)
            << "transA=" << ta << " transB=" << tb << " index " << i;
    }
}

TEST(Matmul, F32AllTransposesBatched) {
  checkAllTransposes<float>(lmc_rt_matmul_f32, 1e-5);
}

TEST(Matmul, F64AllTransposesBatched) {
  checkAllTransposes<double>(lmc_rt_matmul_f64, 1e-12);
}

TEST(Matmul, EmptyDimensionsAreNoOps) {
  std::vector<float> C = {1, 2};
  lmc_rt_matmul_f32(nullptr, nullptr, C.data(), 1, 1, 2, 0, 0, 0, 1);
  lmc_rt_matmul_f32(nullptr, nullptr, C.data(), 0, 1, 2, 3, 0, 0, 1);
  lmc_rt_matmul_f32(nullptr, nullptr, C.data(), 0, 1, 2, 3, 0, 0, 0);
  EXPECT_EQ(C, (std::vector<float>{1, 2}));
}

TEST(Matmul, OverwritingAnEmptySumZeroes) {
  std::vector<float> C = {1, 2};
  lmc_rt_matmul_f32(nullptr, nullptr, C.data(), 1, 1, 2, 0, 0, 0, 0);
  EXPECT_EQ(C, (std::vector<float>{0, 0}));
}

/// Shapes on every library path: a small product (OpenBLAS, one call) and
/// products of a million multiply-adds or more (oneDNN's sgemm or matmul
/// primitive, f32_gemm.h, by transposes and shape), whose C the threads
/// share in parts by rows (M >= N) or by columns, batched or not. With B
/// transposed, the batched one and the last four run on the primitive: in
/// one part, in parts by rows, in parts by columns (each computed in a
/// dense block and copied into C), and a long K over a small C, which a
/// primitive made for two threads could share out.
struct Shape {
  int64_t batch, M, N, K;
};
constexpr Shape kShapes[] = {
    {2, 5, 7, 4},       {1, 1100, 48, 24},  {1, 40, 1300, 24},
    {3, 1030, 20, 20},  {1, 64, 48, 4096},  {1, 300, 260, 1024},
    {1, 64, 600, 1024}, {1, 512, 16, 8192}};

TEST(Matmul, F32OverwritesOrAccumulates) {
  std::mt19937 rng(7);
  for (int accumulate : {0, 1})
    for (const Shape &s : kShapes)
      for (int ta = 0; ta < 2; ++ta)
        for (int tb = 0; tb < 2; ++tb) {
          auto A = random<float>(s.batch * s.M * s.K, rng);
          auto B = random<float>(s.batch * s.K * s.N, rng);
          const size_t size = s.batch * s.M * s.N;
          // Overwritten, C starts as NaN: any read of it would show.
          auto C = accumulate ? random<float>(size, rng)
                              : std::vector<float>(size, std::nanf(""));
          auto want = naive(A, B, accumulate ? C : std::vector<float>(size),
                            s.batch, s.M, s.N, s.K, ta, tb);
          lmc_rt_matmul_f32(A.data(), B.data(), C.data(), s.batch, s.M, s.N,
                            s.K, ta, tb, accumulate);
          for (size_t i = 0; i < size; ++i)
            ASSERT_NEAR(C[i], want[i], 1e-4)
                << "accumulate=" << accumulate << " M=" << s.M << " N=" << s.N
                << " transA=" << ta << " transB=" << tb << " index " << i;
        }
}

TEST(Matmul, F32SameBitsOnOneAndTwoThreads) {
  // Parts follow from the shape and the budget alone, so each is the same
  // library call however many threads share them, under any budget.
  std::mt19937 rng(9);
  for (int64_t budget : {1, 2, 16}) {
    lmc_rt_set_matmul_parts(budget);
    for (const Shape &s : kShapes)
      for (int ta = 0; ta < 2; ++ta)
        for (int tb = 0; tb < 2; ++tb) {
          auto A = random<float>(s.batch * s.M * s.K, rng);
          auto B = random<float>(s.batch * s.K * s.N, rng);
          std::vector<float> results[2];
          for (int threads : {1, 2}) {
            lmc_rt_set_threads(threads);
            std::vector<float> &C = results[threads - 1];
            C.assign(s.batch * s.M * s.N, 0.0f);
            lmc_rt_matmul_f32(A.data(), B.data(), C.data(), s.batch, s.M,
                              s.N, s.K, ta, tb, /*accumulate=*/0);
          }
          lmc_rt_set_threads(1);
          EXPECT_EQ(0, std::memcmp(results[0].data(), results[1].data(),
                                   results[0].size() * sizeof(float)))
              << "budget " << budget << " M=" << s.M << " N=" << s.N
              << " transA=" << ta << " transB=" << tb;
        }
  }
  lmc_rt_set_matmul_parts(16);
}

/// The parts of GPT-2 124M's products (extents 768 to 50304) and of small
/// ones under the budgets a 1-, 2- and 16-core machine compiles in.
TEST(Matmul, PartsFollowTheShapeAndTheBudget) {
  struct Case {
    int64_t extent, budget, parts;
  } cases[] = {
      {3072, 16, 8},  {3072, 2, 2},  {3072, 1, 1},  {50304, 16, 16},
      {50304, 4, 4},  {768, 16, 2},  {768, 2, 2},   {1024, 16, 2},
      {2304, 16, 4},  {256, 16, 2},  {256, 1, 1},   {255, 16, 1},
      {6144, 16, 16}, {6143, 16, 8},
  };
  for (const Case &c : cases)
    EXPECT_EQ(lmc::rt::matmulPartCount(c.extent, c.budget), c.parts)
        << "extent " << c.extent << ", budget " << c.budget;
}

} // namespace

namespace {

/// bf16 bit patterns of values that are exactly representable in bf16 (and
/// so in f32): the oracle multiplies the f32 values.
uint16_t toBf16Exact(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return uint16_t(bits >> 16);
}

TEST(Matmul, Bf16OperandsAccumulateInF32) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> small(-64, 64);
  const int64_t batch = 2, M = 3, N = 5, K = 6;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      // Multiples of 1/8 in [-8, 8]: exact in bf16, so the widened values
      // are known and the f32 sums are exact too.
      std::vector<float> a(batch * M * K), b(batch * K * N), c(batch * M * N);
      for (float &x : a)
        x = float(small(rng)) / 8;
      for (float &x : b)
        x = float(small(rng)) / 8;
      for (float &x : c)
        x = float(small(rng));
      std::vector<uint16_t> a16, b16;
      for (float x : a)
        a16.push_back(toBf16Exact(x));
      for (float x : b)
        b16.push_back(toBf16Exact(x));
      std::vector<float> want = naive(a, b, c, batch, M, N, K, ta, tb);
      lmc_rt_matmul_bf16(a16.data(), b16.data(), c.data(), batch, M, N, K, ta,
                         tb, 1);
      EXPECT_EQ(c, want) << "transA=" << ta << " transB=" << tb;
    }
}

TEST(Matmul, F16SpecialValuesWiden) {
  // 1 x K times K x 1 with one non-zero term each time: C = A[k] * 1.
  const struct {
    uint16_t half;
    float value;
  } cases[] = {
      {0x3c00, 1.0f},           {0xc000, -2.0f},
      {0x0001, 0x1p-24f},       // smallest subnormal
      {0x03ff, 0x3ffp-24f},     // largest subnormal
      {0x0400, 0x1p-14f},       // smallest normal
      {0x7bff, 65504.0f},       // largest normal
      {0x3555, 0x1.554p-2f},    // 1/3 rounded
      {0x8000, -0.0f},
  };
  const uint16_t one = 0x3c00;
  for (const auto &c : cases) {
    float out = 0;
    lmc_rt_matmul_f16(&c.half, &one, &out, 1, 1, 1, 1, 0, 0, 1);
    EXPECT_EQ(out, c.value) << std::hex << c.half;
  }
  float inf = 0, nan = 0;
  const uint16_t infBits = 0x7c00, nanBits = 0x7e00;
  lmc_rt_matmul_f16(&infBits, &one, &inf, 1, 1, 1, 1, 0, 0, 1);
  lmc_rt_matmul_f16(&nanBits, &one, &nan, 1, 1, 1, 1, 0, 0, 1);
  EXPECT_TRUE(std::isinf(inf) && inf > 0);
  EXPECT_TRUE(std::isnan(nan));
}

} // namespace
