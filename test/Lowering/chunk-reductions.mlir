// RUN: lmc-opt %s -split-input-file -lmc-chunk-reductions | FileCheck %s
// RUN: lmc-opt %s -split-input-file -lmc-chunk-reductions=min-elements=16 | FileCheck %s --check-prefix=SMALL
//
// Chunked or not, the sums are the same: Inputs/chunk-reductions-program.mlir
// (a sum of squares with an exact value derived by hand, and a maximum)
// run both ways prints 0 (the sum less its value) and 6.
// DEFINE: %{lower} = one-shot-bufferize{bufferize-function-boundaries},convert-linalg-to-loops,convert-scf-to-cf,expand-strided-metadata,lower-affine,finalize-memref-to-llvm,convert-math-to-llvm,convert-arith-to-llvm,convert-index-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts
// DEFINE: %{run} = mlir-runner -e main -entry-point-result=void -shared-libs=%llvm_lib_dir/libmlir_runner_utils.so,%llvm_lib_dir/libmlir_c_runner_utils.so
// RUN: lmc-opt %S/Inputs/chunk-reductions-program.mlir --pass-pipeline="builtin.module(func.func(lmc-chunk-reductions),%{lower})" | %{run} | FileCheck %s --check-prefix=VALUES
// RUN: lmc-opt %S/Inputs/chunk-reductions-program.mlir --pass-pipeline="builtin.module(%{lower})" | %{run} | FileCheck %s --check-prefix=VALUES
// VALUES: data =
// VALUES-NEXT: [0]
// VALUES: data =
// VALUES-NEXT: [6]

// A gradient's squared norm (131,072 elements): 64 contiguous chunks of
// 2,048, each summed from 0 on a parallel dimension, then the 64 partial
// sums added into the original init with the same combiner.
// CHECK-LABEL: func.func @squared_norm
// CHECK-SAME: (%[[G:.*]]: tensor<256x512xf32>, %[[INIT:.*]]: tensor<f32>)
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[G]] {{\[}}[0, 1]] : tensor<256x512xf32> into tensor<131072xf32>
// CHECK: %[[CHUNKS:.*]] = tensor.expand_shape %[[FLAT]] {{\[}}[0, 1]] output_shape [64, 2048]
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[FILL:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<64xf32>)
// CHECK: %[[PARTIAL:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[CHUNKS]] : tensor<64x2048xf32>) outs(%[[FILL]] : tensor<64xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc>
// CHECK: %[[TOTAL:.*]] = linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%[[PARTIAL]] : tensor<64xf32>) outs(%[[INIT]] : tensor<f32>)
// CHECK-NEXT: ^bb0(%[[P:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[P]], %[[ACC]] fastmath<reassoc> : f32
// CHECK-NEXT: linalg.yield %[[SUM]]
// CHECK: return %[[TOTAL]]
func.func @squared_norm(%g: tensor<256x512xf32>, %init: tensor<f32>) -> tensor<f32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%g : tensor<256x512xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %sq, %out fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// A maximum of 70,000 = 2^4 5^4 7 elements: the largest divisor at most 64
// is 56 = 2^3 7 (chunks of 1,250), the neutral element -inf.
// CHECK-LABEL: func.func @maximum
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1]] output_shape [56, 1250] : tensor<70000xf32> into tensor<56x1250xf32>
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: arith.maximumf
// CHECK: iterator_types = ["reduction"]
// CHECK: arith.maximumf
func.func @maximum(%x: tensor<70000xf32>, %init: tensor<f32>) -> tensor<f32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%x : tensor<70000xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %out : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Left as they are: fewer elements than min-elements (65,536 by default; a
// lower option chunks it), a prime count (65,537: no divisor to chunk
// by), an operand broadcast along a reduced dimension (not one contiguous
// run), an output with parallel dimensions (threads share those already)
// and a body that reads its iteration index.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: tensor.expand_shape
// CHECK: return
// SMALL-LABEL: func.func @left_alone
// SMALL: tensor.expand_shape %{{.*}} output_shape [64, 16] : tensor<1024xf32> into tensor<64x16xf32>
// SMALL-NOT: tensor.expand_shape
// SMALL: return
func.func @left_alone(%small: tensor<1024xf32>, %prime: tensor<65537xf32>, %row: tensor<512xf32>, %m: tensor<256x512xf32>, %init: tensor<f32>, %cols: tensor<512xf32>) -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<512xf32>, tensor<f32>) {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%small : tensor<1024xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%prime : tensor<65537xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%m, %row : tensor<256x512xf32>, tensor<512xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %r: f32, %out: f32):
    %p = arith.mulf %in, %r : f32
    %s = arith.addf %p, %out : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%m : tensor<256x512xf32>) outs(%cols : tensor<512xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<512xf32>
  %4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%m : tensor<256x512xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %j = linalg.index 1 : index
    %c0 = arith.constant 0 : index
    %first = arith.cmpi eq, %j, %c0 : index
    %zero = arith.constant 0.0 : f32
    %v = arith.select %first, %in, %zero : f32
    %s = arith.addf %v, %out : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %0, %1, %2, %3, %4 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<512xf32>, tensor<f32>
}
