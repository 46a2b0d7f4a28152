// RUN: lmc-opt %s -lmc-autodiff -lmc-optimizer="optimizer=adamw weight-decay=0.25 chunk-elements=8" | FileCheck %s
// RUN: lmc-opt %s -lmc-autodiff -lmc-optimizer="optimizer=momentum momentum=0.75 chunk-elements=32" | FileCheck %s --check-prefix=MOMENTUM
// RUN: lmc-opt %s -lmc-autodiff=loss-scale -lmc-optimizer | FileCheck %s --check-prefix=SCALED
// RUN: lmc-opt %s -verify-diagnostics -lmc-autodiff -lmc-optimizer="chunk-elements=0" --split-input-file

// @chunk_step (ZeRO-1): apply_step's update for one chunk of the flattened
// parameters. Its shape is chunk-elements, not any parameter's; the state
// slots are named after the optimizer's; the gradient is clipped with the
// factor of the global norm the runtime passes in (grad_norm), and the
// update is apply_step's, op for op.

// CHECK-LABEL: func.func @chunk_step(
// CHECK-SAME: %[[P:[a-z0-9]+]]: tensor<8xf32> {lmc.name = "chunk", lmc.role = "param"}
// CHECK-SAME: %[[M:[a-z0-9]+]]: tensor<8xf32> {lmc.name = "chunk.exp_avg", lmc.role = "state"}
// CHECK-SAME: %[[V:[a-z0-9]+]]: tensor<8xf32> {lmc.name = "chunk.exp_avg_sq", lmc.role = "state"}
// CHECK-SAME: %[[G:[a-z0-9]+]]: tensor<8xf32> {lmc.name = "chunk", lmc.role = "grad"}
// CHECK-SAME: %[[LR:[a-z0-9]+]]: tensor<f32> {lmc.name = "lr", lmc.role = "hyper"}
// CHECK-SAME: %[[SS:[a-z0-9]+]]: tensor<f32> {lmc.name = "adam_step_size", lmc.role = "hyper"}
// CHECK-SAME: %[[BC2:[a-z0-9]+]]: tensor<f32> {lmc.name = "adam_bc2_sqrt", lmc.role = "hyper"}
// CHECK-SAME: %[[MAX:[a-z0-9]+]]: tensor<f32> {lmc.name = "max_grad_norm", lmc.role = "hyper"}
// CHECK-SAME: %[[NORM:[a-z0-9]+]]: tensor<f32> {lmc.name = "grad_norm", lmc.role = "grad_norm"})
// CHECK-SAME: -> (tensor<8xf32> {lmc.name = "chunk", lmc.role = "param"}, tensor<8xf32> {lmc.name = "chunk.exp_avg", lmc.role = "state"}, tensor<8xf32> {lmc.name = "chunk.exp_avg_sq", lmc.role = "state"})
// min(1, max / (norm + 1e-6)), or 1 when max is 0:
// CHECK: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[TINY:.*]] = arith.constant dense<9.99999997E-7> : tensor<f32>
// CHECK: %[[DEN:.*]] = lmc.add %[[NORM]], %[[TINY]]
// CHECK: %[[RATIO:.*]] = lmc.div %[[MAX]], %[[DEN]]
// CHECK: %[[BELOW:.*]] = lmc.cmp lt, %[[RATIO]], %[[ONE]]
// CHECK: %[[CLAMPED:.*]] = lmc.select %[[BELOW]], %[[RATIO]], %[[ONE]]
// CHECK: %[[ON:.*]] = lmc.cmp gt, %[[MAX]]
// CHECK: %[[COEF:.*]] = lmc.select %[[ON]], %[[CLAMPED]], %[[ONE]]
// CHECK: %[[COEFB:.*]] = lmc.broadcast_in_dim %[[COEF]], dims = [] : tensor<f32> -> tensor<8xf32>
// CHECK: %[[CG:.*]] = lmc.mul %[[G]], %[[COEFB]]
// AdamW's decoupled decay, then Adam:
// CHECK: %[[DECAYED:.*]] = lmc.mul %[[P]], %{{.*}}
// CHECK: %[[D:.*]] = lmc.sub %[[CG]], %[[M]]
// CHECK: %[[NM:.*]] = lmc.add %[[M]], %{{.*}}
// CHECK: %[[VB:.*]] = lmc.mul %[[V]], %{{.*}}
// CHECK: %[[NV:.*]] = lmc.add %[[VB]], %{{.*}}
// CHECK: lmc.broadcast_in_dim %[[BC2]]
// CHECK: lmc.broadcast_in_dim %[[SS]]
// CHECK: %[[NP:.*]] = lmc.sub %[[DECAYED]], %{{.*}}
// CHECK: return %[[NP]], %[[NM]], %[[NV]] : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>

// MOMENTUM-LABEL: func.func @chunk_step(
// MOMENTUM-SAME: tensor<32xf32> {lmc.name = "chunk", lmc.role = "param"}
// MOMENTUM-SAME: tensor<32xf32> {lmc.name = "chunk.momentum_buffer", lmc.role = "state"}
// MOMENTUM-SAME: tensor<32xf32> {lmc.name = "chunk", lmc.role = "grad"}
// MOMENTUM-SAME: tensor<f32> {lmc.name = "lr", lmc.role = "hyper"}
// MOMENTUM-SAME: tensor<f32> {lmc.name = "max_grad_norm", lmc.role = "hyper"}
// MOMENTUM-SAME: tensor<f32> {lmc.name = "grad_norm", lmc.role = "grad_norm"})
// MOMENTUM-SAME: -> (tensor<32xf32> {lmc.name = "chunk", lmc.role = "param"}, tensor<32xf32> {lmc.name = "chunk.momentum_buffer", lmc.role = "state"})

// Dynamic loss scaling skips non-finite updates inside apply_step; ZeRO-1
// has no chunked form of that, so there is no @chunk_step.
// SCALED-LABEL: func.func @apply_step(
// SCALED-NOT: @chunk_step

// expected-error @below {{chunk-elements must be >= 1, got 0}}
module {
func.func @forward(%w: tensor<4xf32> {lmc.param = "w", lmc.init = dense<0.25> : tensor<4xf32>},
                   %x: tensor<4xf32> {lmc.input = "x"})
    -> (tensor<f32> {lmc.output = "loss"}) {
  %y = lmc.mul %x, %w : tensor<4xf32>
  %l = lmc.reduce_sum %y, axes = [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
}
