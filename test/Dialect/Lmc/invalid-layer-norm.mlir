// Every verifier diagnostic of lmc.layer_norm and lmc.layer_norm_grad.
// RUN: lmc-opt %s -split-input-file -verify-diagnostics

func.func @dynamic(%x: tensor<?x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{expected a statically shaped input}}
  %y, %s = lmc.layer_norm %x, %g, %b {epsilon = 1.0e-05 : f32} : tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<?x8xf32>, tensor<?x2xf32>
  return
}

// -----

func.func @scale(%x: tensor<3x8xf32>, %g: tensor<3x8xf32>, %b: tensor<3x8xf32>) {
  // expected-error @+1 {{expected the scale to be [C] (the input's last dimension) of the input's element type}}
  %y, %s = lmc.layer_norm %x, %g, %b {epsilon = 1.0e-05 : f32} : tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x8xf32> -> tensor<3x8xf32>, tensor<3x2xf32>
  return
}

// -----

func.func @statistics(%x: tensor<3x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{expected the statistics to be [.., 2] (the input's rows) of the input's element type}}
  %y, %s = lmc.layer_norm %x, %g, %b {epsilon = 1.0e-05 : f32} : tensor<3x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<3x8xf32>, tensor<3x1xf32>
  return
}

// -----

func.func @bias(%x: tensor<3x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf64>) {
  // expected-error @+1 {{expected the bias to have the scale's type}}
  %y, %s = lmc.layer_norm %x, %g, %b {epsilon = 1.0e-05 : f32} : tensor<3x8xf32>, tensor<8xf32>, tensor<8xf64> -> tensor<3x8xf32>, tensor<3x2xf32>
  return
}

// -----

func.func @result(%x: tensor<3x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{expected the result to have the input's type}}
  %y, %s = lmc.layer_norm %x, %g, %b {epsilon = 1.0e-05 : f32} : tensor<3x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<8x3xf32>, tensor<3x2xf32>
  return
}

// -----

func.func @gradient_statistics(%x: tensor<3x8xf32>, %g: tensor<8xf32>, %s: tensor<2x2xf32>, %dy: tensor<3x8xf32>) {
  // expected-error @+1 {{expected the statistics to be [.., 2] (the input's rows) of the input's element type}}
  %dx, %dg, %db = lmc.layer_norm_grad %x, %g, %s, %dy : tensor<3x8xf32>, tensor<8xf32>, tensor<2x2xf32>, tensor<3x8xf32>
  return
}

// -----

func.func @accumulated(%x: tensor<3x8xf32>, %g: tensor<8xf32>, %s: tensor<3x2xf32>, %dy: tensor<3x8xf32>, %r: tensor<8x3xf32>) {
  // expected-error @+1 {{expected the accumulated cotangent to have the input's type}}
  %dx, %dg, %db = lmc.layer_norm_grad %x, %g, %s, %dy accumulate %r : tensor<3x8xf32>, tensor<8xf32>, tensor<3x2xf32>, tensor<3x8xf32>, tensor<8x3xf32>
  return
}
