// RUN: lmc-opt %s -split-input-file -lmc-attach-loss | FileCheck %s --check-prefix=CE
// RUN: lmc-opt %s -split-input-file -lmc-attach-loss=loss=mse | FileCheck %s --check-prefix=MSE
// RUN: lmc-opt %s -split-input-file -lmc-attach-loss=ignore-index=7 | FileCheck %s --check-prefix=IGNORE7

// Cross-entropy over the last axis of [B, T, V] logits: labels are [B, T],
// rows are flattened to [B*T, V]. The loss comes first, the outputs follow.
// CE-LABEL: func.func @forward
// CE-SAME: %[[X:[a-z0-9]+]]: tensor<2x3x5xf32> {lmc.input = "x"}, %[[L:[a-z0-9]+]]: tensor<2x3xi64> {lmc.input = "labels"})
// CE-SAME: -> (tensor<f32> {lmc.output = "loss"}, tensor<2x3x5xf32> {lmc.output = "logits"})
// CE: %[[Y:.*]] = lmc.tanh %[[X]]
// CE: %[[FLAT:.*]] = lmc.reshape %[[Y]] : tensor<2x3x5xf32> -> tensor<6x5xf32>
// CE: %[[FLATL:.*]] = lmc.reshape %[[L]] : tensor<2x3xi64> -> tensor<6xi64>
// Labels equal to -100 (PyTorch's and Hugging Face's ignore_index) are
// not counted; ignore-index chooses another value.
// CE: %[[LOSS:.*]] = lmc.softmax_cross_entropy %[[FLAT]], %[[FLATL]] ignore_index = -100
// CE: return %[[LOSS]], %[[Y]]
// IGNORE7: lmc.softmax_cross_entropy %{{.*}}, %{{.*}} ignore_index = 7 :

// Mean squared error against `targets`, as torch.nn.MSELoss (mean).
// MSE-LABEL: func.func @forward
// MSE-SAME: %[[T:[a-z0-9]+]]: tensor<2x3x5xf32> {lmc.input = "targets"})
// MSE: %[[Y:.*]] = lmc.tanh
// MSE: %[[D:.*]] = lmc.sub %[[Y]], %[[T]]
// MSE: %[[S:.*]] = lmc.mul %[[D]], %[[D]]
// MSE: %[[SUM:.*]] = lmc.reduce_sum %[[S]], axes = [0, 1, 2]
// MSE: %[[INV:.*]] = arith.constant dense<0.0333{{[0-9]*}}> : tensor<f32>
// MSE: %[[LOSS:.*]] = lmc.mul %[[SUM]], %[[INV]]
// MSE: return %[[LOSS]], %[[Y]]
func.func @forward(%x: tensor<2x3x5xf32> {lmc.input = "x"}) -> (tensor<2x3x5xf32> {lmc.output = "logits"}) {
  %y = lmc.tanh %x : tensor<2x3x5xf32>
  return %y : tensor<2x3x5xf32>
}
