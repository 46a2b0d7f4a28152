// RUN: lmc-opt %s -lmc-autodiff -lmc-optimizer="optimizer=sgd" | FileCheck %s

// A forward that draws random numbers has an i64 argument tagged
// lmc.rng_key. It becomes `hyper rng_key`, the last argument of train_step
// and grad_step (the forward runs there), not of apply_step (the update);
// eval_step passes a constant key (its forward, resolved to evaluation,
// draws nothing).

func.func @forward(%w: tensor<4xf32> {lmc.param = "w", lmc.init = dense<1.0> : tensor<4xf32>},
                   %x: tensor<4xf32> {lmc.input = "x"},
                   %key: tensor<i64> {lmc.rng_key})
    -> (tensor<f32> {lmc.output = "loss"}) {
  %h = lmc.mul %w, %x : tensor<4xf32>
  %u = lmc.random_uniform %key, stream = 1 : tensor<i64> -> tensor<4xf32>
  %dropped = lmc.mul %h, %u : tensor<4xf32>
  %y = lmc.mode_select train(%dropped) eval(%h) : tensor<4xf32>
  %loss = lmc.reduce_sum %y, axes = [0] : tensor<4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// CHECK-LABEL: func.func @grad_step(
// CHECK-SAME: {lmc.name = "x", lmc.role = "input"}, %[[GKEY:.*]]: tensor<i64> {lmc.name = "rng_key", lmc.role = "hyper"})
// CHECK: call @forward_grad(%{{.*}}, %{{.*}}, %[[GKEY]])

// CHECK-LABEL: func.func @apply_step(
// CHECK-NOT: rng_key
// CHECK-SAME: {lmc.name = "max_grad_norm", lmc.role = "hyper"}) ->

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: {lmc.name = "max_grad_norm", lmc.role = "hyper"}, %[[TKEY:.*]]: tensor<i64> {lmc.name = "rng_key", lmc.role = "hyper"})
// CHECK: call @forward_grad(%{{.*}}, %{{.*}}, %[[TKEY]])

// CHECK-LABEL: func.func @eval_step(
// CHECK-NOT: rng_key
// CHECK: %[[ZERO:.*]] = arith.constant dense<0> : tensor<i64>
// CHECK: call @forward_eval(%{{.*}}, %{{.*}}, %[[ZERO]])
