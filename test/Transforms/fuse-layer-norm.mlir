// RUN: lmc-opt %s -split-input-file -lmc-fuse-layer-norm | FileCheck %s

// ONNX LayerNormalization over the last axis as the importer writes it
// (lib/Import/Onnx/Normalization.cpp): one lmc.layer_norm, the chain and
// the constants only it read gone.
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x8xf32>, %[[G:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[Y:.*]], %{{.*}} = lmc.layer_norm %[[X]], %[[G]], %[[B]] {epsilon = 9.99999974E-6 : f32} : tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x3x8xf32>, tensor<2x3x2xf32>
// CHECK-NEXT: return %[[Y]]
func.func @layer_norm(%x: tensor<2x3x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %0 = lmc.reduce_sum %x, axes = [2] {keep_dims} : tensor<2x3x8xf32> -> tensor<2x3x1xf32>
  %c0 = arith.constant dense<1.250000e-01> : tensor<2x3x1xf32>
  %1 = lmc.mul %0, %c0 : tensor<2x3x1xf32>
  %2 = lmc.broadcast_in_dim %1, dims = [0, 1, 2] : tensor<2x3x1xf32> -> tensor<2x3x8xf32>
  %3 = lmc.sub %x, %2 : tensor<2x3x8xf32>
  %4 = lmc.mul %3, %3 : tensor<2x3x8xf32>
  %5 = lmc.reduce_sum %4, axes = [2] {keep_dims} : tensor<2x3x8xf32> -> tensor<2x3x1xf32>
  %c1 = arith.constant dense<1.250000e-01> : tensor<2x3x1xf32>
  %6 = lmc.mul %5, %c1 : tensor<2x3x1xf32>
  %c2 = arith.constant dense<9.99999974E-6> : tensor<2x3x1xf32>
  %7 = lmc.add %6, %c2 : tensor<2x3x1xf32>
  %8 = lmc.sqrt %7 : tensor<2x3x1xf32>
  %c3 = arith.constant dense<1.000000e+00> : tensor<2x3x1xf32>
  %9 = lmc.div %c3, %8 : tensor<2x3x1xf32>
  %10 = lmc.broadcast_in_dim %9, dims = [0, 1, 2] : tensor<2x3x1xf32> -> tensor<2x3x8xf32>
  %11 = lmc.mul %3, %10 : tensor<2x3x8xf32>
  %12 = lmc.broadcast_in_dim %g, dims = [2] : tensor<8xf32> -> tensor<2x3x8xf32>
  %13 = lmc.mul %11, %12 : tensor<2x3x8xf32>
  %14 = lmc.broadcast_in_dim %b, dims = [2] : tensor<8xf32> -> tensor<2x3x8xf32>
  %15 = lmc.add %13, %14 : tensor<2x3x8xf32>
  return %15 : tensor<2x3x8xf32>
}

// -----

// The mean is also a result (LayerNormalization's second output): not
// read only inside the chain, so nothing is fused.
// CHECK-LABEL: func.func @mean_returned
// CHECK-NOT: lmc.layer_norm
func.func @mean_returned(%x: tensor<3x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<3x8xf32>, tensor<3x1xf32>) {
  %0 = lmc.reduce_sum %x, axes = [1] {keep_dims} : tensor<3x8xf32> -> tensor<3x1xf32>
  %c0 = arith.constant dense<1.250000e-01> : tensor<3x1xf32>
  %1 = lmc.mul %0, %c0 : tensor<3x1xf32>
  %2 = lmc.broadcast_in_dim %1, dims = [0, 1] : tensor<3x1xf32> -> tensor<3x8xf32>
  %3 = lmc.sub %x, %2 : tensor<3x8xf32>
  %4 = lmc.mul %3, %3 : tensor<3x8xf32>
  %5 = lmc.reduce_sum %4, axes = [1] {keep_dims} : tensor<3x8xf32> -> tensor<3x1xf32>
  %6 = lmc.mul %5, %c0 : tensor<3x1xf32>
  %c2 = arith.constant dense<9.99999974E-6> : tensor<3x1xf32>
  %7 = lmc.add %6, %c2 : tensor<3x1xf32>
  %8 = lmc.sqrt %7 : tensor<3x1xf32>
  %c3 = arith.constant dense<1.000000e+00> : tensor<3x1xf32>
  %9 = lmc.div %c3, %8 : tensor<3x1xf32>
  %10 = lmc.broadcast_in_dim %9, dims = [0, 1] : tensor<3x1xf32> -> tensor<3x8xf32>
  %11 = lmc.mul %3, %10 : tensor<3x8xf32>
  %12 = lmc.broadcast_in_dim %g, dims = [1] : tensor<8xf32> -> tensor<3x8xf32>
  %13 = lmc.mul %11, %12 : tensor<3x8xf32>
  %14 = lmc.broadcast_in_dim %b, dims = [1] : tensor<8xf32> -> tensor<3x8xf32>
  %15 = lmc.add %13, %14 : tensor<3x8xf32>
  return %15, %1 : tensor<3x8xf32>, tensor<3x1xf32>
}

// -----

// Normalized over both dimensions (axis 0 of a [3, 8] input): the kernel
// normalizes the last one only, so nothing is fused.
// CHECK-LABEL: func.func @two_axes
// CHECK-NOT: lmc.layer_norm
func.func @two_axes(%x: tensor<3x8xf32>, %g: tensor<3x8xf32>, %b: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %0 = lmc.reduce_sum %x, axes = [0, 1] {keep_dims} : tensor<3x8xf32> -> tensor<1x1xf32>
  %c0 = arith.constant dense<0.0416666679> : tensor<1x1xf32>
  %1 = lmc.mul %0, %c0 : tensor<1x1xf32>
  %2 = lmc.broadcast_in_dim %1, dims = [0, 1] : tensor<1x1xf32> -> tensor<3x8xf32>
  %3 = lmc.sub %x, %2 : tensor<3x8xf32>
  %4 = lmc.mul %3, %3 : tensor<3x8xf32>
  %5 = lmc.reduce_sum %4, axes = [0, 1] {keep_dims} : tensor<3x8xf32> -> tensor<1x1xf32>
  %6 = lmc.mul %5, %c0 : tensor<1x1xf32>
  %c2 = arith.constant dense<9.99999974E-6> : tensor<1x1xf32>
  %7 = lmc.add %6, %c2 : tensor<1x1xf32>
  %8 = lmc.sqrt %7 : tensor<1x1xf32>
  %c3 = arith.constant dense<1.000000e+00> : tensor<1x1xf32>
  %9 = lmc.div %c3, %8 : tensor<1x1xf32>
  %10 = lmc.broadcast_in_dim %9, dims = [0, 1] : tensor<1x1xf32> -> tensor<3x8xf32>
  %11 = lmc.mul %3, %10 : tensor<3x8xf32>
  %13 = lmc.mul %11, %g : tensor<3x8xf32>
  %15 = lmc.add %13, %b : tensor<3x8xf32>
  return %15 : tensor<3x8xf32>
}
