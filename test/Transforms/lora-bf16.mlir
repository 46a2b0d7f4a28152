// lmc-lora base-precision=bf16: the frozen matrices (an embedding table,
// a projection, the head) are held in bf16, their initial values rounded
// to nearest even (1.00390625 = 1 + 2^-8 is halfway between 1 and
// 1 + 2^-7: to even, 1); a 1-D norm scale stays f32. Every reader gets
// its own widening lmc.convert; the gather converts the rows it took.
// RUN: lmc-opt %s -lmc-lora="targets=q_proj rank=2 base-precision=bf16" | FileCheck %s
// lmc-autodiff then recomputes, behind a barrier, the widened weight the
// backward pass reads (x's cotangent through the head), instead of
// keeping the forward's f32 copy.
// RUN: lmc-opt %s -lmc-lora="targets=q_proj rank=2 base-precision=bf16" -lmc-autodiff | FileCheck %s --check-prefix=GRAD
// RUN: not lmc-opt %s -lmc-lora="targets=q_proj base-precision=f16" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: --base-precision must be f32 or bf16, not 'f16'

// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[EMB:[[:alnum:]]+]]: tensor<8x4xbf16> {lmc.frozen, lmc.init = dense<1.000000e+00> : tensor<8x4xbf16>, lmc.param = "embed.weight"}
// CHECK-SAME: %[[Q:[[:alnum:]]+]]: tensor<4x4xbf16> {lmc.frozen, lmc.init = dense<5.000000e-01> : tensor<4x4xbf16>, lmc.param = "l.q_proj.weight"}
// CHECK-SAME: tensor<2x4xf32> {{{.*}}lmc.param = "l.q_proj.lora_A.weight"}
// CHECK-SAME: tensor<4xf32> {lmc.frozen, lmc.init = dense<2.000000e+00> : tensor<4xf32>, lmc.param = "norm.weight"}
// CHECK-SAME: %[[HEAD:[[:alnum:]]+]]: tensor<5x4xbf16> {lmc.frozen
// CHECK: %[[ROWS:.*]] = lmc.gather %[[EMB]], %{{.*}} : tensor<8x4xbf16>, tensor<6xi64> -> tensor<6x4xbf16>
// CHECK: lmc.convert %[[ROWS]] : tensor<6x4xbf16> -> tensor<6x4xf32>
// CHECK: %[[QF:.*]] = lmc.convert %[[Q]] : tensor<4x4xbf16> -> tensor<4x4xf32>
// CHECK: lmc.matmul %{{.*}}, %[[QF]] {transpose_rhs}
// CHECK: %[[HF:.*]] = lmc.convert %[[HEAD]] : tensor<5x4xbf16> -> tensor<5x4xf32>
// CHECK: lmc.matmul %{{.*}}, %[[HF]] {transpose_rhs}

// GRAD-LABEL: @forward_grad(
// GRAD: %[[B:.*]] = lmc.optimization_barrier %arg
// GRAD-SAME: tensor<5x4xbf16>
// GRAD-NEXT: %[[W:.*]] = lmc.convert %[[B]] : tensor<5x4xbf16> -> tensor<5x4xf32>
// GRAD-NEXT: lmc.matmul %{{.*}}, %[[W]] : tensor<6x5xf32>, tensor<5x4xf32> -> tensor<6x4xf32>

func.func @forward(
    %emb: tensor<8x4xf32> {lmc.param = "embed.weight", lmc.init = dense<1.00390625> : tensor<8x4xf32>},
    %q: tensor<4x4xf32> {lmc.param = "l.q_proj.weight", lmc.init = dense<0.5> : tensor<4x4xf32>},
    %norm: tensor<4xf32> {lmc.param = "norm.weight", lmc.init = dense<2.0> : tensor<4xf32>},
    %head: tensor<5x4xf32> {lmc.param = "head.weight", lmc.init = dense<0.25> : tensor<5x4xf32>},
    %ids: tensor<6xi64> {lmc.input = "ids"}) -> (tensor<f32> {lmc.output = "loss"}) {
  %e = lmc.gather %emb, %ids, axis = 0 : tensor<8x4xf32>, tensor<6xi64> -> tensor<6x4xf32>
  %nb = lmc.broadcast_in_dim %norm, dims = [1] : tensor<4xf32> -> tensor<6x4xf32>
  %h = lmc.mul %e, %nb : tensor<6x4xf32>
  %p = lmc.matmul %h, %q {transpose_rhs} : tensor<6x4xf32>, tensor<4x4xf32> -> tensor<6x4xf32>
  %y = lmc.matmul %p, %head {transpose_rhs} : tensor<6x4xf32>, tensor<5x4xf32> -> tensor<6x5xf32>
  %l = lmc.reduce_sum %y, axes = [0, 1] : tensor<6x5xf32> -> tensor<f32>
  return %l : tensor<f32>
}
