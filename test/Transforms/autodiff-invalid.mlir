// RUN: lmc-opt %s -split-input-file -verify-diagnostics -lmc-autodiff

// expected-error @+1 {{expected a function named 'forward'}}
module {
}

// -----

// expected-error @+1 {{expected the first result to be a scalar float loss}}
func.func @forward(%w: tensor<4xf32> {lmc.param = "w"}) -> tensor<4xf32> {
  return %w : tensor<4xf32>
}

// -----

func.func @forward(%w: tensor<4xf32> {lmc.param = "w"}) -> tensor<f32> {
  // expected-error @+1 {{'arith.negf' op is not differentiable but lies on a path from a parameter to the loss}}
  %n = arith.negf %w : tensor<4xf32>
  %l = lmc.reduce_sum %n, axes = [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// expected-error @+1 {{parameter "w" is constant (frozen, or no path to the loss) but has no initial value}}
func.func @forward(%w: tensor<4xf32> {lmc.param = "w"}, %x: tensor<4xf32> {lmc.input = "x"}) -> tensor<f32> {
  %c = lmc.cmp gt, %w, %x : tensor<4xf32> -> tensor<4xi1>
  %s = lmc.select %c, %x, %x : tensor<4xi1>, tensor<4xf32>
  %l = lmc.reduce_sum %s, axes = [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// expected-error @+1 {{expected a single-block function}}
func.func @forward(%w: tensor<4xf32> {lmc.param = "w"}) -> tensor<f32> {
  cf.br ^bb1
^bb1:
  %l = lmc.reduce_sum %w, axes = [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// lmc.attention's row statistics (and kept exponentials) feed only its gradient.
func.func @forward(%q: tensor<1x4x2xf32> {lmc.param = "q"}, %kt: tensor<1x2x4xf32> {lmc.input = "kt"},
                   %v: tensor<1x4x2xf32> {lmc.input = "v"}, %m: tensor<1x4x4xi1> {lmc.input = "m"}) -> tensor<f32> {
  // expected-error @+1 {{'lmc.attention' op its row statistics and exponentials are not differentiable}}
  %o, %s = lmc.attention %q, %kt, %v, %m {scale = 1.0 : f32} : tensor<1x4x2xf32>, tensor<1x2x4xf32>, tensor<1x4x2xf32>, tensor<1x4x4xi1> -> tensor<1x4x2xf32>, tensor<1x4x2xf32>
  %l = lmc.reduce_sum %s, axes = [0, 1, 2] : tensor<1x4x2xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// lmc.layer_norm's row statistics feed only its gradient.
func.func @forward(%x: tensor<3x8xf32> {lmc.input = "x"}, %g: tensor<8xf32> {lmc.param = "g"},
                   %b: tensor<8xf32> {lmc.param = "b"}) -> tensor<f32> {
  // expected-error @+1 {{'lmc.layer_norm' op its row statistics are not differentiable}}
  %y, %s = lmc.layer_norm %x, %g, %b {epsilon = 1.0e-05 : f32} : tensor<3x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<3x8xf32>, tensor<3x2xf32>
  %l = lmc.reduce_sum %s, axes = [0, 1] : tensor<3x2xf32> -> tensor<f32>
  return %l : tensor<f32>
}
