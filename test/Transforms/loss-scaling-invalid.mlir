// RUN: lmc-opt %s -lmc-autodiff=loss-scale -lmc-optimizer="loss-scale-growth-interval=0" -verify-diagnostics

// expected-error @+1 {{loss-scale-growth-interval must be >= 1, got 0}}
func.func @forward(%w: tensor<4xf32> {lmc.param = "w", lmc.init = dense<1.0> : tensor<4xf32>},
                   %x: tensor<4xf32> {lmc.input = "x"}) -> (tensor<f32> {lmc.output = "loss"}) {
  %y = lmc.mul %w, %x : tensor<4xf32>
  %loss = lmc.reduce_sum %y, axes = [0] : tensor<4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}
