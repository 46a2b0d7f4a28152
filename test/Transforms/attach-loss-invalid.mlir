// RUN: lmc-opt %s -split-input-file -verify-diagnostics -lmc-attach-loss

// expected-error @+1 {{expected a function named 'forward'}}
module {
  func.func @model(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{the model already has an input named 'labels'; the loss needs that name for its own input}}
func.func @forward(%x: tensor<4x3xf32> {lmc.input = "labels"}) -> (tensor<4x3xf32> {lmc.output = "y"}) {
  return %x : tensor<4x3xf32>
}

// -----

// expected-error @+1 {{cross_entropy needs logits with a class axis, got 'tensor<f32>'}}
func.func @forward(%x: tensor<f32> {lmc.input = "x"}) -> (tensor<f32> {lmc.output = "y"}) {
  return %x : tensor<f32>
}

// -----

// One class: cross-entropy is identically 0 (the default loss on a
// regression model).
// expected-error @+1 {{cross_entropy over output 'y' ('tensor<16x1xf32>') has one class: its loss is 0 and trains nothing; pass --loss mse for a regression output (or --loss output:NAME for a loss the model computes)}}
func.func @forward(%x: tensor<16x1xf32> {lmc.input = "x"}) -> (tensor<16x1xf32> {lmc.output = "y"}) {
  return %x : tensor<16x1xf32>
}

// -----

// expected-error @+1 {{expected output 'y' to be a float tensor}}
func.func @forward(%x: tensor<4xi64> {lmc.input = "x"}) -> (tensor<4xi64> {lmc.output = "y"}) {
  return %x : tensor<4xi64>
}

// -----

// expected-error @+1 {{expected the model to have an output}}
func.func @forward(%x: tensor<4xf32> {lmc.input = "x"}) {
  return
}
