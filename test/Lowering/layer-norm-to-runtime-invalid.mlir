// The runtime's layer norm is f32 only.
// RUN: lmc-opt %s -lmc-layer-norm-to-runtime -verify-diagnostics

func.func @f64(%x: tensor<3x8xf64>, %g: tensor<8xf64>, %b: tensor<8xf64>) -> tensor<3x8xf64> {
  // expected-error @+1 {{lmc runs 'lmc.layer_norm' on f32 only}}
  %y, %s = lmc.layer_norm %x, %g, %b {epsilon = 1.0e-05 : f32} : tensor<3x8xf64>, tensor<8xf64>, tensor<8xf64> -> tensor<3x8xf64>, tensor<3x2xf64>
  return %y : tensor<3x8xf64>
}
