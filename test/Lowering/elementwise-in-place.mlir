// RUN: lmc-opt %s -split-input-file -lmc-elementwise-in-place | FileCheck %s
// RUN: lmc-opt %s -split-input-file -lmc-elementwise-in-place \
// RUN:   -one-shot-bufferize="bufferize-function-boundaries" \
// RUN:   | FileCheck %s --check-prefix=BUF

// A product nothing else reads, plus a broadcast bias (the attention's
// q/k/v projection): the sum is written over the product, through its
// reshape; the bias (another shape, a broadcast map) is never a candidate.
// After bufferization the loop reads and writes the product's buffer and
// allocates nothing else.
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#bias = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @bias_over_product
// CHECK: %[[P:.*]] = linalg.matmul
// CHECK: %[[X:.*]] = tensor.expand_shape %[[P]]
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[X]] : tensor<8xf32>, tensor<2x4x8xf32>) outs(%[[X]] : tensor<2x4x8xf32>)
// BUF-LABEL: func.func @bias_over_product
// BUF-COUNT-1: memref.alloc
// BUF-NOT: memref.alloc
// BUF-NOT: memref.copy
// BUF: return
func.func @bias_over_product(%a: tensor<8x16xf32>, %w: tensor<16x8xf32>,
                             %b: tensor<8xf32>) -> tensor<2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %p = linalg.matmul ins(%a, %w : tensor<8x16xf32>, tensor<16x8xf32>) outs(%z : tensor<8x8xf32>) -> tensor<8x8xf32>
  %x = tensor.expand_shape %p [[0, 1], [2]] output_shape [2, 4, 8] : tensor<8x8xf32> into tensor<2x4x8xf32>
  %out = tensor.empty() : tensor<2x4x8xf32>
  %r = linalg.generic {indexing_maps = [#bias, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%b, %x : tensor<8xf32>, tensor<2x4x8xf32>) outs(%out : tensor<2x4x8xf32>) {
  ^bb0(%bi: f32, %xi: f32, %o: f32):
    %s = arith.addf %xi, %bi : f32
    linalg.yield %s : f32
  } -> tensor<2x4x8xf32>
  return %r : tensor<2x4x8xf32>
}

// -----

// Two outputs (an activation and its derivative) and one dead input: the
// first output takes it, the second keeps its empty tensor. The other
// input is read again afterwards and is never taken.
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @two_outputs
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: %[[D:.*]] = linalg.generic {{.*}} outs(%[[E]] : tensor<4xf32>)
// CHECK: %[[K:.*]] = linalg.generic {{.*}} outs(%[[E]] : tensor<4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[D]], %[[K]] : tensor<4xf32>, tensor<4xf32>) outs(%[[D]], %[[E]] : tensor<4xf32>, tensor<4xf32>)
func.func @two_outputs(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %dead = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%xi: f32, %o: f32):
    %s = arith.mulf %xi, %xi : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %kept = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%xi: f32, %o: f32):
    %s = arith.addf %xi, %xi : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %r:2 = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%dead, %kept : tensor<4xf32>, tensor<4xf32>) outs(%e, %e : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%di: f32, %ki: f32, %o0: f32, %o1: f32):
    %s = arith.addf %di, %ki : f32
    %m = arith.mulf %di, %ki : f32
    linalg.yield %s, %m : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  return %r#0, %r#1, %kept : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Not offered: an argument (a param or an input the caller owns), a
// constant, an input read through a transposing map, and any input when
// the payload reads the destination (an accumulation) or the loop reduces.
#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
#row = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @not_offered
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x4xf32>
// CHECK-COUNT-5: linalg.generic {{.*}} outs(%[[E]] : tensor<4x4xf32>)
// CHECK: %[[ACC:.*]] = linalg.fill
// CHECK: linalg.generic {{.*}} outs(%[[ACC]] : tensor<4x4xf32>)
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<4xf32>)
func.func @not_offered(%arg: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>) {
  %c = arith.constant dense<1.0> : tensor<4x4xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %fromArg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%arg : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %fromConstant = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%fromArg : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %transposed = linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %u = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%fromConstant : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %acc0 = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %accumulated = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%u : tensor<4x4xf32>) outs(%acc0 : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %rows = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%transposed : tensor<4x4xf32>) outs(%e1 : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %fromArg, %fromConstant, %accumulated, %accumulated, %rows : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>
}
