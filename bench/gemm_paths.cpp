// oneDNN's two f32 GEMM paths alone (runtime/kernels/f32_gemm.h): dnnl_sgemm
// and the matmul primitive, on the parts one thread computes of the
// benchmark GPT's, the benchmark MLP's and GPT-2 124M's products (each
// product split in two along its longer side of C, as matmul_parts.h does
// on a two-core budget). Best of 8 calls after one warm-up, on the OpenMP
// threads OMP_NUM_THREADS gives (1 to match a part). Built and run by
// bench/gemm_paths.sh.
#include <dnnl.h>
#include <dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

namespace {

struct Product {
  int64_t M, N, K;
  char transA, transB;
  const char *name;
};

// Whole products, M x N x K (C = op(A) op(B)); halved below.
const Product kProducts[] = {
    {1024, 1024, 256, 'N', 'T', "GPT fc forward"},
    {1024, 256, 1024, 'N', 'T', "GPT fc_proj forward"},
    {1024, 768, 256, 'N', 'T', "GPT qkv forward"},
    {1024, 256, 256, 'N', 'T', "GPT proj forward"},
    {1024, 256, 1024, 'N', 'N', "GPT fc dX"},
    {1024, 1024, 256, 'N', 'N', "GPT fc_proj dX"},
    {1024, 256, 1024, 'T', 'N', "GPT fc dW"},
    {256, 1024, 1024, 'T', 'N', "GPT fc_proj dW"},
    {256, 2048, 2048, 'N', 'T', "MLP layer 1 forward"},
    {256, 2048, 784, 'N', 'T', "MLP layer 0 forward"},
    {256, 2048, 2048, 'N', 'N', "MLP layer 1 dX"},
    {2048, 2048, 256, 'T', 'N', "MLP layer 1 dW"},
    {1024, 3072, 768, 'N', 'T', "GPT-2 fc forward"},
    {1024, 768, 3072, 'N', 'T', "GPT-2 fc_proj forward"},
    {1024, 768, 768, 'N', 'T', "GPT-2 proj forward"},
    {1024, 768, 3072, 'N', 'N', "GPT-2 fc dX"},
    {3072, 768, 1024, 'T', 'N', "GPT-2 fc dW"},
};

double seconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

template <typename Fn> double best(Fn call) {
  call();
  double time = 1e30;
  for (int r = 0; r < 8; ++r) {
    const double start = seconds();
    call();
    time = std::min(time, seconds() - start);
  }
  return time;
}

} // namespace

int main() {
  using dims = dnnl::memory::dims;
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> A(4 << 20), B(4 << 20), C(4 << 20);
  for (float &x : A)
    x = dist(rng);
  for (float &x : B)
    x = dist(rng);
  std::printf("%-24s %16s  %8s %10s  (GFLOP/s)\n", "product", "part M x N x K",
              "sgemm", "primitive");
  for (Product p : kProducts) {
    (p.M >= p.N ? p.M : p.N) /= 2;
    const int64_t lda = p.transA == 'N' ? p.K : p.M,
                  ldb = p.transB == 'N' ? p.N : p.K;
    auto desc = [](int64_t rows, int64_t cols, char trans, int64_t ld) {
      return dnnl::memory::desc(dims{rows, cols}, dnnl::memory::data_type::f32,
                                trans == 'T' ? dims{1, ld} : dims{ld, 1});
    };
    const dnnl::memory::desc a = desc(p.M, p.K, p.transA, lda),
                             b = desc(p.K, p.N, p.transB, ldb),
                             c = desc(p.M, p.N, 'N', p.N);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), engine);
    dnnl::matmul primitive(pd);
    dnnl::memory am(a, engine, A.data()), bm(b, engine, B.data()),
        cm(c, engine, C.data());
    const double sgemm = best([&] {
      dnnl_sgemm(p.transA, p.transB, p.M, p.N, p.K, 1.0f, A.data(), lda,
                 B.data(), ldb, 0.0f, C.data(), p.N);
    });
    const double matmul = best([&] {
      primitive.execute(
          stream,
          {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
      stream.wait();
    });
    const double flops = 2.0 * p.M * p.N * p.K;
    char shape[48];
    std::snprintf(shape, sizeof shape, "%lld x %lld x %lld", (long long)p.M,
                  (long long)p.N, (long long)p.K);
    std::printf("%-24s %16s  %8.1f %10.1f  %c%c %s\n", p.name, shape,
                flops / sgemm / 1e9, flops / matmul / 1e9, p.transA, p.transB,
                pd.impl_info_str());
  }
}
