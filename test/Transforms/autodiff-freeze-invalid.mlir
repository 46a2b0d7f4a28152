// RUN: lmc-opt %s -verify-diagnostics -lmc-autodiff="freeze=fc1(" 

// expected-error @+1 {{invalid --freeze regex 'fc1(': parentheses not balanced}}
module {
  func.func @forward(%w: tensor<2xf32> {lmc.param = "w", lmc.init = dense<1.0> : tensor<2xf32>}) -> tensor<f32> {
    %l = lmc.reduce_sum %w, axes = [0] : tensor<2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
