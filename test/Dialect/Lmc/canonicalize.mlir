// Transposes around lmc.matmul fold into its transpose flags.
// RUN: lmc-opt %s -split-input-file -canonicalize | FileCheck %s

// x @ W^T as ONNX spells it (Transpose + MatMul): W goes to the product
// directly, with transpose_rhs.
// CHECK-LABEL: func.func @weight_transpose
// CHECK-NOT: lmc.transpose
// CHECK: lmc.matmul %arg0, %arg1 {transpose_rhs} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
func.func @weight_transpose(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32> {
  %wt = lmc.transpose %w, perm = [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
  %y = lmc.matmul %x, %wt : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// A flag already set flips back off; other readers keep the transpose.
// CHECK-LABEL: func.func @flips_and_keeps_other_readers
// CHECK: %[[T:.*]] = lmc.transpose %arg0, perm = [1, 0]
// CHECK: %[[P:.*]] = lmc.matmul %arg0, %arg1 : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
// CHECK: return %[[P]], %[[T]]
func.func @flips_and_keeps_other_readers(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> (tensor<4x2xf32>, tensor<8x4xf32>) {
  %at = lmc.transpose %a, perm = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %p = lmc.matmul %at, %b {transpose_lhs} : tensor<8x4xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
  return %p, %at : tensor<4x2xf32>, tensor<8x4xf32>
}

// -----

// A weight gradient transposed back to the weight's layout: the product is
// computed transposed instead, (op(A)·op(B))ᵀ = op(B)ᵀ·op(A)ᵀ.
// CHECK-LABEL: func.func @transposed_product
// CHECK-NOT: lmc.transpose
// CHECK: lmc.matmul %arg1, %arg0 {transpose_lhs} : tensor<4x16xf32>, tensor<4x8xf32> -> tensor<16x8xf32>
func.func @transposed_product(%x: tensor<4x8xf32>, %dy: tensor<4x16xf32>) -> tensor<16x8xf32> {
  %dwt = lmc.matmul %x, %dy {transpose_lhs} : tensor<4x8xf32>, tensor<4x16xf32> -> tensor<8x16xf32>
  %dw = lmc.transpose %dwt, perm = [1, 0] : tensor<8x16xf32> -> tensor<16x8xf32>
  return %dw : tensor<16x8xf32>
}

// -----

// A product read elsewhere too is left alone.
// CHECK-LABEL: func.func @shared_product
// CHECK: lmc.matmul %arg0, %arg1 :
// CHECK: lmc.transpose
func.func @shared_product(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> (tensor<2x4xf32>, tensor<4x2xf32>) {
  %p = lmc.matmul %a, %b : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
  %t = lmc.transpose %p, perm = [1, 0] : tensor<4x2xf32> -> tensor<2x4xf32>
  return %t, %p : tensor<2x4xf32>, tensor<4x2xf32>
}

// -----

// Attention's keys, [b, t, h, d] → [b, h, d, t] for q·kᵀ: read only by
// matmuls, the transpose becomes [b, h, t, d] (rows of d stay contiguous)
// and every reader flips its flag.
// CHECK-LABEL: func.func @keys
// CHECK: %[[K:.*]] = lmc.transpose %arg1, perm = [0, 2, 1, 3] : tensor<2x5x3x4xf32> -> tensor<2x3x5x4xf32>
// CHECK: lmc.matmul %arg0, %[[K]] {transpose_rhs}
// CHECK: lmc.matmul %arg2, %[[K]] :
func.func @keys(%q: tensor<2x3x5x4xf32>, %k: tensor<2x5x3x4xf32>, %ds: tensor<2x3x5x5xf32>) -> (tensor<2x3x5x5xf32>, tensor<2x3x5x4xf32>) {
  %kt = lmc.transpose %k, perm = [0, 2, 3, 1] : tensor<2x5x3x4xf32> -> tensor<2x3x4x5xf32>
  %s = lmc.matmul %q, %kt : tensor<2x3x5x4xf32>, tensor<2x3x4x5xf32> -> tensor<2x3x5x5xf32>
  %dq = lmc.matmul %ds, %kt {transpose_rhs} : tensor<2x3x5x5xf32>, tensor<2x3x4x5xf32> -> tensor<2x3x5x4xf32>
  return %s, %dq : tensor<2x3x5x5xf32>, tensor<2x3x5x4xf32>
}

// -----

// ...and when something else reads it, it stays.
// CHECK-LABEL: func.func @keys_read_elsewhere
// CHECK: lmc.transpose %arg1, perm = [0, 2, 3, 1]
// CHECK-NOT: lmc.transpose
func.func @keys_read_elsewhere(%q: tensor<2x3x5x4xf32>, %k: tensor<2x5x3x4xf32>) -> (tensor<2x3x5x5xf32>, tensor<2x3x4x5xf32>) {
  %kt = lmc.transpose %k, perm = [0, 2, 3, 1] : tensor<2x5x3x4xf32> -> tensor<2x3x4x5xf32>
  %s = lmc.matmul %q, %kt : tensor<2x3x5x4xf32>, tensor<2x3x4x5xf32> -> tensor<2x3x5x5xf32>
  return %s, %kt : tensor<2x3x5x5xf32>, tensor<2x3x4x5xf32>
}

// -----

// The keys' gradient, a product [b, h, d, t] put back as [b, t, h, d]: the
// product is computed as [b, h, t, d] and moved with contiguous rows.
// CHECK-LABEL: func.func @key_gradient
// CHECK: %[[P:.*]] = lmc.matmul %arg1, %arg0 {transpose_lhs} : tensor<2x3x5x5xf32>, tensor<2x3x5x4xf32> -> tensor<2x3x5x4xf32>
// CHECK: lmc.transpose %[[P]], perm = [0, 2, 1, 3] : tensor<2x3x5x4xf32> -> tensor<2x5x3x4xf32>
func.func @key_gradient(%q: tensor<2x3x5x4xf32>, %ds: tensor<2x3x5x5xf32>) -> tensor<2x5x3x4xf32> {
  %dkt = lmc.matmul %q, %ds {transpose_lhs} : tensor<2x3x5x4xf32>, tensor<2x3x5x5xf32> -> tensor<2x3x4x5xf32>
  %dk = lmc.transpose %dkt, perm = [0, 3, 1, 2] : tensor<2x3x4x5xf32> -> tensor<2x5x3x4xf32>
  return %dk : tensor<2x5x3x4xf32>
}

// -----

// The gradient of a split into q, k, v: three zero-padded pieces added up
// become one concat of the pieces (and a slice_grad covering the whole
// result folds away).
// CHECK-LABEL: func.func @split_gradient
// CHECK-NOT: lmc.slice_grad
// CHECK-NOT: lmc.add
// CHECK: %[[C:.*]] = lmc.concat axis = 1, %arg0, %arg1, %arg2 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x9xf32>
// CHECK: return %[[C]]
func.func @split_gradient(%dq: tensor<2x3xf32>, %dk: tensor<2x3xf32>, %dv: tensor<2x3xf32>) -> tensor<2x9xf32> {
  %v = lmc.slice_grad %dv, start = [0, 6], stride = [1, 1] : tensor<2x3xf32> -> tensor<2x9xf32>
  %k = lmc.slice_grad %dk, start = [0, 3], stride = [1, 1] : tensor<2x3xf32> -> tensor<2x9xf32>
  %vk = lmc.add %v, %k : tensor<2x9xf32>
  %q = lmc.slice_grad %dq, start = [0, 0], stride = [1, 1] : tensor<2x3xf32> -> tensor<2x9xf32>
  %all = lmc.add %vk, %q : tensor<2x9xf32>
  return %all : tensor<2x9xf32>
}

// -----

// Adjacent pieces that do not cover the result stay a padded concat.
// CHECK-LABEL: func.func @partial_cover
// CHECK: %[[C:.*]] = lmc.concat axis = 1, %arg0, %arg1 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x6xf32>
// CHECK: lmc.slice_grad %[[C]], start = [0, 2], stride = [1, 1] : tensor<2x6xf32> -> tensor<2x9xf32>
func.func @partial_cover(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x9xf32> {
  %pa = lmc.slice_grad %a, start = [0, 2], stride = [1, 1] : tensor<2x3xf32> -> tensor<2x9xf32>
  %pb = lmc.slice_grad %b, start = [0, 5], stride = [1, 1] : tensor<2x3xf32> -> tensor<2x9xf32>
  %s = lmc.add %pa, %pb : tensor<2x9xf32>
  return %s : tensor<2x9xf32>
}

// -----

// Windows with a gap, overlapping windows, windows differing in two
// dimensions, and strided windows are a real sum: they stay.
// CHECK-LABEL: func.func @not_adjacent
// CHECK-NOT: lmc.concat
// CHECK-COUNT-4: lmc.add
func.func @not_adjacent(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> (tensor<2x9xf32>, tensor<2x9xf32>, tensor<4x9xf32>, tensor<2x9xf32>) {
  %a0 = lmc.slice_grad %a, start = [0, 0], stride = [1, 1] : tensor<2x3xf32> -> tensor<2x9xf32>
  %b4 = lmc.slice_grad %b, start = [0, 4], stride = [1, 1] : tensor<2x3xf32> -> tensor<2x9xf32>
  %gap = lmc.add %a0, %b4 : tensor<2x9xf32>
  %a1 = lmc.slice_grad %a, start = [0, 1], stride = [1, 1] : tensor<2x3xf32> -> tensor<2x9xf32>
  %b2 = lmc.slice_grad %b, start = [0, 2], stride = [1, 1] : tensor<2x3xf32> -> tensor<2x9xf32>
  %overlap = lmc.add %a1, %b2 : tensor<2x9xf32>
  %a00 = lmc.slice_grad %a, start = [0, 0], stride = [1, 1] : tensor<2x3xf32> -> tensor<4x9xf32>
  %b23 = lmc.slice_grad %b, start = [2, 3], stride = [1, 1] : tensor<2x3xf32> -> tensor<4x9xf32>
  %diagonal = lmc.add %a00, %b23 : tensor<4x9xf32>
  %as = lmc.slice_grad %a, start = [0, 0], stride = [1, 2] : tensor<2x3xf32> -> tensor<2x9xf32>
  %b6 = lmc.slice_grad %b, start = [0, 6], stride = [1, 1] : tensor<2x3xf32> -> tensor<2x9xf32>
  %strided = lmc.add %as, %b6 : tensor<2x9xf32>
  return %gap, %overlap, %diagonal, %strided : tensor<2x9xf32>, tensor<2x9xf32>, tensor<4x9xf32>, tensor<2x9xf32>
}

// -----

// Transposes of rank below 2 are left alone.
// CHECK-LABEL: func.func @rank_one
// CHECK: lmc.transpose %arg0, perm = [0]
func.func @rank_one(%a: tensor<4xf32>) -> tensor<4xf32> {
  %t = lmc.transpose %a, perm = [0] : tensor<4xf32> -> tensor<4xf32>
  return %t : tensor<4xf32>
}

// -----

// A layer norm's input gradient plus another cotangent of its input (the
// residual stream's) becomes the gradient op's accumulate operand; the
// scale's and bias's gradients are taken from the new op.
// CHECK-LABEL: func.func @add_into_layer_norm_grad
// CHECK-SAME: (%[[X:.*]]: tensor<3x8xf32>, %[[G:.*]]: tensor<8xf32>, %[[S:.*]]: tensor<3x2xf32>, %[[DY:.*]]: tensor<3x8xf32>, %[[R:.*]]: tensor<3x8xf32>)
// CHECK-NEXT: %[[DX:.*]], %[[DG:.*]], %[[DB:.*]] = lmc.layer_norm_grad %[[X]], %[[G]], %[[S]], %[[DY]] accumulate %[[R]] :
// CHECK-NEXT: return %[[DX]], %[[DG]], %[[DB]]
func.func @add_into_layer_norm_grad(%x: tensor<3x8xf32>, %g: tensor<8xf32>, %s: tensor<3x2xf32>, %dy: tensor<3x8xf32>, %r: tensor<3x8xf32>)
    -> (tensor<3x8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %dx, %dg, %db = lmc.layer_norm_grad %x, %g, %s, %dy : tensor<3x8xf32>, tensor<8xf32>, tensor<3x2xf32>, tensor<3x8xf32>
  %sum = lmc.add %r, %dx : tensor<3x8xf32>
  return %sum, %dg, %db : tensor<3x8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// dx read twice: left alone.
// CHECK-LABEL: func.func @input_gradient_read_twice
// CHECK: lmc.layer_norm_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} :
// CHECK: lmc.add
func.func @input_gradient_read_twice(%x: tensor<3x8xf32>, %g: tensor<8xf32>, %s: tensor<3x2xf32>, %dy: tensor<3x8xf32>, %r: tensor<3x8xf32>)
    -> (tensor<3x8xf32>, tensor<3x8xf32>) {
  %dx, %dg, %db = lmc.layer_norm_grad %x, %g, %s, %dy : tensor<3x8xf32>, tensor<8xf32>, tensor<3x2xf32>, tensor<3x8xf32>
  %sum = lmc.add %r, %dx : tensor<3x8xf32>
  return %sum, %dx : tensor<3x8xf32>, tensor<3x8xf32>
}
