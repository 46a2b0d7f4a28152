// RUN: lmc-opt %s -lmc-autodiff -lmc-optimizer="optimizer=sgd" | FileCheck %s

// A parameter tagged lmc.frozen (lmc-lora's base weights): lmc-autodiff
// keeps it an argument without a gradient, and every entry point takes it
// with role `frozen`, after the buffers and before the inputs, and returns
// nothing for it (docs/runtime-abi.md):
//   grad_step(params, buffers, frozen, inputs) -> (grads, buffers, loss)
//   train_step(params, state, buffers, frozen, inputs, hypers)
//       -> (params, state, buffers, loss, grad_norm)
//   eval_step(params, buffers, frozen, inputs) -> (loss, outputs)
// A frozen parameter nothing reads leaves the signature.

func.func @forward(%base: tensor<4xf32> {lmc.param = "base", lmc.frozen, lmc.init = dense<2.0> : tensor<4xf32>},
                   %a: tensor<4xf32> {lmc.param = "a", lmc.init = dense<1.0> : tensor<4xf32>},
                   %unused: tensor<4xf32> {lmc.param = "unused", lmc.frozen, lmc.init = dense<3.0> : tensor<4xf32>},
                   %x: tensor<4xf32> {lmc.input = "x"})
    -> (tensor<f32> {lmc.output = "loss"}) {
  %wx = lmc.mul %base, %x : tensor<4xf32>
  %y = lmc.mul %a, %wx : tensor<4xf32>
  %loss = lmc.reduce_sum %y, axes = [0] : tensor<4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// The gradient of `a` only; `base` a plain argument.
// CHECK-LABEL: func.func private @forward_grad(
// CHECK-SAME: %[[BASE:.*]]: tensor<4xf32> {lmc.frozen, lmc.init = dense<2.000000e+00> : tensor<4xf32>, lmc.param = "base"}
// CHECK-NOT: unused
// CHECK-SAME: -> (tensor<f32> {lmc.output = "loss"}, tensor<4xf32> {lmc.param = "a"})

// CHECK-LABEL: func.func @grad_step(
// CHECK-SAME: {lmc.name = "a", lmc.role = "param"}
// CHECK-SAME: {lmc.name = "base", lmc.role = "frozen"}
// CHECK-SAME: {lmc.name = "x", lmc.role = "input"}
// CHECK-SAME: -> (tensor<4xf32> {lmc.name = "a", lmc.role = "grad"}, tensor<f32> {lmc.name = "loss", lmc.role = "loss"})

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: {lmc.init = dense<1.000000e+00> : tensor<4xf32>, lmc.name = "a", lmc.role = "param"}
// CHECK-SAME: {lmc.init = dense<2.000000e+00> : tensor<4xf32>, lmc.name = "base", lmc.role = "frozen"}
// CHECK-SAME: {lmc.name = "x", lmc.role = "input"}
// CHECK-SAME: {lmc.name = "lr", lmc.role = "hyper"}
// CHECK-SAME: -> (tensor<4xf32> {lmc.name = "a", lmc.role = "param"}, tensor<f32> {lmc.name = "loss", lmc.role = "loss"}, tensor<f32> {lmc.name = "grad_norm", lmc.role = "grad_norm"})

// CHECK-LABEL: func.func @eval_step(
// CHECK-SAME: {lmc.name = "a", lmc.role = "param"}
// CHECK-SAME: {lmc.name = "base", lmc.role = "frozen"}
// CHECK-SAME: {lmc.name = "x", lmc.role = "input"}
