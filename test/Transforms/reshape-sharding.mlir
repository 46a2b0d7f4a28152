// lmc's ShardingInterface for tensor.collapse_shape / expand_shape: a split
// of a collapsed dimension is a split of its group's leading dimension.
// RUN: lmc-opt %s --pass-pipeline="builtin.module(func.func(sharding-propagation{traversal=forward-backward},lmc-shard-complete,shard-partition))" | FileCheck %s

shard.grid @mesh(shape = 2)

// [b, t, d] with b split: the collapsed [b*t, d] is split on its rows, and
// expanding back splits b again: no communication.
// CHECK-LABEL: func.func @rows(
// CHECK-SAME: %arg0: tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<2x3x8xf32> into tensor<6x8xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [2, 3, 8] : tensor<6x8xf32> into tensor<2x3x8xf32>
// CHECK-NOT: shard.all
func.func @rows(%x: tensor<4x3x8xf32>) -> tensor<4x3x8xf32> {
  %s = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s annotate_for_users : tensor<4x3x8xf32>
  %c = tensor.collapse_shape %xs [[0, 1], [2]] : tensor<4x3x8xf32> into tensor<12x8xf32>
  %e = tensor.expand_shape %c [[0, 1], [2]] output_shape [4, 3, 8] : tensor<12x8xf32> into tensor<4x3x8xf32>
  %r = shard.shard %e to %s : tensor<4x3x8xf32>
  return %r : tensor<4x3x8xf32>
}

// A split of the last, unmerged dimension passes through.
// CHECK-LABEL: func.func @features(
// CHECK-SAME: %arg0: tensor<4x3x4xf32>) -> tensor<12x4xf32>
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<4x3x4xf32> into tensor<12x4xf32>
// CHECK-NOT: shard.all
func.func @features(%x: tensor<4x3x8xf32>) -> tensor<12x8xf32> {
  %s = shard.sharding @mesh split_axes = [[], [], [0]] : !shard.sharding
  %xs = shard.shard %x to %s annotate_for_users : tensor<4x3x8xf32>
  %c = tensor.collapse_shape %xs [[0, 1], [2]] : tensor<4x3x8xf32> into tensor<12x8xf32>
  %s2 = shard.sharding @mesh split_axes = [[], [0]] : !shard.sharding
  %r = shard.shard %c to %s2 : tensor<12x8xf32>
  return %r : tensor<12x8xf32>
}
