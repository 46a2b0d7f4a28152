// Every verifier diagnostic of the lmc dialect.
// RUN: lmc-opt %s -split-input-file -verify-diagnostics

func.func @cmp_predicate(%a: tensor<2xf32>) -> tensor<2xi1> {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'predicate' [eq, ne, lt, le, gt, ge]}}
  %0 = lmc.cmp gg, %a, %a : tensor<2xf32> -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

func.func @cmp_shape(%a: tensor<2xf32>) -> tensor<3xi1> {
  // expected-error @+1 {{expected the result to have the operands' shape}}
  %0 = lmc.cmp eq, %a, %a : tensor<2xf32> -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

func.func @select_shape(%c: tensor<3xi1>, %a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{expected the condition to have the result's shape}}
  %0 = lmc.select %c, %a, %a : tensor<3xi1>, tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @broadcast_rank(%a: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{expected one entry in dims per operand dimension}}
  %0 = lmc.broadcast_in_dim %a, dims = [0, 1] : tensor<3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @broadcast_range(%a: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{expected dims entries in [0, result rank)}}
  %0 = lmc.broadcast_in_dim %a, dims = [2] : tensor<3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @broadcast_order(%a: tensor<1x3xf32>) -> tensor<3x3xf32> {
  // expected-error @+1 {{expected strictly increasing dims}}
  %0 = lmc.broadcast_in_dim %a, dims = [1, 0] : tensor<1x3xf32> -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

func.func @broadcast_size(%a: tensor<3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{operand dimension 0 of size 3 cannot broadcast to result dimension 1 of size 4}}
  %0 = lmc.broadcast_in_dim %a, dims = [1] : tensor<3xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @broadcast_type(%a: tensor<3xf32>) -> tensor<2x3xf64> {
  // expected-error @+1 {{expected operand and result element types to match}}
  %0 = lmc.broadcast_in_dim %a, dims = [1] : tensor<3xf32> -> tensor<2x3xf64>
  return %0 : tensor<2x3xf64>
}

// -----

func.func @reshape_count(%a: tensor<2x3xf32>) -> tensor<7xf32> {
  // expected-error @+1 {{expected the same number of elements, got 6 and 7}}
  %0 = lmc.reshape %a : tensor<2x3xf32> -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

func.func @reshape_type(%a: tensor<2x3xf32>) -> tensor<6xf64> {
  // expected-error @+1 {{expected operand and result element types to match}}
  %0 = lmc.reshape %a : tensor<2x3xf32> -> tensor<6xf64>
  return %0 : tensor<6xf64>
}

// -----

func.func @reshape_dynamic(%a: tensor<?x3xf32>) -> tensor<6xf32> {
  // expected-error @+1 {{expected static shapes}}
  %0 = lmc.reshape %a : tensor<?x3xf32> -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

func.func @transpose_rank(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{expected perm, operand and result of the same rank}}
  %0 = lmc.transpose %a, perm = [1] : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @transpose_perm(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{expected perm to be a permutation}}
  %0 = lmc.transpose %a, perm = [1, 1] : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @transpose_shape(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{expected result dimension 0 to equal operand dimension 1}}
  %0 = lmc.transpose %a, perm = [1, 0] : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @transpose_type(%a: tensor<2x3xf32>) -> tensor<3x2xf64> {
  // expected-error @+1 {{expected operand and result element types to match}}
  %0 = lmc.transpose %a, perm = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf64>
  return %0 : tensor<3x2xf64>
}

// -----

func.func @reduce_axes_range(%a: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{expected axes in [0, operand rank)}}
  %0 = lmc.reduce_sum %a, axes = [2] : tensor<2x3xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @reduce_axes_sorted(%a: tensor<2x3xf32>) -> tensor<f32> {
  // expected-error @+1 {{expected sorted, unique axes}}
  %0 = lmc.reduce_sum %a, axes = [1, 0] : tensor<2x3xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @reduce_result(%a: tensor<2x3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{expected result type 'tensor<2xf32>'}}
  %0 = lmc.reduce_sum %a, axes = [1] : tensor<2x3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @matmul_rank(%a: tensor<2x3xf32>, %b: tensor<2x3x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{expected operands and result of the same rank >= 2}}
  %0 = lmc.matmul %a, %b : tensor<2x3xf32>, tensor<2x3x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @matmul_type(%a: tensor<2x3xf32>, %b: tensor<3x4xf64>) -> tensor<2x4xf32> {
  // expected-error @+1 {{expected matching element types, or bf16/f16 operands with an f32 result}}
  %0 = lmc.matmul %a, %b : tensor<2x3xf32>, tensor<3x4xf64> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Only bf16/f16 operands may widen, and only to f32.
func.func @matmul_widening(%a: tensor<2x3xbf16>, %b: tensor<3x4xbf16>) -> tensor<2x4xf64> {
  // expected-error @+1 {{expected matching element types, or bf16/f16 operands with an f32 result}}
  %0 = lmc.matmul %a, %b : tensor<2x3xbf16>, tensor<3x4xbf16> -> tensor<2x4xf64>
  return %0 : tensor<2x4xf64>
}

// -----

func.func @matmul_batch(%a: tensor<2x2x3xf32>, %b: tensor<3x3x4xf32>) -> tensor<2x2x4xf32> {
  // expected-error @+1 {{expected operands to have the result's batch dimensions}}
  %0 = lmc.matmul %a, %b : tensor<2x2x3xf32>, tensor<3x3x4xf32> -> tensor<2x2x4xf32>
  return %0 : tensor<2x2x4xf32>
}

// -----

func.func @matmul_contraction(%a: tensor<2x3xf32>, %b: tensor<4x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{contraction dimensions differ: 3 vs 4}}
  %0 = lmc.matmul %a, %b : tensor<2x3xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @matmul_result(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{expected result matrix of 2x4}}
  %0 = lmc.matmul %a, %b : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @softmax_axis(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{expected axis in [0, 2)}}
  %0 = lmc.softmax %a, axis = 2 : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @log_softmax_axis(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{expected axis in [0, 2)}}
  %0 = lmc.log_softmax %a, axis = -1 : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @cross_entropy_shapes(%a: tensor<2x3xf32>, %l: tensor<3xi64>) -> tensor<f32> {
  // expected-error @+1 {{expected logits [N, C] and labels [N]}}
  %0 = lmc.softmax_cross_entropy %a, %l : tensor<2x3xf32>, tensor<3xi64> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @cross_entropy_result(%a: tensor<2x3xf32>, %l: tensor<2xi64>) -> tensor<2xf32> {
  // expected-error @+1 {{expected a scalar result of the logits' element type}}
  %0 = lmc.softmax_cross_entropy %a, %l : tensor<2x3xf32>, tensor<2xi64> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @cross_entropy_grad_cotangent(%a: tensor<2x3xf32>, %l: tensor<2xi64>, %g: tensor<f64>) -> tensor<2x3xf32> {
  // expected-error @+1 {{expected a scalar cotangent of the logits' element type}}
  %0 = lmc.softmax_cross_entropy_grad %a, %l, %g : tensor<2x3xf32>, tensor<2xi64>, tensor<f64>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @cross_entropy_grad_shapes(%a: tensor<2x3xf32>, %l: tensor<3xi64>, %g: tensor<f32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{expected logits [N, C] and labels [N]}}
  %0 = lmc.softmax_cross_entropy_grad %a, %l, %g : tensor<2x3xf32>, tensor<3xi64>, tensor<f32>
  return %0 : tensor<2x3xf32>
}
