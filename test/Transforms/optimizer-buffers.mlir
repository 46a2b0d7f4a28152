// RUN: lmc-opt %s -lmc-autodiff -lmc-optimizer="optimizer=sgd" | FileCheck %s

// Model buffers (BatchNorm's running statistics): non-trainable forward
// arguments tagged lmc.buffer whose updated values are forward results with
// the same tag. They travel through every entry point (docs/runtime-abi.md):
//   grad_step(params, buffers, inputs) -> (grads, buffers, loss)
//   train_step(params, state, buffers, inputs, hypers)
//       -> (params, state, buffers, loss, grad_norm)
//   eval_step(params, buffers, inputs) -> (loss, outputs)
// lmc.mode_select becomes its train operand in @forward_grad and its eval
// operand in @forward_eval, which eval_step calls.

func.func @forward(%w: tensor<4xf32> {lmc.param = "w", lmc.init = dense<1.0> : tensor<4xf32>},
                   %m: tensor<4xf32> {lmc.buffer = "m", lmc.init = dense<0.5> : tensor<4xf32>},
                   %x: tensor<4xf32> {lmc.input = "x"})
    -> (tensor<f32> {lmc.output = "loss"}, tensor<4xf32> {lmc.output = "y"},
        tensor<4xf32> {lmc.buffer = "m"}) {
  %batch = lmc.mul %w, %x : tensor<4xf32>
  %running = lmc.mul %w, %m : tensor<4xf32>
  %y = lmc.mode_select train(%batch) eval(%running) : tensor<4xf32>
  %loss = lmc.reduce_sum %y, axes = [0] : tensor<4xf32> -> tensor<f32>
  %next = lmc.add %m, %x : tensor<4xf32>
  return %loss, %y, %next : tensor<f32>, tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func private @forward_eval(
// CHECK-NOT: lmc.mode_select
// CHECK: %[[EY:.*]] = lmc.mul %arg0, %arg1
// CHECK: lmc.reduce_sum %[[EY]]

// CHECK-LABEL: func.func private @forward_grad(
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<4xf32> {lmc.init = dense<1.000000e+00> : tensor<4xf32>, lmc.param = "w"}
// CHECK-SAME: %[[M:[a-z0-9]+]]: tensor<4xf32> {lmc.buffer = "m", lmc.init = dense<5.000000e-01> : tensor<4xf32>}
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4xf32> {lmc.input = "x"}
// CHECK-SAME: -> (tensor<f32> {lmc.output = "loss"}, tensor<4xf32> {lmc.param = "w"}, tensor<4xf32> {lmc.buffer = "m"})
// CHECK-NOT: lmc.mode_select
// CHECK: %[[Y:.*]] = lmc.mul %[[W]], %[[X]]
// CHECK: %[[LOSS:.*]] = lmc.reduce_sum %[[Y]]
// CHECK: %[[NEXT:.*]] = lmc.add %[[M]], %[[X]]
// CHECK: return %[[LOSS]], %{{.*}}, %[[NEXT]]

// CHECK-LABEL: func.func @grad_step(
// CHECK-SAME: {lmc.name = "w", lmc.role = "param"}
// CHECK-SAME: {lmc.name = "m", lmc.role = "buffer"}
// CHECK-SAME: {lmc.name = "x", lmc.role = "input"}
// CHECK-SAME: -> (tensor<4xf32> {lmc.name = "w", lmc.role = "grad"}, tensor<4xf32> {lmc.name = "m", lmc.role = "buffer"}, tensor<f32> {lmc.name = "loss", lmc.role = "loss"})
// CHECK: %[[G:.*]]:3 = call @forward_grad(
// CHECK: return %[[G]]#1, %[[G]]#2, %[[G]]#0

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: {lmc.init = dense<1.000000e+00> : tensor<4xf32>, lmc.name = "w", lmc.role = "param"}
// CHECK-SAME: {lmc.init = dense<5.000000e-01> : tensor<4xf32>, lmc.name = "m", lmc.role = "buffer"}
// CHECK-SAME: {lmc.name = "x", lmc.role = "input"}
// CHECK-SAME: -> (tensor<4xf32> {lmc.name = "w", lmc.role = "param"}, tensor<4xf32> {lmc.name = "m", lmc.role = "buffer"}, tensor<f32> {lmc.name = "loss", lmc.role = "loss"}, tensor<f32> {lmc.name = "grad_norm", lmc.role = "grad_norm"})
// CHECK: %[[F:.*]]:3 = call @forward_grad(
// CHECK: %[[U:.*]]:2 = call @apply_step(
// CHECK: %[[KEPT:.*]] = lmc.select %{{.*}}, %[[U]]#0, %{{.*}}
// CHECK: return %[[KEPT]], %[[F]]#2, %[[F]]#0, %[[U]]#1

// CHECK-LABEL: func.func @eval_step(
// CHECK-SAME: {lmc.name = "w", lmc.role = "param"}
// CHECK-SAME: {lmc.name = "m", lmc.role = "buffer"}
// CHECK-SAME: {lmc.name = "x", lmc.role = "input"}
// CHECK-SAME: -> (tensor<f32> {lmc.name = "loss", lmc.role = "loss"}, tensor<4xf32> {lmc.name = "y", lmc.role = "output"})
// CHECK: %[[E:.*]]:3 = call @forward_eval(
// CHECK: return %[[E]]#0, %[[E]]#1
