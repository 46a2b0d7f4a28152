#include "lmc/runtime/kernels.h"

#include <gtest/gtest.h>

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
      matmul(A.data(), B.data(), C.data(), batch, M, N, K, ta, tb);
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
  lmc_rt_matmul_f32(nullptr, nullptr, C.data(), 1, 1, 2, 0, 0, 0);
  lmc_rt_matmul_f32(nullptr, nullptr, C.data(), 0, 1, 2, 3, 0, 0);
  EXPECT_EQ(C, (std::vector<float>{1, 2}));
}

} // namespace
