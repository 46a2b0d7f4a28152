// RUN: lmc-opt %s -split-input-file -verify-diagnostics -lmc-attach-loss="loss=output:loss"

// expected-error @+1 {{the model has no output named 'loss'}}
func.func @forward(%x: tensor<4xf32> {lmc.input = "x"}) -> (tensor<4xf32> {lmc.output = "y"}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{loss output 'loss' must be a scalar, got 'tensor<4xf32>'}}
func.func @forward(%x: tensor<4xf32> {lmc.input = "x"}) -> (tensor<4xf32> {lmc.output = "loss"}) {
  return %x : tensor<4xf32>
}
