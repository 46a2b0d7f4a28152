// RUN: lmc-opt %s -split-input-file -convert-lmc-to-linalg | FileCheck %s --check-prefix=LOOPS
// RUN: lmc-opt %s -split-input-file -convert-lmc-to-linalg=shardable | FileCheck %s --check-prefix=GENERIC

// By default scatter-add is a loop nest over the updates that adds each one
// into the row its index names (negative indices count from the end, others
// clamp): O(updates).
// LOOPS-LABEL: func.func @scatter_add
// LOOPS-SAME: (%[[U:.*]]: tensor<2x4x3xf32>, %[[I:.*]]: tensor<2x4xi64>)
// LOOPS: %[[ZERO:.*]] = linalg.fill
// LOOPS: scf.for %[[A:.*]] = %{{.*}} to %c2 {{.*}} iter_args(%[[ACC0:.*]] = %[[ZERO]])
// LOOPS: scf.for %[[B:.*]] = %{{.*}} to %c4 {{.*}} iter_args(%[[ACC1:.*]] = %[[ACC0]])
// LOOPS: scf.for %[[C:.*]] = %{{.*}} to %c3 {{.*}} iter_args(%[[ACC:.*]] = %[[ACC1]])
// LOOPS: %[[RAW:.*]] = tensor.extract %[[I]][%[[A]], %[[B]]]
// LOOPS: %[[IDX:.*]] = arith.index_cast %[[RAW]]
// LOOPS: %[[NEG:.*]] = arith.cmpi slt, %[[IDX]]
// LOOPS: %[[WRAPPED:.*]] = arith.addi %[[IDX]], %c5
// LOOPS: %[[SEL:.*]] = arith.select %[[NEG]], %[[WRAPPED]], %[[IDX]]
// LOOPS: %[[LO:.*]] = arith.maxsi %[[SEL]]
// LOOPS: %[[ROW:.*]] = arith.minsi %[[LO]], %c4
// LOOPS: %[[UPD:.*]] = tensor.extract %[[U]][%[[A]], %[[B]], %[[C]]]
// LOOPS: %[[OLD:.*]] = tensor.extract %[[ACC]][%[[ROW]], %[[C]]]
// LOOPS: %[[SUM:.*]] = arith.addf %[[OLD]], %[[UPD]] : f32
// LOOPS: %[[NEW:.*]] = tensor.insert %[[SUM]] into %[[ACC]][%[[ROW]], %[[C]]]
// LOOPS: scf.yield %[[NEW]]

// For sharding (shardable) it is one linalg.generic that reduces
// over the index dimensions, adding an update where its index equals the
// output row, marked for lmc-scatter-adds-to-loops.
// GENERIC-DAG: #[[UPD:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3, d1)>
// GENERIC-DAG: #[[IX:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// GENERIC-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// GENERIC-LABEL: func.func @scatter_add
// GENERIC: %[[ZERO:.*]] = linalg.fill
// GENERIC: linalg.generic {indexing_maps = [#[[UPD]], #[[IX]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%arg0, %arg1 : tensor<2x4x3xf32>, tensor<2x4xi64>) outs(%[[ZERO]] : tensor<5x3xf32>) attrs =  {lmc.scatter_add_axis = 0 : i64}
// GENERIC: ^bb0(%[[U:.*]]: f32, %{{.*}}: i64, %[[ACC:.*]]: f32):
// GENERIC: %[[ROW:.*]] = linalg.index 0 : index
// GENERIC: %[[HERE:.*]] = arith.cmpi eq, %{{.*}}, %[[ROW]] : index
// GENERIC: %[[SUM:.*]] = arith.addf %[[ACC]], %[[U]] : f32
// GENERIC: arith.select %[[HERE]], %[[SUM]], %[[ACC]] : f32
// GENERIC-NOT: scf.for
func.func @scatter_add(%u: tensor<2x4x3xf32>, %i: tensor<2x4xi64>) -> tensor<5x3xf32> {
  %0 = lmc.scatter_add %u, %i, axis = 0 : tensor<2x4x3xf32>, tensor<2x4xi64> -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

// Along an inner axis the outer and inner loops index the result directly.
// LOOPS-LABEL: func.func @scatter_add_inner_axis
// LOOPS: scf.for %[[A:[^ ]*]] =
// LOOPS: scf.for %[[B:[^ ]*]] =
// LOOPS: scf.for %[[C:[^ ]*]] = {{.*}} iter_args(%[[ACC:.*]] =
// LOOPS: tensor.extract %{{.*}}[%[[B]]] : tensor<4xi64>
// LOOPS: %[[ROW:.*]] = arith.minsi
// LOOPS: tensor.extract %[[ACC]][%[[A]], %[[ROW]], %[[C]]] : tensor<2x5x3xf32>
// LOOPS: tensor.insert %{{.*}} into %[[ACC]][%[[A]], %[[ROW]], %[[C]]]
func.func @scatter_add_inner_axis(%u: tensor<2x4x3xf32>, %i: tensor<4xi64>) -> tensor<2x5x3xf32> {
  %0 = lmc.scatter_add %u, %i, axis = 1 : tensor<2x4x3xf32>, tensor<4xi64> -> tensor<2x5x3xf32>
  return %0 : tensor<2x5x3xf32>
}
