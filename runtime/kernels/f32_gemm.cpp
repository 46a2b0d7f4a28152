//===- f32_gemm.cpp - f32 products on oneDNN's two paths -----------------===//
//
// The matmul primitive is created once per shape and thread (oneDNN's own
// primitive cache makes a second thread's creation cheap), and as for one
// thread: a primitive made for several may share K among them, and each
// part's sums must follow its shape alone, not the caller's thread count.
// Where oneDNN offers no brgemm kernel for it (a CPU without AVX-512, say),
// the product runs on dnnl_sgemm instead.
//
//===----------------------------------------------------------------------===//

#include "f32_gemm.h"

#include "sgemm.h"

#include <dnnl.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

// libomp's API (declared here as in matmul.cpp: the fuzz build's clang has
// no omp.h).
extern "C" int omp_get_max_threads(void);
extern "C" void omp_set_num_threads(int n);

namespace {

/// What a primitive is made for: the operands' layouts, the shape, and
/// whether C is accumulated into. Its C is dense (oneDNN 2.6's brgemm
/// kernels take no row stride for it: given one, it falls back to its
/// sgemm); a part of a wider C is computed in a scratch block and copied.
struct ProductKey {
  bool transA, transB, accumulate;
  int64_t M, N, K, lda, ldb;

  bool operator<(const ProductKey &o) const {
    return std::tie(transA, transB, accumulate, M, N, K, lda, ldb) <
           std::tie(o.transA, o.transB, o.accumulate, o.M, o.N, o.K, o.lda,
                    o.ldb);
  }
};

/// Copies a rows x cols block between row strides.
void copyBlock(const float *from, int64_t ldFrom, float *to, int64_t ldTo,
               int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i)
    std::memcpy(to + i * ldTo, from + i * ldFrom, size_t(cols) * sizeof(float));
}

dnnl::engine &cpuEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

/// A row-major matrix of `rows` x `cols` floats, rows `ld` apart, or its
/// transpose (stored cols x rows).
dnnl::memory::desc matrixDesc(int64_t rows, int64_t cols, bool transposed,
                              int64_t ld) {
  using dims = dnnl::memory::dims;
  return dnnl::memory::desc(dims{rows, cols}, dnnl::memory::data_type::f32,
                            transposed ? dims{1, ld} : dims{ld, 1});
}

/// The product's primitive and its operands' descriptions; no primitive
/// when oneDNN has no brgemm kernel for it.
struct Product {
  std::unique_ptr<dnnl::matmul> primitive;
  dnnl::memory::desc a, b, c;
};

Product makeProduct(const ProductKey &key) {
  Product product{nullptr, matrixDesc(key.M, key.K, key.transA, key.lda),
                  matrixDesc(key.K, key.N, key.transB, key.ldb),
                  matrixDesc(key.M, key.N, false, key.N)};
  dnnl::primitive_attr attr;
  if (key.accumulate) {
    dnnl::post_ops sum;
    sum.append_sum(1.0f);
    attr.set_post_ops(sum);
  }
  // Created as for one thread (see the file comment); the caller's thread
  // count restored after.
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  try {
    dnnl::matmul::primitive_desc pd(
        dnnl::matmul::desc(product.a, product.b, product.c), attr, cpuEngine());
    if (std::strncmp(pd.impl_info_str(), "brg", 3) == 0)
      product.primitive = std::make_unique<dnnl::matmul>(pd);
  } catch (const dnnl::error &) {
    // No implementation: dnnl_sgemm runs it.
  }
  omp_set_num_threads(threads);
  return product;
}

} // namespace

void lmc::rt::f32Gemm(CBLAS_ORDER order, CBLAS_TRANSPOSE transA,
                      CBLAS_TRANSPOSE transB, blasint M, blasint N, blasint K,
                      float alpha, const float *A, blasint lda, const float *B,
                      blasint ldb, float beta, float *C, blasint ldc) {
  const bool accumulate = beta == 1.0f;
  // A part of a wider C needs a dense block of its own (ProductKey): up to
  // kMaxScratchFloats, beyond which sgemm writes it in place instead of
  // the step keeping a large block beside its arena.
  constexpr int64_t kMaxScratchFloats = int64_t(1) << 21; // 8 MiB
  const bool scratchTooLarge =
      ldc != N && int64_t(M) * int64_t(N) > kMaxScratchFloats;
  if (order != CblasRowMajor || alpha != 1.0f ||
      (beta != 0.0f && !accumulate) || scratchTooLarge ||
      !prefersMatmulPrimitive(transA, transB, N, K))
    return sgemm(order, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C,
                 ldc);
  thread_local std::map<ProductKey, Product> products;
  const ProductKey key{transA == CblasTrans, transB == CblasTrans, accumulate,
                       M, N, K, lda, ldb};
  auto found = products.find(key);
  if (found == products.end())
    found = products.emplace(key, makeProduct(key)).first;
  const Product &product = found->second;
  if (!product.primitive)
    return sgemm(order, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C,
                 ldc);
  thread_local dnnl::stream stream(cpuEngine());
  thread_local std::vector<float> scratch;
  dnnl::engine &engine = cpuEngine();
  float *dense = C;
  if (ldc != N) {
    scratch.resize(size_t(M) * size_t(N));
    dense = scratch.data();
    if (accumulate)
      copyBlock(C, ldc, dense, N, M, N);
  }
  try {
    product.primitive->execute(
        stream, {{DNNL_ARG_SRC,
                  dnnl::memory(product.a, engine, const_cast<float *>(A))},
                 {DNNL_ARG_WEIGHTS,
                  dnnl::memory(product.b, engine, const_cast<float *>(B))},
                 {DNNL_ARG_DST, dnnl::memory(product.c, engine, dense)}});
    stream.wait();
  } catch (const dnnl::error &e) {
    std::fprintf(stderr,
                 "lmc runtime: oneDNN matmul failed (%s, M=%d N=%d K=%d) "
                 "[%s:%d]\n",
                 e.what(), int(M), int(N), int(K), __FILE__, __LINE__);
    std::abort();
  }
  if (dense != C)
    copyBlock(dense, N, C, ldc, M, N);
}
