// RUN: lmc-opt %s -verify-diagnostics -lmc-rematerialize=policy=everything

// expected-error@+1 {{unknown rematerialization policy 'everything' (expected per-block or selective)}}
module {
  func.func @forward_grad(%x: tensor<4xf32> {lmc.input = "x"}) -> tensor<f32> {
    %l = lmc.reduce_sum %x, axes = [0] : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
