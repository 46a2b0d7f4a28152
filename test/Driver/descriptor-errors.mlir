// The runtime exchanges f32/f64/i32/i64 tensors only: anything else in the
// entry points' signature is a compile-time error.
// RUN: not lmc %s -o %t 2>&1 | FileCheck %s
// CHECK: error: the runtime cannot exchange tensors of type 'tensor<4x3xf16>'
func.func @forward(%w: tensor<3xf32> {lmc.param = "w", lmc.init = dense<0.5> : tensor<3xf32>},
                   %x: tensor<4x3xf16> {lmc.input = "x"}) -> (tensor<4x3xf32> {lmc.output = "y"}) {
  %y = lmc.broadcast_in_dim %w, dims = [1] : tensor<3xf32> -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}
