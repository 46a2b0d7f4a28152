// RUN: lmc-opt %s -split-input-file -convert-lmc-to-linalg=shardable -lmc-scatter-adds-to-loops | FileCheck %s

// The shardable scatter-add (one generic comparing every row with every
// index) becomes the loop nest over the updates again, into the generic's
// zero-filled init.
// CHECK-LABEL: func.func @embedding_grad
// CHECK-SAME: (%[[U:.*]]: tensor<2x4x3xf32>, %[[I:.*]]: tensor<2x4xi64>)
// CHECK-NOT: linalg.generic
// CHECK: %[[ZERO:.*]] = linalg.fill
// CHECK-NOT: linalg.generic
// CHECK: scf.for %[[A:.*]] = %{{.*}} to %c2 {{.*}} iter_args(%[[ACC0:.*]] = %[[ZERO]])
// CHECK: scf.for %[[B:.*]] = %{{.*}} to %c4 {{.*}} iter_args(%[[ACC1:.*]] = %[[ACC0]])
// CHECK: scf.for %[[C:.*]] = %{{.*}} to %c3 {{.*}} iter_args(%[[ACC:.*]] = %[[ACC1]])
// CHECK: tensor.extract %[[I]][%[[A]], %[[B]]]
// CHECK: %[[ROW:.*]] = arith.minsi %{{.*}}, %c4
// CHECK: %[[UPD:.*]] = tensor.extract %[[U]][%[[A]], %[[B]], %[[C]]]
// CHECK: %[[OLD:.*]] = tensor.extract %[[ACC]][%[[ROW]], %[[C]]]
// CHECK: %[[SUM:.*]] = arith.addf %[[OLD]], %[[UPD]] : f32
// CHECK: tensor.insert %[[SUM]] into %[[ACC]][%[[ROW]], %[[C]]]
// CHECK-NOT: linalg.generic
func.func @embedding_grad(%u: tensor<2x4x3xf32>, %i: tensor<2x4xi64>) -> tensor<5x3xf32> {
  %0 = lmc.scatter_add %u, %i, axis = 0 : tensor<2x4x3xf32>, tensor<2x4xi64> -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}
