// Finite-difference checks (f64, 4th-order central differences) of the VJP
// of every differentiable lmc op. Each function weights the op's result with
// a random non-uniform cotangent %w so that no VJP term can cancel out.
// RUN: lmc-gradcheck %s | FileCheck %s
// RUN: not lmc-gradcheck --inject-error %s | FileCheck %s --check-prefix=INJECTED
// CHECK-NOT: FAILED
// INJECTED: FAILED

// CHECK: @neg x: {{.*}} ok
func.func @neg(%x: tensor<3x4xf64> { lmc.param = "x"}, %w: tensor<3x4xf64>) -> tensor<f64> {
  %y = lmc.neg %x : tensor<3x4xf64>
  %p = lmc.mul %y, %w : tensor<3x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<3x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @relu x: {{.*}} ok
func.func @relu(%x: tensor<3x4xf64> { lmc.param = "x"}, %w: tensor<3x4xf64>) -> tensor<f64> {
  %y = lmc.relu %x : tensor<3x4xf64>
  %p = lmc.mul %y, %w : tensor<3x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<3x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @sigmoid x: {{.*}} ok
func.func @sigmoid(%x: tensor<3x4xf64> { lmc.param = "x"}, %w: tensor<3x4xf64>) -> tensor<f64> {
  %y = lmc.sigmoid %x : tensor<3x4xf64>
  %p = lmc.mul %y, %w : tensor<3x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<3x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @tanh x: {{.*}} ok
func.func @tanh(%x: tensor<3x4xf64> { lmc.param = "x"}, %w: tensor<3x4xf64>) -> tensor<f64> {
  %y = lmc.tanh %x : tensor<3x4xf64>
  %p = lmc.mul %y, %w : tensor<3x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<3x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @exp x: {{.*}} ok
func.func @exp(%x: tensor<3x4xf64> { lmc.param = "x"}, %w: tensor<3x4xf64>) -> tensor<f64> {
  %y = lmc.exp %x : tensor<3x4xf64>
  %p = lmc.mul %y, %w : tensor<3x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<3x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @log x: {{.*}} ok
func.func @log(%x: tensor<3x4xf64> { gradcheck.range = [0.5, 2.0], lmc.param = "x"}, %w: tensor<3x4xf64>) -> tensor<f64> {
  %y = lmc.log %x : tensor<3x4xf64>
  %p = lmc.mul %y, %w : tensor<3x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<3x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @sqrt x: {{.*}} ok
func.func @sqrt(%x: tensor<3x4xf64> { gradcheck.range = [0.5, 2.0], lmc.param = "x"}, %w: tensor<3x4xf64>) -> tensor<f64> {
  %y = lmc.sqrt %x : tensor<3x4xf64>
  %p = lmc.mul %y, %w : tensor<3x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<3x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @add a: {{.*}} ok
// CHECK: @add b: {{.*}} ok
func.func @add(%a: tensor<3x4xf64> { gradcheck.range = [0.5, 2.0], lmc.param = "a"}, %b: tensor<3x4xf64> { gradcheck.range = [0.5, 2.0], lmc.param = "b"}, %w: tensor<3x4xf64>) -> tensor<f64> {
  %y = lmc.add %a, %b : tensor<3x4xf64>
  %p = lmc.mul %y, %w : tensor<3x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<3x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @sub a: {{.*}} ok
// CHECK: @sub b: {{.*}} ok
func.func @sub(%a: tensor<3x4xf64> { gradcheck.range = [0.5, 2.0], lmc.param = "a"}, %b: tensor<3x4xf64> { gradcheck.range = [0.5, 2.0], lmc.param = "b"}, %w: tensor<3x4xf64>) -> tensor<f64> {
  %y = lmc.sub %a, %b : tensor<3x4xf64>
  %p = lmc.mul %y, %w : tensor<3x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<3x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @mul a: {{.*}} ok
// CHECK: @mul b: {{.*}} ok
func.func @mul(%a: tensor<3x4xf64> { gradcheck.range = [0.5, 2.0], lmc.param = "a"}, %b: tensor<3x4xf64> { gradcheck.range = [0.5, 2.0], lmc.param = "b"}, %w: tensor<3x4xf64>) -> tensor<f64> {
  %y = lmc.mul %a, %b : tensor<3x4xf64>
  %p = lmc.mul %y, %w : tensor<3x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<3x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @div a: {{.*}} ok
// CHECK: @div b: {{.*}} ok
func.func @div(%a: tensor<3x4xf64> { gradcheck.range = [0.5, 2.0], lmc.param = "a"}, %b: tensor<3x4xf64> { gradcheck.range = [0.5, 2.0], lmc.param = "b"}, %w: tensor<3x4xf64>) -> tensor<f64> {
  %y = lmc.div %a, %b : tensor<3x4xf64>
  %p = lmc.mul %y, %w : tensor<3x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<3x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @pow a: {{.*}} ok
// CHECK: @pow b: {{.*}} ok
func.func @pow(%a: tensor<3x4xf64> { gradcheck.range = [0.5, 2.0], lmc.param = "a"}, %b: tensor<3x4xf64> { gradcheck.range = [0.5, 2.0], lmc.param = "b"}, %w: tensor<3x4xf64>) -> tensor<f64> {
  %y = lmc.pow %a, %b : tensor<3x4xf64>
  %p = lmc.mul %y, %w : tensor<3x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<3x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @select a: {{.*}} ok
// CHECK: @select b: {{.*}} ok
func.func @select(%a: tensor<3x4xf64> {lmc.param = "a"}, %b: tensor<3x4xf64> {lmc.param = "b"}, %c: tensor<3x4xf64>, %w: tensor<3x4xf64>) -> tensor<f64> {
  %zero = arith.constant dense<0.0> : tensor<3x4xf64>
  %m = lmc.cmp gt, %c, %zero : tensor<3x4xf64> -> tensor<3x4xi1>
  %y = lmc.select %m, %a, %b : tensor<3x4xi1>, tensor<3x4xf64>
  %p = lmc.mul %y, %w : tensor<3x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<3x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @broadcast_in_dim a: {{.*}} ok
func.func @broadcast_in_dim(%a: tensor<1x4xf64> {lmc.param = "a"}, %w: tensor<2x3x4xf64>) -> tensor<f64> {
  %y = lmc.broadcast_in_dim %a, dims = [1, 2] : tensor<1x4xf64> -> tensor<2x3x4xf64>
  %p = lmc.mul %y, %w : tensor<2x3x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1, 2] : tensor<2x3x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @broadcast_scalar a: {{.*}} ok
func.func @broadcast_scalar(%a: tensor<f64> {lmc.param = "a"}, %w: tensor<2x3xf64>) -> tensor<f64> {
  %y = lmc.broadcast_in_dim %a, dims = [] : tensor<f64> -> tensor<2x3xf64>
  %p = lmc.mul %y, %w : tensor<2x3xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<2x3xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @reshape a: {{.*}} ok
func.func @reshape(%a: tensor<2x6xf64> {lmc.param = "a"}, %w: tensor<3x2x2xf64>) -> tensor<f64> {
  %y = lmc.reshape %a : tensor<2x6xf64> -> tensor<3x2x2xf64>
  %p = lmc.mul %y, %w : tensor<3x2x2xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1, 2] : tensor<3x2x2xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @transpose a: {{.*}} ok
func.func @transpose(%a: tensor<2x3x4xf64> {lmc.param = "a"}, %w: tensor<4x2x3xf64>) -> tensor<f64> {
  %y = lmc.transpose %a, perm = [2, 0, 1] : tensor<2x3x4xf64> -> tensor<4x2x3xf64>
  %p = lmc.mul %y, %w : tensor<4x2x3xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1, 2] : tensor<4x2x3xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @reduce_sum a: {{.*}} ok
func.func @reduce_sum(%a: tensor<2x3x4xf64> {lmc.param = "a"}, %w: tensor<3xf64>) -> tensor<f64> {
  %y = lmc.reduce_sum %a, axes = [0, 2] : tensor<2x3x4xf64> -> tensor<3xf64>
  %p = lmc.mul %y, %w : tensor<3xf64>
  %l = lmc.reduce_sum %p, axes = [0] : tensor<3xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @reduce_sum_keep a: {{.*}} ok
func.func @reduce_sum_keep(%a: tensor<2x3x4xf64> {lmc.param = "a"}, %w: tensor<2x1x4xf64>) -> tensor<f64> {
  %y = lmc.reduce_sum %a, axes = [1] {keep_dims} : tensor<2x3x4xf64> -> tensor<2x1x4xf64>
  %p = lmc.mul %y, %w : tensor<2x1x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1, 2] : tensor<2x1x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @matmul_nn a: {{.*}} ok
// CHECK: @matmul_nn b: {{.*}} ok
func.func @matmul_nn(%a: tensor<3x5xf64> {lmc.param = "a"}, %b: tensor<5x4xf64> {lmc.param = "b"}, %w: tensor<3x4xf64>) -> tensor<f64> {
  %y = lmc.matmul %a, %b : tensor<3x5xf64>, tensor<5x4xf64> -> tensor<3x4xf64>
  %p = lmc.mul %y, %w : tensor<3x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<3x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @matmul_nt a: {{.*}} ok
// CHECK: @matmul_nt b: {{.*}} ok
func.func @matmul_nt(%a: tensor<3x5xf64> {lmc.param = "a"}, %b: tensor<4x5xf64> {lmc.param = "b"}, %w: tensor<3x4xf64>) -> tensor<f64> {
  %y = lmc.matmul %a, %b {transpose_rhs} : tensor<3x5xf64>, tensor<4x5xf64> -> tensor<3x4xf64>
  %p = lmc.mul %y, %w : tensor<3x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<3x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @matmul_tn a: {{.*}} ok
// CHECK: @matmul_tn b: {{.*}} ok
func.func @matmul_tn(%a: tensor<5x3xf64> {lmc.param = "a"}, %b: tensor<5x4xf64> {lmc.param = "b"}, %w: tensor<3x4xf64>) -> tensor<f64> {
  %y = lmc.matmul %a, %b {transpose_lhs} : tensor<5x3xf64>, tensor<5x4xf64> -> tensor<3x4xf64>
  %p = lmc.mul %y, %w : tensor<3x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<3x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @matmul_tt a: {{.*}} ok
// CHECK: @matmul_tt b: {{.*}} ok
func.func @matmul_tt(%a: tensor<5x3xf64> {lmc.param = "a"}, %b: tensor<4x5xf64> {lmc.param = "b"}, %w: tensor<3x4xf64>) -> tensor<f64> {
  %y = lmc.matmul %a, %b {transpose_lhs, transpose_rhs} : tensor<5x3xf64>, tensor<4x5xf64> -> tensor<3x4xf64>
  %p = lmc.mul %y, %w : tensor<3x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<3x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @matmul_batched a: {{.*}} ok
// CHECK: @matmul_batched b: {{.*}} ok
func.func @matmul_batched(%a: tensor<2x3x5xf64> {lmc.param = "a"}, %b: tensor<2x4x5xf64> {lmc.param = "b"}, %w: tensor<2x3x4xf64>) -> tensor<f64> {
  %y = lmc.matmul %a, %b {transpose_rhs} : tensor<2x3x5xf64>, tensor<2x4x5xf64> -> tensor<2x3x4xf64>
  %p = lmc.mul %y, %w : tensor<2x3x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1, 2] : tensor<2x3x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @softmax a: {{.*}} ok
func.func @softmax(%a: tensor<3x4xf64> {lmc.param = "a"}, %w: tensor<3x4xf64>) -> tensor<f64> {
  %y = lmc.softmax %a, axis = 1 : tensor<3x4xf64>
  %p = lmc.mul %y, %w : tensor<3x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<3x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @softmax_axis0 a: {{.*}} ok
func.func @softmax_axis0(%a: tensor<3x4xf64> {lmc.param = "a"}, %w: tensor<3x4xf64>) -> tensor<f64> {
  %y = lmc.softmax %a, axis = 0 : tensor<3x4xf64>
  %p = lmc.mul %y, %w : tensor<3x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1] : tensor<3x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @log_softmax a: {{.*}} ok
func.func @log_softmax(%a: tensor<2x3x4xf64> {lmc.param = "a"}, %w: tensor<2x3x4xf64>) -> tensor<f64> {
  %y = lmc.log_softmax %a, axis = 1 : tensor<2x3x4xf64>
  %p = lmc.mul %y, %w : tensor<2x3x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1, 2] : tensor<2x3x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @softmax_cross_entropy a: {{.*}} ok
func.func @softmax_cross_entropy(%a: tensor<5x7xf64> {gradcheck.range = [-3.0, 3.0], lmc.param = "a"}, %labels: tensor<5xi64> {gradcheck.classes = 7 : i64}, %w: tensor<f64>) -> tensor<f64> {
  %y = lmc.softmax_cross_entropy %a, %labels : tensor<5x7xf64>, tensor<5xi64> -> tensor<f64>
  %p = lmc.mul %y, %w : tensor<f64>
  %l = lmc.add %p, %p : tensor<f64>
  return %l : tensor<f64>
}

// A composite: a two-layer MLP with shared parameters used twice (fan-in).
// CHECK: @mlp w1: {{.*}} ok
// CHECK: @mlp b1: {{.*}} ok
func.func @mlp(%w1: tensor<6x4xf64> {lmc.param = "w1"}, %b1: tensor<6xf64> {lmc.param = "b1"},
               %x: tensor<3x4xf64>, %labels: tensor<3xi64> {gradcheck.classes = 6 : i64}) -> tensor<f64> {
  %h = lmc.matmul %x, %w1 {transpose_rhs} : tensor<3x4xf64>, tensor<6x4xf64> -> tensor<3x6xf64>
  %bb = lmc.broadcast_in_dim %b1, dims = [1] : tensor<6xf64> -> tensor<3x6xf64>
  %s = lmc.add %h, %bb : tensor<3x6xf64>
  %t = lmc.sigmoid %s : tensor<3x6xf64>
  %u = lmc.mul %t, %s : tensor<3x6xf64>
  %l = lmc.softmax_cross_entropy %u, %labels : tensor<3x6xf64>, tensor<3xi64> -> tensor<f64>
  return %l : tensor<f64>
}
