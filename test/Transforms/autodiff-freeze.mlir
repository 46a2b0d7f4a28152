// Fine-tuning: frozen parameters become constants of their initial value.
// RUN: lmc-opt %s -lmc-autodiff="freeze=fc1\..*" | FileCheck %s --check-prefix=FREEZE
// RUN: lmc-opt %s -lmc-autodiff="train=fc2.weight" | FileCheck %s --check-prefix=TRAIN

// FREEZE-LABEL: func.func @forward_grad(
// FREEZE-NOT: lmc.param = "fc1.weight"
// FREEZE-SAME: -> (tensor<f32> {lmc.output = "loss"}, tensor<2xf32> {lmc.param = "fc2.weight"}, tensor<2xf32> {lmc.param = "fc2.bias"})
// FREEZE: arith.constant dense<3.000000e+00> : tensor<2xf32>

// TRAIN-LABEL: func.func @forward_grad(
// TRAIN-SAME: -> (tensor<f32> {lmc.output = "loss"}, tensor<2xf32> {lmc.param = "fc2.weight"})
func.func @forward(%w1: tensor<2xf32> {lmc.param = "fc1.weight", lmc.init = dense<3.0> : tensor<2xf32>},
                   %w2: tensor<2xf32> {lmc.param = "fc2.weight", lmc.init = dense<1.0> : tensor<2xf32>},
                   %b2: tensor<2xf32> {lmc.param = "fc2.bias", lmc.init = dense<0.0> : tensor<2xf32>},
                   %x: tensor<2xf32> {lmc.input = "x"}) -> (tensor<f32> {lmc.output = "loss"}) {
  %h = lmc.mul %x, %w1 : tensor<2xf32>
  %y = lmc.mul %h, %w2 : tensor<2xf32>
  %z = lmc.add %y, %b2 : tensor<2xf32>
  %l = lmc.reduce_sum %z, axes = [0] : tensor<2xf32> -> tensor<f32>
  return %l : tensor<f32>
}
