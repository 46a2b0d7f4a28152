// RUN: lmc-opt %s -split-input-file -convert-lmc-to-linalg | FileCheck %s

// Elementwise ops become one linalg.generic each with the scalar op inside
// (fusion happens later, in linalg-fuse-elementwise-ops).
// CHECK-LABEL: func.func @sigmoid
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK: %[[N:.*]] = arith.negf %{{.*}} : f32
// CHECK: %[[E:.*]] = math.exp %[[N]] : f32
// CHECK: %[[D:.*]] = arith.addf %{{.*}}, %[[E]] : f32
// CHECK-NOT: fastmath
// CHECK: %[[R:.*]] = arith.divf %{{.*}}, %[[D]] : f32
// CHECK: linalg.yield %[[R]]
func.func @sigmoid(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = lmc.sigmoid %a : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @cmp_select
// CHECK: arith.cmpf ogt, %{{.*}}, %{{.*}} : f64
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f64
func.func @cmp_select(%a: tensor<4xf64>, %b: tensor<4xf64>) -> tensor<4xf64> {
  %m = lmc.cmp gt, %a, %b : tensor<4xf64> -> tensor<4xi1>
  %0 = lmc.select %m, %a, %b : tensor<4xi1>, tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

// Size-1 operand dimensions read index 0; new dimensions are not indexed.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d0, 0)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @broadcast
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]]
func.func @broadcast(%a: tensor<2x1xf32>) -> tensor<2x3x4xf32> {
  %0 = lmc.broadcast_in_dim %a, dims = [0, 1] : tensor<2x1xf32> -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, 0, d2)>
// CHECK-LABEL: func.func @reduce_sum_keep
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32)
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME: outs(%[[INIT]] : tensor<2x1x4xf32>)
// CHECK: ^bb0(%[[X:.*]]: f32, %[[ACC:.*]]: f32):
// A sum's running addition may be reassociated: LLVM vectorizes the loop.
// CHECK: arith.addf %[[X]], %[[ACC]] fastmath<reassoc> : f32
func.func @reduce_sum_keep(%a: tensor<2x3x4xf32>) -> tensor<2x1x4xf32> {
  %0 = lmc.reduce_sum %a, axes = [1] {keep_dims} : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  return %0 : tensor<2x1x4xf32>
}

// -----

// Transposed operands become linalg.matmul indexing maps (no copy).
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @matmul_tt
// CHECK: linalg.fill
// CHECK: linalg.matmul indexing_maps = [#[[A]], #[[B]], #[[C]]] ins(%{{.*}}, %{{.*}} : tensor<5x3xf32>, tensor<4x5xf32>)
func.func @matmul_tt(%a: tensor<5x3xf32>, %b: tensor<4x5xf32>) -> tensor<3x4xf32> {
  %0 = lmc.matmul %a, %b {transpose_lhs, transpose_rhs} : tensor<5x3xf32>, tensor<4x5xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// Batch dimensions collapse into one batch_matmul dimension and expand back.
// CHECK-LABEL: func.func @matmul_batched
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2, 3]] : tensor<2x3x4x5xf32> into tensor<120xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1, 2]] output_shape [6, 4, 5]
// CHECK: linalg.batch_matmul{{.*}}ins(%{{.*}}, %{{.*}} : tensor<6x4x5xf32>, tensor<6x5x7xf32>) outs(%{{.*}} : tensor<6x4x7xf32>)
// CHECK: tensor.expand_shape %{{.*}} output_shape [2, 3, 4, 7] : tensor<168xf32> into tensor<2x3x4x7xf32>
func.func @matmul_batched(%a: tensor<2x3x4x5xf32>, %b: tensor<2x3x5x7xf32>) -> tensor<2x3x4x7xf32> {
  %0 = lmc.matmul %a, %b : tensor<2x3x4x5xf32>, tensor<2x3x5x7xf32> -> tensor<2x3x4x7xf32>
  return %0 : tensor<2x3x4x7xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_reshape
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x3xf32>) outs(%{{.*}} : tensor<3x2xf32>) permutation = [1, 0]
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1]] : tensor<3x2xf32> into tensor<6xf32>
func.func @transpose_reshape(%a: tensor<2x3xf32>) -> tensor<6xf32> {
  %0 = lmc.transpose %a, perm = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %1 = lmc.reshape %0 : tensor<3x2xf32> -> tensor<6xf32>
  return %1 : tensor<6xf32>
}

// -----

// A one-element tensor reshapes to a scalar and back (collapse with no
// reassociation groups, expand from rank 0).
// CHECK-LABEL: func.func @reshape_scalar
// CHECK: tensor.collapse_shape %{{.*}} [] : tensor<1x1xf64> into tensor<f64>
// CHECK: tensor.expand_shape %{{.*}} [] output_shape [1] : tensor<f64> into tensor<1xf64>
func.func @reshape_scalar(%a: tensor<1x1xf64>) -> (tensor<f64>, tensor<1xf64>) {
  %0 = lmc.reshape %a : tensor<1x1xf64> -> tensor<f64>
  %1 = lmc.reshape %0 : tensor<f64> -> tensor<1xf64>
  return %0, %1 : tensor<f64>, tensor<1xf64>
}

// -----

// Softmax: row max (from -inf), sum of exp(x - max), then exp(x - max) / sum.
// CHECK-LABEL: func.func @softmax
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.maximumf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: arith.addf {{.*}} fastmath<reassoc>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: arith.divf
func.func @softmax(%a: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = lmc.softmax %a, axis = 1 : tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// log_softmax = (x - max) - log(sum exp(x - max)).
// CHECK-LABEL: func.func @log_softmax
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: %[[S:.*]] = arith.subf %{{.*}}, %{{.*}} : f32
// CHECK: %[[L:.*]] = math.log %{{.*}} : f32
// CHECK: arith.subf %[[S]], %[[L]] : f32
func.func @log_softmax(%a: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = lmc.log_softmax %a, axis = 1 : tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}
