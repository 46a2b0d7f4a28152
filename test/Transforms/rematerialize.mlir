// RUN: lmc-opt %s -split-input-file -lmc-autodiff -lmc-rematerialize | FileCheck %s
// RUN: lmc-opt %s -split-input-file -lmc-autodiff -lmc-rematerialize=policy=selective | FileCheck %s --check-prefix=SELECTIVE
// RUN: lmc-opt %s -split-input-file -lmc-autodiff -lmc-rematerialize=policy=per-block:1 | FileCheck %s --check-prefix=FIRST

// Two residual blocks, h1 = x + tanh(x * w1) and h2 = h1 + tanh(h1 * w2),
// and a loss against a second input t. Every path from x to the loss goes
// through h1, h2, d = h2 - t and d * d: those are the cuts (t joins at d,
// so from t there are fewer). tanh's VJP reads its output: per block, each
// tanh is recomputed from its block's cut (h1; the input x for the first)
// right before its backward, read through a barrier so CSE keeps it apart.
// CHECK: module attributes {lmc.remat = {cuts = 4 : i64, policy = "per-block", recomputed = 4 : i64}}
// CHECK-LABEL: func.func @forward_grad
// CHECK-SAME: (%[[W1:[a-z0-9]+]]: tensor<4xf32> {lmc.param = "w1"}, %[[W2:[a-z0-9]+]]: tensor<4xf32> {lmc.param = "w2"}, %[[X:[a-z0-9]+]]: tensor<4xf32> {lmc.input = "x"}
// CHECK: %[[A1:.*]] = lmc.mul %[[X]], %[[W1]] : tensor<4xf32>
// CHECK: %[[T1:.*]] = lmc.tanh %[[A1]] : tensor<4xf32>
// CHECK: %[[H1:.*]] = lmc.add %[[X]], %[[T1]]
// CHECK: %[[LOSS:.*]] = lmc.reduce_sum
// CHECK: %[[B2:.*]] = lmc.optimization_barrier %[[H1]] : tensor<4xf32>
// CHECK: %[[A2R:.*]] = lmc.mul %[[B2]], %[[W2]] {lmc.recomputed}
// CHECK: %[[T2R:.*]] = lmc.tanh %[[A2R]] {lmc.recomputed}
// CHECK: lmc.mul %[[T2R]], %[[T2R]]
// The cut itself is read as it is (w2's gradient).
// CHECK: %[[DW2:.*]] = lmc.mul %{{.*}}, %[[H1]]
// CHECK: %[[B1:.*]] = lmc.optimization_barrier %[[X]] : tensor<4xf32>
// CHECK: %[[A1R:.*]] = lmc.mul %[[B1]], %[[W1]] {lmc.recomputed}
// CHECK: %[[T1R:.*]] = lmc.tanh %[[A1R]] {lmc.recomputed}
// CHECK: lmc.mul %[[T1R]], %[[T1R]]
// CHECK: return %[[LOSS]], %{{.*}}, %[[DW2]]
// Nothing here is larger than its block's cut: selective keeps it all.
// SELECTIVE: module attributes {lmc.remat = {cuts = 4 : i64, policy = "selective", recomputed = 0 : i64}}
// SELECTIVE-NOT: lmc.recomputed
// per-block:1: the first segment (from the input x to h1) is recomputed
// whole, the second (h1's) selectively, which here keeps tanh(h1 * w2).
// FIRST: module attributes {lmc.remat = {cuts = 4 : i64, policy = "per-block:1", recomputed = 2 : i64}}
// FIRST-LABEL: func.func @forward_grad
// FIRST-SAME: %[[X:[a-z0-9]+]]: tensor<4xf32> {lmc.input = "x"}
// FIRST: lmc.tanh
// FIRST: %[[T2:.*]] = lmc.tanh
// FIRST-NOT: lmc.tanh
// FIRST: lmc.mul %[[T2]], %[[T2]]
// FIRST: %[[B1:.*]] = lmc.optimization_barrier %[[X]] : tensor<4xf32>
// FIRST: %[[A1R:.*]] = lmc.mul %[[B1]], %{{.*}} {lmc.recomputed}
// FIRST: %[[T1R:.*]] = lmc.tanh %[[A1R]] {lmc.recomputed}
// FIRST: lmc.mul %[[T1R]], %[[T1R]]
func.func @forward(%w1: tensor<4xf32> {lmc.param = "w1"}, %w2: tensor<4xf32> {lmc.param = "w2"},
                   %x: tensor<4xf32> {lmc.input = "x"}, %t: tensor<4xf32> {lmc.input = "t"})
    -> (tensor<f32> {lmc.output = "loss"}) {
  %a1 = lmc.mul %x, %w1 : tensor<4xf32>
  %t1 = lmc.tanh %a1 : tensor<4xf32>
  %h1 = lmc.add %x, %t1 : tensor<4xf32>
  %a2 = lmc.mul %h1, %w2 : tensor<4xf32>
  %t2 = lmc.tanh %a2 : tensor<4xf32>
  %h2 = lmc.add %h1, %t2 : tensor<4xf32>
  %d = lmc.sub %h2, %t : tensor<4xf32>
  %dd = lmc.mul %d, %d : tensor<4xf32>
  %l = lmc.reduce_sum %dd, axes = [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Attention-like: a value spread to a larger shape (scores, [4, 8] from
// the [4] cut h), reduced back and added to the residual, which bypasses
// it: the cuts are h, o = h + r and o * o. exp's VJP reads its output and
// the product's VJP the spread h, both [4, 8]: both policies recompute
// them (the spread, the product, exp) from h through a barrier. The
// parameter's broadcast depends on no data and is never recomputed.
// SELECTIVE: module attributes {lmc.remat = {cuts = 3 : i64, policy = "selective", recomputed = 3 : i64}}
// SELECTIVE: func.func @forward_grad
// SELECTIVE: %[[H:.*]] = lmc.add
// SELECTIVE: %[[VB:.*]] = lmc.broadcast_in_dim %{{.*}}, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
// SELECTIVE: %[[B:.*]] = lmc.optimization_barrier %[[H]] : tensor<4xf32>
// SELECTIVE: %[[SR:.*]] = lmc.broadcast_in_dim %[[B]], dims = [0] {lmc.recomputed} : tensor<4xf32> -> tensor<4x8xf32>
// SELECTIVE: %[[PR:.*]] = lmc.mul %[[SR]], %[[VB]] {lmc.recomputed}
// SELECTIVE: %[[ER:.*]] = lmc.exp %[[PR]] {lmc.recomputed}
// SELECTIVE: lmc.mul %{{.*}}, %[[ER]]
// SELECTIVE: return
// CHECK: module attributes {lmc.remat = {cuts = 3 : i64, policy = "per-block", recomputed = 3 : i64}}
func.func @forward(%w: tensor<4xf32> {lmc.param = "w"}, %v: tensor<8xf32> {lmc.param = "v"},
                   %x: tensor<4xf32> {lmc.input = "x"}) -> (tensor<f32> {lmc.output = "loss"}) {
  %a = lmc.mul %x, %w : tensor<4xf32>
  %h = lmc.add %x, %a : tensor<4xf32>
  %s = lmc.broadcast_in_dim %h, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %vb = lmc.broadcast_in_dim %v, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  %sv = lmc.mul %s, %vb : tensor<4x8xf32>
  %e = lmc.exp %sv : tensor<4x8xf32>
  %r = lmc.reduce_sum %e, axes = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %o = lmc.add %h, %r : tensor<4xf32>
  %oo = lmc.mul %o, %o : tensor<4xf32>
  %l = lmc.reduce_sum %oo, axes = [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
