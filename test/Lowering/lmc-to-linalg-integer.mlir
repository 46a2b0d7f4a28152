// RUN: lmc-opt %s -split-input-file -convert-lmc-to-linalg | FileCheck %s

// Integer elementwise ops take the integer arith ops (wrapping; signed
// max/min), floats keep theirs.
// CHECK-LABEL: func.func @elementwise
// CHECK: arith.addi %{{.*}}, %{{.*}} : i64
// CHECK: arith.muli %{{.*}}, %{{.*}} : i64
// CHECK: arith.subi %{{.*}}, %{{.*}} : i64
// CHECK: arith.maxsi %{{.*}}, %{{.*}} : i64
// CHECK: arith.minsi %{{.*}}, %{{.*}} : i64
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK: arith.subi %[[ZERO]], %{{.*}} : i64
// CHECK: math.absi %{{.*}} : i64
// CHECK: arith.addf %{{.*}}, %{{.*}} : f32
func.func @elementwise(%a: tensor<4xi64>, %b: tensor<4xi64>, %f: tensor<4xf32>) -> (tensor<4xi64>, tensor<4xf32>) {
  %0 = lmc.add %a, %b : tensor<4xi64>
  %1 = lmc.mul %0, %b : tensor<4xi64>
  %2 = lmc.sub %1, %a : tensor<4xi64>
  %3 = lmc.max %2, %a : tensor<4xi64>
  %4 = lmc.min %3, %b : tensor<4xi64>
  %5 = lmc.neg %4 : tensor<4xi64>
  %a5 = lmc.abs %5 : tensor<4xi64>
  %6 = lmc.add %f, %f : tensor<4xf32>
  return %a5, %6 : tensor<4xi64>, tensor<4xf32>
}

// -----

// A running sum is a reduction over an extra (last) loop, the summed
// position i, into the result's position j along the axis: i <= j keeps
// the term (i < j exclusive; i >= j, i > j reverse).
// CHECK-DAG: #[[SOURCE:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[TARGET:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @cumsum
// CHECK: %[[INIT:.*]] = linalg.fill ins(%{{.*}} : i64)
// CHECK: linalg.generic {indexing_maps = [#[[SOURCE]], #[[TARGET]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%{{.*}} : tensor<2x5xi64>) outs(%[[INIT]] : tensor<2x5xi64>)
// CHECK: %[[I:.*]] = linalg.index 2 : index
// CHECK: %[[J:.*]] = linalg.index 1 : index
// CHECK: %[[IN:.*]] = arith.cmpi ule, %[[I]], %[[J]] : index
// CHECK: %[[SUM:.*]] = arith.addi
// CHECK: arith.select %[[IN]], %[[SUM]]
// CHECK: arith.cmpi ugt
func.func @cumsum(%x: tensor<2x5xi64>) -> (tensor<2x5xi64>, tensor<2x5xi64>) {
  %0 = lmc.cumsum %x, axis = 1 : tensor<2x5xi64>
  %1 = lmc.cumsum %x, axis = 1 exclusive reverse : tensor<2x5xi64>
  return %0, %1 : tensor<2x5xi64>, tensor<2x5xi64>
}
