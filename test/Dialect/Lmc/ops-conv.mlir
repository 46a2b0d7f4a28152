// Round trip of the convolution and pooling ops.
// RUN: lmc-opt %s | lmc-opt | FileCheck %s

// CHECK-LABEL: func.func @ops
func.func @ops(%x: tensor<2x4x8x8xf32>, %w: tensor<6x2x3x3xf32>, %g: tensor<2x6x4x4xf32>, %s: tensor<2x4x9xf32>, %p: tensor<2x4x4xf32>) -> (tensor<2x6x4x4xf32>, tensor<2x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<2x4x4xf32>, tensor<2x4x9xf32>) {
  // CHECK: lmc.conv %{{.*}}, %{{.*}}, strides = [2, 2], dilations = [1, 1], pad_low = [1, 1], pad_high = [0, 0], groups = 2 : tensor<2x4x8x8xf32>, tensor<6x2x3x3xf32> -> tensor<2x6x4x4xf32>
  %0 = lmc.conv %x, %w, strides = [2, 2], dilations = [1, 1], pad_low = [1, 1], pad_high = [0, 0], groups = 2 : tensor<2x4x8x8xf32>, tensor<6x2x3x3xf32> -> tensor<2x6x4x4xf32>
  // CHECK: lmc.conv_input_grad %{{.*}}, %{{.*}}, strides = [2, 2], dilations = [1, 1], pad_low = [1, 1], pad_high = [0, 0], groups = 2 : tensor<2x6x4x4xf32>, tensor<6x2x3x3xf32> -> tensor<2x4x8x8xf32>
  %1 = lmc.conv_input_grad %g, %w, strides = [2, 2], dilations = [1, 1], pad_low = [1, 1], pad_high = [0, 0], groups = 2 : tensor<2x6x4x4xf32>, tensor<6x2x3x3xf32> -> tensor<2x4x8x8xf32>
  // CHECK: lmc.conv_weight_grad %{{.*}}, %{{.*}}, strides = [2, 2], dilations = [1, 1], pad_low = [1, 1], pad_high = [0, 0], groups = 2 : tensor<2x4x8x8xf32>, tensor<2x6x4x4xf32> -> tensor<6x2x3x3xf32>
  %2 = lmc.conv_weight_grad %x, %g, strides = [2, 2], dilations = [1, 1], pad_low = [1, 1], pad_high = [0, 0], groups = 2 : tensor<2x4x8x8xf32>, tensor<2x6x4x4xf32> -> tensor<6x2x3x3xf32>
  // CHECK: lmc.max_pool %{{.*}}, kernel = [3], strides = [2], dilations = [1], pad_low = [1], pad_high = [0] : tensor<2x4x9xf32> -> tensor<2x4x4xf32>
  %3 = lmc.max_pool %s, kernel = [3], strides = [2], dilations = [1], pad_low = [1], pad_high = [0] : tensor<2x4x9xf32> -> tensor<2x4x4xf32>
  // CHECK: lmc.max_pool_grad %{{.*}}, %{{.*}}, kernel = [3], strides = [2], dilations = [1], pad_low = [1], pad_high = [0] : tensor<2x4x9xf32>, tensor<2x4x4xf32> -> tensor<2x4x9xf32>
  %4 = lmc.max_pool_grad %s, %p, kernel = [3], strides = [2], dilations = [1], pad_low = [1], pad_high = [0] : tensor<2x4x9xf32>, tensor<2x4x4xf32> -> tensor<2x4x9xf32>
  return %0, %1, %2, %3, %4 : tensor<2x6x4x4xf32>, tensor<2x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<2x4x4xf32>, tensor<2x4x9xf32>
}
