// RUN: lmc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(lmc-bucket-all-reduces))' | FileCheck %s

shard.grid @mesh(shape = 2)

// Three scalar sums, each read before the next is computed (as the
// gradient norm's partial sums are): the later inputs move up and one
// all-reduce of a vector replaces the three.
// CHECK-LABEL: func.func @norm_partials
// CHECK-SAME: (%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>, %[[C:.*]]: tensor<4xf32>)
// CHECK: %[[SA:.*]] = linalg.generic {{.*}} ins(%[[A]] : tensor<4xf32>)
// CHECK: %[[SB:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<4xf32>)
// CHECK: %[[SC:.*]] = linalg.generic {{.*}} ins(%[[C]] : tensor<4xf32>)
// CHECK: %[[EA:.*]] = tensor.extract %[[SA]][] : tensor<f32>
// CHECK: %[[EB:.*]] = tensor.extract %[[SB]][] : tensor<f32>
// CHECK: %[[EC:.*]] = tensor.extract %[[SC]][] : tensor<f32>
// CHECK: %[[V:.*]] = tensor.from_elements %[[EA]], %[[EB]], %[[EC]] : tensor<3xf32>
// CHECK: %[[R:.*]] = shard.all_reduce %[[V]] on @mesh grid_axes = [0] : tensor<3xf32> -> tensor<3xf32>
// CHECK-NOT: shard.all_reduce
// CHECK: tensor.extract %[[R]][%{{.*}}] : tensor<3xf32>
// CHECK: return
func.func @norm_partials(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>) -> tensor<f32> {
  %zero = arith.constant dense<0.0> : tensor<f32>
  %sa = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%a : tensor<4xf32>) outs(%zero : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %ra = shard.all_reduce %sa on @mesh grid_axes = [0] : tensor<f32> -> tensor<f32>
  %sb = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%b : tensor<4xf32>) outs(%zero : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %rb = shard.all_reduce %sb on @mesh grid_axes = [0] : tensor<f32> -> tensor<f32>
  %ab = arith.addf %ra, %rb : tensor<f32>
  %sc = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%c : tensor<4xf32>) outs(%zero : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %rc = shard.all_reduce %sc on @mesh grid_axes = [0] : tensor<f32> -> tensor<f32>
  %abc = arith.addf %ab, %rc : tensor<f32>
  return %abc : tensor<f32>
}

// -----

shard.grid @mesh(shape = 2)

// A sum computed from an earlier all-reduce's result, a maximum, and a
// vector stay apart: nothing to merge.
// CHECK-LABEL: func.func @apart
// CHECK: shard.all_reduce %{{.*}} : tensor<f32> -> tensor<f32>
// CHECK: shard.all_reduce %{{.*}} : tensor<f32> -> tensor<f32>
// CHECK: shard.all_reduce %{{.*}} reduction = max : tensor<f32> -> tensor<f32>
// CHECK: shard.all_reduce %{{.*}} : tensor<4xf32> -> tensor<4xf32>
// CHECK-NOT: from_elements
func.func @apart(%x: tensor<f32>, %v: tensor<4xf32>) -> (tensor<f32>, tensor<f32>, tensor<4xf32>) {
  %r1 = shard.all_reduce %x on @mesh grid_axes = [0] : tensor<f32> -> tensor<f32>
  %y = arith.mulf %r1, %r1 : tensor<f32>
  %r2 = shard.all_reduce %y on @mesh grid_axes = [0] : tensor<f32> -> tensor<f32>
  %r3 = shard.all_reduce %x on @mesh grid_axes = [0] reduction = max : tensor<f32> -> tensor<f32>
  %r4 = shard.all_reduce %v on @mesh grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
  return %r2, %r3, %r4 : tensor<f32>, tensor<f32>, tensor<4xf32>
}

// -----

shard.grid @mesh(shape = 2)

// Attention's input gradient: three row-split products, each all-reduced
// and reshaped, then added. The partial sums are added first and
// all-reduced once.
// CHECK-LABEL: func.func @partial_sums
// CHECK-SAME: (%[[A:.*]]: tensor<8x4xf32>, %[[B:.*]]: tensor<8x4xf32>, %[[C:.*]]: tensor<8x4xf32>)
// CHECK: %[[EA:.*]] = tensor.expand_shape %[[A]]
// CHECK: %[[EB:.*]] = tensor.expand_shape %[[B]]
// CHECK: %[[AB:.*]] = linalg.generic {{.*}} ins(%[[EA]], %[[EB]] : tensor<2x4x4xf32>, tensor<2x4x4xf32>)
// CHECK: %[[EC:.*]] = tensor.expand_shape %[[C]]
// CHECK: %[[ABC:.*]] = linalg.generic {{.*}} ins(%[[AB]], %[[EC]] : tensor<2x4x4xf32>, tensor<2x4x4xf32>)
// CHECK: %[[R:.*]] = shard.all_reduce %[[ABC]] on @mesh grid_axes = [0] : tensor<2x4x4xf32> -> tensor<2x4x4xf32>
// CHECK-NOT: shard.all_reduce
// CHECK: return %[[R]]
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @partial_sums(%a: tensor<8x4xf32>, %b: tensor<8x4xf32>, %c: tensor<8x4xf32>) -> tensor<2x4x4xf32> {
  %e = tensor.empty() : tensor<2x4x4xf32>
  %ra = shard.all_reduce %a on @mesh grid_axes = [0] : tensor<8x4xf32> -> tensor<8x4xf32>
  %xa = tensor.expand_shape %ra [[0, 1], [2]] output_shape [2, 4, 4] : tensor<8x4xf32> into tensor<2x4x4xf32>
  %rb = shard.all_reduce %b on @mesh grid_axes = [0] : tensor<8x4xf32> -> tensor<8x4xf32>
  %xb = tensor.expand_shape %rb [[0, 1], [2]] output_shape [2, 4, 4] : tensor<8x4xf32> into tensor<2x4x4xf32>
  %ab = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%xa, %xb : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%e : tensor<2x4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<2x4x4xf32>
  %rc = shard.all_reduce %c on @mesh grid_axes = [0] : tensor<8x4xf32> -> tensor<8x4xf32>
  %xc = tensor.expand_shape %rc [[0, 1], [2]] output_shape [2, 4, 4] : tensor<8x4xf32> into tensor<2x4x4xf32>
  %abc = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ab, %xc : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%e : tensor<2x4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %y, %x : f32
    linalg.yield %s : f32
  } -> tensor<2x4x4xf32>
  return %abc : tensor<2x4x4xf32>
}

// -----

shard.grid @mesh(shape = 2)

// Left alone: an all-reduce added to a value that is not one (a residual
// connection), one read twice, and a maximum.
// CHECK-LABEL: func.func @not_partial_sums
// CHECK-COUNT-3: shard.all_reduce
// CHECK-NOT: shard.all_reduce
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @not_partial_sums(%a: tensor<8x4xf32>, %x: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
  %e = tensor.empty() : tensor<8x4xf32>
  %ra = shard.all_reduce %a on @mesh grid_axes = [0] : tensor<8x4xf32> -> tensor<8x4xf32>
  %residual = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%ra, %x : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  %rx = shard.all_reduce %x on @mesh grid_axes = [0] : tensor<8x4xf32> -> tensor<8x4xf32>
  %twice = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%rx, %rx : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  %rm = shard.all_reduce %a on @mesh grid_axes = [0] reduction = max : tensor<8x4xf32> -> tensor<8x4xf32>
  return %residual, %twice, %rm : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
}
