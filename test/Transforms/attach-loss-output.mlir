// RUN: lmc-opt %s -lmc-attach-loss=loss=output:loss | FileCheck %s

// A model that computes its own loss: that output moves first, as a scalar.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: -> (tensor<f32> {lmc.output = "loss"}, tensor<4xf32> {lmc.output = "y"})
// CHECK: %[[L:.*]] = lmc.reshape %{{.*}} : tensor<1xf32> -> tensor<f32>
// CHECK: return %[[L]], %{{.*}} : tensor<f32>, tensor<4xf32>
func.func @forward(%x: tensor<4xf32> {lmc.input = "x"}) -> (tensor<4xf32> {lmc.output = "y"}, tensor<1xf32> {lmc.output = "loss"}) {
  %y = lmc.exp %x : tensor<4xf32>
  %s = lmc.reduce_sum %y, axes = [0] {keep_dims} : tensor<4xf32> -> tensor<1xf32>
  return %y, %s : tensor<4xf32>, tensor<1xf32>
}
