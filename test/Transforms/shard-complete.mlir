// Upstream shard-partition needs a sharding on every tensor it meets;
// sharding-propagation leaves three kinds bare, and lmc-shard-complete
// fills them in. Without it, MLIR 22's partitioning fails without a message
// on the first case below and crashes on the other two.
// RUN: lmc-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(lmc-shard-complete))" | FileCheck %s
// RUN: lmc-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(lmc-shard-complete,shard-partition))" | FileCheck %s --check-prefix=PARTITIONED

#id = affine_map<(i) -> (i)>
shard.grid @mesh(shape = 2)

// A constant returned as it is gets a (replicated) sharding of its own.
// CHECK-LABEL: func.func @returned_constant(
// CHECK: %[[C:.*]] = arith.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK-NEXT: %[[R:.*]] = shard.sharding @mesh split_axes = {{\[\[}}]] : !shard.sharding
// CHECK-NEXT: %[[CS:.*]] = shard.shard %[[C]] to %[[R]] : tensor<4xf32>
// CHECK: %[[READ:.*]] = shard.shard %[[CS]] to %{{.*}} annotate_for_users : tensor<4xf32>
// CHECK: return %[[READ]]
// PARTITIONED-LABEL: func.func @returned_constant(
// PARTITIONED-SAME: -> tensor<4xf32>
func.func @returned_constant() -> tensor<4xf32> {
  %c = arith.constant dense<1.0> : tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

#id = affine_map<(i) -> (i)>
shard.grid @mesh(shape = 2)

// A direct read of an annotated argument goes through an annotation with
// the sharding the argument already has (split, here): no resharding.
// CHECK-LABEL: func.func @direct_read(
// CHECK: %[[S:.*]] = shard.sharding @mesh split_axes = {{\[\[}}0]]
// CHECK-NEXT: %[[XS:.*]] = shard.shard %arg0 to %[[S]] annotate_for_users
// CHECK: %[[S2:.*]] = shard.sharding @mesh split_axes = {{\[\[}}0]]
// CHECK-NEXT: %[[XR:.*]] = shard.shard %arg0 to %[[S2]] annotate_for_users
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[XR]] : tensor<4xf32>)
// PARTITIONED-LABEL: func.func @direct_read(
// PARTITIONED-SAME: %arg0: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
// PARTITIONED-NOT: shard.all
func.func @direct_read(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %s = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s annotate_for_users : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %es = shard.shard %e to %s : tensor<4xf32>
  %eu = shard.shard %es to %s annotate_for_users : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%eu : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  %rs = shard.shard %r to %s : tensor<4xf32>
  %ru = shard.shard %rs to %s annotate_for_users : tensor<4xf32>
  return %xs, %ru : tensor<4xf32>, tensor<4xf32>
}

// -----

shard.grid @mesh(shape = 2)

// An argument nothing reads (a hyperparameter the step ignores) is
// annotated replicated.
// CHECK-LABEL: func.func @unread_argument(
// CHECK: shard.shard %arg1 to %{{.*}} annotate_for_users : tensor<f32>
// PARTITIONED-LABEL: func.func @unread_argument(
// PARTITIONED-SAME: %arg0: tensor<2xf32>, %arg1: tensor<f32>) -> tensor<2xf32>
func.func @unread_argument(%x: tensor<4xf32>, %unused: tensor<f32>) -> tensor<4xf32> {
  %s = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s annotate_for_users : tensor<4xf32>
  return %xs : tensor<4xf32>
}

// -----

#id = affine_map<(i) -> (i)>
shard.grid @mesh(shape = 2)

// An op that reads its iteration index (a one-hot compare) would need each
// process's slice offset: it runs replicated, on a gathered operand.
// CHECK-LABEL: func.func @index_reader(
// CHECK: %[[XS:.*]] = shard.shard %arg0 to %{{.*}} annotate_for_users
// CHECK: %[[XR:.*]] = shard.shard %[[XS]] to %{{.*}} annotate_for_users
// CHECK: linalg.generic {{.*}} ins(%[[XR]] : tensor<4xf32>)
// PARTITIONED-LABEL: func.func @index_reader(
// PARTITIONED-SAME: %arg0: tensor<2xf32>
// PARTITIONED: shard.all_gather %arg0 on @mesh grid_axes = [0] gather_axis = 0 : tensor<2xf32> -> tensor<4xf32>
func.func @index_reader(%x: tensor<4xf32>) -> tensor<4xf32> {
  %s = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s annotate_for_users : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%xs : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %i = linalg.index 0 : index
    %c1 = arith.constant 1 : index
    %hot = arith.cmpi eq, %i, %c1 : index
    %zero = arith.constant 0.0 : f32
    %v = arith.select %hot, %a, %zero : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %rs = shard.shard %r to %s : tensor<4xf32>
  return %rs : tensor<4xf32>
}
