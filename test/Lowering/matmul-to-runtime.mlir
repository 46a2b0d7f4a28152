// RUN: lmc-opt %s -split-input-file -lmc-matmul-to-runtime | FileCheck %s

// A transposed-rhs matmul on dense buffers becomes one BLAS call with
// (batch, M, N, K, transA, transB, accumulate) = (1, 3, 4, 5, 0, 1, 1).
// CHECK: func.func private @lmc_rt_matmul_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64)
// CHECK-LABEL: func.func @nt
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[M:.*]] = arith.constant 3 : i64
// CHECK-DAG: %[[N:.*]] = arith.constant 4 : i64
// CHECK-DAG: %[[K:.*]] = arith.constant 5 : i64
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK: call @lmc_rt_matmul_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %[[M]], %[[N]], %[[K]], %[[ZERO]], %[[ONE]], %[[ONE]])
// CHECK-NOT: linalg.matmul
#a = affine_map<(m, n, k) -> (m, k)>
#bt = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @nt(%a: memref<3x5xf32>, %b: memref<4x5xf32>, %c: memref<3x4xf32>) {
  linalg.matmul indexing_maps = [#a, #bt, #c] ins(%a, %b : memref<3x5xf32>, memref<4x5xf32>) outs(%c : memref<3x4xf32>)
  return
}

// -----

// Batched f64 with a transposed lhs: (batch, M, N, K, tA, tB) = (2, 3, 4, 5, 1, 0).
// CHECK-LABEL: func.func @batched
// CHECK: call @lmc_rt_matmul_f64
func.func @batched(%a: memref<2x5x3xf64>, %b: memref<2x5x4xf64>, %c: memref<2x3x4xf64>) {
  linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, k, m)>, affine_map<(b, m, n, k) -> (b, k, n)>, affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%a, %b : memref<2x5x3xf64>, memref<2x5x4xf64>) outs(%c : memref<2x3x4xf64>)
  return
}

// -----

// Mixed precision: bf16 / f16 operands accumulating into f32 call the
// widening kernels; other mixes stay as linalg.
// CHECK-LABEL: func.func @low_precision
// CHECK: call @lmc_rt_matmul_bf16
// CHECK: call @lmc_rt_matmul_f16
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<3x5xbf16>, memref<5x4xbf16>) outs(%{{.*}} : memref<3x4xf64>)
func.func @low_precision(%a: memref<3x5xbf16>, %b: memref<5x4xbf16>, %c: memref<3x4xf32>,
                         %ah: memref<3x5xf16>, %bh: memref<5x4xf16>, %d: memref<3x4xf64>) {
  linalg.matmul ins(%a, %b : memref<3x5xbf16>, memref<5x4xbf16>) outs(%c : memref<3x4xf32>)
  linalg.matmul ins(%ah, %bh : memref<3x5xf16>, memref<5x4xf16>) outs(%c : memref<3x4xf32>)
  linalg.matmul ins(%a, %b : memref<3x5xbf16>, memref<5x4xbf16>) outs(%d : memref<3x4xf64>)
  return
}

// -----

// A strided operand (a view of a slice) is copied into a dense buffer for
// the call, freed after it; a strided output stays as linalg (lowered to
// loops later), as do tensors.
// CHECK-LABEL: func.func @strided
// CHECK: %[[DENSE:.*]] = memref.alloc() : memref<3x5xf32>
// CHECK: memref.copy %arg0, %[[DENSE]] : memref<3x5xf32, strided<[10, 1]>> to memref<3x5xf32>
// CHECK: memref.extract_aligned_pointer_as_index %[[DENSE]]
// CHECK: call @lmc_rt_matmul_f32
// CHECK: memref.dealloc %[[DENSE]]
// CHECK: linalg.matmul ins(%arg4, %arg1 : memref<5x5xf32>, memref<5x4xf32>) outs(%arg3
func.func @strided(%a: memref<3x5xf32, strided<[10, 1]>>, %b: memref<5x4xf32>, %c: memref<3x4xf32>, %d: memref<5x4xf32, strided<[8, 1]>>, %sq: memref<5x5xf32>) {
  linalg.matmul ins(%a, %b : memref<3x5xf32, strided<[10, 1]>>, memref<5x4xf32>) outs(%c : memref<3x4xf32>)
  linalg.matmul ins(%sq, %b : memref<5x5xf32>, memref<5x4xf32>) outs(%d : memref<5x4xf32, strided<[8, 1]>>)
  return
}

// -----

// CHECK-LABEL: func.func @on_tensors
// CHECK: linalg.matmul
func.func @on_tensors(%a: tensor<3x5xf32>, %b: tensor<5x4xf32>, %c: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<3x5xf32>, tensor<5x4xf32>) outs(%c : tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// A +0.0 fill of the output right before the product: the fill goes and
// the call overwrites C (accumulate = 0, the last argument).
// CHECK-LABEL: func.func @into_zero_fill
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-NOT: linalg.fill
// CHECK: call @lmc_rt_matmul_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %{{.*}}, %{{.*}}, %{{.*}}, %[[ZERO]], %[[ZERO]], %[[ZERO]])
// CHECK-NEXT: return
func.func @into_zero_fill(%a: memref<3x5xf32>, %b: memref<5x4xf32>, %c: memref<3x4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<3x4xf32>)
  linalg.matmul ins(%a, %b : memref<3x5xf32>, memref<5x4xf32>) outs(%c : memref<3x4xf32>)
  return
}

// -----

// Fills the call cannot stand for stay, and the call accumulates: a value
// other than +0.0 (-0.0 + x keeps the sign of a -0.0 sum), a fill of
// another buffer, and a zero fill that something reads before the product.
// CHECK-LABEL: func.func @fills_that_stay
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg2
// CHECK: call @lmc_rt_matmul_f32({{.*}}, %[[ONE]])
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg2
// CHECK: call @lmc_rt_matmul_f32({{.*}}, %[[ONE]])
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg3
// CHECK: call @lmc_rt_matmul_f32({{.*}}, %[[ONE]])
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg2
// CHECK: memref.copy %arg2, %arg3
// CHECK: call @lmc_rt_matmul_f32({{.*}}, %[[ONE]])
func.func @fills_that_stay(%a: memref<3x5xf32>, %b: memref<5x4xf32>, %c: memref<3x4xf32>, %d: memref<3x4xf32>) {
  %one = arith.constant 1.0 : f32
  %negzero = arith.constant -0.0 : f32
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%one : f32) outs(%c : memref<3x4xf32>)
  linalg.matmul ins(%a, %b : memref<3x5xf32>, memref<5x4xf32>) outs(%c : memref<3x4xf32>)
  linalg.fill ins(%negzero : f32) outs(%c : memref<3x4xf32>)
  linalg.matmul ins(%a, %b : memref<3x5xf32>, memref<5x4xf32>) outs(%c : memref<3x4xf32>)
  linalg.fill ins(%zero : f32) outs(%d : memref<3x4xf32>)
  linalg.matmul ins(%a, %b : memref<3x5xf32>, memref<5x4xf32>) outs(%c : memref<3x4xf32>)
  linalg.fill ins(%zero : f32) outs(%c : memref<3x4xf32>)
  memref.copy %c, %d : memref<3x4xf32> to memref<3x4xf32>
  linalg.matmul ins(%a, %b : memref<3x5xf32>, memref<5x4xf32>) outs(%c : memref<3x4xf32>)
  return
}
