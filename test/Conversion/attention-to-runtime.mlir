// RUN: lmc-opt %s -lmc-attention-to-runtime | FileCheck %s

// The forward and the gradient each become one call: operands read in
// place through read-only to_buffer (their pointers first), results in
// fresh buffers turned back into tensors (restrict: nothing else aliases
// them), then pairs = 2 * 4, T = 8, S = 6, D = 16, Dv = 5 and the scale.
// CHECK-DAG: func.func private @lmc_rt_attention_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, f32)
// CHECK-DAG: func.func private @lmc_rt_attention_grad_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, f32)
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8x16xf32>, %[[KT:.*]]: tensor<2x4x16x6xf32>, %[[V:.*]]: tensor<2x4x6x5xf32>, %[[M:.*]]: tensor<1x1x8x6xi1>, %[[G:.*]]: tensor<2x4x8x5xf32>)
// CHECK: bufferization.to_buffer %[[Q]] read_only : tensor<2x4x8x16xf32> to memref<2x4x8x16xf32>
// CHECK: bufferization.to_buffer %[[KT]] read_only
// CHECK: bufferization.to_buffer %[[V]] read_only
// CHECK: bufferization.to_buffer %[[M]] read_only : tensor<1x1x8x6xi1> to memref<1x1x8x6xi1>
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<2x4x8x5xf32>
// CHECK: %[[STATS:.*]] = memref.alloc() : memref<2x4x8x2xf32>
// CHECK: %[[PAIRS:.*]] = arith.constant 8 : i64
// CHECK: arith.constant 8 : i64
// CHECK: arith.constant 6 : i64
// CHECK: arith.constant 16 : i64
// CHECK: arith.constant 5 : i64
// CHECK: %[[SCALE:.*]] = arith.constant 2.500000e-01 : f32
// CHECK: call @lmc_rt_attention_f32({{.*}}, %[[PAIRS]], {{.*}}, %[[SCALE]])
// CHECK: %[[O:.*]] = bufferization.to_tensor %[[OUT]] restrict writable : memref<2x4x8x5xf32> to tensor<2x4x8x5xf32>
// CHECK: %[[S:.*]] = bufferization.to_tensor %[[STATS]] restrict writable
// CHECK: bufferization.to_buffer %[[O]] read_only
// CHECK: bufferization.to_buffer %[[S]] read_only
// CHECK: bufferization.to_buffer %[[G]] read_only
// CHECK: memref.alloc() : memref<2x4x8x16xf32>
// CHECK: memref.alloc() : memref<2x4x16x6xf32>
// CHECK: memref.alloc() : memref<2x4x6x5xf32>
// CHECK: call @lmc_rt_attention_grad_f32(
// CHECK-NOT: lmc.attention
func.func @step(%q: tensor<2x4x8x16xf32>, %kt: tensor<2x4x16x6xf32>,
                %v: tensor<2x4x6x5xf32>, %m: tensor<1x1x8x6xi1>,
                %g: tensor<2x4x8x5xf32>)
    -> (tensor<2x4x8x5xf32>, tensor<2x4x8x16xf32>, tensor<2x4x16x6xf32>, tensor<2x4x6x5xf32>) {
  %o, %s = lmc.attention %q, %kt, %v, %m {scale = 0.25 : f32} : tensor<2x4x8x16xf32>, tensor<2x4x16x6xf32>, tensor<2x4x6x5xf32>, tensor<1x1x8x6xi1> -> tensor<2x4x8x5xf32>, tensor<2x4x8x2xf32>
  %dq, %dkt, %dv = lmc.attention_grad %q, %kt, %v, %m, %o, %s, %g {scale = 0.25 : f32} : tensor<2x4x8x16xf32>, tensor<2x4x16x6xf32>, tensor<2x4x6x5xf32>, tensor<1x1x8x6xi1>, tensor<2x4x8x5xf32>, tensor<2x4x8x2xf32>, tensor<2x4x8x5xf32>
  return %o, %dq, %dkt, %dv : tensor<2x4x8x5xf32>, tensor<2x4x8x16xf32>, tensor<2x4x16x6xf32>, tensor<2x4x6x5xf32>
}
