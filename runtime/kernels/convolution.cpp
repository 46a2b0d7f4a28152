//===- convolution.cpp - Convolutions as GEMMs over gathered windows -----===//
//
// lmc.conv and its two adjoints on dense [N, C, spatial...] tensors, as
// im2col + GEMM: for one image and one group, the windows the output
// positions read are gathered into a matrix col [C/groups * kernel volume,
// output positions] (zero where a window overhangs the padding), and
//
//   forward          y[n, g]  = W[g] col                  (Fg x O)
//   input gradient   dcol     = W[g]^T dy[n, g], then scattered back onto
//                    dx[n, g] (col2im: each window adds to what it read)
//   weight gradient  dW[g]    = sum over n of dy[n, g] col^T
//
// each product one single-threaded call of the GEMM lmc_rt_matmul_f32
// uses (oneDNN; OpenBLAS below a million multiply-adds). A 1 x 1 kernel
// with stride 1 and no padding reads the input as it lies: no gather.
//
// The generated loop nests this replaces ran a ResNet's convolutions at
// about 1 GFLOP/s (docs/perf.md); the products here run at the GEMM's rate
// and the gathers are a pass over the windows' bytes.
//
// Threads: the forward and the input gradient share the (image, group)
// pairs, each computed alone by one call. The weight gradient sums over
// the images: its output is cut into parts by its shape alone
// (matmulPartCount), each part accumulating the images in order, so the
// sum runs in the same order on any thread count, and the results are the
// same bits on 1 or 16 threads.
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

using Gemm = void (*)(CBLAS_ORDER, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, blasint,
                      blasint, blasint, float, const float *, blasint,
                      const float *, blasint, float, float *, blasint);

/// The sizes the three kernels derive from a geometry.
struct Shape {
  const lmc_rt_conv_geometry &g;
  int64_t groupChannels, groupFilters; // C / groups, F / groups
  int64_t kernelVolume, inputVolume, outputVolume;
  int64_t windowRows; // col's rows: groupChannels * kernelVolume

  explicit Shape(const lmc_rt_conv_geometry &geometry) : g(geometry) {
    groupChannels = g.channels / g.groups;
    groupFilters = g.filters / g.groups;
    kernelVolume = g.kernel[0] * g.kernel[1] * g.kernel[2];
    inputVolume = g.input[0] * g.input[1] * g.input[2];
    outputVolume = g.output[0] * g.output[1] * g.output[2];
    windowRows = groupChannels * kernelVolume;
  }

  /// A 1 x 1 window at stride 1 without padding: col is the input itself.
  bool readsInputAsItLies() const {
    for (int d = 0; d < 3; ++d)
      if (g.kernel[d] != 1 || g.strides[d] != 1 || g.pad_low[d] != 0 ||
          g.input[d] != g.output[d])
        return false;
    return true;
  }

  bool empty() const {
    return g.batch <= 0 || groupChannels <= 0 || groupFilters <= 0 ||
           kernelVolume <= 0 || outputVolume <= 0;
  }

  /// Image n's group g of a [N, channels, volume] tensor.
  template <typename T>
  T *group(T *base, int64_t n, int64_t group, int64_t channels,
           int64_t perGroup, int64_t volume) const {
    return base + (n * channels + group * perGroup) * volume;
  }
};

/// The GEMM of an M x N x K product, on the calling thread (see the file
/// comment).
Gemm gemmFor(int64_t M, int64_t N, int64_t K) {
  return lmc::rt::isSmallProduct(1, M, N, K) ? cblas_sgemm : lmc::rt::f32Gemm;
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

/// Calls visit(row, colRow, in, ow0, ow1, stride) for every run of one col
/// row that reads input in-bounds positions, and zero(colRow + o, count)
/// for the positions outside: the walk shared by the gather and the
/// scatter. `in` is the channel's first input element at the run's
/// start; the run covers output positions [ow0, ow1) of one output row.
template <typename Run, typename Outside>
void walkWindows(const Shape &s, Run run, Outside outside) {
  const lmc_rt_conv_geometry &g = s.g;
  const int64_t OD = g.output[0], OH = g.output[1], OW = g.output[2];
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
          for (int64_t od = 0; od < OD; ++od) {
            const int64_t id = od * g.strides[0] + offD;
            for (int64_t oh = 0; oh < OH; ++oh) {
              const int64_t ih = oh * g.strides[1] + offH;
              const int64_t o = (od * OH + oh) * OW;
              if (id < 0 || id >= ID || ih < 0 || ih >= IH || w0 == w1) {
                outside(row, o, OW);
                continue;
              }
              outside(row, o, w0);
              outside(row, o + w1, OW - w1);
              const int64_t in = ((c * ID + id) * IH + ih) * IW +
                                 w0 * g.strides[2] + offW;
              run(row, o + w0, in, w1 - w0, g.strides[2]);
            }
          }
        }
}

/// col [windowRows, O] of one image's group (x points at its first
/// channel).
void gather(const Shape &s, const float *x, float *col) {
  const int64_t O = s.outputVolume;
  walkWindows(
      s,
      [&](int64_t row, int64_t o, int64_t in, int64_t count, int64_t stride) {
        float *dst = col + row * O + o;
        const float *src = x + in;
        if (stride == 1) {
          std::memcpy(dst, src, size_t(count) * sizeof(float));
          return;
        }
        for (int64_t i = 0; i < count; ++i)
          dst[i] = src[i * stride];
      },
      [&](int64_t row, int64_t o, int64_t count) {
        std::fill(col + row * O + o, col + row * O + o + count, 0.0f);
      });
}

/// dx (one image's group, zeroed by the caller) += every window's share
/// of dcol [windowRows, O], in a fixed order.
void scatter(const Shape &s, const float *dcol, float *dx) {
  const int64_t O = s.outputVolume;
  walkWindows(
      s,
      [&](int64_t row, int64_t o, int64_t in, int64_t count, int64_t stride) {
        const float *src = dcol + row * O + o;
        float *dst = dx + in;
        for (int64_t i = 0; i < count; ++i)
          dst[i * stride] += src[i];
      },
      [](int64_t, int64_t, int64_t) {});
}

/// The OpenMP threads (if any) run `body(job)` for job in [0, jobs), each
/// on one thread.
template <typename Body> void shareJobs(int64_t jobs, Body body) {
  const int threads = omp_get_max_threads();
#pragma omp parallel for schedule(static) if (threads > 1 && jobs > 1)
  for (int64_t job = 0; job < jobs; ++job)
    body(job);
}

/// A per-thread scratch matrix of at least `count` floats.
float *scratch(size_t count) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < count)
    buffer.resize(count);
  return buffer.data();
}

/// Bytes of gathered windows the weight gradient holds at once (images
/// are taken in chunks that fit, in order).
constexpr size_t kWindowBudgetBytes = size_t(64) << 20;

} // namespace

extern "C" void lmc_rt_conv_f32(const float *x, const float *w, float *y,
                                const lmc_rt_conv_geometry *geometry) {
  const Shape s(*geometry);
  const lmc_rt_conv_geometry &g = *geometry;
  if (s.empty()) {
    std::fill(y, y + g.batch * g.filters * s.outputVolume, 0.0f);
    return;
  }
  const int64_t M = s.groupFilters, N = s.outputVolume, K = s.windowRows;
  const Gemm gemm = gemmFor(M, N, K);
  const bool direct = s.readsInputAsItLies();
  shareJobs(g.batch * g.groups, [&](int64_t job) {
    const int64_t n = job / g.groups, gr = job % g.groups;
    const float *in = s.group(x, n, gr, g.channels, s.groupChannels,
                              s.inputVolume);
    const float *col = in;
    if (!direct) {
      float *gathered = scratch(size_t(K * N));
      gather(s, in, gathered);
      col = gathered;
    }
    gemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blasint(M), blasint(N),
         blasint(K), 1.0f, w + gr * M * K, blasint(K), col, blasint(N), 0.0f,
         s.group(y, n, gr, g.filters, M, N), blasint(N));
  });
}

extern "C" void lmc_rt_conv_input_grad_f32(
    const float *dy, const float *w, float *dx,
    const lmc_rt_conv_geometry *geometry) {
  const Shape s(*geometry);
  const lmc_rt_conv_geometry &g = *geometry;
  if (s.empty()) {
    std::fill(dx, dx + g.batch * g.channels * s.inputVolume, 0.0f);
    return;
  }
  const int64_t M = s.windowRows, N = s.outputVolume, K = s.groupFilters;
  const Gemm gemm = gemmFor(M, N, K);
  const bool direct = s.readsInputAsItLies();
  shareJobs(g.batch * g.groups, [&](int64_t job) {
    const int64_t n = job / g.groups, gr = job % g.groups;
    float *out = s.group(dx, n, gr, g.channels, s.groupChannels,
                         s.inputVolume);
    float *dcol = direct ? out : scratch(size_t(M * N));
    gemm(CblasRowMajor, CblasTrans, CblasNoTrans, blasint(M), blasint(N),
         blasint(K), 1.0f, w + gr * K * M, blasint(M),
         s.group(dy, n, gr, g.filters, K, N), blasint(N), 0.0f, dcol,
         blasint(N));
    if (direct)
      return;
    std::fill(out, out + s.groupChannels * s.inputVolume, 0.0f);
    scatter(s, dcol, out);
  });
}

extern "C" void lmc_rt_conv_weight_grad_f32(
    const float *x, const float *dy, float *dw,
    const lmc_rt_conv_geometry *geometry) {
  const Shape s(*geometry);
  const lmc_rt_conv_geometry &g = *geometry;
  const int64_t M = s.groupFilters, N = s.windowRows, K = s.outputVolume;
  if (s.empty()) {
    std::fill(dw, dw + g.filters * N, 0.0f);
    return;
  }
  const Gemm gemm = gemmFor(M, N, K);
  const bool direct = s.readsInputAsItLies();
  // dW[g] is cut into parts along its longer side, by shape alone.
  const bool byRows = M >= N;
  const int64_t extent = byRows ? M : N;
  const int64_t parts =
      lmc::rt::isSmallProduct(1, M, N, K)
          ? 1
          : lmc::rt::matmulPartCount(extent, lmc::rt::matmulPartBudget());
  // The images whose windows are gathered at once.
  const size_t perImage = size_t(g.groups * N * K) * sizeof(float);
  const int64_t chunk =
      direct ? g.batch
             : std::clamp<int64_t>(int64_t(kWindowBudgetBytes / perImage), 1,
                                   g.batch);
  static std::vector<float> windows; // the chunk's col matrices
  if (!direct && windows.size() < size_t(chunk * g.groups * N * K))
    windows.resize(size_t(chunk * g.groups * N * K));
  for (int64_t first = 0; first < g.batch; first += chunk) {
    const int64_t count = std::min(chunk, g.batch - first);
    if (!direct)
      shareJobs(count * g.groups, [&](int64_t job) {
        const int64_t n = first + job / g.groups, gr = job % g.groups;
        gather(s,
               s.group(x, n, gr, g.channels, s.groupChannels, s.inputVolume),
               windows.data() + job * N * K);
      });
    shareJobs(g.groups * parts, [&](int64_t job) {
      const int64_t gr = job / parts, part = job % parts;
      const int64_t lo = extent * part / parts,
                    hi = extent * (part + 1) / parts;
      float *out = dw + gr * M * N;
      for (int64_t i = 0; i < count; ++i) {
        const int64_t n = first + i;
        const float *col =
            direct ? s.group(x, n, gr, g.channels, s.groupChannels,
                             s.inputVolume)
                   : windows.data() + (i * g.groups + gr) * N * K;
        const float *grad = s.group(dy, n, gr, g.filters, M, K);
        const float beta = n == 0 ? 0.0f : 1.0f;
        if (byRows) // rows lo..hi of dW[g] and of dy[n, g]
          gemm(CblasRowMajor, CblasNoTrans, CblasTrans, blasint(hi - lo),
               blasint(N), blasint(K), 1.0f, grad + lo * K, blasint(K), col,
               blasint(K), beta, out + lo * N, blasint(N));
        else // columns lo..hi of dW[g]: rows lo..hi of col
          gemm(CblasRowMajor, CblasNoTrans, CblasTrans, blasint(M),
               blasint(hi - lo), blasint(K), 1.0f, grad, blasint(K),
               col + lo * K, blasint(K), beta, out + lo, blasint(N));
      }
    });
  }
}
