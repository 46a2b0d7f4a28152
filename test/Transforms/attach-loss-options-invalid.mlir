// RUN: lmc-opt %s -split-input-file -verify-diagnostics -lmc-attach-loss="loss=hinge"

// expected-error @+1 {{unknown loss 'hinge'; expected cross_entropy, mse or output:NAME}}
func.func @forward(%x: tensor<4x3xf32> {lmc.input = "x"}) -> (tensor<4x3xf32> {lmc.output = "y"}) {
  return %x : tensor<4x3xf32>
}
