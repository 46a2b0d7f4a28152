// RUN: lmc-opt %s -split-input-file -lmc-hoist-reductions | FileCheck %s

// A gradient's sum of squares in chunks (64 x 16 -> 64, then 64 -> one),
// placed after a later product as the optimizer leaves it: both move, with
// the reshape and their destinations' fills, to right after the product
// that made the gradient. The later product and the update stay in order.
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#all = affine_map<(d0) -> (d0)>
#none = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @norm_after_product
// CHECK: %[[G:.*]] = linalg.matmul
// CHECK-NEXT: tensor.expand_shape %[[G]]
// CHECK: %[[PARTS:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: linalg.generic {{.*}} ins(%[[PARTS]] : tensor<64xf32>)
// CHECK: %[[LATER:.*]] = linalg.matmul
// CHECK: return
func.func @norm_after_product(%a: tensor<32x16xf32>, %b: tensor<16x32xf32>,
                              %c: tensor<32x16xf32>)
    -> (tensor<32x32xf32>, tensor<32x32xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<32x32xf32>) -> tensor<32x32xf32>
  %g = linalg.matmul ins(%a, %b : tensor<32x16xf32>, tensor<16x32xf32>) outs(%z : tensor<32x32xf32>) -> tensor<32x32xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e : tensor<32x32xf32>) -> tensor<32x32xf32>
  %later = linalg.matmul ins(%c, %b : tensor<32x16xf32>, tensor<16x32xf32>) outs(%z2 : tensor<32x32xf32>) -> tensor<32x32xf32>
  %chunks = tensor.expand_shape %g [[0], [1, 2]] output_shape [32, 2, 16] : tensor<32x32xf32> into tensor<32x2x16xf32>
  %flat = tensor.collapse_shape %chunks [[0, 1], [2]] : tensor<32x2x16xf32> into tensor<64x16xf32>
  %pe = tensor.empty() : tensor<64xf32>
  %p0 = linalg.fill ins(%zero : f32) outs(%pe : tensor<64xf32>) -> tensor<64xf32>
  %parts = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%flat : tensor<64x16xf32>) outs(%p0 : tensor<64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %sq = arith.mulf %x, %x : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %se = tensor.empty() : tensor<f32>
  %s0 = linalg.fill ins(%zero : f32) outs(%se : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#all, #none], iterator_types = ["reduction"]}
      ins(%parts : tensor<64xf32>) outs(%s0 : tensor<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %g, %later, %sum : tensor<32x32xf32>, tensor<32x32xf32>, tensor<f32>
}

// -----

// Left where they are: a reduction to a result not 16 times smaller (a
// bias gradient of 4 rows: 4 x 32 -> 32), one of two inputs, one of a
// function argument (8 x 32 -> 8, but no producer to follow).
#rows = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @stay
// CHECK: %[[P:.*]] = linalg.matmul
// CHECK: %[[LATER:.*]] = linalg.matmul
// CHECK: linalg.generic {{.*}} ins(%[[P]] : tensor<4x32xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[P]], %[[LATER]] : tensor<4x32xf32>, tensor<4x32xf32>)
// CHECK: linalg.generic {{.*}} ins(%arg1 : tensor<8x32xf32>)
func.func @stay(%a: tensor<4x8xf32>, %b: tensor<8x32xf32>)
    -> (tensor<32xf32>, tensor<4xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x32xf32>) -> tensor<4x32xf32>
  %p = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x32xf32>) outs(%z : tensor<4x32xf32>) -> tensor<4x32xf32>
  %later = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x32xf32>) outs(%p : tensor<4x32xf32>) -> tensor<4x32xf32>
  %ce = tensor.empty() : tensor<32xf32>
  %c0 = linalg.fill ins(%zero : f32) outs(%ce : tensor<32xf32>) -> tensor<32xf32>
  %cols = linalg.generic {indexing_maps = [#rows, #col], iterator_types = ["reduction", "parallel"]}
      ins(%p : tensor<4x32xf32>) outs(%c0 : tensor<32xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  } -> tensor<32xf32>
  %re = tensor.empty() : tensor<4xf32>
  %r0 = linalg.fill ins(%zero : f32) outs(%re : tensor<4xf32>) -> tensor<4xf32>
  %two = linalg.generic {indexing_maps = [#rows, #rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%p, %later : tensor<4x32xf32>, tensor<4x32xf32>) outs(%r0 : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %ae = tensor.empty() : tensor<8xf32>
  %r1 = linalg.fill ins(%zero : f32) outs(%ae : tensor<8xf32>) -> tensor<8xf32>
  %fromArg = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%b : tensor<8x32xf32>) outs(%r1 : tensor<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %cols, %two, %fromArg : tensor<32xf32>, tensor<4xf32>, tensor<8xf32>
}
