// RUN: lmc-opt %s -verify-diagnostics -lmc-rematerialize

// Rematerialization works on what lmc-autodiff built.
// expected-error@+1 {{expected a single-block function named 'forward_grad' (run lmc-autodiff first)}}
module {
  func.func @forward(%x: tensor<4xf32> {lmc.input = "x"}) -> tensor<f32> {
    %l = lmc.reduce_sum %x, axes = [0] : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
