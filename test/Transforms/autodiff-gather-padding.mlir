// RUN: lmc-opt %s -lmc-autodiff | FileCheck %s

// nn.Embedding(padding_idx=1): the gathered rows' gradient is scattered
// into the table and multiplied by a mask that is 0 on row 1, so the
// padding row is never trained (PyTorch's semantics).
// CHECK-LABEL: func.func @forward_grad
// CHECK: %[[G:.*]] = lmc.gather %{{.*}}, %{{.*}}, axis = 0 padding_index = 1
// CHECK: %[[S:.*]] = lmc.scatter_add %{{.*}}, %{{.*}}, axis = 0 : tensor<2x3xf32>, tensor<2xi64> -> tensor<4x3xf32>
// CHECK: %[[MASK:.*]] = arith.constant dense<[1.000000e+00, 0.000000e+00, 1.000000e+00, 1.000000e+00]> : tensor<4xf32>
// CHECK: %[[B:.*]] = lmc.broadcast_in_dim %[[MASK]], dims = [0] : tensor<4xf32> -> tensor<4x3xf32>
// CHECK: %[[DW:.*]] = lmc.mul %[[S]], %[[B]] : tensor<4x3xf32>
// CHECK: return %{{.*}}, %[[DW]]
func.func @forward(%w: tensor<4x3xf32> {lmc.param = "w"}, %ids: tensor<2xi64> {lmc.input = "ids"}) -> (tensor<f32> {lmc.output = "loss"}) {
  %e = lmc.gather %w, %ids, axis = 0 padding_index = 1 : tensor<4x3xf32>, tensor<2xi64> -> tensor<2x3xf32>
  %l = lmc.reduce_sum %e, axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
