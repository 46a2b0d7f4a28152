// RUN: lmc-opt %s -split-input-file -lmc-collapse-batch-matmuls | FileCheck %s

// Attention's scores after partitioning, [batch, local heads] apart: one
// batch_matmul over the collapsed batch, the key's transpose kept in the
// indexing maps, the result expanded back.
// CHECK-DAG: #[[Q:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[K:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[S:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @scores(
// CHECK: %[[Q2:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1], [2], [3]] : tensor<2x3x8x16xbf16> into tensor<6x8x16xbf16>
// CHECK: %[[K2:.*]] = tensor.collapse_shape %arg1 {{\[}}[0, 1], [2], [3]] : tensor<2x3x8x16xbf16> into tensor<6x8x16xbf16>
// CHECK: %[[I2:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2], [3]] : tensor<2x3x8x8xf32> into tensor<6x8x8xf32>
// CHECK: %[[P:.*]] = linalg.batch_matmul indexing_maps = [#[[Q]], #[[K]], #[[S]]] ins(%[[Q2]], %[[K2]] : tensor<6x8x16xbf16>, tensor<6x8x16xbf16>) outs(%[[I2]] : tensor<6x8x8xf32>)
// CHECK: %[[R:.*]] = tensor.expand_shape %[[P]] {{\[}}[0, 1], [2], [3]] output_shape [2, 3, 8, 8] : tensor<6x8x8xf32> into tensor<2x3x8x8xf32>
// CHECK: return %[[R]]
func.func @scores(%q: tensor<2x3x8x16xbf16>, %k: tensor<2x3x8x16xbf16>, %init: tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, k) -> (b, h, m, k)>,
                                        affine_map<(b, h, m, n, k) -> (b, h, n, k)>,
                                        affine_map<(b, h, m, n, k) -> (b, h, m, n)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x3x8x16xbf16>, tensor<2x3x8x16xbf16>) outs(%init : tensor<2x3x8x8xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %x = arith.extf %a : bf16 to f32
    %y = arith.extf %b : bf16 to f32
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x3x8x8xf32>
  return %0 : tensor<2x3x8x8xf32>
}

// -----

// Three batch dimensions, the product of the probabilities and the values.
// CHECK-LABEL: func.func @three_batch_dims(
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<24x8x8xf32>, tensor<24x8x4xf32>) outs(%{{.*}} : tensor<24x8x4xf32>)
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1, 2], [3], [4]] output_shape [2, 3, 4, 8, 4]
func.func @three_batch_dims(%p: tensor<2x3x4x8x8xf32>, %v: tensor<2x3x4x8x4xf32>, %init: tensor<2x3x4x8x4xf32>) -> tensor<2x3x4x8x4xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(a, b, c, m, n, k) -> (a, b, c, m, k)>,
                                        affine_map<(a, b, c, m, n, k) -> (a, b, c, k, n)>,
                                        affine_map<(a, b, c, m, n, k) -> (a, b, c, m, n)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x3x4x8x8xf32>, tensor<2x3x4x8x4xf32>) outs(%init : tensor<2x3x4x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x3x4x8x4xf32>
  return %0 : tensor<2x3x4x8x4xf32>
}

// -----

// Left alone: batch dimensions that do not lead an operand in loop order
// (no batch_matmul reads them so), one batch dimension (not this pass's
// form), and a body that is not a product summed.
// CHECK-LABEL: func.func @not_batch_matmuls(
// CHECK-NOT: linalg.batch_matmul
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: linalg.batch_matmul
func.func @not_batch_matmuls(%a: tensor<3x2x8x16xf32>, %b: tensor<2x3x16x8xf32>, %init: tensor<2x3x8x8xf32>,
                             %c: tensor<3x8x16xf32>, %d: tensor<3x16x8xf32>, %init3: tensor<3x8x8xf32>,
                             %e: tensor<2x3x8x16xf32>)
    -> (tensor<2x3x8x8xf32>, tensor<3x8x8xf32>, tensor<2x3x8x8xf32>) {
  %swapped = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, k) -> (h, b, m, k)>,
                                              affine_map<(b, h, m, n, k) -> (b, h, k, n)>,
                                              affine_map<(b, h, m, n, k) -> (b, h, m, n)>],
                             iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<3x2x8x16xf32>, tensor<2x3x16x8xf32>) outs(%init : tensor<2x3x8x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x3x8x8xf32>
  %one = linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>,
                                          affine_map<(b, m, n, k) -> (b, k, n)>,
                                          affine_map<(b, m, n, k) -> (b, m, n)>],
                         iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%c, %d : tensor<3x8x16xf32>, tensor<3x16x8xf32>) outs(%init3 : tensor<3x8x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x8x8xf32>
  %maxed = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, k) -> (b, h, m, k)>,
                                            affine_map<(b, h, m, n, k) -> (b, h, k, n)>,
                                            affine_map<(b, h, m, n, k) -> (b, h, m, n)>],
                           iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%e, %b : tensor<2x3x8x16xf32>, tensor<2x3x16x8xf32>) outs(%init : tensor<2x3x8x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.maximumf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x3x8x8xf32>
  return %swapped, %one, %maxed : tensor<2x3x8x8xf32>, tensor<3x8x8xf32>, tensor<2x3x8x8xf32>
}
