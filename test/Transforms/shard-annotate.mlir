// RUN: lmc-opt %s -lmc-shard-annotate="mesh=data=2,model=2 shard=fc1.weight=model,_;fc2.weight=_,model" | FileCheck %s
// RUN: lmc-opt %s -lmc-shard-annotate="mesh=model=2 shard=fc*.weight=_,_" | FileCheck %s --check-prefix=REPLICATED
// RUN: lmc-opt %s -lmc-shard-annotate | FileCheck %s --check-prefix=NO-MESH

// The step is SPMD over `model` alone (data parallelism is the runtime's):
// a one-axis grid, and the mesh recorded for the runtime.
// CHECK: module attributes {lmc.mesh = {data = 2 : i64, model = 2 : i64}, lmc.splits = {fc1.bias = 0 : i64, fc1.weight = 0 : i64, fc2.weight = 1 : i64}}
// CHECK: shard.grid @mesh(shape = 2)
// NO-MESH-NOT: shard.
// NO-MESH-NOT: lmc.mesh

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#wT = affine_map<(b, o, k) -> (o, k)>
#x = affine_map<(b, o, k) -> (b, k)>
#y = affine_map<(b, o, k) -> (b, o)>
#bias = affine_map<(b, o) -> (o)>

// A column-parallel layer (fc1, weight [out, in] split on out) then a
// row-parallel one (fc2, split on in). fc1.bias has no rule: it takes the
// sharding propagation gives it in train_step, split like fc1's outputs.
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[S_W1:.*]] = shard.sharding @mesh split_axes = {{\[\[}}0], []] : !shard.sharding
// CHECK-NEXT: shard.shard %arg0 to %[[S_W1]] annotate_for_users : tensor<4x3xf32>
// CHECK-NEXT: %[[S_B1:.*]] = shard.sharding @mesh split_axes = {{\[\[}}0]] : !shard.sharding
// CHECK-NEXT: shard.shard %arg1 to %[[S_B1]] annotate_for_users : tensor<4xf32>
// CHECK-NEXT: %[[S_W2:.*]] = shard.sharding @mesh split_axes = {{\[\[}}], [0]] : !shard.sharding
// CHECK-NEXT: shard.shard %arg2 to %[[S_W2]] annotate_for_users : tensor<2x4xf32>
// Optimizer state `<param>.<slot>` is split like its parameter.
// CHECK-NEXT: %[[S_M1:.*]] = shard.sharding @mesh split_axes = {{\[\[}}0], []] : !shard.sharding
// CHECK-NEXT: shard.shard %arg3 to %[[S_M1]] annotate_for_users : tensor<4x3xf32>
// Inputs are left to propagation (the runtime splits the batch over data).
// CHECK-NOT: shard.shard %arg4
// The updated parameters and state leave split as they came in.
// CHECK: split_axes = {{\[\[}}0], []] : !shard.sharding
// CHECK-NEXT: %[[R_W1:.*]] = shard.shard %{{.*}} annotate_for_users : tensor<4x3xf32>
// CHECK-NEXT: split_axes = {{\[\[}}0]] : !shard.sharding
// CHECK-NEXT: %[[R_B1:.*]] = shard.shard %{{.*}} annotate_for_users : tensor<4xf32>
// CHECK-NEXT: split_axes = {{\[\[}}], [0]] : !shard.sharding
// CHECK-NEXT: %[[R_W2:.*]] = shard.shard %{{.*}} annotate_for_users : tensor<2x4xf32>
// CHECK-NEXT: split_axes = {{\[\[}}0], []] : !shard.sharding
// CHECK-NEXT: %[[R_M1:.*]] = shard.shard %{{.*}} annotate_for_users : tensor<4x3xf32>
// CHECK: return %[[R_W1]], %[[R_B1]], %[[R_W2]], %[[R_M1]], %{{.*}} :

// Every rule written `_,_` replicates, and the bias follows.
// REPLICATED-LABEL: func.func @train_step(
// REPLICATED-DAG: shard.shard %arg0 to %{{.*}} annotate_for_users : tensor<4x3xf32>
// REPLICATED-DAG: shard.shard %arg2 to %{{.*}} annotate_for_users : tensor<2x4xf32>
// REPLICATED-NOT: [0]
func.func @train_step(
    %w1: tensor<4x3xf32> {lmc.name = "fc1.weight", lmc.role = "param"},
    %b1: tensor<4xf32> {lmc.name = "fc1.bias", lmc.role = "param"},
    %w2: tensor<2x4xf32> {lmc.name = "fc2.weight", lmc.role = "param"},
    %m1: tensor<4x3xf32> {lmc.name = "fc1.weight.exp_avg", lmc.role = "state"},
    %x: tensor<8x3xf32> {lmc.name = "x", lmc.role = "input"})
    -> (tensor<4x3xf32> {lmc.name = "fc1.weight", lmc.role = "param"},
        tensor<4xf32> {lmc.name = "fc1.bias", lmc.role = "param"},
        tensor<2x4xf32> {lmc.name = "fc2.weight", lmc.role = "param"},
        tensor<4x3xf32> {lmc.name = "fc1.weight.exp_avg", lmc.role = "state"},
        tensor<8x2xf32> {lmc.name = "y", lmc.role = "output"}) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8x4xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %h = linalg.matmul indexing_maps = [#x, #wT, #y]
         ins(%x, %w1 : tensor<8x3xf32>, tensor<4x3xf32>)
         outs(%z1 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %e2 = tensor.empty() : tensor<8x4xf32>
  %hb = linalg.generic {indexing_maps = [#id, #bias, #id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%h, %b1 : tensor<8x4xf32>, tensor<4xf32>) outs(%e2 : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  %e3 = tensor.empty() : tensor<8x2xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<8x2xf32>) -> tensor<8x2xf32>
  %y = linalg.matmul indexing_maps = [#x, #wT, #y]
         ins(%hb, %w2 : tensor<8x4xf32>, tensor<2x4xf32>)
         outs(%z3 : tensor<8x2xf32>) -> tensor<8x2xf32>
  return %w1, %b1, %w2, %m1, %y
      : tensor<4x3xf32>, tensor<4xf32>, tensor<2x4xf32>, tensor<4x3xf32>, tensor<8x2xf32>
}
