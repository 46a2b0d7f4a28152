// Finite-difference checks (f64) of the VJPs of the convolution and pooling
// ops, each weighted with a random non-uniform cotangent %c (see ops.mlir):
// strides, asymmetric paddings, dilations, groups, 1-D and 2-D, and the
// convolution adjoints themselves (their VJPs are convolutions again).
// RUN: lmc-gradcheck %s | FileCheck %s
// CHECK-NOT: FAILED

// CHECK: @conv2d_stride2_pad x: {{.*}} ok
// CHECK: @conv2d_stride2_pad w: {{.*}} ok
func.func @conv2d_stride2_pad(%x: tensor<2x3x7x7xf64> {lmc.param = "x"}, %w: tensor<4x3x3x3xf64> {lmc.param = "w"}, %c: tensor<2x4x4x4xf64>) -> tensor<f64> {
  %y = lmc.conv %x, %w, strides = [2, 2], dilations = [1, 1], pad_low = [1, 1], pad_high = [1, 1], groups = 1 : tensor<2x3x7x7xf64>, tensor<4x3x3x3xf64> -> tensor<2x4x4x4xf64>
  %p = lmc.mul %y, %c : tensor<2x4x4x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1, 2, 3] : tensor<2x4x4x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// Groups 2, dilation 2 along H, stride 2 along W, asymmetric paddings.
// CHECK: @conv2d_groups_dilation x: {{.*}} ok
// CHECK: @conv2d_groups_dilation w: {{.*}} ok
func.func @conv2d_groups_dilation(%x: tensor<2x4x6x5xf64> {lmc.param = "x"}, %w: tensor<6x2x2x3xf64> {lmc.param = "w"}, %c: tensor<2x6x5x3xf64>) -> tensor<f64> {
  %y = lmc.conv %x, %w, strides = [1, 2], dilations = [2, 1], pad_low = [1, 0], pad_high = [0, 2], groups = 2 : tensor<2x4x6x5xf64>, tensor<6x2x2x3xf64> -> tensor<2x6x5x3xf64>
  %p = lmc.mul %y, %c : tensor<2x6x5x3xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1, 2, 3] : tensor<2x6x5x3xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @conv2d_depthwise x: {{.*}} ok
// CHECK: @conv2d_depthwise w: {{.*}} ok
func.func @conv2d_depthwise(%x: tensor<1x3x5x5xf64> {lmc.param = "x"}, %w: tensor<3x1x3x3xf64> {lmc.param = "w"}, %c: tensor<1x3x5x5xf64>) -> tensor<f64> {
  %y = lmc.conv %x, %w, strides = [1, 1], dilations = [1, 1], pad_low = [1, 1], pad_high = [1, 1], groups = 3 : tensor<1x3x5x5xf64>, tensor<3x1x3x3xf64> -> tensor<1x3x5x5xf64>
  %p = lmc.mul %y, %c : tensor<1x3x5x5xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1, 2, 3] : tensor<1x3x5x5xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @conv1d x: {{.*}} ok
// CHECK: @conv1d w: {{.*}} ok
func.func @conv1d(%x: tensor<2x3x9xf64> {lmc.param = "x"}, %w: tensor<4x3x3xf64> {lmc.param = "w"}, %c: tensor<2x4x4xf64>) -> tensor<f64> {
  %y = lmc.conv %x, %w, strides = [2], dilations = [2], pad_low = [2], pad_high = [1], groups = 1 : tensor<2x3x9xf64>, tensor<4x3x3xf64> -> tensor<2x4x4xf64>
  %p = lmc.mul %y, %c : tensor<2x4x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1, 2] : tensor<2x4x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @conv_input_grad g: {{.*}} ok
// CHECK: @conv_input_grad w: {{.*}} ok
func.func @conv_input_grad(%g: tensor<2x4x3x3xf64> {lmc.param = "g"}, %w: tensor<4x2x3x3xf64> {lmc.param = "w"}, %c: tensor<2x4x6x6xf64>) -> tensor<f64> {
  %y = lmc.conv_input_grad %g, %w, strides = [2, 2], dilations = [1, 1], pad_low = [1, 1], pad_high = [0, 0], groups = 2 : tensor<2x4x3x3xf64>, tensor<4x2x3x3xf64> -> tensor<2x4x6x6xf64>
  %p = lmc.mul %y, %c : tensor<2x4x6x6xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1, 2, 3] : tensor<2x4x6x6xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @conv_weight_grad x: {{.*}} ok
// CHECK: @conv_weight_grad g: {{.*}} ok
func.func @conv_weight_grad(%x: tensor<2x4x6x6xf64> {lmc.param = "x"}, %g: tensor<2x4x3x3xf64> {lmc.param = "g"}, %c: tensor<4x2x3x3xf64>) -> tensor<f64> {
  %y = lmc.conv_weight_grad %x, %g, strides = [2, 2], dilations = [1, 1], pad_low = [1, 1], pad_high = [0, 0], groups = 2 : tensor<2x4x6x6xf64>, tensor<2x4x3x3xf64> -> tensor<4x2x3x3xf64>
  %p = lmc.mul %y, %c : tensor<4x2x3x3xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1, 2, 3] : tensor<4x2x3x3xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @max_pool2d x: {{.*}} ok
func.func @max_pool2d(%x: tensor<2x3x6x6xf64> {lmc.param = "x"}, %c: tensor<2x3x3x3xf64>) -> tensor<f64> {
  %y = lmc.max_pool %x, kernel = [2, 2], strides = [2, 2], dilations = [1, 1], pad_low = [0, 0], pad_high = [0, 0] : tensor<2x3x6x6xf64> -> tensor<2x3x3x3xf64>
  %p = lmc.mul %y, %c : tensor<2x3x3x3xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1, 2, 3] : tensor<2x3x3x3xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// Overlapping windows (3x3, stride 2) with padding: cotangents accumulate.
// CHECK: @max_pool2d_overlap x: {{.*}} ok
func.func @max_pool2d_overlap(%x: tensor<2x2x7x7xf64> {lmc.param = "x"}, %c: tensor<2x2x4x4xf64>) -> tensor<f64> {
  %y = lmc.max_pool %x, kernel = [3, 3], strides = [2, 2], dilations = [1, 1], pad_low = [1, 1], pad_high = [1, 1] : tensor<2x2x7x7xf64> -> tensor<2x2x4x4xf64>
  %p = lmc.mul %y, %c : tensor<2x2x4x4xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1, 2, 3] : tensor<2x2x4x4xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// Windows that tile the input in 3-D (2 x 3 x 2 of stride 2 x 3 x 2: one
// elementwise pass over dx), and a 7-wide 1-D input whose last position no
// 2-wide window covers (the general lowering).
// CHECK: @max_pool3d_tiles x: {{.*}} ok
func.func @max_pool3d_tiles(%x: tensor<1x2x4x6x4xf64> {lmc.param = "x"}, %c: tensor<1x2x2x2x2xf64>) -> tensor<f64> {
  %y = lmc.max_pool %x, kernel = [2, 3, 2], strides = [2, 3, 2], dilations = [1, 1, 1], pad_low = [0, 0, 0], pad_high = [0, 0, 0] : tensor<1x2x4x6x4xf64> -> tensor<1x2x2x2x2xf64>
  %p = lmc.mul %y, %c : tensor<1x2x2x2x2xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1, 2, 3, 4] : tensor<1x2x2x2x2xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @max_pool1d_uncovered x: {{.*}} ok
func.func @max_pool1d_uncovered(%x: tensor<2x2x7xf64> {lmc.param = "x"}, %c: tensor<2x2x3xf64>) -> tensor<f64> {
  %y = lmc.max_pool %x, kernel = [2], strides = [2], dilations = [1], pad_low = [0], pad_high = [0] : tensor<2x2x7xf64> -> tensor<2x2x3xf64>
  %p = lmc.mul %y, %c : tensor<2x2x3xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1, 2] : tensor<2x2x3xf64> -> tensor<f64>
  return %l : tensor<f64>
}

// CHECK: @max_pool1d_dilation x: {{.*}} ok
func.func @max_pool1d_dilation(%x: tensor<2x2x9xf64> {lmc.param = "x"}, %c: tensor<2x2x5xf64>) -> tensor<f64> {
  %y = lmc.max_pool %x, kernel = [3], strides = [1], dilations = [2], pad_low = [0], pad_high = [0] : tensor<2x2x9xf64> -> tensor<2x2x5xf64>
  %p = lmc.mul %y, %c : tensor<2x2x5xf64>
  %l = lmc.reduce_sum %p, axes = [0, 1, 2] : tensor<2x2x5xf64> -> tensor<f64>
  return %l : tensor<f64>
}
