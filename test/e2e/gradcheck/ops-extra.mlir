// Finite-difference checks (f64) of the VJPs of the extremum, erf, slicing
// and gather ops, each weighted with a random non-uniform cotangent %w (see
// ops.mlir).
// RUN: lmc-gradcheck %s | FileCheck %s
// CHECK-NOT: FAILED

// CHECK: @abs x: {{.*}} ok
func.func @abs(%x: tensor<3x4xf64> {lmc.param = "x"}, %w: tensor<3x4xf64>) -> tensor<f64> {
  %y = lmc.abs %x : tensor<3x4xf64>
  %p = lmc.mul %y, %w : tensor<3x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<3x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @erf x: {{.*}} ok
func.func @erf(%x: tensor<3x4xf64> {gradcheck.range = [-2.0, 2.0], lmc.param = "x"}, %w: tensor<3x4xf64>) -> tensor<f64> {
  %y = lmc.erf %x : tensor<3x4xf64>
  %p = lmc.mul %y, %w : tensor<3x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<3x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @max a: {{.*}} ok
// CHECK: @max b: {{.*}} ok
func.func @max(%a: tensor<3x4xf64> {lmc.param = "a"}, %b: tensor<3x4xf64> {lmc.param = "b"}, %w: tensor<3x4xf64>) -> tensor<f64> {
  %y = lmc.max %a, %b : tensor<3x4xf64>
  %p = lmc.mul %y, %w : tensor<3x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<3x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @min a: {{.*}} ok
// CHECK: @min b: {{.*}} ok
func.func @min(%a: tensor<3x4xf64> {lmc.param = "a"}, %b: tensor<3x4xf64> {lmc.param = "b"}, %w: tensor<3x4xf64>) -> tensor<f64> {
  %y = lmc.min %a, %b : tensor<3x4xf64>
  %p = lmc.mul %y, %w : tensor<3x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<3x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// Ties split the cotangent in halves: max(a, a) has gradient w.
// CHECK: @max_tie a: {{.*}} ok
func.func @max_tie(%a: tensor<3x4xf64> {lmc.param = "a"}, %w: tensor<3x4xf64>) -> tensor<f64> {
  %y = lmc.max %a, %a : tensor<3x4xf64>
  %p = lmc.mul %y, %w : tensor<3x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<3x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @reduce_max a: {{.*}} ok
func.func @reduce_max(%a: tensor<2x3x4xf64> {lmc.param = "a"}, %w: tensor<2x4xf64>) -> tensor<f64> {
  %y = lmc.reduce_max %a, axes = [1] : tensor<2x3x4xf64> -> tensor<2x4xf64>
  %p = lmc.mul %y, %w : tensor<2x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<2x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @reduce_min_keep a: {{.*}} ok
func.func @reduce_min_keep(%a: tensor<2x3x4xf64> {lmc.param = "a"}, %w: tensor<1x3x1xf64>) -> tensor<f64> {
  %y = lmc.reduce_min %a, axes = [0, 2] {keep_dims} : tensor<2x3x4xf64> -> tensor<1x3x1xf64>
  %p = lmc.mul %y, %w : tensor<1x3x1xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1, 2] : tensor<1x3x1xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @concat a: {{.*}} ok
// CHECK: @concat b: {{.*}} ok
func.func @concat(%a: tensor<2x3xf64> {lmc.param = "a"}, %b: tensor<2x2xf64> {lmc.param = "b"}, %w: tensor<2x8xf64>) -> tensor<f64> {
  %y = lmc.concat axis = 1, %a, %b, %a : tensor<2x3xf64>, tensor<2x2xf64>, tensor<2x3xf64> -> tensor<2x8xf64>
  %p = lmc.mul %y, %w : tensor<2x8xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<2x8xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @slice a: {{.*}} ok
func.func @slice(%a: tensor<4x7xf64> {lmc.param = "a"}, %w: tensor<2x3xf64>) -> tensor<f64> {
  %y = lmc.slice %a, start = [1, 6], stride = [2, -3] : tensor<4x7xf64> -> tensor<2x3xf64>
  %p = lmc.mul %y, %w : tensor<2x3xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<2x3xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @slice_grad a: {{.*}} ok
func.func @slice_grad(%a: tensor<2x3xf64> {lmc.param = "a"}, %w: tensor<4x7xf64>) -> tensor<f64> {
  %y = lmc.slice_grad %a, start = [1, 6], stride = [2, -3] : tensor<2x3xf64> -> tensor<4x7xf64>
  %p = lmc.mul %y, %w : tensor<4x7xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<4x7xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// An embedding lookup; repeated indices accumulate in the scatter-add.
// CHECK: @gather table: {{.*}} ok
func.func @gather(%table: tensor<5x3xf64> {lmc.param = "table"}, %ids: tensor<2x4xi64> {gradcheck.classes = 5 : i64}, %w: tensor<2x4x3xf64>) -> tensor<f64> {
  %y = lmc.gather %table, %ids, axis = 0 : tensor<5x3xf64>, tensor<2x4xi64> -> tensor<2x4x3xf64>
  %p = lmc.mul %y, %w : tensor<2x4x3xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1, 2] : tensor<2x4x3xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @gather_axis1 a: {{.*}} ok
func.func @gather_axis1(%a: tensor<2x4x3xf64> {lmc.param = "a"}, %ids: tensor<5xi64> {gradcheck.classes = 4 : i64}, %w: tensor<2x5x3xf64>) -> tensor<f64> {
  %y = lmc.gather %a, %ids, axis = 1 : tensor<2x4x3xf64>, tensor<5xi64> -> tensor<2x5x3xf64>
  %p = lmc.mul %y, %w : tensor<2x5x3xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1, 2] : tensor<2x5x3xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @scatter_add u: {{.*}} ok
func.func @scatter_add(%u: tensor<2x4x3xf64> {lmc.param = "u"}, %ids: tensor<2x4xi64> {gradcheck.classes = 5 : i64}, %w: tensor<5x3xf64>) -> tensor<f64> {
  %y = lmc.scatter_add %u, %ids, axis = 0 : tensor<2x4x3xf64>, tensor<2x4xi64> -> tensor<5x3xf64>
  %p = lmc.mul %y, %w : tensor<5x3xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<5x3xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// A float-to-float conversion passes the cotangent through; an integer
// operand gets none.
// CHECK: @convert x: {{.*}} ok
func.func @convert(%x: tensor<3x4xf64> {lmc.param = "x"}, %k: tensor<3x4xi64> {gradcheck.classes = 3 : i64}, %w: tensor<3x4xf64>) -> tensor<f64> {
  %kf = lmc.convert %k : tensor<3x4xi64> -> tensor<3x4xf64>
  %y = lmc.mul %x, %kf : tensor<3x4xf64>
  %z = lmc.convert %y : tensor<3x4xf64> -> tensor<3x4xf64>
  %p = lmc.mul %z, %w : tensor<3x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<3x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// LayerNormalization as the importer decomposes it (test/Import/
// normalization.onnxtxt), over the last axis, with scale and bias.
// CHECK: @layer_norm x: {{.*}} ok
// CHECK: @layer_norm scale: {{.*}} ok
// CHECK: @layer_norm bias: {{.*}} ok
func.func @layer_norm(%x: tensor<2x4xf64> {lmc.param = "x"}, %scale: tensor<4xf64> {lmc.param = "scale"}, %bias: tensor<4xf64> {lmc.param = "bias"}, %w: tensor<2x4xf64>) -> tensor<f64> {
  %0 = lmc.reduce_sum %x, axes = [1] {keep_dims} : tensor<2x4xf64> -> tensor<2x1xf64>
  %q = arith.constant dense<2.500000e-01> : tensor<2x1xf64>
  %1 = lmc.mul %0, %q : tensor<2x1xf64>
  %2 = lmc.broadcast_in_dim %1, dims = [0, 1] : tensor<2x1xf64> -> tensor<2x4xf64>
  %3 = lmc.sub %x, %2 : tensor<2x4xf64>
  %4 = lmc.mul %3, %3 : tensor<2x4xf64>
  %5 = lmc.reduce_sum %4, axes = [1] {keep_dims} : tensor<2x4xf64> -> tensor<2x1xf64>
  %6 = lmc.mul %5, %q : tensor<2x1xf64>
  %eps = arith.constant dense<1.000000e-05> : tensor<2x1xf64>
  %7 = lmc.add %6, %eps : tensor<2x1xf64>
  %8 = lmc.sqrt %7 : tensor<2x1xf64>
  %one = arith.constant dense<1.000000e+00> : tensor<2x1xf64>
  %9 = lmc.div %one, %8 : tensor<2x1xf64>
  %10 = lmc.broadcast_in_dim %9, dims = [0, 1] : tensor<2x1xf64> -> tensor<2x4xf64>
  %11 = lmc.mul %3, %10 : tensor<2x4xf64>
  %12 = lmc.broadcast_in_dim %scale, dims = [1] : tensor<4xf64> -> tensor<2x4xf64>
  %13 = lmc.mul %11, %12 : tensor<2x4xf64>
  %14 = lmc.broadcast_in_dim %bias, dims = [1] : tensor<4xf64> -> tensor<2x4xf64>
  %y = lmc.add %13, %14 : tensor<2x4xf64>
  %p = lmc.mul %y, %w : tensor<2x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<2x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// Gelu (approximate = none) as the importer decomposes it.
// CHECK: @gelu x: {{.*}} ok
func.func @gelu(%x: tensor<3x4xf64> {gradcheck.range = [-2.0, 2.0], lmc.param = "x"}, %w: tensor<3x4xf64>) -> tensor<f64> {
  %r = arith.constant dense<0.70710678118654757> : tensor<3x4xf64>
  %0 = lmc.mul %x, %r : tensor<3x4xf64>
  %1 = lmc.erf %0 : tensor<3x4xf64>
  %one = arith.constant dense<1.000000e+00> : tensor<3x4xf64>
  %2 = lmc.add %one, %1 : tensor<3x4xf64>
  %half = arith.constant dense<5.000000e-01> : tensor<3x4xf64>
  %3 = lmc.mul %half, %x : tensor<3x4xf64>
  %y = lmc.mul %3, %2 : tensor<3x4xf64>
  %p = lmc.mul %y, %w : tensor<3x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<3x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// Where with a boolean mask input broadcast by lmc.broadcast_in_dim (the
// causal-mask pattern): the cotangent flows to the selected side only.
// CHECK: @where_broadcast_mask a: {{.*}} ok
func.func @where_broadcast_mask(%a: tensor<2x3x3xf64> {lmc.param = "a"}, %c: tensor<3x3xf64>, %w: tensor<2x3x3xf64>) -> tensor<f64> {
  %zero = arith.constant dense<0.000000e+00> : tensor<3x3xf64>
  %m = lmc.cmp gt, %c, %zero : tensor<3x3xf64> -> tensor<3x3xi1>
  %mb = lmc.broadcast_in_dim %m, dims = [1, 2] : tensor<3x3xi1> -> tensor<2x3x3xi1>
  %ninf = arith.constant dense<-1.000000e+09> : tensor<2x3x3xf64>
  %y = lmc.select %mb, %a, %ninf : tensor<2x3x3xi1>, tensor<2x3x3xf64>
  %s = lmc.softmax %y, axis = 2 : tensor<2x3x3xf64>
  %p = lmc.mul %s, %w : tensor<2x3x3xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1, 2] : tensor<2x3x3xf64> -> tensor<f64>
  return %l : tensor<f64>
}
