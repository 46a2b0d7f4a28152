//===- attention.cpp - Masked attention in blocks of queries -------------===//
//
// softmax(mask(scale * Q Kt)) V and its gradient without the [T, S] score
// and probability matrices of every (batch, head) pair: one block of query
// rows at a time, its scores in a scratch buffer, and only over the keys
// the block's mask leaves some row to attend to. A causal mask (GPT)
// leaves the lower triangle: about half the key blocks, half the products,
// are skipped. Row by row the arithmetic is the unfused softmax's (the
// maximum, exponentials of the differences, their sum), except that the
// division by the sum is applied to the few output values of a row (its
// product with v) instead of to its many probabilities; the backward
// reads the exponentials the forward kept, when the caller gives it room
// for them, or recomputes them from the saved maxima, bitwise the same,
// and folds the sums into the same per-row factors. When every
// row's unmasked keys are one run (causal, sliding-window and padding
// masks) the row loops touch only that run and read no mask bytes. The
// row passes (maximum, exponentials and sum, the softmax's gradient) are
// softmax_rows.h's.
//
// The products are small (64 query rows, a head of 64 columns, up to a
// few hundred keys) and run on lmc's own register-blocked kernel
// (small_gemm.h), which also skips, tile by tile of 8 rows, the keys a
// one-run mask leaves none of the tile's rows: a causal mask's blocks are
// triangles down to the tile, not the 64-row block (BlockBounds). The
// keys and values each product reads by columns are transposed once per
// pair.
//
// Each matrix is read and written where the caller's layout puts it: the
// compiler passes the heads inside a fused q/k/v projection, the keys
// untransposed, and the results in the order their consumers read them,
// instead of transposing each into dense [pairs, rows, cols] blocks and
// back. A pair's operands with rows far apart are copied dense first (its
// products read them many times, and rows a whole projection apart spread
// a block over many pages and few cache sets), such results computed
// dense and copied out.
//
//===----------------------------------------------------------------------===//

#include "lmc/runtime/kernels.h"

#include "small_gemm.h"
#include "softmax_rows.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

// libomp's API (declared here as in matmul.cpp: the fuzz build's clang has
// no omp.h).
extern "C" int omp_get_num_threads(void);
extern "C" int omp_get_thread_num(void);

namespace {

using lmc::rt::expAndSum;
using lmc::rt::maskAndMax;
using lmc::rt::rowDot;
using lmc::rt::rowMax;
using lmc::rt::smallGemm;
using lmc::rt::softmaxGrad;
using lmc::rt::Span;
using lmc::rt::StridedMatrix;
using lmc::rt::TileBounds;

/// A causal row's span is padded to whole lanes of the row passes.
constexpr int64_t kLanes = lmc::rt::kRowLanes;

/// Query rows per block: the scores of a block (kBlock x S floats) stay in
/// the L2 cache for S up to a few thousand keys.
constexpr int64_t kBlock = 64;

/// The keys a block of query rows attends to: the columns where some row's
/// mask is 0; empty ({0, 0}) when every key is masked.
std::vector<Span> keyRanges(const uint8_t *mask, int64_t T, int64_t S) {
  std::vector<Span> ranges;
  for (int64_t i0 = 0; i0 < T; i0 += kBlock) {
    Span range{S, 0};
    for (int64_t i = i0; i < std::min(T, i0 + kBlock); ++i) {
      const uint8_t *row = mask + i * S;
      int64_t j = 0;
      while (j < S && row[j])
        ++j;
      if (j == S)
        continue;
      int64_t k = S;
      while (row[k - 1])
        --k;
      range.begin = std::min(range.begin, j);
      range.end = std::max(range.end, k);
    }
    if (range.begin >= range.end)
      range = {0, 0};
    ranges.push_back(range);
  }
  return ranges;
}

/// How many of n mask bytes are set (vectorizes: a long mask's rows are
/// scanned once per call).
int64_t countMasked(const uint8_t *bytes, int64_t n) {
  int64_t count = 0;
  for (int64_t j = 0; j < n; ++j)
    count += bytes[j] != 0;
  return count;
}

/// Every query row's unmasked keys when they are one run (empty when every
/// key is masked), or nothing if some row's are not (the row loops then
/// read the mask).
std::vector<Span> rowSpans(const uint8_t *mask, int64_t T, int64_t S) {
  std::vector<Span> spans;
  for (int64_t i = 0; i < T; ++i) {
    const uint8_t *row = mask + i * S;
    const void *firstOpen = std::memchr(row, 0, size_t(S));
    if (!firstOpen) {
      spans.push_back({0, 0});
      continue;
    }
    int64_t lo = static_cast<const uint8_t *>(firstOpen) - row;
    int64_t hi = lo + (S - countMasked(row, S));
    if (countMasked(row + lo, hi - lo) != 0) // open keys not all in one run
      return {};
    spans.push_back({lo, hi});
  }
  return spans;
}

/// The union of the non-empty spans among `spans[from, to)`, each less
/// `offset` and clipped to [0, width); {0, 0} if there is none.
Span unionOf(const Span *spans, int64_t from, int64_t to, int64_t offset,
             int64_t width) {
  Span all{std::numeric_limits<int64_t>::max(), 0};
  for (int64_t i = from; i < to; ++i)
    if (spans[i].begin < spans[i].end) {
      all.begin = std::min(all.begin, spans[i].begin - offset);
      all.end = std::max(all.end, spans[i].end - offset);
    }
  all.begin = std::max<int64_t>(all.begin, 0);
  all.end = std::min(all.end, width);
  return all.begin < all.end ? all : Span{0, 0};
}

/// keyRanges() read off the rows' spans.
std::vector<Span> keyRanges(const std::vector<Span> &spans, int64_t S) {
  std::vector<Span> ranges;
  int64_t T = int64_t(spans.size());
  for (int64_t i0 = 0; i0 < T; i0 += kBlock)
    ranges.push_back(unionOf(spans.data(), i0, std::min(T, i0 + kBlock), 0, S));
  return ranges;
}

/// What a pair's blocks share: the block key ranges and, for one-run
/// masks, each row's span.
struct MaskLayout {
  const uint8_t *mask;
  std::vector<Span> spans; // empty: read the mask
  std::vector<Span> ranges;

  MaskLayout(const uint8_t *mask, int64_t T, int64_t S)
      : mask(mask), spans(rowSpans(mask, T, S)),
        ranges(spans.empty() ? keyRanges(mask, T, S) : keyRanges(spans, S)) {}

  /// Row i's span within a block's keys [first, first + width), from
  /// `first` on (spans only).
  Span keysOf(int64_t i, int64_t first, int64_t width) const {
    const Span span = spans[size_t(i)];
    int64_t lo = std::clamp(span.begin - first, int64_t(0), width);
    return {lo, std::clamp(span.end - first, lo, width)};
  }
};

/// Masks row `i` of a block's scores (keys [first, first + width)) and
/// exponentiates it in place: e^(score - max) at unmasked keys, 0 at masked
/// ones. Returns the maximum and, unless `stat` is given, the sum of the
/// exponentials; with `stat` (the backward), the forward's maximum is used
/// (+inf for a row whose sum was 0: every key masked) so that the
/// exponentials are the forward's bit for bit.
std::pair<float, float> exponentiateRow(float *row, const MaskLayout &layout,
                                        int64_t i, int64_t S, int64_t first,
                                        int64_t width,
                                        const float *stat = nullptr) {
  const float negInf = -std::numeric_limits<float>::infinity();
  auto forwardMax = [&] {
    return stat[1] == 0 ? std::numeric_limits<float>::infinity() : stat[0];
  };
  if (layout.spans.empty()) {
    float max = maskAndMax(row, layout.mask + i * S + first, width);
    if (stat)
      max = forwardMax();
    if (!stat && max == negInf) { // every key masked: no exponentials
      std::fill(row, row + width, 0.0f);
      return {max, 0.0f};
    }
    return {max, expAndSum(row, width, max)};
  }
  const auto [lo, hi] = layout.keysOf(i, first, width);
  if (lo == hi) {
    std::fill(row, row + width, 0.0f);
    return {negInf, 0.0f};
  }
  // The span rounded up to whole lanes where the row has room, the keys
  // past it set to -inf (exponentials exactly 0): the row loops then run
  // no scalar tail, which cost more than the vector part on a causal
  // mask's short rows.
  const int64_t padded =
      std::min(width - lo, (hi - lo + kLanes - 1) / kLanes * kLanes);
  std::fill(row, row + lo, 0.0f);
  std::fill(row + hi, row + lo + padded, negInf);
  std::fill(row + lo + padded, row + width, 0.0f);
  float max = stat ? forwardMax() : rowMax(row + lo, padded);
  return {max, expAndSum(row + lo, padded, max)};
}

/// The softmax's gradient on row `i` of a block (keys [first, first +
/// width)): softmaxGrad() over the row's span, zeros elsewhere (where its
/// dP may not have been computed, BlockBounds), or over the whole row when
/// the mask is read byte by byte.
void softmaxGradRow(float *g, const float *e, const MaskLayout &layout,
                    int64_t i, int64_t first, int64_t width, float dot,
                    float factor) {
  if (layout.spans.empty())
    return softmaxGrad(g, e, width, dot, factor);
  const auto [lo, hi] = layout.keysOf(i, first, width);
  std::fill(g, g + lo, 0.0f);
  std::fill(g + hi, g + width, 0.0f);
  softmaxGrad(g + lo, e + lo, hi - lo, dot, factor);
}

/// One pair's matrix: element (i, j) at p[i * row + j * col].
template <typename Float> struct Matrix {
  Float *p;
  int64_t row, col;

  Float *rowAt(int64_t i) const { return p + i * row; } // col == 1
};

struct Shape {
  int64_t T, S, D, Dv;
  float scale;
};

/// The next pair's operands, fetched into the L2 cache a slice at a time
/// between this pair's products. In a training step the backward reads q,
/// k, v, the output and the kept exponentials the forward wrote long
/// before, out of memory, and a pair's rows are short runs a projection
/// apart, which the hardware prefetchers pick up late: in the step the
/// backward ran about a quarter slower than alone, its operands in cache.
/// Fetching the next pair's while this one computes wins part of it back
/// (docs/perf.md, "Measurements behind the kernels' choices"); where a
/// pair's operands pass the budget below (GPT-2 at 1 x 1024) it changes
/// nothing.
class NextPair {
public:
  /// The next pair's bytes are fetched only up to this (a quarter of a
  /// core's L2 here): more would push this pair's own operands out.
  static constexpr int64_t kMaxBytes = int64_t(512) << 10;
  /// Cache lines fetched per slice: a pair issues a slice after each of
  /// its products, and the lines left when it ends are dropped rather
  /// than waited for.
  static constexpr int64_t kSliceLines = 384;

  /// Adds rows x cols floats, rows `row` floats apart, unless they
  /// would take the total past kMaxBytes (what the caller adds first is
  /// kept first).
  void add(const float *p, int64_t rows, int64_t row, int64_t cols) {
    const int64_t bytes = rows * cols * int64_t(sizeof(float));
    if (count_ == kMaxRanges || bytes_ + bytes > kMaxBytes)
      return;
    bytes_ += bytes;
    ranges_[count_++] = {reinterpret_cast<const char *>(p), rows,
                         row * int64_t(sizeof(float)),
                         cols * int64_t(sizeof(float))};
  }
  /// Adds matrix `m` (rows x cols, either stride 1).
  void add(const Matrix<const float> &m, int64_t rows, int64_t cols) {
    if (m.col == 1)
      add(m.p, rows, m.row, cols);
    else
      add(m.p, cols, m.col, rows);
  }
  /// Fetches the next slice.
  void slice() {
    for (int64_t lines = 0; lines < kSliceLines && next_ < count_;) {
      const Range &r = ranges_[next_];
      const char *row = r.p + row_ * r.stride;
      for (int64_t b = 0; b < r.bytes; b += 64, ++lines)
        __builtin_prefetch(row + b, 0, 2); // to L2 (prefetcht1)
      if (++row_ == r.rows) {
        row_ = 0;
        ++next_;
      }
    }
  }

private:
  struct Range {
    const char *p;
    int64_t rows, stride, bytes;
  };
  static constexpr int kMaxRanges = 6;
  Range ranges_[kMaxRanges];
  int count_ = 0, next_ = 0;
  int64_t row_ = 0, bytes_ = 0;
};

/// A thread's buffers, kept from call to call: a block's scores are
/// hundreds of kilobytes, which malloc would map and fault in anew on
/// every call.
struct Scratch {
  std::vector<float> blocks;           // scores and their gradient
  std::vector<float> q, keys, v, dout; // dense copies of strided operands
  std::vector<float> kt, vt;           // keys and values transposed
  std::vector<float> dq, dkeys, dv;    // dense results, then copied out
  std::vector<Span> queryTiles, keyTiles; // a block's BlockBounds
};

/// Whether a pair's matrix is read or written in place: rows dense, or
/// strided over at most LMC_RT_ATTENTION_IN_PLACE_SPAN, 1 MiB (half a
/// core's L2 here). Wider, one head's
/// block spreads over many pages and few cache sets, and a dense copy
/// pays; narrower, the copy costs more than it saves (docs/perf.md,
/// "Measurements behind the kernels' choices").
bool inPlace(int64_t rows, int64_t rowStride, int64_t cols) {
  return rowStride == cols || rows * rowStride * int64_t(sizeof(float)) <=
                                  LMC_RT_ATTENTION_IN_PLACE_SPAN;
}

/// `m` (rows x cols, col 1) itself when inPlace(), else a dense copy in
/// `buffer`.
Matrix<const float> denseRows(const Matrix<const float> &m, int64_t rows,
                              int64_t cols, std::vector<float> &buffer) {
  if (inPlace(rows, m.row, cols))
    return m;
  buffer.resize(size_t(rows * cols));
  for (int64_t i = 0; i < rows; ++i)
    std::copy(m.rowAt(i), m.rowAt(i) + cols, buffer.data() + i * cols);
  return {buffer.data(), cols, 1};
}

/// `m` (rows x cols, col 1) transposed into `buffer`: cols x rows, dense.
Matrix<const float> transposeRows(const Matrix<const float> &m, int64_t rows,
                                  int64_t cols, std::vector<float> &buffer) {
  buffer.resize(size_t(rows * cols));
  lmc::rt::transposeMatrix(m.p, m.row, rows, cols, buffer.data(), rows);
  return {buffer.data(), rows, 1};
}

/// kt (D x S) with its rows (one per head column) contiguous: itself when
/// stored so, else the keys [S, D] transposed (the products then read
/// every operand by rows).
Matrix<const float> keyColumns(const Matrix<const float> &kt, int64_t D,
                               int64_t S, Scratch &scratch) {
  if (kt.col == 1)
    return denseRows(kt, D, S, scratch.keys);
  return transposeRows({kt.p, kt.col, 1}, S, D, scratch.kt);
}

/// The keys [S, D] by rows: as stored, or kt [D, S] transposed.
Matrix<const float> keyRows(const Matrix<const float> &kt, int64_t D,
                            int64_t S, Scratch &scratch) {
  if (kt.col == 1)
    return transposeRows(kt, D, S, scratch.kt);
  return denseRows({kt.p, kt.col, 1}, S, D, scratch.keys);
}

/// Where to compute a rows x cols result `m` lays out: `m` itself when
/// inPlace(), else `buffer` (then copyRows() to `m`).
Matrix<float> denseTarget(const Matrix<float> &m, int64_t rows, int64_t cols,
                          std::vector<float> &buffer) {
  if (inPlace(rows, m.row, cols))
    return m;
  buffer.resize(size_t(rows * cols));
  return {buffer.data(), cols, 1};
}

void copyRows(const Matrix<float> &from, const Matrix<float> &to,
              int64_t rows, int64_t cols) {
  if (from.p == to.p)
    return;
  for (int64_t i = 0; i < rows; ++i)
    std::copy(from.rowAt(i), from.rowAt(i) + cols, to.rowAt(i));
}

/// Pair matrix `m`'s rows from i0 on as a product's operand, or its
/// transpose.
StridedMatrix rowsFrom(const Matrix<const float> &m, int64_t i0) {
  return {m.p + i0 * m.row, m.row, m.col};
}
StridedMatrix transposed(const StridedMatrix &m) { return {m.p, m.col, m.row}; }

/// Which parts of a block's products a one-run mask leaves non-zero (the
/// products' TileBounds); for a mask read byte by byte, none (every
/// product over all its terms).
struct BlockBounds {
  /// Per tile of query rows: the keys (from the block's first) its rows
  /// attend to. The scores' columns, the terms of E V and of dS K.
  const Span *queryTiles = nullptr;
  /// Per tile of keys: the query rows (from the block's first) that attend
  /// to one of them. The terms of E^T dO and dS^T Q: `gradient` only.
  const Span *keyTiles = nullptr;

  BlockBounds(const MaskLayout &layout, int64_t i0, int64_t rows,
              int64_t first, int64_t width, bool gradient, Scratch &scratch);
  TileBounds columns() const { return {queryTiles, nullptr}; }
  TileBounds terms() const { return {nullptr, queryTiles}; }
  TileBounds keyTerms() const { return {nullptr, keyTiles}; }
};

BlockBounds::BlockBounds(const MaskLayout &layout, int64_t i0, int64_t rows,
                         int64_t first, int64_t width, bool gradient,
                         Scratch &scratch) {
  if (layout.spans.empty())
    return;
  constexpr int64_t kTile = lmc::rt::kSmallGemmTileRows;
  const Span *spans = layout.spans.data() + i0;
  std::vector<Span> &queries = scratch.queryTiles, &keys = scratch.keyTiles;
  queries.clear();
  for (int64_t r0 = 0; r0 < rows; r0 += kTile)
    queries.push_back(
        unionOf(spans, r0, std::min(rows, r0 + kTile), first, width));
  queryTiles = queries.data();
  if (!gradient)
    return;
  keys.clear();
  for (int64_t j0 = 0; j0 < width; j0 += kTile) {
    const int64_t from = first + j0, to = first + std::min(width, j0 + kTile);
    Span rowsOf{rows, 0};
    for (int64_t r = 0; r < rows; ++r)
      if (spans[r].begin < spans[r].end && spans[r].begin < to &&
          spans[r].end > from) {
        rowsOf.begin = std::min(rowsOf.begin, r);
        rowsOf.end = r + 1;
      }
    keys.push_back(rowsOf.begin < rowsOf.end ? rowsOf : Span{0, 0});
  }
  keyTiles = keys.data();
}

/// Scores of rows [i0, i0 + rows) over keys [first, first + width):
/// scale * Q Kt (the GEMM applies alpha to each finished sum, as the
/// unfused graph's scale does).
/// kt is D x S by rows; only the columns `bounds` asks for are written.
void scores(const Matrix<const float> &q, const Matrix<const float> &kt,
            const Matrix<float> &s, int64_t i0, int64_t rows, int64_t first,
            int64_t width, const Shape &shape, const BlockBounds &bounds) {
  smallGemm(rows, width, shape.D, shape.scale, rowsFrom(q, i0),
            rowsFrom(kt, 0).atColumn(first), s.p, s.row, false,
            bounds.columns());
}

/// Where a block's exponentials (rows x width) lie: the pair's kept
/// exponentials ([T, S], the block's rows and keys) when the caller keeps
/// them, else the block's scratch.
Matrix<float> blockExponentials(float *kept, float *scratch, int64_t i0,
                                int64_t first, int64_t width, int64_t S) {
  if (kept)
    return {kept + i0 * S + first, S, 1};
  return {scratch, width, 1};
}

void forwardPair(Matrix<const float> q, Matrix<const float> kt,
                 Matrix<const float> v, const MaskLayout &layout,
                 const Matrix<float> &out, float *stats, float *exps,
                 const Shape &shape, Scratch &scratch, NextPair &next) {
  const auto [T, S, D, Dv, scale] = shape;
  q = denseRows(q, T, D, scratch.q);
  kt = keyColumns(kt, D, S, scratch);
  v = denseRows(v, S, Dv, scratch.v);
  scratch.blocks.resize(exps ? 0 : size_t(kBlock * S));
  for (int64_t i0 = 0, block = 0; i0 < T; i0 += kBlock, ++block) {
    int64_t rows = std::min(kBlock, T - i0);
    auto [first, last] = layout.ranges[size_t(block)];
    int64_t width = last - first;
    if (width > 0) {
      const BlockBounds bounds(layout, i0, rows, first, width, false,
                               scratch);
      const Matrix<float> e = blockExponentials(
          exps, scratch.blocks.data(), i0, first, width, S);
      scores(q, kt, e, i0, rows, first, width, shape, bounds);
      next.slice();
      for (int64_t i = 0; i < rows; ++i) {
        float *stat = stats + 2 * (i0 + i);
        std::tie(stat[0], stat[1]) =
            exponentiateRow(e.rowAt(i), layout, i0 + i, S, first, width);
      }
      next.slice();
      // out = (E V) / sum, row by row.
      smallGemm(rows, Dv, width, 1.0f, {e.p, e.row, 1}, rowsFrom(v, first),
                out.rowAt(i0), out.row, false, bounds.terms());
      next.slice();
    }
    for (int64_t i = i0; i < i0 + rows; ++i) {
      float *row = out.rowAt(i), max = stats[2 * i], sum = stats[2 * i + 1];
      if (width == 0) {
        max = stats[2 * i] = -std::numeric_limits<float>::infinity();
        sum = stats[2 * i + 1] = 0;
      }
      // A row with every key masked: NaN, as the unfused softmax gives it
      // (-inf - -inf).
      if (max == -std::numeric_limits<float>::infinity())
        std::fill(row, row + Dv, std::numeric_limits<float>::quiet_NaN());
      else
        for (int64_t c = 0; c < Dv; ++c)
          row[c] = row[c] / sum;
    }
  }
}

/// Zeroes keys [from, to) of dkt (D x S, either way it is stored).
void zeroKeys(const Matrix<float> &dkt, int64_t D, int64_t from, int64_t to) {
  if (from >= to)
    return;
  if (dkt.col == 1)
    for (int64_t d = 0; d < D; ++d)
      std::fill(dkt.rowAt(d) + from, dkt.rowAt(d) + to, 0.0f);
  else
    for (int64_t j = from; j < to; ++j)
      std::fill(dkt.p + j * dkt.col, dkt.p + j * dkt.col + D, 0.0f);
}

/// Zeroes rows [from, to) of a matrix with `cols` columns.
void zeroRows(const Matrix<float> &m, int64_t cols, int64_t from,
              int64_t to) {
  for (int64_t i = from; i < to; ++i)
    std::fill(m.rowAt(i), m.rowAt(i) + cols, 0.0f);
}

/// A pair's operands, results and cotangents.
struct GradPair {
  Matrix<const float> q, kt, v, out, dout;
  const float *stats;
  const float *exps; // the forward's, [T, S]; null: recomputed
  Matrix<float> dq, dkt, dv;
};

void backwardPair(GradPair g, const MaskLayout &layout, const Shape &shape,
                  Scratch &scratch, NextPair &next) {
  const auto [T, S, D, Dv, scale] = shape;
  const float *stats = g.stats;
  g.q = denseRows(g.q, T, D, scratch.q);
  // The keys by columns for the scores (when the exponentials are
  // recomputed), by rows for dQ; the values by columns for dP: every
  // product reads its right operand by rows.
  const Matrix<const float> keys = keyRows(g.kt, D, S, scratch);
  if (!g.exps)
    g.kt = keyColumns(g.kt, D, S, scratch);
  const Matrix<const float> vt = transposeRows(g.v, S, Dv, scratch.vt);
  g.dout = denseRows(g.dout, T, Dv, scratch.dout);
  // Results computed dense where their layout is not (dkt stored as the
  // keys as dense keys [S, D]), copied out at the end.
  const Matrix<float> dq = g.dq, dkt = g.dkt, dv = g.dv;
  const bool keysStored = dkt.col != 1;
  g.dq = denseTarget(dq, T, D, scratch.dq);
  g.dv = denseTarget(dv, S, Dv, scratch.dv);
  if (keysStored) {
    Matrix<float> keys =
        denseTarget({dkt.p, dkt.col, 1}, S, D, scratch.dkeys);
    g.dkt = {keys.p, 1, keys.row};
  }
  const int64_t recomputed = g.exps ? 0 : kBlock * S;
  scratch.blocks.resize(size_t(recomputed + kBlock * S + kBlock * Dv + T));
  float *eScratch = scratch.blocks.data(), *dp = eScratch + recomputed,
        *scaledDout = dp + kBlock * S, *rowDots = scaledDout + kBlock * Dv;
  // dot(dO_i, O_i): the softmax gradient's per-row term.
  for (int64_t i = 0; i < T; ++i)
    rowDots[i] = rowDot(g.dout.rowAt(i), g.out.rowAt(i), Dv);
  // dKt and dV accumulate over the blocks. The block with the most keys
  // (a causal mask's last) goes first and overwrites its keys; only the
  // keys outside it are zeroed beforehand (none for a causal mask). With
  // no queries (no blocks) every key is zeroed.
  const std::vector<Span> &ranges = layout.ranges;
  int64_t blocks = int64_t(ranges.size());
  int64_t widest = std::max_element(ranges.begin(), ranges.end(),
                                    [](const Span &a, const Span &b) {
                                      return a.end - a.begin <
                                             b.end - b.begin;
                                    }) -
                   ranges.begin();
  const Span w = blocks ? ranges[size_t(widest)] : Span{0, 0};
  zeroKeys(g.dkt, D, 0, w.begin);
  zeroKeys(g.dkt, D, w.end, S);
  zeroRows(g.dv, Dv, 0, w.begin);
  zeroRows(g.dv, Dv, w.end, S);
  for (int64_t n = 0; n < blocks; ++n) {
    // widest, then the others in order.
    int64_t block = n == 0 ? widest : n <= widest ? n - 1 : n;
    int64_t i0 = block * kBlock, rows = std::min(kBlock, T - i0);
    auto [first, last] = layout.ranges[size_t(block)];
    int64_t width = last - first;
    if (width == 0) {
      zeroRows(g.dq, D, i0, i0 + rows);
      continue;
    }
    const bool accumulate = n != 0;
    const BlockBounds bounds(layout, i0, rows, first, width, true, scratch);
    // The forward's exponentials: kept, or recomputed bitwise (the same
    // products and row pass from the same maximum). A row with every key
    // masked (sum 0) has none (its NaN output makes the gradient NaN
    // through its dot).
    Matrix<const float> e{nullptr, S, 1};
    if (g.exps) {
      e.p = g.exps + i0 * S + first;
    } else {
      const Matrix<float> recomputed{eScratch, width, 1};
      scores(g.q, g.kt, recomputed, i0, rows, first, width, shape, bounds);
      for (int64_t i = 0; i < rows; ++i)
        exponentiateRow(recomputed.rowAt(i), layout, i0 + i, S, first, width,
                        stats + 2 * (i0 + i));
      e = {recomputed.p, recomputed.row, 1};
    }
    for (int64_t i = 0; i < rows; ++i) {
      const float *stat = stats + 2 * (i0 + i);
      const float *dout = g.dout.rowAt(i0 + i);
      for (int64_t c = 0; c < Dv; ++c)
        scaledDout[i * Dv + c] = dout[c] / stat[1];
    }
    // dV[first..last) += (E / sum)^T dO = E^T (dO / sum)
    smallGemm(width, Dv, rows, 1.0f, {e.p, 1, e.row}, {scaledDout, Dv, 1},
              g.dv.rowAt(first), g.dv.row, accumulate, bounds.keyTerms());
    next.slice();
    // dP = dO V^T
    smallGemm(rows, width, Dv, 1.0f, rowsFrom(g.dout, i0),
              rowsFrom(vt, 0).atColumn(first), dp, width, false,
              bounds.columns());
    next.slice();
    // dS = (E / sum) (dP - dot(dO, O)) scale (the mask's zeros stay zero).
    for (int64_t i = 0; i < rows; ++i)
      softmaxGradRow(dp + i * width, e.rowAt(i), layout, i0 + i, first,
                     width, rowDots[i0 + i], scale / stats[2 * (i0 + i) + 1]);
    next.slice();
    // dQ = dS K
    smallGemm(rows, D, width, 1.0f, {dp, width, 1}, rowsFrom(keys, first),
              g.dq.rowAt(i0), g.dq.row, false, bounds.terms());
    next.slice();
    // dKt[:, first..last) += Q^T dS, or, stored as the keys,
    // dK[first..last) += dS^T Q.
    if (g.dkt.col == 1)
      smallGemm(D, width, rows, 1.0f, transposed(rowsFrom(g.q, i0)),
                {dp, width, 1}, g.dkt.p + first, g.dkt.row, accumulate);
    else
      smallGemm(width, D, rows, 1.0f, {dp, 1, width}, rowsFrom(g.q, i0),
                g.dkt.p + first * g.dkt.col, g.dkt.col, accumulate,
                bounds.keyTerms());
    next.slice();
  }
  copyRows(g.dq, dq, T, D);
  copyRows(g.dv, dv, S, Dv);
  if (keysStored)
    copyRows({g.dkt.p, g.dkt.col, 1}, {dkt.p, dkt.col, 1}, S, D);
}

/// Calls pair(p, next, scratch) for every pair on the OpenMP pool, each
/// thread a run of consecutive pairs, `next` the pair the thread computes
/// after p (-1 after its last). Pairs are independent and each is computed
/// the same way whichever thread takes it: results do not depend on the
/// thread count.
template <typename PairFn> void forEachPair(int64_t pairs, PairFn pair) {
#pragma omp parallel
  {
    thread_local Scratch scratch;
    const int64_t threads = omp_get_num_threads(), t = omp_get_thread_num();
    const int64_t end = pairs * (t + 1) / threads;
    for (int64_t p = pairs * t / threads; p < end; ++p)
      pair(p, p + 1 < end ? p + 1 : -1, scratch);
  }
}

/// Pair p's matrix of `base`, laid out by `m`.
template <typename Float>
Matrix<Float> pairMatrix(Float *base, const lmc_rt_matrix_layout &m,
                         const lmc_rt_attention_layout &layout, int64_t p) {
  int64_t p0 = p / layout.pairs[1], p1 = p % layout.pairs[1];
  return {base + m.offset + p0 * m.pair[0] + p1 * m.pair[1], m.row, m.col};
}

} // namespace

extern "C" void lmc_rt_attention_f32(const float *q, const float *kt,
                                     const float *v, const uint8_t *mask,
                                     float *out, float *stats, float *exps,
                                     const lmc_rt_attention_layout *layout,
                                     int64_t T, int64_t S, int64_t D,
                                     int64_t Dv, float scale) {
  const Shape shape{T, S, D, Dv, scale};
  const MaskLayout masks(mask, T, S);
  const lmc_rt_attention_layout &l = *layout;
  forEachPair(l.pairs[0] * l.pairs[1],
              [&](int64_t p, int64_t next, Scratch &scratch) {
    NextPair prefetch;
    if (next >= 0) {
      prefetch.add(pairMatrix(q, l.q, l, next), T, D);
      prefetch.add(pairMatrix(kt, l.kt, l, next), D, S);
      prefetch.add(pairMatrix(v, l.v, l, next), S, Dv);
    }
    forwardPair(pairMatrix(q, l.q, l, p), pairMatrix(kt, l.kt, l, p),
                pairMatrix(v, l.v, l, p), masks, pairMatrix(out, l.out, l, p),
                stats + p * T * 2, exps ? exps + p * T * S : nullptr, shape,
                scratch, prefetch);
  });
}

extern "C" void lmc_rt_attention_grad_f32(
    const float *q, const float *kt, const float *v, const uint8_t *mask,
    const float *out, const float *stats, const float *exps,
    const float *dout, float *dq, float *dkt, float *dv,
    const lmc_rt_attention_layout *layout, int64_t T, int64_t S, int64_t D,
    int64_t Dv, float scale) {
  const Shape shape{T, S, D, Dv, scale};
  const MaskLayout masks(mask, T, S);
  const lmc_rt_attention_layout &l = *layout;
  forEachPair(l.pairs[0] * l.pairs[1],
              [&](int64_t p, int64_t next, Scratch &scratch) {
    NextPair prefetch;
    if (next >= 0) { // the kept exponentials, the largest, last (the
                     // first dropped when they pass the budget), by rows
                     // like the rest so that a slice stays kSliceLines
      prefetch.add(pairMatrix(dout, l.dout, l, next), T, Dv);
      prefetch.add(pairMatrix(out, l.out, l, next), T, Dv);
      prefetch.add(pairMatrix(q, l.q, l, next), T, D);
      prefetch.add(pairMatrix(kt, l.kt, l, next), D, S);
      prefetch.add(pairMatrix(v, l.v, l, next), S, Dv);
      if (exps)
        prefetch.add(exps + next * T * S, T, S, S);
    }
    backwardPair({pairMatrix(q, l.q, l, p), pairMatrix(kt, l.kt, l, p),
                  pairMatrix(v, l.v, l, p), pairMatrix(out, l.out, l, p),
                  pairMatrix(dout, l.dout, l, p), stats + p * T * 2,
                  exps ? exps + p * T * S : nullptr,
                  pairMatrix(dq, l.dq, l, p), pairMatrix(dkt, l.dkt, l, p),
                  pairMatrix(dv, l.dv, l, p)},
                 masks, shape, scratch, prefetch);
  });
}
