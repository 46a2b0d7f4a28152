// RUN: lmc-opt %s -lmc-convolution-to-runtime | FileCheck %s
// RUN: lmc-opt %s -convert-lmc-to-linalg="convolutions-to-runtime" | FileCheck %s --check-prefix=KEEP

// A 2-D convolution over a 9 x 8 input with a 3 x 2 kernel, strides
// [2, 1], dilations [1, 2], paddings low [1, 0] high [1, 1], 2 groups:
// output (9 + 2 - 3) / 2 + 1 = 5 by (8 + 1 - 3) / 1 + 1 = 7. Its table:
// batch 4, channels 6, filters 8, groups 2, then per field the unused
// leading dimension (1; pad 0) and the two spatial ones: input 9 8,
// kernel 3 2, output 5 7, strides 2 1, dilations 1 2, pad_low 1 0: the
// forward's and its two adjoints' (one table per call).
// CHECK-DAG: memref.global "private" constant @[[G2:__lmc_conv_geometry]] : memref<22xi64> = dense<[4, 6, 8, 2, 1, 9, 8, 1, 3, 2, 1, 5, 7, 1, 2, 1, 1, 1, 2, 0, 1, 0]>
// CHECK-DAG: memref.global "private" constant @[[G2I:__lmc_conv_geometry_0]] : memref<22xi64> = dense<[4, 6, 8, 2, 1, 9, 8, 1, 3, 2, 1, 5, 7, 1, 2, 1, 1, 1, 2, 0, 1, 0]>
// CHECK-DAG: memref.global "private" constant @[[G2W:__lmc_conv_geometry_1]] : memref<22xi64> = dense<[4, 6, 8, 2, 1, 9, 8, 1, 3, 2, 1, 5, 7, 1, 2, 1, 1, 1, 2, 0, 1, 0]>
// A 1-D one: input 11, kernel 4, stride 3, pad_low 2: output (11 + 2 - 4)
// / 3 + 1 = 4; two leading unused dimensions.
// CHECK-DAG: memref.global "private" constant @[[G1:__lmc_conv_geometry_2]] : memref<22xi64> = dense<[2, 3, 5, 1, 1, 1, 11, 1, 1, 4, 1, 1, 4, 1, 1, 3, 1, 1, 1, 0, 0, 2]>
// CHECK-DAG: func.func private @lmc_rt_conv_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
// CHECK-DAG: func.func private @lmc_rt_conv_input_grad_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
// CHECK-DAG: func.func private @lmc_rt_conv_weight_grad_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x6x9x8xf32>, %[[W:[^:]*]]: tensor<8x3x3x2xf32>, %[[DY:[^:]*]]: tensor<4x8x5x7xf32>, %[[S:[^:]*]]: tensor<2x3x11xf32>, %[[K:[^:]*]]: tensor<5x3x4xf32>, %[[XB:[^:]*]]: tensor<2x3x11xbf16>, %[[KB:[^:]*]]: tensor<5x3x4xbf16>
// Operands read only, then a fresh result buffer, then the table.
// CHECK: bufferization.to_buffer %[[X]] read_only
// CHECK: bufferization.to_buffer %[[W]] read_only
// CHECK: %[[Y:.*]] = memref.alloc() : memref<4x8x5x7xf32>
// CHECK: memref.get_global @[[G2]]
// CHECK: call @lmc_rt_conv_f32(
// CHECK: %[[YT:.*]] = bufferization.to_tensor %[[Y]] restrict writable : memref<4x8x5x7xf32> to tensor<4x8x5x7xf32>
// The input gradient reads dy and the weight.
// CHECK: bufferization.to_buffer %[[DY]] read_only
// CHECK: bufferization.to_buffer %[[W]] read_only
// CHECK: %[[DX:.*]] = memref.alloc() : memref<4x6x9x8xf32>
// CHECK: memref.get_global @[[G2I]]
// CHECK: call @lmc_rt_conv_input_grad_f32(
// CHECK: %[[DXT:.*]] = bufferization.to_tensor %[[DX]] restrict writable
// The weight gradient reads x and dy.
// CHECK: bufferization.to_buffer %[[X]] read_only
// CHECK: bufferization.to_buffer %[[DY]] read_only
// CHECK: %[[DW:.*]] = memref.alloc() : memref<8x3x3x2xf32>
// CHECK: memref.get_global @[[G2W]]
// CHECK: call @lmc_rt_conv_weight_grad_f32(
// CHECK: %[[DWT:.*]] = bufferization.to_tensor %[[DW]] restrict writable
// CHECK: bufferization.to_buffer %[[S]] read_only
// CHECK: bufferization.to_buffer %[[K]] read_only
// CHECK: memref.get_global @[[G1]]
// CHECK: call @lmc_rt_conv_f32(
// CHECK: %[[Y1:.*]] = bufferization.to_tensor
// bf16 operands (mixed precision) are widened to f32 first (exactly), by
// an elementwise generic each, then read by the same call.
// CHECK: %[[XW:.*]] = linalg.generic {{.*}} ins(%[[XB]] : tensor<2x3x11xbf16>) outs(%{{.*}} : tensor<2x3x11xf32>)
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: bufferization.to_buffer %[[XW]] read_only
// CHECK: %[[KW:.*]] = linalg.generic {{.*}} ins(%[[KB]] : tensor<5x3x4xbf16>) outs(%{{.*}} : tensor<5x3x4xf32>)
// CHECK: bufferization.to_buffer %[[KW]] read_only
// CHECK: call @lmc_rt_conv_f32(
// CHECK: %[[YB:.*]] = bufferization.to_tensor
// CHECK: return %[[YT]], %[[DXT]], %[[DWT]], %[[Y1]], %[[YB]]

// convert-lmc-to-linalg{convolutions-to-runtime} keeps them all (f32
// results); a convolution with a bf16 result would be lowered to loops.
// KEEP-LABEL: func.func @step
// KEEP: lmc.conv {{.*}} -> tensor<4x8x5x7xf32>
// KEEP: lmc.conv_input_grad {{.*}} -> tensor<4x6x9x8xf32>
// KEEP: lmc.conv_weight_grad {{.*}} -> tensor<8x3x3x2xf32>
// KEEP: lmc.conv {{.*}} -> tensor<2x5x4xf32>
// KEEP: lmc.conv {{.*}} : tensor<2x3x11xbf16>, tensor<5x3x4xbf16> -> tensor<2x5x4xf32>
// KEEP-NOT: linalg.generic
func.func @step(%x: tensor<4x6x9x8xf32>, %w: tensor<8x3x3x2xf32>, %dy: tensor<4x8x5x7xf32>,
                %s: tensor<2x3x11xf32>, %k: tensor<5x3x4xf32>,
                %xb: tensor<2x3x11xbf16>, %kb: tensor<5x3x4xbf16>)
    -> (tensor<4x8x5x7xf32>, tensor<4x6x9x8xf32>, tensor<8x3x3x2xf32>,
        tensor<2x5x4xf32>, tensor<2x5x4xf32>) {
  %y = lmc.conv %x, %w, strides = [2, 1], dilations = [1, 2], pad_low = [1, 0], pad_high = [1, 1], groups = 2
         : tensor<4x6x9x8xf32>, tensor<8x3x3x2xf32> -> tensor<4x8x5x7xf32>
  %dx = lmc.conv_input_grad %dy, %w, strides = [2, 1], dilations = [1, 2], pad_low = [1, 0], pad_high = [1, 1], groups = 2
         : tensor<4x8x5x7xf32>, tensor<8x3x3x2xf32> -> tensor<4x6x9x8xf32>
  %dw = lmc.conv_weight_grad %x, %dy, strides = [2, 1], dilations = [1, 2], pad_low = [1, 0], pad_high = [1, 1], groups = 2
         : tensor<4x6x9x8xf32>, tensor<4x8x5x7xf32> -> tensor<8x3x3x2xf32>
  %y1 = lmc.conv %s, %k, strides = [3], dilations = [1], pad_low = [2], pad_high = [0], groups = 1
         : tensor<2x3x11xf32>, tensor<5x3x4xf32> -> tensor<2x5x4xf32>
  %yb = lmc.conv %xb, %kb, strides = [3], dilations = [1], pad_low = [2], pad_high = [0], groups = 1
         : tensor<2x3x11xbf16>, tensor<5x3x4xbf16> -> tensor<2x5x4xf32>
  return %y, %dx, %dw, %y1, %yb : tensor<4x8x5x7xf32>, tensor<4x6x9x8xf32>, tensor<8x3x3x2xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>
}
