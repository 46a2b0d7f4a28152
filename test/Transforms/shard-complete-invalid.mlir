// RUN: lmc-opt %s -verify-diagnostics --pass-pipeline="builtin.module(func.func(lmc-shard-complete))"

#id = affine_map<(i) -> (i)>
shard.grid @mesh(shape = 2)

// A gather reads its table whole, with global indices, from inside its
// body: a split table would be read wrong, so it is refused.
func.func @split_table(%table: tensor<8xf32>, %idx: tensor<4xindex>) -> tensor<4xf32> {
  %s = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %ts = shard.shard %table to %s annotate_for_users : tensor<8xf32>
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%idx : tensor<4xindex>) outs(%e : tensor<4xf32>) {
  ^bb0(%i: index, %o: f32):
    // expected-error @+1 {{lmc cannot split a tensor that 'tensor.extract' reads inside a region (a gather's table, or a slice's source that lmc-split-fused-projections could not cut into parameters) yet; keep it whole with --shard}}
    %v = tensor.extract %table[%i] : tensor<8xf32>
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
