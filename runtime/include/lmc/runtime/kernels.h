//===- kernels.h - Runtime kernels called by compiled model code ---------===//
//
// C ABI: compiled model objects call these by name. Matrices are dense and
// row-major, batch strides the dense matrix sizes, except where a kernel
// takes a layout (attention).
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_KERNELS_H
#define LMC_RUNTIME_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// For each b in [0, batch): C[b] += op(A[b]) * op(B[b]) when `accumulate`
/// is non-zero (beta = 1), else C[b] = op(A[b]) * op(B[b]) (beta = 0: C is
/// not read; what the compiler calls for a product into a fresh zero fill).
/// A[b] is M x K (K x M if transA), B[b] is K x N (N x K if transB),
/// C[b] is M x N. transA / transB are 0 or non-zero.
void lmc_rt_matmul_f32(const float *A, const float *B, float *C, int64_t batch,
                       int64_t M, int64_t N, int64_t K, int64_t transA,
                       int64_t transB, int64_t accumulate);

/// Same as lmc_rt_matmul_f32 for double.
void lmc_rt_matmul_f64(const double *A, const double *B, double *C,
                       int64_t batch, int64_t M, int64_t N, int64_t K,
                       int64_t transA, int64_t transB, int64_t accumulate);

/// Mixed precision: A and B hold bf16 (resp. IEEE f16) bit patterns, C is
/// f32 and accumulates in f32: C[b] (+)= op(A[b]) * op(B[b]). Products of
/// bf16/f16 values are exact in f32, so every path (OpenBLAS's sbgemm on
/// CPUs with AVX512-BF16, or widening to f32 and sgemm elsewhere) computes
/// the same sums up to the f32 summation order.
void lmc_rt_matmul_bf16(const uint16_t *A, const uint16_t *B, float *C,
                        int64_t batch, int64_t M, int64_t N, int64_t K,
                        int64_t transA, int64_t transB, int64_t accumulate);
void lmc_rt_matmul_f16(const uint16_t *A, const uint16_t *B, float *C,
                       int64_t batch, int64_t M, int64_t N, int64_t K,
                       int64_t transA, int64_t transB, int64_t accumulate);

/// Where one operand or result of masked attention lies: element (i, j)
/// of pair (p0, p1) at `offset + p0 * pair[0] + p1 * pair[1] + i * row +
/// j * col` elements from its pointer, so that the compiler hands the
/// kernel views (the heads inside a fused q/k/v projection, transposed)
/// instead of copying them into dense [pairs, rows, cols] blocks. `col` is
/// 1 for q, v, out, dout, dq and dv; kt and dkt have `col` 1 (stored
/// [D, S]) or `row` 1 (stored as the keys, [S, D]).
typedef struct {
  int64_t offset, pair[2], row, col;
} lmc_rt_matrix_layout;

/// A pair's matrix whose strided rows span more bytes than this (rows a
/// whole fused projection apart at long contexts) is copied dense before
/// the kernel reads it, or computed dense and copied out; within it, read
/// and written in place. The compiler writes the gradients into their
/// concatenation only where they stay within it (lmc-attention-to-runtime).
#define LMC_RT_ATTENTION_IN_PLACE_SPAN ((int64_t)1 << 20)

/// The (batch, head) pairs, pairs[0] x pairs[1] enumerated row-major (pair
/// p is (p / pairs[1], p % pairs[1]); stats are dense, pair p's at p T 2),
/// and where each matrix lies. The forward reads q, kt, v and out only.
typedef struct {
  int64_t pairs[2];
  lmc_rt_matrix_layout q, kt, v, out, dout, dq, dkt, dv;
} lmc_rt_attention_layout;

/// Masked attention (lmc.attention), for each (batch, head) pair b:
/// out[b] = softmax(select(mask, -inf, scale * q[b] kt[b])) v[b], q[b]
/// T x D, kt[b] D x S (the keys transposed), v[b] S x Dv, mask T x S bytes
/// (non-zero: masked) shared by all pairs, out[b] T x Dv, each where
/// `layout` puts it; stats[b] T x 2 receives each row's softmax maximum and
/// sum of exponentials. Unless null, exps[b] T x S (dense) receives the
/// exponentials e^(score - max) of the keys each block of query rows sees
/// (zero where masked; the keys outside the block's range are not
/// written), for the gradient to read instead of recomputing them. Key
/// blocks a block of query rows cannot see are skipped. A row with every
/// key masked is NaN. Results do not depend on the thread count.
void lmc_rt_attention_f32(const float *q, const float *kt, const float *v,
                          const uint8_t *mask, float *out, float *stats,
                          float *exps,
                          const lmc_rt_attention_layout *layout, int64_t T,
                          int64_t S, int64_t D, int64_t Dv, float scale);

/// The gradient of lmc_rt_attention_f32 from its operands, results and the
/// cotangent dout of out: dq, dkt and dv (each the shape of its operand,
/// where `layout` puts it). `exps` is the forward's, or null: the
/// exponentials are then recomputed, bitwise the same.
void lmc_rt_attention_grad_f32(const float *q, const float *kt,
                               const float *v, const uint8_t *mask,
                               const float *out, const float *stats,
                               const float *exps, const float *dout,
                               float *dq, float *dkt, float *dv,
                               const lmc_rt_attention_layout *layout,
                               int64_t T, int64_t S, int64_t D, int64_t Dv,
                               float scale);

/// Layer normalization (lmc.layer_norm) of each row of x (rows x C,
/// dense): y = (x - mean) * rstd * scale + bias, rstd = 1 / sqrt(var +
/// epsilon) (biased variance); stats (rows x 2) receives each row's mean
/// and rstd. Results do not depend on the thread count.
void lmc_rt_layer_norm_f32(const float *x, const float *scale,
                           const float *bias, float *y, float *stats,
                           int64_t rows, int64_t C, float epsilon);

/// The gradient of lmc_rt_layer_norm_f32 from its input, scale, stats and
/// the cotangent dy of y: dx (rows x C; plus `accumulate`, rows x C, unless
/// null), dscale and dbias (C). Results do not depend on the thread count.
void lmc_rt_layer_norm_grad_f32(const float *x, const float *scale,
                                const float *stats, const float *dy,
                                const float *accumulate, float *dx,
                                float *dscale, float *dbias, int64_t rows,
                                int64_t C);

/// The geometry of a convolution (lmc.conv and its two adjoints) on
/// dense row-major tensors: input [batch, channels, input...], weight
/// [filters, channels / groups, kernel...], output [batch, filters,
/// output...]. Three spatial dimensions, the last ones used: a 2-D
/// convolution has input[0] = kernel[0] = output[0] = strides[0] =
/// dilations[0] = 1 and pad_low[0] = 0. Output position o reads input
/// position o * stride + k * dilation - pad_low (zero outside).
typedef struct {
  int64_t batch, channels, filters, groups;
  int64_t input[3], kernel[3], output[3], strides[3], dilations[3],
      pad_low[3];
} lmc_rt_conv_geometry;

/// y = conv(x, w) (lmc.conv). Results do not depend on the thread count.
void lmc_rt_conv_f32(const float *x, const float *w, float *y,
                     const lmc_rt_conv_geometry *geometry);

/// dx = the convolution's adjoint in its input, from the output's
/// cotangent dy and the weight (lmc.conv_input_grad). Results do not
/// depend on the thread count.
void lmc_rt_conv_input_grad_f32(const float *dy, const float *w, float *dx,
                                const lmc_rt_conv_geometry *geometry);

/// dw = the convolution's adjoint in its weight, from its input x and the
/// output's cotangent dy, summed over the batch in order
/// (lmc.conv_weight_grad). Results do not depend on the thread count.
void lmc_rt_conv_weight_grad_f32(const float *x, const float *dy, float *dw,
                                 const lmc_rt_conv_geometry *geometry);

/// Copies `bytes` from `src` (a constant table in the executable) to `dst`
/// (a buffer of the step): memcpy here; the CUDA support library replaces
/// it with a copy in the GPU stream's order (`--target cuda`).
void lmc_rt_copy_in(void *dst, const void *src, int64_t bytes);

/// The memory of a step's planned buffers (lmc-plan-buffers with
/// arena-from-runtime): at least `bytes`, 64-byte aligned, the same block on
/// every call that fits in it. Entry points call it at their start, one at
/// a time. Host memory here (one anonymous mapping, huge pages advised);
/// device memory in the CUDA support library (`--target cuda`).
/// Ends the process with a message when it cannot allocate.
void *lmc_rt_step_arena(int64_t bytes);

/// Fills `bytes` bytes at `data` with 0xFF (f32 NaN, integer -1, i1 true):
/// each planned buffer where it is allocated, in executables compiled with
/// `lmc --poison-step-buffers` (lmc-plan-buffers{poison}), so that a read
/// of a buffer before anything wrote it shows in the results.
void lmc_rt_poison_buffer(void *data, int64_t bytes);

/// A gather's index that the model computed lies outside [-size, size)
/// (convert-lmc-to-linalg{check-indices}): prints `error: SITE: index VALUE
/// is out of range ...` (SITE: the ONNX node or DSL position) and ends the
/// process with status 1, as PyTorch raises IndexError. Never returns.
void lmc_rt_index_out_of_range(int64_t value, int64_t size, const char *site);

/// An integer division or modulo the model computes has a zero divisor
/// (convert-lmc-to-linalg{check-indices}): prints `error: SITE: integer
/// division by zero ...` and ends the process with status 1, as PyTorch
/// raises ZeroDivisionError. Never returns.
void lmc_rt_integer_division_by_zero(const char *site);

/// Gradient `gradient` (in the order of grad_step's gradients) is final:
/// nothing later in the step writes it (lmc-mark-gradients-ready). A
/// data-parallel runtime starts all-reducing a bucket of gradients once all
/// of them are; here it does nothing.
void lmc_rt_gradient_ready(int64_t gradient);

/// Sets how many threads the kernels (the BLAS) and the compiled loop nests
/// (OpenMP) may use; n >= 1.
void lmc_rt_set_threads(int n);

/// How many threads the compiled loop nests' parallel loops share (what
/// lmc_rt_set_threads set, else OpenMP's default). A sum over rows per
/// column gives each thread one run of columns
/// (lmc-parallelize-loops); no result depends on it.
int64_t lmc_rt_thread_count(void);

/// Sets the most parts (a power of two, 1 to 16; default 16) a large f32
/// or f64 product is cut into for the threads to share: the executable's
/// compiled-in budget (the descriptor's `matmul_parts`). The parts follow
/// from the shape and this budget, never from the thread count, so that
/// results are the same bits on any number of threads.
void lmc_rt_set_matmul_parts(int64_t parts);

/// A timed region of a step (lmc-profile-regions brackets each loop nest
/// and runtime call): begin returns a timestamp in nanoseconds (0 while not
/// profiling), end adds the time since `begin` to region `region`'s total.
/// Both do nothing unless the executable runs with --profile
/// (lmc/runtime/profile.h).
int64_t lmc_rt_profile_begin(void);
void lmc_rt_profile_end(int64_t region, int64_t begin);

#ifdef __cplusplus
}
#endif

#endif // LMC_RUNTIME_KERNELS_H
