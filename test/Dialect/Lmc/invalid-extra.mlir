// Every verifier diagnostic of the conversion, concat, slicing, max/min
// reduction and gather ops.
// RUN: lmc-opt %s -split-input-file -verify-diagnostics

func.func @convert_shape(%a: tensor<2xi64>) -> tensor<3xf32> {
  // expected-error @+1 {{expected the operand and result shapes to match}}
  %0 = lmc.convert %a : tensor<2xi64> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @convert_bool(%a: tensor<2xf32>) -> tensor<2xi1> {
  // expected-error @+1 {{expected a float or wider integer result element type}}
  %0 = lmc.convert %a : tensor<2xf32> -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

func.func @concat_axis(%a: tensor<2x3xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{expected axis in [0, 2)}}
  %0 = lmc.concat axis = 2, %a, %a : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @concat_empty() -> tensor<2x6xf32> {
  // expected-error @+1 {{expected at least one input}}
  %0 = "lmc.concat"() {axis = 1 : i64} : () -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{expected inputs of the result's rank and element type}}
  %0 = lmc.concat axis = 1, %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @concat_dim(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{expected input dimension 0 to match the result}}
  %0 = lmc.concat axis = 1, %a, %b : tensor<2x3xf32>, tensor<3x3xf32> -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @concat_sum(%a: tensor<2x3xf32>) -> tensor<2x7xf32> {
  // expected-error @+1 {{expected the inputs' sizes along the axis to sum to 7, got 6}}
  %0 = lmc.concat axis = 1, %a, %a : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x7xf32>
  return %0 : tensor<2x7xf32>
}

// -----

func.func @slice_rank(%a: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{expected start, stride and both tensors of the same rank}}
  %0 = lmc.slice %a, start = [0], stride = [1, 1] : tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @slice_element(%a: tensor<4x8xf32>) -> tensor<4x4xf64> {
  // expected-error @+1 {{expected matching element types}}
  %0 = lmc.slice %a, start = [0, 0], stride = [1, 1] : tensor<4x8xf32> -> tensor<4x4xf64>
  return %0 : tensor<4x4xf64>
}

// -----

func.func @slice_stride(%a: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{expected non-zero strides}}
  %0 = lmc.slice %a, start = [0, 0], stride = [1, 0] : tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @slice_bounds(%a: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{window along dimension 1 (start 2, stride 2, 4 elements) exceeds size 8}}
  %0 = lmc.slice %a, start = [0, 2], stride = [1, 2] : tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @slice_grad_bounds(%a: tensor<4x4xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{window along dimension 1 (start 2, stride -1, 4 elements) exceeds size 8}}
  %0 = lmc.slice_grad %a, start = [0, 2], stride = [1, -1] : tensor<4x4xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @reduce_max_axes(%a: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{expected axes in [0, operand rank)}}
  %0 = lmc.reduce_max %a, axes = [2] : tensor<2x3xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @reduce_min_sorted(%a: tensor<2x3xf32>) -> tensor<f32> {
  // expected-error @+1 {{expected sorted, unique axes}}
  %0 = lmc.reduce_min %a, axes = [1, 0] : tensor<2x3xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @reduce_max_result(%a: tensor<2x3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{expected result type 'tensor<2xf32>'}}
  %0 = lmc.reduce_max %a, axes = [1] : tensor<2x3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @gather_axis(%t: tensor<5x3xf32>, %i: tensor<4xi64>) -> tensor<4x3xf32> {
  // expected-error @+1 {{expected axis in [0, 2)}}
  %0 = lmc.gather %t, %i, axis = 2 : tensor<5x3xf32>, tensor<4xi64> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @gather_padding(%t: tensor<5x3xf32>, %i: tensor<4xi64>) -> tensor<4x3xf32> {
  // expected-error @+1 {{expected padding_index in [0, 5)}}
  %0 = lmc.gather %t, %i, axis = 0 padding_index = 5 : tensor<5x3xf32>, tensor<4xi64> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @gather_element(%t: tensor<5x3xf32>, %i: tensor<4xi64>) -> tensor<4x3xf64> {
  // expected-error @+1 {{expected matching element types}}
  %0 = lmc.gather %t, %i, axis = 0 : tensor<5x3xf32>, tensor<4xi64> -> tensor<4x3xf64>
  return %0 : tensor<4x3xf64>
}

// -----

func.func @gather_shape(%t: tensor<5x3xf32>, %i: tensor<4xi64>) -> tensor<3x4xf32> {
  // expected-error @+1 {{expected result of type 'tensor<4x3xf32>'}}
  %0 = lmc.gather %t, %i, axis = 0 : tensor<5x3xf32>, tensor<4xi64> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @scatter_add_shape(%u: tensor<4x2xf32>, %i: tensor<4xi64>) -> tensor<5x3xf32> {
  // expected-error @+1 {{expected updates of type 'tensor<4x3xf32>'}}
  %0 = lmc.scatter_add %u, %i, axis = 0 : tensor<4x2xf32>, tensor<4xi64> -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

func.func @mode_select_types(%a: tensor<3xf32>, %b: tensor<3xf64>) -> tensor<3xf32> {
  // expected-error @+1 {{all of {train, eval, result} have same type}}
  %0 = "lmc.mode_select"(%a, %b) : (tensor<3xf32>, tensor<3xf64>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @random_uniform_key(%key: tensor<2xi64>) -> tensor<3xf32> {
  // expected-error @+1 {{operand #0 must be 0D tensor of 64-bit signless integer values}}
  %0 = lmc.random_uniform %key, stream = 0 : tensor<2xi64> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @random_uniform_type(%key: tensor<i64>) -> tensor<3xbf16> {
  // expected-error @+1 {{result #0 must be ranked tensor of 32-bit float or 64-bit float values}}
  %0 = lmc.random_uniform %key, stream = 0 : tensor<i64> -> tensor<3xbf16>
  return %0 : tensor<3xbf16>
}

// -----

func.func @cumsum_axis(%x: tensor<2x4xi64>) -> tensor<2x4xi64> {
  // expected-error @+1 {{expected axis in [0, 2)}}
  %0 = lmc.cumsum %x, axis = 2 : tensor<2x4xi64>
  return %0 : tensor<2x4xi64>
}

// -----

// Float running sums are matmuls by a triangle (differentiable).
func.func @cumsum_float(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = lmc.cumsum %x, axis = 0 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Integer division takes i32 and i64 (index arithmetic), not booleans.
func.func @div_bool(%x: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{operand #0 must be ranked tensor of floating-point or 32-bit signless integer or 64-bit signless integer values}}
  %0 = lmc.div %x, %x : tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @add_i8(%x: tensor<4xi8>) -> tensor<4xi8> {
  // expected-error @+1 {{operand #0 must be ranked tensor of floating-point or 32-bit signless integer or 64-bit signless integer values}}
  %0 = lmc.add %x, %x : tensor<4xi8>
  return %0 : tensor<4xi8>
}
