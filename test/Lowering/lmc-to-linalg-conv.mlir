// RUN: lmc-opt %s -split-input-file -convert-lmc-to-linalg | FileCheck %s

// Padding is a generic over the padded tensor that reads the input at a
// clamped position and selects 0 outside; the grouped, strided convolution
// is one generic over (n, f, oh, ow, c, kh, kw) whose input map picks the
// group's channel with floordiv.
// CHECK-DAG: #[[XMAP:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, (d1 floordiv 3) * 2 + d4, d2 * 2 + d5, d3 * 2 + d6)>
// CHECK-DAG: #[[WMAP:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
// CHECK-DAG: #[[YMAP:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @conv
// CHECK: %[[PAD:.*]] = linalg.generic
// CHECK: tensor.extract %{{.*}} : tensor<2x4x8x8xf32>
// CHECK: arith.select
// CHECK: } -> tensor<2x4x9x9xf32>
// CHECK: %[[FILL:.*]] = linalg.fill
// CHECK: linalg.generic {indexing_maps = [#[[XMAP]], #[[WMAP]], #[[YMAP]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[PAD]], %{{.*}} : tensor<2x4x9x9xf32>, tensor<6x2x3x3xf32>) outs(%[[FILL]] : tensor<2x6x4x4xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @conv(%x: tensor<2x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<2x6x4x4xf32> {
  %0 = lmc.conv %x, %w, strides = [2, 2], dilations = [1, 1], pad_low = [1, 1], pad_high = [0, 0], groups = 2 : tensor<2x4x8x8xf32>, tensor<6x2x3x3xf32> -> tensor<2x6x4x4xf32>
  return %0 : tensor<2x6x4x4xf32>
}

// -----

// The weight gradient reduces over (n, o) with the same input access; no
// padding generic when the paddings are zero.
// CHECK-DAG: #[[XMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d3, d1, d4 * 2 + d2)>
// CHECK-LABEL: func.func @conv_weight_grad_1d
// CHECK-NOT: tensor.extract
// CHECK: linalg.generic {indexing_maps = [#[[XMAP]], {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<2x3x9xf32>, tensor<2x4x4xf32>) outs(%{{.*}} : tensor<4x3x3xf32>)
func.func @conv_weight_grad_1d(%x: tensor<2x3x9xf32>, %g: tensor<2x4x4xf32>) -> tensor<4x3x3xf32> {
  %0 = lmc.conv_weight_grad %x, %g, strides = [2], dilations = [1], pad_low = [0], pad_high = [0], groups = 1 : tensor<2x3x9xf32>, tensor<2x4x4xf32> -> tensor<4x3x3xf32>
  return %0 : tensor<4x3x3xf32>
}

// -----

// The input gradient gathers the cotangent at o = (i + pad - k) / stride
// when the division is exact and in range.
// CHECK-LABEL: func.func @conv_input_grad
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2], [3], [4]] output_shape [2, 3, 2, 3, 3] : tensor<6x2x3x3xf32> into tensor<2x3x2x3x3xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
// CHECK: arith.divui
// CHECK: arith.remui
// CHECK: tensor.extract %{{.*}} : tensor<2x6x4x4xf32>
// CHECK: arith.select
func.func @conv_input_grad(%g: tensor<2x6x4x4xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<2x4x8x8xf32> {
  %0 = lmc.conv_input_grad %g, %w, strides = [2, 2], dilations = [1, 1], pad_low = [1, 1], pad_high = [0, 0], groups = 2 : tensor<2x6x4x4xf32>, tensor<6x2x3x3xf32> -> tensor<2x4x8x8xf32>
  return %0 : tensor<2x4x8x8xf32>
}

// -----

// Max pooling pads with -inf and reduces with maximumf; its gradient first
// finds each window's (value, first offset), then gathers.
// CHECK-LABEL: func.func @max_pool
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: arith.maximumf
// CHECK: linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<2x3x4xf32>, tensor<2x3x4xi64>)
// CHECK: arith.cmpf ugt
// CHECK: arith.cmpi slt
// CHECK: linalg.generic
// CHECK: tensor.extract %{{.*}} : tensor<2x3x4xi64>
// CHECK: tensor.extract %{{.*}} : tensor<2x3x4xf32>
func.func @max_pool(%x: tensor<2x3x8xf32>, %g: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x8xf32>) {
  %0 = lmc.max_pool %x, kernel = [3], strides = [2], dilations = [1], pad_low = [1], pad_high = [0] : tensor<2x3x8xf32> -> tensor<2x3x4xf32>
  %1 = lmc.max_pool_grad %x, %g, kernel = [3], strides = [2], dilations = [1], pad_low = [1], pad_high = [0] : tensor<2x3x8xf32>, tensor<2x3x4xf32> -> tensor<2x3x8xf32>
  return %0, %1 : tensor<2x3x4xf32>, tensor<2x3x8xf32>
}

// -----

// Mixed precision: bf16 operands are padded in bf16 and extended to the f32
// result inside the product's body (forward, weight and input gradients).
// CHECK-LABEL: func.func @conv_bf16
// CHECK: } -> tensor<1x2x6x6xbf16>
// CHECK: ins(%{{.*}}, %{{.*}} : tensor<1x2x6x6xbf16>, tensor<3x2x3x3xbf16>) outs(%{{.*}} : tensor<1x3x4x4xf32>)
// CHECK-DAG: %[[A:.*]] = arith.extf %in : bf16 to f32
// CHECK-DAG: %[[B:.*]] = arith.extf %in_0 : bf16 to f32
// CHECK: arith.mulf %[[A]], %[[B]] : f32
// CHECK-LABEL: func.func @conv_weight_grad_bf16
// CHECK: outs(%{{.*}} : tensor<3x2x3x3xf32>)
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK-LABEL: func.func @conv_input_grad_bf16
// CHECK: tensor.extract %{{.*}} : tensor<1x3x4x4xbf16>
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.mulf
func.func @conv_bf16(%x: tensor<1x2x4x4xbf16>, %w: tensor<3x2x3x3xbf16>) -> tensor<1x3x4x4xf32> {
  %0 = lmc.conv %x, %w, strides = [1, 1], dilations = [1, 1], pad_low = [1, 1], pad_high = [1, 1], groups = 1 : tensor<1x2x4x4xbf16>, tensor<3x2x3x3xbf16> -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}
func.func @conv_weight_grad_bf16(%x: tensor<1x2x4x4xbf16>, %g: tensor<1x3x4x4xbf16>) -> tensor<3x2x3x3xf32> {
  %0 = lmc.conv_weight_grad %x, %g, strides = [1, 1], dilations = [1, 1], pad_low = [1, 1], pad_high = [1, 1], groups = 1 : tensor<1x2x4x4xbf16>, tensor<1x3x4x4xbf16> -> tensor<3x2x3x3xf32>
  return %0 : tensor<3x2x3x3xf32>
}
func.func @conv_input_grad_bf16(%g: tensor<1x3x4x4xbf16>, %w: tensor<3x2x3x3xbf16>) -> tensor<1x2x4x4xf32> {
  %0 = lmc.conv_input_grad %g, %w, strides = [1, 1], dilations = [1, 1], pad_low = [1, 1], pad_high = [1, 1], groups = 1 : tensor<1x3x4x4xbf16>, tensor<3x2x3x3xbf16> -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// -----

// Windows that tile the input (2 x 2, stride 2): after the argmax, one
// elementwise pass over dx, each position reading its own window's argmax
// and cotangent (i floordiv 2) and comparing the argmax with its offset in
// the window ((i mod 2) * 2 + j mod 2); no gather.
// CHECK-DAG: #[[WINDOW:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 floordiv 2, d3 floordiv 2)>
// CHECK-LABEL: func.func @max_pool_tiles
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK: %[[GRAD:.*]] = linalg.generic {indexing_maps = [#[[WINDOW]], #[[WINDOW]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<2x3x2x3xi64>, tensor<2x3x2x3xf32>) outs(%{{.*}} : tensor<2x3x4x6xf32>)
// CHECK: ^bb0(%[[AT:.*]]: i64, %[[G:.*]]: f32, %{{.*}}: f32):
// CHECK: linalg.index 2
// CHECK: arith.remsi
// CHECK: linalg.index 3
// CHECK: arith.remsi
// CHECK: %[[HIT:.*]] = arith.cmpi eq, %[[AT]]
// CHECK: arith.select %[[HIT]], %[[G]]
// CHECK-NOT: tensor.extract
// CHECK: return
func.func @max_pool_tiles(%x: tensor<2x3x4x6xf32>, %g: tensor<2x3x2x3xf32>) -> tensor<2x3x4x6xf32> {
  %1 = lmc.max_pool_grad %x, %g, kernel = [2, 2], strides = [2, 2], dilations = [1, 1], pad_low = [0, 0], pad_high = [0, 0] : tensor<2x3x4x6xf32>, tensor<2x3x2x3xf32> -> tensor<2x3x4x6xf32>
  return %1 : tensor<2x3x4x6xf32>
}
