// RUN: lmc-opt %s -split-input-file -verify-diagnostics -lmc-optimizer

// expected-error @+1 {{expected @forward and @forward_grad (run lmc-autodiff first)}}
module {
  func.func @forward(%w: tensor<4xf32>) -> tensor<f32> {
    %l = lmc.reduce_sum %w, axes = [0] : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

module {
  func.func @forward(%w: tensor<4xf64> {lmc.param = "w"}) -> tensor<f64> {
    %l = lmc.reduce_sum %w, axes = [0] : tensor<4xf64> -> tensor<f64>
    return %l : tensor<f64>
  }
  // expected-error @+1 {{parameter 'w' must be f32 to be trained, got 'tensor<4xf64>'}}
  func.func @forward_grad(%w: tensor<4xf64> {lmc.param = "w"}) -> (tensor<f64>, tensor<4xf64>) {
    %l = lmc.reduce_sum %w, axes = [0] : tensor<4xf64> -> tensor<f64>
    return %l, %w : tensor<f64>, tensor<4xf64>
  }
}

// -----

// The updated buffers are paired with the buffer arguments by position:
// results in another order would carry each update into the wrong buffer.
module {
  func.func @forward(%a: tensor<4xf32> {lmc.buffer = "a"}, %b: tensor<4xf32> {lmc.buffer = "b"}, %w: tensor<4xf32> {lmc.param = "w"}) -> (tensor<f32>, tensor<4xf32> {lmc.buffer = "b"}, tensor<4xf32> {lmc.buffer = "a"}) {
    %l = lmc.reduce_sum %w, axes = [0] : tensor<4xf32> -> tensor<f32>
    return %l, %b, %a : tensor<f32>, tensor<4xf32>, tensor<4xf32>
  }
  // expected-error @+1 {{buffer result 0 must be the update of buffer argument 'a' (results follow the arguments' order)}}
  func.func @forward_grad(%a: tensor<4xf32> {lmc.buffer = "a"}, %b: tensor<4xf32> {lmc.buffer = "b"}, %w: tensor<4xf32> {lmc.param = "w"}) -> (tensor<f32>, tensor<4xf32> {lmc.param = "w"}, tensor<4xf32> {lmc.buffer = "b"}, tensor<4xf32> {lmc.buffer = "a"}) {
    %l = lmc.reduce_sum %w, axes = [0] : tensor<4xf32> -> tensor<f32>
    return %l, %w, %b, %a : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
}
