// lmc-shard-annotate first rewrites what upstream sharding cannot take:
// constant-0 indexing map results (size-1 dimensions) get loops of their
// own, non-splat constants move into a generic's body, and a splat or a
// broadcast scalar gets a copy per user (its users may be split
// differently).
// RUN: lmc-opt %s -lmc-shard-annotate="mesh=model=2" | FileCheck %s

// A keep-dims sum [4, 8] -> [4, 1] then its broadcast back to [4, 8].
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @keep_dims(
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK: linalg.generic {indexing_maps = [#[[OUT]], #[[IN]]], iterator_types = ["parallel", "parallel", "reduction"]}
func.func @keep_dims(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x1xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x1xf32>) -> tensor<4x1xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, 0)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%z : tensor<4x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4x1xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, 0)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%sum : tensor<4x1xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @table(
// CHECK: %[[E:.*]] = tensor.empty() : tensor<3xi64>
// CHECK: linalg.generic {{.*}} outs(%[[E]] : tensor<3xi64>)
// CHECK: %[[C:.*]] = arith.constant dense<[0, 1, 2]> : tensor<3xi64>
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK: %[[V:.*]] = tensor.extract %[[C]][%[[I]]] : tensor<3xi64>
// CHECK: linalg.yield %[[V]] : i64
// Splat constants stay as they are.
// CHECK: arith.constant dense<7> : tensor<3xi64>
func.func @table() -> (tensor<3xi64>, tensor<3xi64>) {
  %c = arith.constant dense<[0, 1, 2]> : tensor<3xi64>
  %s = arith.constant dense<7> : tensor<3xi64>
  return %c, %s : tensor<3xi64>, tensor<3xi64>
}

// The clipping factor broadcast once by CSE, read by a column- and a
// row-split gradient: each reader gets its own empty and broadcast.
// CHECK-LABEL: func.func @scaled(
// CHECK-COUNT-2: tensor.empty() : tensor<4x4xf32>
// CHECK-NOT: tensor.empty() : tensor<4x4xf32>
// CHECK-DAG: %[[B1:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<f32>)
// CHECK-DAG: %[[B2:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<f32>)
// CHECK-DAG: linalg.mul ins(%{{.*}}, %[[B1]] :
// CHECK-DAG: linalg.mul ins(%[[B2]], %{{.*}} :
// CHECK: return
func.func @scaled(%s: tensor<f32>, %g1: tensor<4x4xf32>, %g2: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %e = tensor.empty() : tensor<4x4xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(i, j) -> ()>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<f32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4x4xf32>
  %m1 = linalg.mul ins(%g1, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m2 = linalg.mul ins(%b, %g2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %m1, %m2 : tensor<4x4xf32>, tensor<4x4xf32>
}

// Adam's beta as a splat read by two updates.
// CHECK-LABEL: func.func @beta(
// CHECK-COUNT-2: arith.constant dense<0.899999976> : tensor<4x4xf32>
// CHECK-NOT: arith.constant dense<0.899999976> : tensor<4x4xf32>
// CHECK: return
func.func @beta(%g1: tensor<4x4xf32>, %g2: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %c = arith.constant dense<0.9> : tensor<4x4xf32>
  %e = tensor.empty() : tensor<4x4xf32>
  %m1 = linalg.mul ins(%g1, %c : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m2 = linalg.mul ins(%c, %g2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %m1, %m2 : tensor<4x4xf32>, tensor<4x4xf32>
}
