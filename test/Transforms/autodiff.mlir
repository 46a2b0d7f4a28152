// RUN: lmc-opt %s -split-input-file -lmc-autodiff | FileCheck %s

// y = tanh(x * w); loss = sum(y * y). The gradient is built in reverse:
// d(y*y) = g*y + g*y (fan-in summed), then tanh's VJP, then mul's.
// CHECK-LABEL: func.func @forward_grad
// CHECK-SAME: (%[[W:[a-z0-9]+]]: tensor<4xf32> {lmc.param = "w"}, %[[X:[a-z0-9]+]]: tensor<4xf32> {lmc.input = "x"})
// CHECK-SAME: -> (tensor<f32> {lmc.output = "loss"}, tensor<4xf32> {lmc.param = "w"})
// CHECK: %[[XW:.*]] = lmc.mul %[[X]], %[[W]]
// CHECK: %[[Y:.*]] = lmc.tanh %[[XW]]
// CHECK: %[[YY:.*]] = lmc.mul %[[Y]], %[[Y]]
// CHECK: %[[LOSS:.*]] = lmc.reduce_sum %[[YY]], axes = [0]
// CHECK: %[[SEED:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[G0:.*]] = lmc.reshape %[[SEED]] : tensor<f32> -> tensor<1xf32>
// CHECK: %[[G:.*]] = lmc.broadcast_in_dim %[[G0]], dims = [0] : tensor<1xf32> -> tensor<4xf32>
// CHECK: %[[GA:.*]] = lmc.mul %[[G]], %[[Y]]
// CHECK: %[[GB:.*]] = lmc.mul %[[G]], %[[Y]]
// CHECK: %[[GY:.*]] = lmc.add %[[GA]], %[[GB]]
// CHECK: lmc.mul %[[Y]], %[[Y]]
// CHECK: %[[DT:.*]] = lmc.mul %[[GY]], %{{.*}}
// CHECK: %[[DW:.*]] = lmc.mul %[[DT]], %[[X]]
// CHECK: return %[[LOSS]], %[[DW]] : tensor<f32>, tensor<4xf32>
func.func @forward(%w: tensor<4xf32> {lmc.param = "w"}, %x: tensor<4xf32> {lmc.input = "x"}) -> (tensor<f32> {lmc.output = "loss"}) {
  %xw = lmc.mul %x, %w : tensor<4xf32>
  %y = lmc.tanh %xw : tensor<4xf32>
  %yy = lmc.mul %y, %y : tensor<4xf32>
  %l = lmc.reduce_sum %yy, axes = [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A parameter that reaches the loss only through a comparison (a mask)
// becomes a constant of its initial value and leaves both signatures; an
// unused one just leaves.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<2xf32> {lmc.init = dense<5.000000e-01> : tensor<2xf32>, lmc.param = "w"}, %{{[a-z0-9]+}}: tensor<2xf32> {lmc.input = "x"})
// CHECK: %[[MASK:.*]] = arith.constant dense<[1.000000e+00, 0.000000e+00]> : tensor<2xf32>
// CHECK: lmc.cmp gt, %[[MASK]]
// CHECK-LABEL: func.func @forward_grad(
// CHECK-SAME: -> (tensor<f32> {lmc.output = "loss"}, tensor<2xf32> {lmc.param = "w"})
func.func @forward(%w: tensor<2xf32> {lmc.param = "w", lmc.init = dense<0.5> : tensor<2xf32>},
                   %mask: tensor<2xf32> {lmc.param = "mask", lmc.init = dense<[1.0, 0.0]> : tensor<2xf32>},
                   %unused: tensor<3xf32> {lmc.param = "unused"},
                   %x: tensor<2xf32> {lmc.input = "x"}) -> (tensor<f32> {lmc.output = "loss"}) {
  %zero = arith.constant dense<0.0> : tensor<2xf32>
  %keep = lmc.cmp gt, %mask, %zero : tensor<2xf32> -> tensor<2xi1>
  %m = lmc.select %keep, %x, %zero : tensor<2xi1>, tensor<2xf32>
  %p = lmc.mul %m, %w : tensor<2xf32>
  %l = lmc.reduce_sum %p, axes = [0] : tensor<2xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// lmc.attention's VJP is one lmc.attention_grad from its operands, results
// and the cotangent of out; the exponentials the forward keeps (a third
// result) are passed along, read instead of recomputed.
// CHECK-LABEL: func.func @forward_grad
// CHECK: %[[O:.*]], %[[S:.*]], %[[E:.*]] = lmc.attention %[[Q:.*]], %[[KT:.*]], %[[V:.*]], %[[M:.*]] {scale = 5.000000e-01 : f32}
// CHECK: %[[DQ:.*]], %{{.*}}, %{{.*}} = lmc.attention_grad %[[Q]], %[[KT]], %[[V]], %[[M]], %[[O]], %[[S]], %{{.*}} exponentials %[[E]] {scale = 5.000000e-01 : f32}
// CHECK: return %{{.*}}, %[[DQ]]
func.func @forward(%q: tensor<1x4x2xf32> {lmc.param = "q"}, %kt: tensor<1x2x4xf32> {lmc.input = "kt"},
                   %v: tensor<1x4x2xf32> {lmc.input = "v"}, %m: tensor<1x4x4xi1> {lmc.input = "m"}) -> (tensor<f32> {lmc.output = "loss"}) {
  %o, %s, %e = lmc.attention %q, %kt, %v, %m {scale = 0.5 : f32} : tensor<1x4x2xf32>, tensor<1x2x4xf32>, tensor<1x4x2xf32>, tensor<1x4x4xi1> -> tensor<1x4x2xf32>, tensor<1x4x2xf32>, tensor<1x4x4xf32>
  %l = lmc.reduce_sum %o, axes = [0, 1, 2] : tensor<1x4x2xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// lmc.layer_norm's VJP is one lmc.layer_norm_grad from its input, scale,
// row statistics and the cotangent of y; the bias's gradient is its third
// result.
// CHECK-LABEL: func.func @forward_grad
// CHECK: %[[Y:.*]], %[[S:.*]] = lmc.layer_norm %[[X:.*]], %[[G:.*]], %[[B:.*]] {epsilon
// CHECK: %{{.*}}, %[[DG:.*]], %[[DB:.*]] = lmc.layer_norm_grad %[[X]], %[[G]], %[[S]], %{{.*}} :
// CHECK: return %{{.*}}, %[[DG]], %[[DB]]
func.func @forward(%x: tensor<3x8xf32> {lmc.input = "x"}, %g: tensor<8xf32> {lmc.param = "g"},
                   %b: tensor<8xf32> {lmc.param = "b"}) -> (tensor<f32> {lmc.output = "loss"}) {
  %y, %s = lmc.layer_norm %x, %g, %b {epsilon = 1.0e-05 : f32} : tensor<3x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<3x8xf32>, tensor<3x2xf32>
  %yy = lmc.mul %y, %y : tensor<3x8xf32>
  %l = lmc.reduce_sum %yy, axes = [0, 1] : tensor<3x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}
