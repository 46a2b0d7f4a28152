// RUN: lmc-opt %s -split-input-file -convert-lmc-to-linalg=check-indices | FileCheck %s
// RUN: lmc-opt %s -split-input-file -convert-lmc-to-linalg | FileCheck %s --check-prefix=CLAMP

// check-indices: one generic over the indices wraps a negative index once
// (i + 5) and calls lmc_rt_index_out_of_range with the raw index, the
// size and the site's name when the result is still outside [0, 5)
// (unsigned >= 5); the gather then reads the checked index as is.
// CHECK-DAG: llvm.mlir.global internal constant @lmc_index_site("Gather 'emb'\00")
// CHECK-DAG: func.func private @lmc_rt_index_out_of_range(i64, i64, !llvm.ptr)
// CHECK-LABEL: func.func @gather
// CHECK: %[[CHECKED:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<2x4xi64>) outs(%{{.*}} : tensor<2x4xi64>)
// CHECK: ^bb0(%[[RAW:.*]]: i64, %{{.*}}: i64):
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[SIZE:.*]] = arith.constant 5 : i64
// CHECK: %[[NEG:.*]] = arith.cmpi slt, %[[RAW]], %[[ZERO]] : i64
// CHECK: %[[WRAPPED:.*]] = arith.addi %[[RAW]], %[[SIZE]] : i64
// CHECK: %[[I:.*]] = arith.select %[[NEG]], %[[WRAPPED]], %[[RAW]] : i64
// CHECK: %[[OUT:.*]] = arith.cmpi uge, %[[I]], %[[SIZE]] : i64
// CHECK: scf.if %[[OUT]] {
// CHECK: %[[SITE:.*]] = llvm.mlir.addressof @lmc_index_site : !llvm.ptr
// CHECK: func.call @lmc_rt_index_out_of_range(%[[RAW]], %[[SIZE]], %[[SITE]])
// CHECK: }
// CHECK: linalg.generic {{.*}} ins(%[[CHECKED]] : tensor<2x4xi64>)
// CHECK: ^bb0(%[[J:.*]]: i64, %{{.*}}: f32):
// CHECK: %[[AT:.*]] = arith.index_cast %[[J]] : i64 to index
// CHECK: tensor.extract %arg0[%[[AT]], %{{.*}}] : tensor<5x3xf32>

// Without the option a bad index is clamped, and nothing is called.
// CLAMP-NOT: lmc_rt_index_out_of_range
// CLAMP: arith.maxsi
// CLAMP: arith.minsi
// CLAMP-NOT: lmc_rt_index_out_of_range
func.func @gather(%t: tensor<5x3xf32>, %i: tensor<2x4xi64>) -> tensor<2x4x3xf32> {
  %0 = lmc.gather %t, %i, axis = 0 : tensor<5x3xf32>, tensor<2x4xi64> -> tensor<2x4x3xf32> loc("emb")
  return %0 : tensor<2x4x3xf32>
}

// -----

// i32 indices are widened first; each gather gets a site of its own.
// CHECK-DAG: llvm.mlir.global internal constant @lmc_index_site("Gather 'a'\00")
// CHECK-DAG: llvm.mlir.global internal constant @lmc_index_site_0("Gather 'b'\00")
// CHECK-LABEL: func.func @two
// CHECK: arith.extsi %{{.*}} : i32 to i64
// CHECK: llvm.mlir.addressof @lmc_index_site :
// CHECK: llvm.mlir.addressof @lmc_index_site_0 :
func.func @two(%t: tensor<5x3xf32>, %i: tensor<4xi32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %0 = lmc.gather %t, %i, axis = 0 : tensor<5x3xf32>, tensor<4xi32> -> tensor<4x3xf32> loc("a")
  %1 = lmc.gather %t, %i, axis = 0 : tensor<5x3xf32>, tensor<4xi32> -> tensor<4x3xf32> loc("b")
  return %0, %1 : tensor<4x3xf32>, tensor<4x3xf32>
}
