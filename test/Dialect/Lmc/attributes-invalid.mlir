// The lmc.* attributes the passes exchange, checked by the dialect: the
// values whose meaning is fixed (roles, names, initial values, flags, the
// optimizer, the precision) are refused when they cannot be meant.
// RUN: lmc-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{'func.func' op argument 0: lmc.role must be one of param, state, buffer, frozen, input, hyper, grad, loss, grad_norm, output, got "parm"}}
func.func @train_step(%w: tensor<2xf32> {lmc.role = "parm", lmc.name = "w"}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op result 0: lmc.role must be one of param, state, buffer, frozen, input, hyper, grad, loss, grad_norm, output, got 3 : i64}}
func.func @train_step(%w: tensor<2xf32>) -> (tensor<2xf32> {lmc.role = 3}) {
  return %w : tensor<2xf32>
}

// -----

// expected-error @+1 {{'func.func' op argument 0: lmc.param must be a non-empty string}}
func.func @forward(%w: tensor<2xf32> {lmc.param = ""}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op result 0: lmc.output must be a non-empty string}}
func.func @forward(%x: tensor<2xf32>) -> (tensor<2xf32> {lmc.output = 1.0 : f32}) {
  return %x : tensor<2xf32>
}

// -----

// expected-error @+1 {{'func.func' op argument 0: lmc.init must be the initial value (elements)}}
func.func @forward(%w: tensor<2xf32> {lmc.param = "w", lmc.init = 1.0 : f32}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument 0: lmc.frozen is a flag (a unit attribute)}}
func.func @forward(%w: tensor<2xf32> {lmc.param = "w", lmc.frozen = true}) {
  return
}

// -----

// expected-error @+1 {{'builtin.module' op lmc.optimizer must be {name = "<optimizer>", ...} naming sgd, momentum, adam or adamw, got {lr = 1.000000e-01 : f64, name = "lion"}}}
module attributes {lmc.optimizer = {name = "lion", lr = 0.1}} {
}

// -----

// expected-error @+1 {{'builtin.module' op lmc.precision must be "bf16" or "f16" (absent: f32), got "fp8"}}
module attributes {lmc.precision = "fp8"} {
}

// -----

// expected-error @+1 {{'builtin.module' op lmc.loss must be a non-empty string}}
module attributes {lmc.loss = 0 : i64} {
}

// -----

// What the dialect does not own passes as it is; valid values pass.
module attributes {lmc.optimizer = {name = "adamw", lr = 0.001}, lmc.precision = "bf16", lmc.loss = "cross_entropy", lmc.anything = 1 : i64} {
  func.func @train_step(%w: tensor<2xf32> {lmc.role = "param", lmc.name = "w", lmc.frozen, lmc.init = dense<1.0> : tensor<2xf32>}) -> (tensor<2xf32> {lmc.role = "param", lmc.name = "w"}) {
    return %w : tensor<2xf32>
  }
}
