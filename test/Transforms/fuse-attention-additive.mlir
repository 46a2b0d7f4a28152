// RUN: lmc-opt %s -split-input-file -lmc-fuse-attention="freeze=val_[0-9]+" | FileCheck %s

// What PyTorch's dynamo exporter makes of Hugging Face GPT-2's
// scaled_dot_product_attention: the scores plus an additive mask
// select(causal, 0, float32's lowest) whose scalars are frozen parameters
// (val_N), a softmax, the guard select(p != p, 0, p), the product with v.
// One lmc.attention with the hidden positions as a constant [1, 1, T, S]
// mask (the batches' copies of the condition are equal); scale 1 (the
// exporter scales q and kt before the product, outside the chain).
// CHECK-LABEL: func.func @dynamo_causal
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<2x2x4x8xf32>, %[[KT:[^:]*]]: tensor<2x2x8x4xf32>, %[[V:[^:]*]]: tensor<2x2x4x8xf32>
// CHECK: %[[M:.*]] = arith.constant dense<{{\[\[\[\[}}false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]]]> : tensor<1x1x4x4xi1>
// CHECK-NEXT: %[[O:.*]], %{{.*}} = lmc.attention %[[Q]], %[[KT]], %[[V]], %[[M]] {scale = 1.000000e+00 : f32}
// CHECK-NEXT: return %[[O]]
func.func @dynamo_causal(%q: tensor<2x2x4x8xf32>, %kt: tensor<2x2x8x4xf32>, %v: tensor<2x2x4x8xf32>,
    %zero: tensor<f32> {lmc.init = dense<0.0> : tensor<f32>, lmc.param = "val_76"},
    %lowest: tensor<f32> {lmc.init = dense<-3.40282347E+38> : tensor<f32>, lmc.param = "val_77"})
    -> tensor<2x2x4x8xf32> {
  %visible = arith.constant dense<[[[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]],
                                   [[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]]]> : tensor<2x1x4x4xi1>
  %zb = lmc.broadcast_in_dim %zero, dims = [] : tensor<f32> -> tensor<2x1x4x4xf32>
  %lb = lmc.broadcast_in_dim %lowest, dims = [] : tensor<f32> -> tensor<2x1x4x4xf32>
  %shift = lmc.select %visible, %zb, %lb : tensor<2x1x4x4xi1>, tensor<2x1x4x4xf32>
  %s = lmc.matmul %q, %kt : tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32> -> tensor<2x2x4x4xf32>
  %shiftb = lmc.broadcast_in_dim %shift, dims = [0, 1, 2, 3] : tensor<2x1x4x4xf32> -> tensor<2x2x4x4xf32>
  %shifted = lmc.add %s, %shiftb : tensor<2x2x4x4xf32>
  %p = lmc.softmax %shifted, axis = 3 : tensor<2x2x4x4xf32>
  %nan = lmc.cmp ne, %p, %p : tensor<2x2x4x4xf32> -> tensor<2x2x4x4xi1>
  %zb2 = lmc.broadcast_in_dim %zero, dims = [] : tensor<f32> -> tensor<2x2x4x4xf32>
  %guarded = lmc.select %nan, %zb2, %p : tensor<2x2x4x4xi1>, tensor<2x2x4x4xf32>
  %o = lmc.matmul %guarded, %v : tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32> -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// A literal additive mask (0 and -inf, the mask first in the addition),
// no guard, a constant scale: fused with the scale.
// CHECK-LABEL: func.func @literal_shift
// CHECK: %[[M:.*]] = arith.constant dense<{{\[\[\[}}false, true], [false, false]]]> : tensor<1x2x2xi1>
// CHECK-NEXT: lmc.attention %{{.*}}, %{{.*}}, %{{.*}}, %[[M]] {scale = 5.000000e-01 : f32}
// CHECK-NOT: lmc.softmax
func.func @literal_shift(%q: tensor<3x2x4xf32>, %kt: tensor<3x4x2xf32>, %v: tensor<3x2x4xf32>)
    -> tensor<3x2x4xf32> {
  %shift = arith.constant dense<[[[0.0, 0xFF800000], [0.0, 0.0]]]> : tensor<1x2x2xf32>
  %shiftb = lmc.broadcast_in_dim %shift, dims = [0, 1, 2] : tensor<1x2x2xf32> -> tensor<3x2x2xf32>
  %s = lmc.matmul %q, %kt : tensor<3x2x4xf32>, tensor<3x4x2xf32> -> tensor<3x2x2xf32>
  %c = arith.constant dense<0.5> : tensor<f32>
  %cb = lmc.broadcast_in_dim %c, dims = [] : tensor<f32> -> tensor<3x2x2xf32>
  %scaled = lmc.mul %s, %cb : tensor<3x2x2xf32>
  %shifted = lmc.add %shiftb, %scaled : tensor<3x2x2xf32>
  %p = lmc.softmax %shifted, axis = 2 : tensor<3x2x2xf32>
  %o = lmc.matmul %p, %v : tensor<3x2x2xf32>, tensor<3x2x4xf32> -> tensor<3x2x4xf32>
  return %o : tensor<3x2x4xf32>
}

// -----

// Left alone, each for one reason: the mask's scalars are parameters that
// train (w_0, w_1: not frozen), a row hides every key (the fused op would
// give NaN where the guard gives 0 and the unguarded softmax a uniform
// row), a shift of -1e9 (exp(score - 1e9 - max) need not be 0), the
// batches' masks differ, and a guard after a select of -inf (whose rows
// may all be hidden: the mask is not a constant).
// CHECK-LABEL: func.func @trainable_shift
// CHECK-NOT: lmc.attention
// CHECK: lmc.softmax
// CHECK-LABEL: func.func @row_all_hidden
// CHECK-NOT: lmc.attention
// CHECK: lmc.softmax
// CHECK-LABEL: func.func @finite_shift
// CHECK-NOT: lmc.attention
// CHECK: lmc.softmax
// CHECK-LABEL: func.func @per_batch_masks
// CHECK-NOT: lmc.attention
// CHECK: lmc.softmax
// CHECK-LABEL: func.func @guarded_select
// CHECK-NOT: lmc.attention
// CHECK: lmc.softmax
func.func @trainable_shift(%q: tensor<1x2x4xf32>, %kt: tensor<1x4x2xf32>, %v: tensor<1x2x4xf32>,
    %zero: tensor<f32> {lmc.init = dense<0.0> : tensor<f32>, lmc.param = "w_0"},
    %lowest: tensor<f32> {lmc.init = dense<-3.40282347E+38> : tensor<f32>, lmc.param = "w_1"})
    -> tensor<1x2x4xf32> {
  %visible = arith.constant dense<[[[true, false], [true, true]]]> : tensor<1x2x2xi1>
  %zb = lmc.broadcast_in_dim %zero, dims = [] : tensor<f32> -> tensor<1x2x2xf32>
  %lb = lmc.broadcast_in_dim %lowest, dims = [] : tensor<f32> -> tensor<1x2x2xf32>
  %shift = lmc.select %visible, %zb, %lb : tensor<1x2x2xi1>, tensor<1x2x2xf32>
  %s = lmc.matmul %q, %kt : tensor<1x2x4xf32>, tensor<1x4x2xf32> -> tensor<1x2x2xf32>
  %shifted = lmc.add %s, %shift : tensor<1x2x2xf32>
  %p = lmc.softmax %shifted, axis = 2 : tensor<1x2x2xf32>
  %o = lmc.matmul %p, %v : tensor<1x2x2xf32>, tensor<1x2x4xf32> -> tensor<1x2x4xf32>
  return %o : tensor<1x2x4xf32>
}
func.func @row_all_hidden(%q: tensor<1x2x4xf32>, %kt: tensor<1x4x2xf32>, %v: tensor<1x2x4xf32>)
    -> tensor<1x2x4xf32> {
  %shift = arith.constant dense<[[[0xFF800000, 0xFF800000], [0.0, 0.0]]]> : tensor<1x2x2xf32>
  %s = lmc.matmul %q, %kt : tensor<1x2x4xf32>, tensor<1x4x2xf32> -> tensor<1x2x2xf32>
  %shifted = lmc.add %s, %shift : tensor<1x2x2xf32>
  %p = lmc.softmax %shifted, axis = 2 : tensor<1x2x2xf32>
  %o = lmc.matmul %p, %v : tensor<1x2x2xf32>, tensor<1x2x4xf32> -> tensor<1x2x4xf32>
  return %o : tensor<1x2x4xf32>
}
func.func @finite_shift(%q: tensor<1x2x4xf32>, %kt: tensor<1x4x2xf32>, %v: tensor<1x2x4xf32>)
    -> tensor<1x2x4xf32> {
  %shift = arith.constant dense<[[[0.0, -1.0e9], [0.0, 0.0]]]> : tensor<1x2x2xf32>
  %s = lmc.matmul %q, %kt : tensor<1x2x4xf32>, tensor<1x4x2xf32> -> tensor<1x2x2xf32>
  %shifted = lmc.add %s, %shift : tensor<1x2x2xf32>
  %p = lmc.softmax %shifted, axis = 2 : tensor<1x2x2xf32>
  %o = lmc.matmul %p, %v : tensor<1x2x2xf32>, tensor<1x2x4xf32> -> tensor<1x2x4xf32>
  return %o : tensor<1x2x4xf32>
}
func.func @per_batch_masks(%q: tensor<2x2x4xf32>, %kt: tensor<2x4x2xf32>, %v: tensor<2x2x4xf32>)
    -> tensor<2x2x4xf32> {
  %shift = arith.constant dense<[[[0.0, 0xFF800000], [0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]]]> : tensor<2x2x2xf32>
  %s = lmc.matmul %q, %kt : tensor<2x2x4xf32>, tensor<2x4x2xf32> -> tensor<2x2x2xf32>
  %shifted = lmc.add %s, %shift : tensor<2x2x2xf32>
  %p = lmc.softmax %shifted, axis = 2 : tensor<2x2x2xf32>
  %o = lmc.matmul %p, %v : tensor<2x2x2xf32>, tensor<2x2x4xf32> -> tensor<2x2x4xf32>
  return %o : tensor<2x2x4xf32>
}
func.func @guarded_select(%q: tensor<1x2x4xf32>, %kt: tensor<1x4x2xf32>, %v: tensor<1x2x4xf32>,
                          %mask: tensor<1x2x2xi1>) -> tensor<1x2x4xf32> {
  %s = lmc.matmul %q, %kt : tensor<1x2x4xf32>, tensor<1x4x2xf32> -> tensor<1x2x2xf32>
  %inf = arith.constant dense<0xFF800000> : tensor<f32>
  %infb = lmc.broadcast_in_dim %inf, dims = [] : tensor<f32> -> tensor<1x2x2xf32>
  %mb = lmc.broadcast_in_dim %mask, dims = [0, 1, 2] : tensor<1x2x2xi1> -> tensor<1x2x2xi1>
  %masked = lmc.select %mb, %infb, %s : tensor<1x2x2xi1>, tensor<1x2x2xf32>
  %p = lmc.softmax %masked, axis = 2 : tensor<1x2x2xf32>
  %nan = lmc.cmp ne, %p, %p : tensor<1x2x2xf32> -> tensor<1x2x2xi1>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %zb = lmc.broadcast_in_dim %zero, dims = [] : tensor<f32> -> tensor<1x2x2xf32>
  %guarded = lmc.select %nan, %zb, %p : tensor<1x2x2xi1>, tensor<1x2x2xf32>
  %o = lmc.matmul %guarded, %v : tensor<1x2x2xf32>, tensor<1x2x4xf32> -> tensor<1x2x4xf32>
  return %o : tensor<1x2x4xf32>
}

// -----

// The first form's scalars may be frozen parameters too: the scale
// (0.125) and the -inf of the select.
// CHECK-LABEL: func.func @frozen_scale
// CHECK: lmc.attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {scale = 1.250000e-01 : f32}
// CHECK-NOT: lmc.softmax
func.func @frozen_scale(%q: tensor<1x2x4xf32>, %kt: tensor<1x4x2xf32>, %v: tensor<1x2x4xf32>,
    %mask: tensor<1x2x2xi1>,
    %scale: tensor<f32> {lmc.init = dense<0.125> : tensor<f32>, lmc.param = "val_1"},
    %inf: tensor<f32> {lmc.init = dense<0xFF800000> : tensor<f32>, lmc.param = "val_2"})
    -> tensor<1x2x4xf32> {
  %s = lmc.matmul %q, %kt : tensor<1x2x4xf32>, tensor<1x4x2xf32> -> tensor<1x2x2xf32>
  %sb = lmc.broadcast_in_dim %scale, dims = [] : tensor<f32> -> tensor<1x2x2xf32>
  %scaled = lmc.mul %s, %sb : tensor<1x2x2xf32>
  %infb = lmc.broadcast_in_dim %inf, dims = [] : tensor<f32> -> tensor<1x2x2xf32>
  %mb = lmc.broadcast_in_dim %mask, dims = [0, 1, 2] : tensor<1x2x2xi1> -> tensor<1x2x2xi1>
  %masked = lmc.select %mb, %infb, %scaled : tensor<1x2x2xi1>, tensor<1x2x2xf32>
  %p = lmc.softmax %masked, axis = 2 : tensor<1x2x2xf32>
  %o = lmc.matmul %p, %v : tensor<1x2x2xf32>, tensor<1x2x4xf32> -> tensor<1x2x4xf32>
  return %o : tensor<1x2x4xf32>
}
