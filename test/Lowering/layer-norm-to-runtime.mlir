// RUN: lmc-opt %s -split-input-file -lmc-layer-norm-to-runtime | FileCheck %s

// Each op becomes one call on dense buffers: the operands' (read-only
// to_buffer), then fresh result buffers turned back into tensors
// (restrict), the rows (2 x 3) and the row width 8, and the forward's
// epsilon. Without an accumulated cotangent the gradient gets a null
// pointer for it (after dy); with one, its buffer.
// CHECK-DAG: func.func private @lmc_rt_layer_norm_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, f32)
// CHECK-DAG: func.func private @lmc_rt_layer_norm_grad_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64)
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x8xf32>, %[[G:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>, %[[DY:.*]]: tensor<2x3x8xf32>)
// CHECK: bufferization.to_buffer %[[X]] read_only : tensor<2x3x8xf32> to memref<2x3x8xf32>
// CHECK: bufferization.to_buffer %[[G]] read_only
// CHECK: bufferization.to_buffer %[[B]] read_only
// CHECK: %[[Y:.*]] = memref.alloc() : memref<2x3x8xf32>
// CHECK: %[[S:.*]] = memref.alloc() : memref<2x3x2xf32>
// CHECK: %[[ROWS:.*]] = arith.constant 6 : i64
// CHECK: %[[C:.*]] = arith.constant 8 : i64
// CHECK: %[[EPS:.*]] = arith.constant 9.99999974E-6 : f32
// CHECK: call @lmc_rt_layer_norm_f32({{.*}}, %[[ROWS]], %[[C]], %[[EPS]])
// CHECK: %[[YT:.*]] = bufferization.to_tensor %[[Y]] restrict writable : memref<2x3x8xf32> to tensor<2x3x8xf32>
// CHECK: %[[ST:.*]] = bufferization.to_tensor %[[S]] restrict writable
// CHECK: bufferization.to_buffer %[[X]] read_only
// CHECK: bufferization.to_buffer %[[G]] read_only
// CHECK: bufferization.to_buffer %[[ST]] read_only
// CHECK: bufferization.to_buffer %[[DY]] read_only
// CHECK: llvm.mlir.zero : !llvm.ptr
// CHECK: memref.alloc() : memref<2x3x8xf32>
// CHECK: memref.alloc() : memref<8xf32>
// CHECK: memref.alloc() : memref<8xf32>
// CHECK: call @lmc_rt_layer_norm_grad_f32(
// CHECK: bufferization.to_buffer %[[DY]] read_only
// CHECK-NEXT: extract_aligned_pointer_as_index
// CHECK-NEXT: arith.index_cast
// CHECK-NEXT: llvm.inttoptr
// CHECK-NEXT: bufferization.to_buffer %[[DY]] read_only
// CHECK: call @lmc_rt_layer_norm_grad_f32(
// CHECK-NOT: lmc.layer_norm
func.func @step(%x: tensor<2x3x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>, %dy: tensor<2x3x8xf32>)
    -> (tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %y, %s = lmc.layer_norm %x, %g, %b {epsilon = 1.0e-05 : f32} : tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x3x8xf32>, tensor<2x3x2xf32>
  %dx, %dg, %db = lmc.layer_norm_grad %x, %g, %s, %dy : tensor<2x3x8xf32>, tensor<8xf32>, tensor<2x3x2xf32>, tensor<2x3x8xf32>
  %dx2, %dg2, %db2 = lmc.layer_norm_grad %x, %g, %s, %dy accumulate %dy : tensor<2x3x8xf32>, tensor<8xf32>, tensor<2x3x2xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>
  return %y, %dx2, %dg, %db : tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>
}
