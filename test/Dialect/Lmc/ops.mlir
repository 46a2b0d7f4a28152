// Every lmc op parses, verifies and prints back to the same form.
// RUN: lmc-opt %s | lmc-opt | FileCheck %s

// Each op's operands are the values written in its place, in their order.
// CHECK-LABEL: func.func @elementwise
// CHECK-SAME: ([[A:%[a-z0-9_]+]]: tensor<2x3xf32>, [[B:%[a-z0-9_]+]]: tensor<2x3xf32>)
func.func @elementwise(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK: [[NEG:%[a-z0-9_]+]] = lmc.neg [[A]] : tensor<2x3xf32>
  %0 = lmc.neg %a : tensor<2x3xf32>
  // CHECK: [[RELU:%[a-z0-9_]+]] = lmc.relu [[NEG]] : tensor<2x3xf32>
  %1 = lmc.relu %0 : tensor<2x3xf32>
  // CHECK: [[SIGMOID:%[a-z0-9_]+]] = lmc.sigmoid [[RELU]]
  %2 = lmc.sigmoid %1 : tensor<2x3xf32>
  // CHECK: [[TANH:%[a-z0-9_]+]] = lmc.tanh [[SIGMOID]]
  %3 = lmc.tanh %2 : tensor<2x3xf32>
  // CHECK: [[EXP:%[a-z0-9_]+]] = lmc.exp [[TANH]]
  %4 = lmc.exp %3 : tensor<2x3xf32>
  // CHECK: [[LOG:%[a-z0-9_]+]] = lmc.log [[EXP]]
  %5 = lmc.log %4 : tensor<2x3xf32>
  // CHECK: [[SQRT:%[a-z0-9_]+]] = lmc.sqrt [[LOG]]
  %6 = lmc.sqrt %5 : tensor<2x3xf32>
  // CHECK: [[ADD:%[a-z0-9_]+]] = lmc.add [[SQRT]], [[B]] : tensor<2x3xf32>
  %7 = lmc.add %6, %b : tensor<2x3xf32>
  // CHECK: [[SUB:%[a-z0-9_]+]] = lmc.sub [[ADD]], [[B]]
  %8 = lmc.sub %7, %b : tensor<2x3xf32>
  // CHECK: [[MUL:%[a-z0-9_]+]] = lmc.mul [[SUB]], [[B]]
  %9 = lmc.mul %8, %b : tensor<2x3xf32>
  // CHECK: [[DIV:%[a-z0-9_]+]] = lmc.div [[MUL]], [[B]]
  %10 = lmc.div %9, %b : tensor<2x3xf32>
  // CHECK: [[POW:%[a-z0-9_]+]] = lmc.pow [[DIV]], [[B]]
  %11 = lmc.pow %10, %b : tensor<2x3xf32>
  // CHECK: [[GE:%[a-z0-9_]+]] = lmc.cmp ge, [[POW]], [[B]] : tensor<2x3xf32> -> tensor<2x3xi1>
  %12 = lmc.cmp ge, %11, %b : tensor<2x3xf32> -> tensor<2x3xi1>
  // CHECK: [[SELECT:%[a-z0-9_]+]] = lmc.select [[GE]], [[POW]], [[B]] : tensor<2x3xi1>, tensor<2x3xf32>
  %13 = lmc.select %12, %11, %b : tensor<2x3xi1>, tensor<2x3xf32>
  // CHECK: return [[SELECT]]
  return %13 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @shapes
// CHECK-SAME: ([[A:%[a-z0-9_]+]]: tensor<3xf32>, [[B:%[a-z0-9_]+]]: tensor<2x3x4xf32>)
func.func @shapes(%a: tensor<3xf32>, %b: tensor<2x3x4xf32>) -> (tensor<2x3xf32>, tensor<4x2x3xf32>, tensor<6x4xf32>) {
  // CHECK: lmc.broadcast_in_dim [[A]], dims = [1] : tensor<3xf32> -> tensor<2x3xf32>
  %0 = lmc.broadcast_in_dim %a, dims = [1] : tensor<3xf32> -> tensor<2x3xf32>
  // CHECK: lmc.transpose [[B]], perm = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %1 = lmc.transpose %b, perm = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  // CHECK: lmc.reshape [[B]] : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %2 = lmc.reshape %b : tensor<2x3x4xf32> -> tensor<6x4xf32>
  return %0, %1, %2 : tensor<2x3xf32>, tensor<4x2x3xf32>, tensor<6x4xf32>
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%a: tensor<2x3x4xf32>, %w: tensor<5x4xf32>, %l: tensor<2xi64>, %g: tensor<f32>)
    -> (tensor<2x1x4xf32>, tensor<2x3x5xf32>, tensor<2x4xf32>, tensor<f32>, tensor<2x4xf32>) {
  // CHECK: lmc.reduce_sum %{{.*}}, axes = [1] {keep_dims} : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  %0 = lmc.reduce_sum %a, axes = [1] {keep_dims} : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  %wb = lmc.broadcast_in_dim %w, dims = [1, 2] : tensor<5x4xf32> -> tensor<2x5x4xf32>
  // CHECK: lmc.matmul %{{.*}}, %{{.*}} {transpose_rhs} : tensor<2x3x4xf32>, tensor<2x5x4xf32> -> tensor<2x3x5xf32>
  %1 = lmc.matmul %a, %wb {transpose_rhs} : tensor<2x3x4xf32>, tensor<2x5x4xf32> -> tensor<2x3x5xf32>
  // bf16 operands accumulating in f32 (lmc-mixed-precision).
  // CHECK: lmc.matmul %{{.*}}, %{{.*}} {transpose_rhs} : tensor<2x3x4xbf16>, tensor<2x5x4xbf16> -> tensor<2x3x5xf32>
  %al = lmc.convert %a : tensor<2x3x4xf32> -> tensor<2x3x4xbf16>
  %bl = lmc.convert %wb : tensor<2x5x4xf32> -> tensor<2x5x4xbf16>
  %lowp = lmc.matmul %al, %bl {transpose_rhs} : tensor<2x3x4xbf16>, tensor<2x5x4xbf16> -> tensor<2x3x5xf32>
  %r = lmc.reduce_sum %a, axes = [1] : tensor<2x3x4xf32> -> tensor<2x4xf32>
  // CHECK: lmc.softmax %{{.*}}, axis = 1 : tensor<2x4xf32>
  %2 = lmc.softmax %r, axis = 1 : tensor<2x4xf32>
  // CHECK: lmc.log_softmax %{{.*}}, axis = 0 : tensor<2x4xf32>
  %3 = lmc.log_softmax %2, axis = 0 : tensor<2x4xf32>
  // CHECK: lmc.softmax_cross_entropy %{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<2xi64> -> tensor<f32>
  %4 = lmc.softmax_cross_entropy %3, %l : tensor<2x4xf32>, tensor<2xi64> -> tensor<f32>
  // CHECK: lmc.softmax_cross_entropy_grad %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<2xi64>, tensor<f32>
  %5 = lmc.softmax_cross_entropy_grad %3, %l, %g : tensor<2x4xf32>, tensor<2xi64>, tensor<f32>
  // CHECK: lmc.softmax_cross_entropy %{{.*}}, %{{.*}} ignore_index = -100 : tensor<2x4xf32>, tensor<2xi64> -> tensor<f32>
  %i4 = lmc.softmax_cross_entropy %3, %l ignore_index = -100 : tensor<2x4xf32>, tensor<2xi64> -> tensor<f32>
  // CHECK: lmc.softmax_cross_entropy_grad %{{.*}}, %{{.*}}, %{{.*}} ignore_index = -100 : tensor<2x4xf32>, tensor<2xi64>, tensor<f32>
  %i5 = lmc.softmax_cross_entropy_grad %3, %l, %g ignore_index = -100 : tensor<2x4xf32>, tensor<2xi64>, tensor<f32>
  return %0, %1, %3, %4, %5 : tensor<2x1x4xf32>, tensor<2x3x5xf32>, tensor<2x4xf32>, tensor<f32>, tensor<2x4xf32>
}
