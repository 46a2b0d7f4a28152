//===- convolution.cpp - Convolutions as GEMMs over gathered windows -----===//
//
// lmc.conv and its two adjoints on dense [N, C, spatial...] tensors, as
// im2col + GEMM. The windows the output positions of a tile of images
// read are gathered, per group, into a matrix col [C/groups * kernel
// volume, tile * O] (O the output positions of one image; zero where a
// window overhangs the padding), and
//
//   forward          y'     = W[g] col        then y[n, f, o] = y'[f, i O + o]
//   input gradient   dcol   = W[g]^T dy'      then each window adds its
//                    column back onto dx (col2im)
//   weight gradient  dW[g]  = sum over the tiles, in order, of dy' col^T
//
// with dy' [F, tile * O] the cotangent laid out as y'. A tile holds one
// image when O is at least kMinColumns, else the fewest images that reach
// it: the late layers of a network, a few positions per image, still make
// products wide enough for the GEMM.
//
// Threads, with results the same bits on any count: with two tiles or
// more, the forward and the input gradient share the (tile, group) pairs
// (a one-image forward: blocks of its output rows), each gathered and
// multiplied by one thread in its own scratch (which stays in its cache);
// with one tile, its products are lmc_rt_matmul_f32
// calls, which cut them into parts by shape alone. The weight gradient's
// output is cut into parts by its shape alone (matmulPartCount), each part
// summing the tiles in order.
//
// Measured per layer shape with bench/conv_kernel.sh. The generated loop
// nests this replaces ran a ResNet's convolutions at about 1 GFLOP/s.
//
//===----------------------------------------------------------------------===//

#include "lmc/runtime/kernels.h"

#include "f32_gemm.h"
#include "matmul_parts.h"

#include <algorithm>
#include <cstring>
#include <vector>

extern "C" int omp_get_max_threads(void);

namespace {

/// The sizes the three kernels derive from a geometry.
struct Shape {
  const lmc_rt_conv_geometry &g;
  int64_t groupChannels, groupFilters; // C / groups, F / groups
  int64_t kernelVolume, inputVolume, outputVolume;
  int64_t windowRows; // col's rows per group: groupChannels * kernelVolume
  int64_t tile;       // images side by side in one product (the last
                      // tile may have fewer)
  int64_t tiles;      // ceil(batch / tile)
  int64_t chunkTiles; // tiles whose windows the weight gradient gathers
                      // at once

  explicit Shape(const lmc_rt_conv_geometry &geometry);

  bool empty() const {
    return g.batch <= 0 || groupChannels <= 0 || groupFilters <= 0 ||
           kernelVolume <= 0 || outputVolume <= 0;
  }
};

/// Bytes of gathered windows the weight gradient holds at once: they are
/// read back while still in the cache. bench/conv_kernel.sh, weight
/// gradient of the VGG CNN's 64 -> 64 layer (batch 32, 32 x 32), one / two
/// threads: 34.6 / 17.6 ms with 64 MiB, 30.1 / 15.6 with 8, 29.7 / 19.3
/// with 2.
constexpr size_t kWindowBudgetBytes = size_t(8) << 20;

/// Bytes of one image's gathered windows a forward product takes at once
/// (a block of its output rows): about half a core's L2 cache.
constexpr size_t kBlockBytes = size_t(512) << 10;

/// Columns (output positions) a product should have: below, images are
/// put side by side. ResNet-18's 3 x 3 layers, batch 4, two threads
/// (bench/conv_kernel.sh): one image per product at 16 x 16 positions
/// (256), 1.41 ms for the three kernels against 3.26 for the whole batch in
/// one; at 2 x 2 positions, 4.88 ms against 2.06.
constexpr int64_t kMinColumns = 256;

Shape::Shape(const lmc_rt_conv_geometry &geometry) : g(geometry) {
  groupChannels = g.channels / g.groups;
  groupFilters = g.filters / g.groups;
  kernelVolume = g.kernel[0] * g.kernel[1] * g.kernel[2];
  inputVolume = g.input[0] * g.input[1] * g.input[2];
  outputVolume = g.output[0] * g.output[1] * g.output[2];
  windowRows = groupChannels * kernelVolume;
  const int64_t batch = std::max<int64_t>(g.batch, 1);
  const int64_t wanted = std::clamp<int64_t>(
      (kMinColumns + outputVolume - 1) / std::max<int64_t>(outputVolume, 1), 1,
      batch);
  // As many tiles as `wanted` gives, their images shared evenly.
  tiles = (batch + wanted - 1) / wanted;
  tile = (batch + tiles - 1) / tiles;
  const size_t perTile =
      std::max<size_t>(size_t(g.groups * windowRows * outputVolume * tile), 1) *
      sizeof(float);
  chunkTiles =
      std::clamp<int64_t>(int64_t(kWindowBudgetBytes / perTile), 1, tiles);
}

/// The output positions o in [0, size) along one dimension whose input
/// position o * stride + offset lies in [0, extent): [lo, hi).
void validRange(int64_t size, int64_t stride, int64_t offset, int64_t extent,
                int64_t &lo, int64_t &hi) {
  auto ceilDiv = [](int64_t a, int64_t b) {
    return a >= 0 ? (a + b - 1) / b : -((-a) / b);
  };
  lo = std::clamp<int64_t>(ceilDiv(-offset, stride), 0, size);
  hi = std::clamp<int64_t>(ceilDiv(extent - offset, stride), lo, size);
}

/// Calls run(row, o, in, count, stride) for every run of one col row that
/// reads in-bounds input positions, and outside(row, o, count) for the
/// positions outside: the walk shared by the gather and the scatter. `in`
/// is the input element (from the channel group's first) at the run's
/// start, `o` the run's first output position counted from output row
/// `firstRow` (rows are the (od, oh) pairs; the walk covers rows
/// [firstRow, endRow), all of them by default).
template <typename Run, typename Outside>
void walkWindows(const Shape &s, Run run, Outside outside,
                 int64_t firstRow = 0, int64_t endRow = -1) {
  const lmc_rt_conv_geometry &g = s.g;
  if (endRow < 0)
    endRow = g.output[0] * g.output[1];
  const int64_t OH = g.output[1], OW = g.output[2];
  const int64_t ID = g.input[0], IH = g.input[1], IW = g.input[2];
  for (int64_t c = 0; c < s.groupChannels; ++c)
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd)
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh)
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
          const int64_t row =
              ((c * g.kernel[0] + kd) * g.kernel[1] + kh) * g.kernel[2] + kw;
          const int64_t offD = kd * g.dilations[0] - g.pad_low[0];
          const int64_t offH = kh * g.dilations[1] - g.pad_low[1];
          const int64_t offW = kw * g.dilations[2] - g.pad_low[2];
          int64_t w0, w1;
          validRange(OW, g.strides[2], offW, IW, w0, w1);
          for (int64_t r = firstRow; r < endRow; ++r) {
            const int64_t id = r / OH * g.strides[0] + offD;
            const int64_t ih = r % OH * g.strides[1] + offH;
            const int64_t o = (r - firstRow) * OW;
            if (id < 0 || id >= ID || ih < 0 || ih >= IH || w0 == w1) {
              outside(row, o, OW);
              continue;
            }
            outside(row, o, w0);
            outside(row, o + w1, OW - w1);
            const int64_t in =
                ((c * ID + id) * IH + ih) * IW + w0 * g.strides[2] + offW;
            run(row, o + w0, in, w1 - w0, g.strides[2]);
          }
        }
}

/// Image `n`'s windows for group `gr` (output rows [firstRow, endRow),
/// all by default) into its columns of col (row stride `ld`).
void gather(const Shape &s, const float *x, int64_t n, int64_t gr, float *col,
            int64_t ld, int64_t firstRow = 0, int64_t endRow = -1) {
  const float *in =
      x + (n * s.g.channels + gr * s.groupChannels) * s.inputVolume;
  walkWindows(
      s,
      [&](int64_t row, int64_t o, int64_t at, int64_t count, int64_t stride) {
        float *dst = col + row * ld + o;
        const float *src = in + at;
        if (stride == 1) {
          std::memcpy(dst, src, size_t(count) * sizeof(float));
          return;
        }
        for (int64_t i = 0; i < count; ++i)
          dst[i] = src[i * stride];
      },
      [&](int64_t row, int64_t o, int64_t count) {
        std::fill(col + row * ld + o, col + row * ld + o + count, 0.0f);
      },
      firstRow, endRow);
}

/// Adds every window's column of dcol (row stride `ld`) onto image `n`'s
/// group `gr` of dx, in a fixed order.
void scatter(const Shape &s, const float *dcol, int64_t ld, int64_t n,
             int64_t gr, float *dx) {
  float *out = dx + (n * s.g.channels + gr * s.groupChannels) * s.inputVolume;
  walkWindows(
      s,
      [&](int64_t row, int64_t o, int64_t at, int64_t count, int64_t stride) {
        const float *src = dcol + row * ld + o;
        float *dst = out + at;
        for (int64_t i = 0; i < count; ++i)
          dst[i * stride] += src[i];
      },
      [](int64_t, int64_t, int64_t) {});
}

/// The OpenMP threads (if any) run `body(job)` for job in [0, jobs), each
/// on one thread. Always inside a parallel region when there are threads,
/// even for one job: oneDNN called outside one starts threads of its own,
/// and its sums would then depend on their count.
template <typename Body> void shareJobs(int64_t jobs, Body body) {
  const int threads = omp_get_max_threads();
#pragma omp parallel for schedule(static) if (threads > 1)
  for (int64_t job = 0; job < jobs; ++job)
    body(job);
}

/// The images [first, first + count) of tile `t`.
void tileImages(const Shape &s, int64_t t, int64_t &first, int64_t &count) {
  first = t * s.tile;
  count = std::min(s.tile, s.g.batch - first);
}

/// A job of the (tile, group) pairs: its group, its tile's images
/// [first, first + count) and its product's columns (count * O).
struct TileJob {
  int64_t group, first, count, columns;
};

TileJob tileJob(const Shape &s, int64_t job) {
  TileJob t{job % s.g.groups, 0, 0, 0};
  tileImages(s, job / s.g.groups, t.first, t.count);
  t.columns = t.count * s.outputVolume;
  return t;
}

/// The gathered windows of tiles [firstTile, firstTile + tileCount) into
/// `windows`: tile k's, group g's matrix [windowRows, its images * O] at
/// ((k - firstTile) * groups + g) * windowRows * tile * O.
void gatherTiles(const Shape &s, const float *x, int64_t firstTile,
                 int64_t tileCount, std::vector<float> &windows) {
  const int64_t block = s.windowRows * s.tile * s.outputVolume;
  windows.resize(size_t(tileCount * s.g.groups * block));
  const int64_t firstImage = firstTile * s.tile;
  const int64_t images =
      std::min(tileCount * s.tile, s.g.batch - firstImage);
  shareJobs(images * s.g.groups, [&](int64_t job) {
    const int64_t n = firstImage + job / s.g.groups, gr = job % s.g.groups;
    int64_t first, count;
    tileImages(s, n / s.tile, first, count);
    float *matrix =
        windows.data() +
        ((n / s.tile - firstTile) * s.g.groups + gr) * block;
    gather(s, x, n, gr, matrix + (n - first) * s.outputVolume,
           count * s.outputVolume);
  });
}

/// Copies images [first, first + count) of a [N, F, O] tensor to a
/// [F, count * O] matrix (`toMatrix`), or back.
void copyImages(const Shape &s, int64_t first, int64_t count, bool toMatrix,
                const float *from, float *to) {
  const int64_t O = s.outputVolume, F = s.g.filters;
  shareJobs(count, [&](int64_t i) {
    for (int64_t f = 0; f < F; ++f) {
      const int64_t tensor = ((first + i) * F + f) * O;
      const int64_t matrix = f * count * O + i * O;
      std::memcpy(to + (toMatrix ? matrix : tensor),
                  from + (toMatrix ? tensor : matrix),
                  size_t(O) * sizeof(float));
    }
  });
}

using Gemm = void (*)(CBLAS_ORDER, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, blasint,
                      blasint, blasint, float, const float *, blasint,
                      const float *, blasint, float, float *, blasint);

/// The GEMM of one M x N x K product on the calling thread: oneDNN's, or
/// OpenBLAS below a million multiply-adds (as lmc_rt_matmul_f32 chooses).
Gemm gemmFor(int64_t M, int64_t N, int64_t K) {
  return lmc::rt::isSmallProduct(1, M, N, K) ? cblas_sgemm : lmc::rt::f32Gemm;
}

/// A per-thread scratch matrix of at least `count` floats; `which` tells
/// a thread's two apart.
float *scratch(int which, size_t count) {
  thread_local std::vector<float> buffers[2];
  std::vector<float> &buffer = buffers[which];
  if (buffer.size() < count)
    buffer.resize(count);
  return buffer.data();
}

} // namespace

extern "C" void lmc_rt_conv_f32(const float *x, const float *w, float *y,
                                const lmc_rt_conv_geometry *geometry) {
  const Shape s(*geometry);
  const lmc_rt_conv_geometry &g = *geometry;
  if (s.empty()) {
    std::fill(y, y + g.batch * g.filters * s.outputVolume, 0.0f);
    return;
  }
  const int64_t M = s.groupFilters, K = s.windowRows, O = s.outputVolume;
  if (s.tiles == 1) {
    static std::vector<float> windows, product;
    gatherTiles(s, x, 0, 1, windows);
    product.resize(size_t(g.filters * g.batch * O));
    lmc_rt_matmul_f32(w, windows.data(), product.data(), g.groups, M,
                      g.batch * O, K, 0, 0, 0);
    copyImages(s, 0, g.batch, /*toMatrix=*/false, product.data(), y);
    return;
  }
  // One image per tile: its output rows in blocks whose windows stay in
  // the core's cache between the gather and the product.
  const int64_t rows = g.output[0] * g.output[1], OW = g.output[2];
  const int64_t blockRows =
      s.tile > 1 ? rows
                 : std::clamp<int64_t>(int64_t(kBlockBytes / sizeof(float)) /
                                           std::max<int64_t>(K * OW, 1),
                                       1, rows);
  const int64_t blocks = (rows + blockRows - 1) / blockRows;
  if (blocks > 1) {
    shareJobs(s.tiles * g.groups * blocks, [&](int64_t job) {
      const int64_t block = job % blocks, gr = job / blocks % g.groups,
                    n = job / blocks / g.groups;
      const int64_t r0 = block * blockRows,
                    r1 = std::min(rows, r0 + blockRows);
      const int64_t N = (r1 - r0) * OW;
      float *col = scratch(0, size_t(K * N));
      gather(s, x, n, gr, col, N, r0, r1);
      gemmFor(M, N, K)(CblasRowMajor, CblasNoTrans, CblasNoTrans, blasint(M),
                       blasint(N), blasint(K), 1.0f, w + gr * M * K,
                       blasint(K), col, blasint(N), 0.0f,
                       y + (n * g.filters + gr * M) * O + r0 * OW, blasint(O));
    });
    return;
  }
  shareJobs(s.tiles * g.groups, [&](int64_t job) {
    const auto [gr, first, count, N] = tileJob(s, job);
    float *col = scratch(0, size_t(K * N));
    for (int64_t i = 0; i < count; ++i)
      gather(s, x, first + i, gr, col + i * O, N);
    // One image: straight into y; more: through a scratch matrix.
    float *out = count == 1 ? y + (first * g.filters + gr * M) * O
                            : scratch(1, size_t(M * N));
    gemmFor(M, N, K)(CblasRowMajor, CblasNoTrans, CblasNoTrans, blasint(M),
                     blasint(N), blasint(K), 1.0f, w + gr * M * K, blasint(K),
                     col, blasint(N), 0.0f, out, blasint(N));
    if (count > 1)
      for (int64_t i = 0; i < count; ++i)
        for (int64_t f = 0; f < M; ++f)
          std::memcpy(y + ((first + i) * g.filters + gr * M + f) * O,
                      out + f * N + i * O, size_t(O) * sizeof(float));
  });
}

extern "C" void lmc_rt_conv_input_grad_f32(
    const float *dy, const float *w, float *dx,
    const lmc_rt_conv_geometry *geometry) {
  const Shape s(*geometry);
  const lmc_rt_conv_geometry &g = *geometry;
  std::fill(dx, dx + g.batch * g.channels * s.inputVolume, 0.0f);
  if (s.empty())
    return;
  const int64_t M = s.windowRows, K = s.groupFilters, O = s.outputVolume;
  if (s.tiles == 1) {
    const int64_t ld = g.batch * O;
    static std::vector<float> grad, windows;
    grad.resize(size_t(g.filters * ld));
    copyImages(s, 0, g.batch, /*toMatrix=*/true, dy, grad.data());
    windows.resize(size_t(g.groups * M * ld));
    lmc_rt_matmul_f32(w, grad.data(), windows.data(), g.groups, M, ld, K,
                      /*transA=*/1, 0, 0);
    shareJobs(g.batch * g.groups, [&](int64_t job) {
      const int64_t i = job / g.groups, gr = job % g.groups;
      scatter(s, windows.data() + gr * M * ld + i * O, ld, i, gr, dx);
    });
    return;
  }
  shareJobs(s.tiles * g.groups, [&](int64_t job) {
    const auto [gr, first, count, N] = tileJob(s, job);
    // dy' of the tile: the images' rows side by side (one image: dy).
    const float *grad = dy + (first * g.filters + gr * K) * O;
    if (count > 1) {
      float *tiled = scratch(1, size_t(K * N));
      for (int64_t i = 0; i < count; ++i)
        for (int64_t f = 0; f < K; ++f)
          std::memcpy(tiled + f * N + i * O,
                      dy + ((first + i) * g.filters + gr * K + f) * O,
                      size_t(O) * sizeof(float));
      grad = tiled;
    }
    float *dcol = scratch(0, size_t(M * N));
    gemmFor(M, N, K)(CblasRowMajor, CblasTrans, CblasNoTrans, blasint(M),
                     blasint(N), blasint(K), 1.0f, w + gr * K * M, blasint(M),
                     grad, blasint(N), 0.0f, dcol, blasint(N));
    for (int64_t i = 0; i < count; ++i)
      scatter(s, dcol + i * O, N, first + i, gr, dx);
  });
}

extern "C" void lmc_rt_conv_weight_grad_f32(
    const float *x, const float *dy, float *dw,
    const lmc_rt_conv_geometry *geometry) {
  const Shape s(*geometry);
  const lmc_rt_conv_geometry &g = *geometry;
  const int64_t M = s.groupFilters, N = s.windowRows, O = s.outputVolume;
  if (s.empty()) {
    std::fill(dw, dw + g.filters * N, 0.0f);
    return;
  }
  // dW[g] is cut into parts along its longer side, by shape alone; each
  // part sums the tiles in order.
  const bool byRows = M >= N;
  const int64_t extent = byRows ? M : N;
  const int64_t parts =
      lmc::rt::isSmallProduct(1, M, N, s.tile * O)
          ? 1
          : lmc::rt::matmulPartCount(extent, lmc::rt::matmulPartBudget());
  const Gemm gemm = gemmFor(M, N, s.tile * O);
  const int64_t block = s.tile * O; // columns of a full tile
  static std::vector<float> windows, grads;
  for (int64_t firstTile = 0; firstTile < s.tiles; firstTile += s.chunkTiles) {
    const int64_t tileCount = std::min(s.chunkTiles, s.tiles - firstTile);
    gatherTiles(s, x, firstTile, tileCount, windows);
    // dy' per tile, [F, its images * O] (one image: dy itself).
    if (s.tile > 1) {
      grads.resize(size_t(tileCount * g.filters * block));
      for (int64_t k = 0; k < tileCount; ++k) {
        int64_t first, count;
        tileImages(s, firstTile + k, first, count);
        copyImages(s, first, count, /*toMatrix=*/true, dy,
                   grads.data() + k * g.filters * block);
      }
    }
    shareJobs(g.groups * parts, [&](int64_t job) {
      const int64_t gr = job / parts, part = job % parts;
      const int64_t lo = extent * part / parts,
                    hi = extent * (part + 1) / parts;
      float *out = dw + gr * M * N;
      for (int64_t k = 0; k < tileCount; ++k) {
        int64_t first, count;
        tileImages(s, firstTile + k, first, count);
        const int64_t K = count * O; // also the matrices' row length
        const float *a =
            (s.tile > 1 ? grads.data() + k * g.filters * block
                        : dy + first * g.filters * O) +
            gr * M * K;
        const float *b = windows.data() + (k * g.groups + gr) * N * block;
        const float beta = firstTile + k == 0 ? 0.0f : 1.0f;
        if (byRows) // rows lo..hi of dW[g] and of dy'[g]
          gemm(CblasRowMajor, CblasNoTrans, CblasTrans, blasint(hi - lo),
               blasint(N), blasint(K), 1.0f, a + lo * K, blasint(K), b,
               blasint(K), beta, out + lo * N, blasint(N));
        else // columns lo..hi of dW[g]: rows lo..hi of col
          gemm(CblasRowMajor, CblasNoTrans, CblasTrans, blasint(M),
               blasint(hi - lo), blasint(K), 1.0f, a, blasint(K),
               b + lo * K, blasint(K), beta, out + lo, blasint(N));
      }
    });
  }
}
