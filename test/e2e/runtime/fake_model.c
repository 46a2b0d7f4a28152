/*===- fake_model.c - Hand-written stand-in for a compiled model ---------===*
 *
 * Implements the model ABI (docs/runtime-abi.md) for linear regression
 *   y = x . w + b,  x: f32[4, 3], w: f32[3, 1], b: f32[1]
 * with mean-squared-error loss and plain SGD, so the runtime's main() can be
 * tested end to end without the compiler. The matmuls go through the runtime
 * kernels, as compiled code would.
 *
 *===----------------------------------------------------------------------===*/

#include "lmc/runtime/kernels.h"
#include "lmc/runtime/model_abi.h"


enum { B = 4, F = 3 };

const char lmc_model_descriptor[] = "lmc-model 1\n"
                                    "loss mse\n"
                                    "optimizer sgd\n"
                                    "hparam lr 0.050000000000000003\n"
                                    "flops 96\n"
                                    "train arg param w f32 2 3 1\n"
                                    "train arg param b f32 1 1\n"
                                    "train arg input x f32 2 4 3\n"
                                    "train arg input targets f32 2 4 1\n"
                                    "train arg hyper lr f32 0\n"
                                    "train result param w f32 2 3 1\n"
                                    "train result param b f32 1 1\n"
                                    "train result loss loss f32 0\n"
                                    "eval arg param w f32 2 3 1\n"
                                    "eval arg param b f32 1 1\n"
                                    "eval arg input x f32 2 4 3\n"
                                    "eval arg input targets f32 2 4 1\n"
                                    "eval result loss loss f32 0\n"
                                    "eval result output y f32 2 4 1\n"
                                    "init w 0 12\n"
                                    "init b 12 4\n"
                                    "end\n";

/* w = [0.1, -0.2, 0.3], b = [0.0] as little-endian IEEE-754 floats. */
const unsigned char lmc_model_weights[] = {
    0xCD, 0xCC, 0xCC, 0x3D, /* 0.1f */
    0xCD, 0xCC, 0x4C, 0xBE, /* -0.2f */
    0x9A, 0x99, 0x99, 0x3E, /* 0.3f */
    0x00, 0x00, 0x00, 0x00, /* 0.0f */
};
const uint64_t lmc_model_weights_size = sizeof(lmc_model_weights);

/* pred = x . w + b; returns the MSE against targets, residual in diff. */
static float forward(const float *w, const float *b, const float *x,
                     const float *targets, float *pred, float *diff) {
  lmc_rt_matmul_f32(x, w, pred, 1, B, 1, F, 0, 0, /*accumulate=*/0);
  float loss = 0;
  for (int i = 0; i < B; ++i) {
    pred[i] += b[0];
    diff[i] = pred[i] - targets[i];
    loss += diff[i] * diff[i];
  }
  return loss / B;
}

/* args: w b x targets lr | results: w' b' loss */
void lmc_train_step(void **buffers) {
  const float *w = buffers[0], *b = buffers[1], *x = buffers[2];
  const float *targets = buffers[3], *lr = buffers[4];
  float *wOut = buffers[5], *bOut = buffers[6], *loss = buffers[7];
  float pred[B], diff[B], gradW[F] = {0, 0, 0};
  *loss = forward(w, b, x, targets, pred, diff);
  /* d loss / d pred = 2 * diff / B; gradW = x^T . that. */
  float scaled[B], gradB = 0;
  for (int i = 0; i < B; ++i) {
    scaled[i] = 2.0f * diff[i] / B;
    gradB += scaled[i];
  }
  lmc_rt_matmul_f32(x, scaled, gradW, 1, F, 1, B, 1, 0, /*accumulate=*/1);
  for (int j = 0; j < F; ++j)
    wOut[j] = w[j] - *lr * gradW[j];
  bOut[0] = b[0] - *lr * gradB;
}

/* args: w b x targets | results: loss y */
void lmc_eval_step(void **buffers) {
  const float *w = buffers[0], *b = buffers[1], *x = buffers[2];
  const float *targets = buffers[3];
  float *loss = buffers[4], *y = buffers[5];
  float diff[B];
  *loss = forward(w, b, x, targets, y, diff);
}
