// RUN: lmc-opt %s -lmc-scatter-adds-to-loops -verify-diagnostics

// The marker on something else is an error, not a silent rewrite.
func.func @not_a_scatter(%a: tensor<4xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{is not a scatter-add lmc lowered}}
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"], lmc.scatter_add_axis = 0 : i64}
      ins(%a : tensor<4xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
