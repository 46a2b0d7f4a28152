// RUN: lmc-opt %s -convert-lmc-to-linalg=check-indices | FileCheck %s
// RUN: lmc-opt %s -convert-lmc-to-linalg | FileCheck %s --check-prefix=GPU

// Integer lmc.div: the divisor is decided before arith.divsi, which traps
// on 0 and on min / -1. With check-indices (CPU steps) a zero divisor
// calls lmc_rt_integer_division_by_zero with the op's site; the quotient
// divides by 1 where the divisor is 0 or -1, then picks -lhs (wrapping)
// for -1 and 0 for 0.
// CHECK-DAG: llvm.mlir.global internal constant @lmc_division_site("node 'bucket'\00")
// CHECK-DAG: func.func private @lmc_rt_integer_division_by_zero(!llvm.ptr)
// CHECK-LABEL: func.func @divide
// CHECK: linalg.generic
// CHECK: ^bb0(%[[A:.*]]: i64, %[[B:.*]]: i64, %{{.*}}: i64):
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[MINUS:.*]] = arith.constant -1 : i64
// CHECK: %[[ISZERO:.*]] = arith.cmpi eq, %[[B]], %[[ZERO]] : i64
// CHECK: scf.if %[[ISZERO]] {
// CHECK: %[[SITE:.*]] = llvm.mlir.addressof @lmc_division_site : !llvm.ptr
// CHECK: func.call @lmc_rt_integer_division_by_zero(%[[SITE]])
// CHECK: }
// CHECK: %[[ISMINUS:.*]] = arith.cmpi eq, %[[B]], %[[MINUS]] : i64
// CHECK: %[[EITHER:.*]] = arith.ori %[[ISZERO]], %[[ISMINUS]] : i1
// CHECK: %[[SAFE:.*]] = arith.select %[[EITHER]], %[[ONE]], %[[B]] : i64
// CHECK: %[[Q:.*]] = arith.divsi %[[A]], %[[SAFE]] : i64
// CHECK: %[[NEG:.*]] = arith.subi %[[ZERO]], %[[A]] : i64
// CHECK: %[[PICK:.*]] = arith.select %[[ISMINUS]], %[[NEG]], %[[Q]] : i64
// CHECK: arith.select %[[ISZERO]], %[[ZERO]], %[[PICK]] : i64
// A float lmc.div stays a plain division.
// CHECK-LABEL: func.func @divide_floats
// CHECK: arith.divf
// CHECK-NOT: lmc_rt_integer_division_by_zero

// GPU steps (no check-indices): the same arithmetic, nothing called.
// GPU-NOT: lmc_rt_integer_division_by_zero
// GPU: arith.divsi
func.func @divide(%a: tensor<4xi64>, %b: tensor<4xi64>) -> tensor<4xi64> {
  %0 = lmc.div %a, %b : tensor<4xi64> loc("bucket")
  return %0 : tensor<4xi64>
}

func.func @divide_floats(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lmc.div %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
