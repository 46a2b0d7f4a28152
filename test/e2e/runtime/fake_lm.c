/*===- fake_lm.c - Hand-written token model with gradient clipping -------===*
 *
 * A unigram language model for the runtime's token-data, clipping and
 * grad-norm tests: logits = bias (f32[256]) for every position,
 * cross-entropy against targets, SGD with global-norm clipping through the
 * `max_grad_norm` hyper, and the pre-clipping norm as the `grad_norm`
 * result (docs/runtime-abi.md). idx is read only to check it is in range.
 *
 *===----------------------------------------------------------------------===*/

#include "lmc/runtime/model_abi.h"

#include <math.h>
#include <string.h>

enum { B = 2, T = 8, V = 256 };

const char lmc_model_descriptor[] =
    "lmc-model 1\n"
    "loss cross_entropy\n"
    "optimizer sgd\n"
    "hparam lr 1\n"
    "hparam clip_grad_norm 0.5\n"
    "flops 8192\n"
    "train arg param bias f32 1 256\n"
    "train arg input idx i64 2 2 8\n"
    "train arg input targets i64 2 2 8\n"
    "train arg hyper lr f32 0\n"
    "train arg hyper max_grad_norm f32 0\n"
    "train result param bias f32 1 256\n"
    "train result loss loss f32 0\n"
    "train result grad_norm grad_norm f32 0\n"
    "eval arg param bias f32 1 256\n"
    "eval arg input idx i64 2 2 8\n"
    "eval arg input targets i64 2 2 8\n"
    "eval result loss loss f32 0\n"
    "init bias 0 1024\n"
    "end\n";

const unsigned char lmc_model_weights[1024] = {0};
const uint64_t lmc_model_weights_size = sizeof(lmc_model_weights);

static float loss_and_grad(const float *bias, const int64_t *idx,
                           const int64_t *targets, float *grad) {
  float maxv = bias[0], sum = 0, p[V];
  for (int v = 1; v < V; ++v)
    maxv = bias[v] > maxv ? bias[v] : maxv;
  for (int v = 0; v < V; ++v)
    sum += p[v] = expf(bias[v] - maxv);
  float loss = 0;
  for (int v = 0; v < V; ++v) {
    p[v] /= sum;
    grad[v] = p[v];
  }
  for (int i = 0; i < B * T; ++i) {
    if (idx[i] < 0 || idx[i] >= V || targets[i] < 0 || targets[i] >= V)
      return NAN;
    loss += -logf(p[targets[i]]);
    grad[targets[i]] -= 1.0f / (B * T);
  }
  return loss / (B * T);
}

/* args: bias idx targets lr max_grad_norm | results: bias' loss grad_norm */
void lmc_train_step(void **buffers) {
  const float *bias = buffers[0];
  const int64_t *idx = buffers[1], *targets = buffers[2];
  const float lr = *(float *)buffers[3], maxNorm = *(float *)buffers[4];
  float *out = buffers[5], *loss = buffers[6], *norm = buffers[7];
  float grad[V], sq = 0;
  *loss = loss_and_grad(bias, idx, targets, grad);
  for (int v = 0; v < V; ++v)
    sq += grad[v] * grad[v];
  *norm = sqrtf(sq);
  float scale = 1;
  if (maxNorm > 0 && *norm > maxNorm)
    scale = maxNorm / (*norm + 1e-6f);
  for (int v = 0; v < V; ++v)
    out[v] = bias[v] - lr * scale * grad[v];
}

void lmc_eval_step(void **buffers) {
  float grad[V];
  *(float *)buffers[3] = loss_and_grad(buffers[0], buffers[1], buffers[2], grad);
}
