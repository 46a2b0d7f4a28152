// Every verifier diagnostic of the convolution and pooling ops.
// RUN: lmc-opt %s -split-input-file -verify-diagnostics

func.func @conv_spatial(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{expected 1 to 3 spatial dimensions, got 0}}
  %0 = lmc.conv %x, %w, strides = [], dilations = [], pad_low = [], pad_high = [], groups = 1 : tensor<2x3xf32>, tensor<4x3xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @conv_attr_count(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32> {
  // expected-error @+1 {{expected strides, dilations, pad_low and pad_high with 2 entries (one per spatial dimension)}}
  %0 = lmc.conv %x, %w, strides = [1], dilations = [1, 1], pad_low = [0, 0], pad_high = [0, 0], groups = 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x6x6xf32>
  return %0 : tensor<2x4x6x6xf32>
}

// -----

func.func @conv_stride(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32> {
  // expected-error @+1 {{expected strides and dilations >= 1}}
  %0 = lmc.conv %x, %w, strides = [0, 1], dilations = [1, 1], pad_low = [0, 0], pad_high = [0, 0], groups = 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x6x6xf32>
  return %0 : tensor<2x4x6x6xf32>
}

// -----

func.func @conv_pad(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32> {
  // expected-error @+1 {{expected non-negative paddings}}
  %0 = lmc.conv %x, %w, strides = [1, 1], dilations = [1, 1], pad_low = [-1, 0], pad_high = [0, 0], groups = 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x6x6xf32>
  return %0 : tensor<2x4x6x6xf32>
}

// -----

func.func @conv_rank(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3xf32>) -> tensor<2x4x6x6xf32> {
  // expected-error @+1 {{expected input, weight and output of equal rank}}
  %0 = lmc.conv %x, %w, strides = [1, 1], dilations = [1, 1], pad_low = [0, 0], pad_high = [0, 0], groups = 1 : tensor<2x3x8x8xf32>, tensor<4x3x3xf32> -> tensor<2x4x6x6xf32>
  return %0 : tensor<2x4x6x6xf32>
}

// -----

func.func @conv_element(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf64>) -> tensor<2x4x6x6xf32> {
  // expected-error @+1 {{expected matching element types}}
  %0 = lmc.conv %x, %w, strides = [1, 1], dilations = [1, 1], pad_low = [0, 0], pad_high = [0, 0], groups = 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf64> -> tensor<2x4x6x6xf32>
  return %0 : tensor<2x4x6x6xf32>
}

// -----

// Only bf16/f16 operands may widen, and only to f32.
func.func @conv_widening(%x: tensor<2x3x8x8xbf16>, %w: tensor<4x3x3x3xbf16>) -> tensor<2x4x6x6xf64> {
  // expected-error @+1 {{expected matching element types, or bf16/f16 operands with an f32 result}}
  %0 = lmc.conv %x, %w, strides = [1, 1], dilations = [1, 1], pad_low = [0, 0], pad_high = [0, 0], groups = 1 : tensor<2x3x8x8xbf16>, tensor<4x3x3x3xbf16> -> tensor<2x4x6x6xf64>
  return %0 : tensor<2x4x6x6xf64>
}

// -----

func.func @conv_groups(%x: tensor<2x3x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<2x4x6x6xf32> {
  // expected-error @+1 {{expected groups >= 1 dividing the input channels (3) and the filters (4)}}
  %0 = lmc.conv %x, %w, strides = [1, 1], dilations = [1, 1], pad_low = [0, 0], pad_high = [0, 0], groups = 3 : tensor<2x3x8x8xf32>, tensor<4x1x3x3xf32> -> tensor<2x4x6x6xf32>
  return %0 : tensor<2x4x6x6xf32>
}

// -----

func.func @conv_weight_channels(%x: tensor<2x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<2x4x6x6xf32> {
  // expected-error @+1 {{expected weight dimension 1 to be 2 (input channels / groups)}}
  %0 = lmc.conv %x, %w, strides = [1, 1], dilations = [1, 1], pad_low = [0, 0], pad_high = [0, 0], groups = 2 : tensor<2x4x8x8xf32>, tensor<4x4x3x3xf32> -> tensor<2x4x6x6xf32>
  return %0 : tensor<2x4x6x6xf32>
}

// -----

func.func @conv_fit(%x: tensor<2x3x2x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x1x6xf32> {
  // expected-error @+1 {{window of extent 3 does not fit padded size 2 along spatial dimension 0}}
  %0 = lmc.conv %x, %w, strides = [1, 1], dilations = [1, 1], pad_low = [0, 0], pad_high = [0, 0], groups = 1 : tensor<2x3x2x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x1x6xf32>
  return %0 : tensor<2x4x1x6xf32>
}

// -----

func.func @conv_shape(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32> {
  // expected-error @+1 {{expected convolution output shape 'tensor<2x4x3x3xf32>'}}
  %0 = lmc.conv %x, %w, strides = [2, 2], dilations = [1, 1], pad_low = [0, 0], pad_high = [0, 0], groups = 1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x6x6xf32>
  return %0 : tensor<2x4x6x6xf32>
}

// -----

func.func @conv_input_grad_shape(%g: tensor<2x4x6x6xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x3x9x8xf32> {
  // expected-error @+1 {{expected convolution output shape 'tensor<2x4x7x6xf32>'}}
  %0 = lmc.conv_input_grad %g, %w, strides = [1, 1], dilations = [1, 1], pad_low = [0, 0], pad_high = [0, 0], groups = 1 : tensor<2x4x6x6xf32>, tensor<4x3x3x3xf32> -> tensor<2x3x9x8xf32>
  return %0 : tensor<2x3x9x8xf32>
}

// -----

func.func @conv_weight_grad_shape(%x: tensor<2x3x8x8xf32>, %g: tensor<2x4x6x6xf32>) -> tensor<4x3x3x3xf32> {
  // expected-error @+1 {{expected convolution output shape 'tensor<2x4x8x8xf32>'}}
  %0 = lmc.conv_weight_grad %x, %g, strides = [1, 1], dilations = [1, 1], pad_low = [1, 1], pad_high = [1, 1], groups = 1 : tensor<2x3x8x8xf32>, tensor<2x4x6x6xf32> -> tensor<4x3x3x3xf32>
  return %0 : tensor<4x3x3x3xf32>
}

// -----

func.func @max_pool_kernel(%x: tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32> {
  // expected-error @+1 {{expected a kernel with 2 entries (one per spatial dimension)}}
  %0 = lmc.max_pool %x, kernel = [2], strides = [2, 2], dilations = [1, 1], pad_low = [0, 0], pad_high = [0, 0] : tensor<2x3x8x8xf32> -> tensor<2x3x4x4xf32>
  return %0 : tensor<2x3x4x4xf32>
}

// -----

func.func @max_pool_pad(%x: tensor<2x3x8x8xf32>) -> tensor<2x3x5x5xf32> {
  // expected-error @+1 {{expected paddings smaller than the window extent, so that every window holds an input element}}
  %0 = lmc.max_pool %x, kernel = [2, 2], strides = [2, 2], dilations = [1, 1], pad_low = [2, 2], pad_high = [0, 0] : tensor<2x3x8x8xf32> -> tensor<2x3x5x5xf32>
  return %0 : tensor<2x3x5x5xf32>
}

// -----

func.func @max_pool_shape(%x: tensor<2x3x8x8xf32>) -> tensor<2x3x3x3xf32> {
  // expected-error @+1 {{expected pooling output shape 'tensor<2x3x4x4xf32>'}}
  %0 = lmc.max_pool %x, kernel = [2, 2], strides = [2, 2], dilations = [1, 1], pad_low = [0, 0], pad_high = [0, 0] : tensor<2x3x8x8xf32> -> tensor<2x3x3x3xf32>
  return %0 : tensor<2x3x3x3xf32>
}

// -----

func.func @max_pool_element(%x: tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf64> {
  // expected-error @+1 {{expected matching element types}}
  %0 = lmc.max_pool %x, kernel = [2, 2], strides = [2, 2], dilations = [1, 1], pad_low = [0, 0], pad_high = [0, 0] : tensor<2x3x8x8xf32> -> tensor<2x3x4x4xf64>
  return %0 : tensor<2x3x4x4xf64>
}

// -----

func.func @max_pool_grad_type(%x: tensor<2x3x8x8xf32>, %g: tensor<2x3x4x4xf32>) -> tensor<2x3x8x9xf32> {
  // expected-error @+1 {{expected the result type to be the input type}}
  %0 = lmc.max_pool_grad %x, %g, kernel = [2, 2], strides = [2, 2], dilations = [1, 1], pad_low = [0, 0], pad_high = [0, 0] : tensor<2x3x8x8xf32>, tensor<2x3x4x4xf32> -> tensor<2x3x8x9xf32>
  return %0 : tensor<2x3x8x9xf32>
}
