// RUN: lmc-opt %s -split-input-file -verify-diagnostics -lmc-shard-to-runtime

shard.grid @mesh(shape = 2)
func.func @f64(%x: tensor<4xf64>) -> tensor<4xf64> {
  // expected-error @+1 {{lmc runs 'shard.all_reduce' on f32 tensors only}}
  %r = shard.all_reduce %x on @mesh grid_axes = [0] : tensor<4xf64> -> tensor<4xf64>
  return %r : tensor<4xf64>
}

// -----

shard.grid @mesh(shape = 2)
func.func @min(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{lmc runs sum and max all-reduces only}}
  %r = shard.all_reduce %x on @mesh grid_axes = [0] reduction = min : tensor<4xf32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

shard.grid @mesh(shape = 2x2)
func.func @two_axes(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{lmc runs collectives over its one-axis grid @mesh only}}
  %r = shard.all_reduce %x on @mesh grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

shard.grid @mesh(shape = 2)
func.func @broadcast(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{lmc cannot run 'shard.broadcast' in a compiled step yet}}
  %r = shard.broadcast %x on @mesh grid_axes = [0] root = [0] : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
