// RUN: lmc-opt %s -lmc-mixed-precision=precision=bf16 | FileCheck %s --check-prefix=BF16
// RUN: lmc-opt %s -lmc-mixed-precision=precision=f16 | FileCheck %s --check-prefix=F16
// RUN: lmc-opt %s -lmc-mixed-precision="precision=bf16 keep-f32=fc2\..*" | FileCheck %s --check-prefix=KEEP-PARAM
// RUN: lmc-opt %s -lmc-mixed-precision="precision=bf16 keep-f32=scores" | FileCheck %s --check-prefix=KEEP-OP
// RUN: lmc-opt %s -lmc-mixed-precision=precision=f32 | FileCheck %s --check-prefix=F32
// RUN: lmc-opt %s | FileCheck %s --check-prefix=F32

// The module records the precision for the descriptor (f32: nothing).
// BF16: module attributes {lmc.precision = "bf16"}
// F16: module attributes {lmc.precision = "f16"}
// F32-NOT: lmc.precision

// An MLP train step after the optimizer phase (forward and backward
// products; the update reads the f32 master weights).
// BF16-LABEL: func.func @mlp_step(
// BF16-SAME: %[[W1:[a-z0-9]+]]: tensor<4x3xf32> {lmc.name = "fc1.weight"
// BF16-SAME: %[[W2:[a-z0-9]+]]: tensor<3x2xf32> {lmc.name = "fc2.weight"
// BF16-SAME: %[[X:[a-z0-9]+]]: tensor<8x4xf32>
// Block arguments are converted once, at the top, and reused.
// BF16-DAG: %[[W1L:.*]] = lmc.convert %[[W1]] : tensor<4x3xf32> -> tensor<4x3xbf16>
// BF16-DAG: %[[W2L:.*]] = lmc.convert %[[W2]] : tensor<3x2xf32> -> tensor<3x2xbf16>
// BF16-DAG: %[[XL:.*]] = lmc.convert %[[X]] : tensor<8x4xf32> -> tensor<8x4xbf16>
// BF16: %[[H:.*]] = lmc.matmul %[[XL]], %[[W1L]] : tensor<8x4xbf16>, tensor<4x3xbf16> -> tensor<8x3xf32>
// BF16: %[[A:.*]] = lmc.relu %[[H]] : tensor<8x3xf32>
// One conversion right after the activation, used by the forward product
// and the weight gradient: no f32 -> bf16 -> f32 ping-pong, no second cast.
// BF16-NEXT: %[[AL:.*]] = lmc.convert %[[A]] : tensor<8x3xf32> -> tensor<8x3xbf16>
// BF16-NEXT: %[[Y:.*]] = lmc.matmul %[[AL]], %[[W2L]] : tensor<8x3xbf16>, tensor<3x2xbf16> -> tensor<8x2xf32>
// Softmax cross-entropy and its gradient stay f32.
// BF16: %[[DY:.*]] = lmc.softmax_cross_entropy_grad %[[Y]], %{{.*}}, %{{.*}} : tensor<8x2xf32>
// BF16-NEXT: %[[DYL:.*]] = lmc.convert %[[DY]] : tensor<8x2xf32> -> tensor<8x2xbf16>
// BF16-NEXT: lmc.matmul %[[DYL]], %[[W2L]] {transpose_rhs} : tensor<8x2xbf16>, tensor<3x2xbf16> -> tensor<8x3xf32>
// BF16-NEXT: %[[DW2:.*]] = lmc.matmul %[[AL]], %[[DYL]] {transpose_lhs} : tensor<8x3xbf16>, tensor<8x2xbf16> -> tensor<3x2xf32>
// BF16: lmc.matmul %[[XL]], %{{.*}} {transpose_lhs} : tensor<8x4xbf16>, tensor<8x3xbf16> -> tensor<4x3xf32>
// The SGD update stays f32 on the master weights.
// BF16: %[[STEP:.*]] = lmc.mul %{{.*}}, %[[DW2]] : tensor<3x2xf32>
// BF16: lmc.sub %[[W2]], %[[STEP]] : tensor<3x2xf32>
// BF16-NOT: bf16

// F16-LABEL: func.func @mlp_step(
// F16: lmc.matmul %{{.*}}, %{{.*}} : tensor<8x4xf16>, tensor<4x3xf16> -> tensor<8x3xf32>

// keep-f32 on a parameter name: every product reading fc2.weight stays f32
// (the forward product and the input gradient), the others go bf16.
// KEEP-PARAM-LABEL: func.func @mlp_step(
// KEEP-PARAM: lmc.matmul %{{.*}}, %{{.*}} : tensor<8x4xbf16>, tensor<4x3xbf16> -> tensor<8x3xf32>
// KEEP-PARAM: lmc.matmul %{{.*}}, %arg1 : tensor<8x3xf32>, tensor<3x2xf32> -> tensor<8x2xf32>
// KEEP-PARAM: lmc.matmul %{{.*}}, %arg1 {transpose_rhs} : tensor<8x2xf32>, tensor<3x2xf32> -> tensor<8x3xf32>
// KEEP-PARAM: lmc.matmul %{{.*}}, %{{.*}} {transpose_lhs} : tensor<8x3xbf16>, tensor<8x2xbf16> -> tensor<3x2xf32>

// F32-LABEL: func.func @mlp_step(
// F32-NOT: lmc.convert
// F32-NOT: bf16
// F32-NOT: f16
func.func @mlp_step(%w1: tensor<4x3xf32> {lmc.name = "fc1.weight", lmc.role = "param"},
                    %w2: tensor<3x2xf32> {lmc.name = "fc2.weight", lmc.role = "param"},
                    %x: tensor<8x4xf32> {lmc.name = "x", lmc.role = "input"},
                    %labels: tensor<8xi64> {lmc.name = "labels", lmc.role = "input"},
                    %lr: tensor<3x2xf32>)
    -> (tensor<3x2xf32>, tensor<4x3xf32>, tensor<f32>) {
  %zero = arith.constant dense<0.0> : tensor<8x3xf32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %h = lmc.matmul %x, %w1 : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  %a = lmc.relu %h : tensor<8x3xf32>
  %y = lmc.matmul %a, %w2 : tensor<8x3xf32>, tensor<3x2xf32> -> tensor<8x2xf32>
  %loss = lmc.softmax_cross_entropy %y, %labels : tensor<8x2xf32>, tensor<8xi64> -> tensor<f32>
  %dy = lmc.softmax_cross_entropy_grad %y, %labels, %one : tensor<8x2xf32>, tensor<8xi64>, tensor<f32>
  %da = lmc.matmul %dy, %w2 {transpose_rhs} : tensor<8x2xf32>, tensor<3x2xf32> -> tensor<8x3xf32>
  %dw2 = lmc.matmul %a, %dy {transpose_lhs} : tensor<8x3xf32>, tensor<8x2xf32> -> tensor<3x2xf32>
  %pos = lmc.cmp gt, %h, %zero : tensor<8x3xf32> -> tensor<8x3xi1>
  %dh = lmc.select %pos, %da, %zero : tensor<8x3xi1>, tensor<8x3xf32>
  %dw1 = lmc.matmul %x, %dh {transpose_lhs} : tensor<8x4xf32>, tensor<8x3xf32> -> tensor<4x3xf32>
  %step = lmc.mul %lr, %dw2 : tensor<3x2xf32>
  %new = lmc.sub %w2, %step : tensor<3x2xf32>
  return %new, %dw1, %loss : tensor<3x2xf32>, tensor<4x3xf32>, tensor<f32>
}

// Attention scores and the weighted sum: the batched products go bf16, the
// softmax between them stays f32; keep-f32 on an op name (the ONNX node
// "scores", a NameLoc) keeps that product f32.
// BF16-LABEL: func.func @attention(
// BF16: %[[S:.*]] = lmc.matmul %{{.*}}, %{{.*}} {transpose_rhs} : tensor<2x4x8xbf16>, tensor<2x4x8xbf16> -> tensor<2x4x4xf32>
// BF16: %[[P:.*]] = lmc.softmax %[[S]], axis = 2 : tensor<2x4x4xf32>
// BF16: %[[PL:.*]] = lmc.convert %[[P]] : tensor<2x4x4xf32> -> tensor<2x4x4xbf16>
// BF16: lmc.matmul %[[PL]], %{{.*}} : tensor<2x4x4xbf16>, tensor<2x4x8xbf16> -> tensor<2x4x8xf32>
// KEEP-OP-LABEL: func.func @attention(
// KEEP-OP: lmc.matmul %arg0, %arg1 {transpose_rhs} : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x4xf32>
// KEEP-OP: lmc.matmul %{{.*}}, %{{.*}} : tensor<2x4x4xbf16>, tensor<2x4x8xbf16> -> tensor<2x4x8xf32>
func.func @attention(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %s = lmc.matmul %q, %k {transpose_rhs} : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x4xf32> loc("scores"("model.onnx":1:1))
  %p = lmc.softmax %s, axis = 2 : tensor<2x4x4xf32>
  %o = lmc.matmul %p, %v : tensor<2x4x4xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// A convolution and its two adjoints take bf16 operands with f32 results;
// the weight is converted once for the forward and the input-gradient
// product, the input once for the forward and the weight-gradient product.
// BF16-LABEL: func.func @conv_step(
// BF16-SAME: %[[X:.*]]: tensor<2x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>, %[[G:.*]]: tensor<2x4x8x8xf32>
// BF16-DAG: %[[XL:.*]] = lmc.convert %[[X]] : tensor<2x3x8x8xf32> -> tensor<2x3x8x8xbf16>
// BF16-DAG: %[[WL:.*]] = lmc.convert %[[W]] : tensor<4x3x3x3xf32> -> tensor<4x3x3x3xbf16>
// BF16-DAG: %[[GL:.*]] = lmc.convert %[[G]] : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xbf16>
// BF16: lmc.conv %[[XL]], %[[WL]], {{.*}} : tensor<2x3x8x8xbf16>, tensor<4x3x3x3xbf16> -> tensor<2x4x8x8xf32>
// BF16: lmc.conv_input_grad %[[GL]], %[[WL]], {{.*}} : tensor<2x4x8x8xbf16>, tensor<4x3x3x3xbf16> -> tensor<2x3x8x8xf32>
// BF16: lmc.conv_weight_grad %[[XL]], %[[GL]], {{.*}} : tensor<2x3x8x8xbf16>, tensor<2x4x8x8xbf16> -> tensor<4x3x3x3xf32>
// BF16-NOT: lmc.convert
// F32-LABEL: func.func @conv_step(
// F32-NOT: lmc.convert
func.func @conv_step(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %g: tensor<2x4x8x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) {
  %y = lmc.conv %x, %w, strides = [1, 1], dilations = [1, 1], pad_low = [1, 1], pad_high = [1, 1], groups = 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x8x8xf32>
  %dx = lmc.conv_input_grad %g, %w, strides = [1, 1], dilations = [1, 1], pad_low = [1, 1], pad_high = [1, 1], groups = 1 : tensor<2x4x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x3x8x8xf32>
  %dw = lmc.conv_weight_grad %x, %g, strides = [1, 1], dilations = [1, 1], pad_low = [1, 1], pad_high = [1, 1], groups = 1 : tensor<2x3x8x8xf32>, tensor<2x4x8x8xf32> -> tensor<4x3x3x3xf32>
  return %y, %dx, %dw : tensor<2x4x8x8xf32>, tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>
}
