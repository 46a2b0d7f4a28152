// RUN: lmc-opt %s -lmc-autodiff=loss-scale -lmc-optimizer="optimizer=sgd loss-scale-growth-interval=5" | FileCheck %s

// Dynamic loss scaling. lmc-autodiff{loss-scale}: @forward_grad takes the
// scale (an f32 scalar tagged lmc.loss_scale) as the loss's cotangent.
// lmc-optimizer: two optimizer states, loss_scaler.scale (initially 2^16)
// and loss_scaler.growth_tracker; grad_step takes the scale; apply_step
// unscales, keeps params and state when the gradient norm is not finite
// (and halves the scale), otherwise doubles the scale after
// loss-scale-growth-interval clean steps.

func.func @forward(%w: tensor<4xf32> {lmc.param = "w", lmc.init = dense<1.0> : tensor<4xf32>},
                   %x: tensor<4xf32> {lmc.input = "x"}) -> (tensor<f32> {lmc.output = "loss"}) {
  %y = lmc.mul %w, %x : tensor<4xf32>
  %loss = lmc.reduce_sum %y, axes = [0] : tensor<4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// CHECK-LABEL: func.func private @forward_grad(
// CHECK-SAME: %[[SCALE:[a-z0-9]+]]: tensor<f32> {lmc.loss_scale})
// CHECK: %[[SEED1:.*]] = lmc.reshape %[[SCALE]] : tensor<f32> -> tensor<1xf32>
// CHECK: %[[SEED:.*]] = lmc.broadcast_in_dim %[[SEED1]]
// CHECK: lmc.mul %[[SEED]], %arg1

// CHECK-LABEL: func.func @grad_step(
// CHECK-SAME: {lmc.name = "w", lmc.role = "param"}, %[[GS:[a-z0-9]+]]: tensor<f32> {lmc.name = "loss_scaler.scale", lmc.role = "state"}
// CHECK: call @forward_grad(%{{.*}}, %{{.*}}, %[[GS]])

// CHECK-LABEL: func.func @apply_step(
// CHECK-SAME: %[[P:[a-z0-9]+]]: tensor<4xf32> {lmc.name = "w", lmc.role = "param"}
// CHECK-SAME: %[[S:[a-z0-9]+]]: tensor<f32> {lmc.name = "loss_scaler.scale", lmc.role = "state"}
// CHECK-SAME: %[[T:[a-z0-9]+]]: tensor<f32> {lmc.name = "loss_scaler.growth_tracker", lmc.role = "state"}
// CHECK-SAME: %[[G:[a-z0-9]+]]: tensor<4xf32> {lmc.name = "w", lmc.role = "grad"}
// CHECK: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[INV:.*]] = lmc.div %[[ONE]], %[[S]]
// CHECK: %[[INVB:.*]] = lmc.broadcast_in_dim %[[INV]]
// CHECK: %[[UNSCALED:.*]] = lmc.mul %[[G]], %[[INVB]]
// CHECK: lmc.mul %[[UNSCALED]], %[[UNSCALED]]
// CHECK: %[[SUMSQ:.*]] = lmc.add %{{.*}}, %{{.*}} : tensor<f32>
// CHECK-NEXT: %[[NORM:.*]] = lmc.sqrt %[[SUMSQ]] : tensor<f32>
// CHECK: %[[NEW:.*]] = lmc.sub %[[P]], %{{.*}}
// CHECK: %[[INF:.*]] = arith.constant dense<0x7F800000> : tensor<f32>
// CHECK: %[[FINITE:.*]] = lmc.cmp lt, %[[NORM]], %[[INF]]
// CHECK: %[[FINITEB:.*]] = lmc.broadcast_in_dim %[[FINITE]], dims = [] : tensor<i1> -> tensor<4xi1>
// CHECK: %[[KEPT:.*]] = lmc.select %[[FINITEB]], %[[NEW]], %[[P]]
// CHECK: %[[CLEAN:.*]] = lmc.add %[[T]], %{{.*}}
// CHECK: %[[INTERVAL:.*]] = arith.constant dense<5.000000e+00> : tensor<f32>
// CHECK: %[[GROW:.*]] = lmc.cmp ge, %[[CLEAN]], %[[INTERVAL]]
// CHECK: %[[TWO:.*]] = arith.constant dense<2.000000e+00> : tensor<f32>
// CHECK: %[[DOUBLED:.*]] = lmc.mul %[[S]], %[[TWO]]
// CHECK: %[[GROWN:.*]] = lmc.select %[[GROW]], %[[DOUBLED]], %[[S]]
// CHECK: %[[HALF:.*]] = arith.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[HALVED:.*]] = lmc.mul %[[S]], %[[HALF]]
// CHECK: %[[NEWSCALE:.*]] = lmc.select %[[FINITE]], %[[GROWN]], %[[HALVED]]
// CHECK: %[[TRACKED:.*]] = lmc.select %[[GROW]], %{{.*}}, %[[CLEAN]]
// CHECK: %[[NEWTRACKER:.*]] = lmc.select %[[FINITE]], %[[TRACKED]], %{{.*}}
// CHECK: return %[[KEPT]], %[[NEWSCALE]], %[[NEWTRACKER]], %[[NORM]]

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<f32> {lmc.init = dense<6.553600e+04> : tensor<f32>, lmc.name = "loss_scaler.scale", lmc.role = "state"}
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<f32> {lmc.name = "loss_scaler.growth_tracker", lmc.role = "state"}
