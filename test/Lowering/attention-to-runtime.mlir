// RUN: lmc-opt %s -lmc-attention-to-runtime | FileCheck %s

// Dense operands: the forward and the gradient each become one call on the
// operands' buffers (read-only to_buffer, pointers in the callee's order),
// fresh result buffers turned back into tensors (restrict: nothing else
// aliases them), a constant layout table (lmc_rt_attention_layout: the
// pairs 1 x 8, then per matrix offset, two pair strides, row and column
// strides) and T = 8, S = 6, D = 16, Dv = 5 and the scale. Without kept
// exponentials both calls get a null pointer for them (after the stats).
// CHECK-DAG: func.func private @lmc_rt_attention_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, f32)
// CHECK-DAG: func.func private @lmc_rt_attention_grad_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, f32)
// CHECK-DAG: memref.global "private" constant @[[FWD:__lmc_attention_layout[_0-9]*]] : memref<42xi64> = dense<[1, 8, 0, 0, 128, 16, 1, 0, 0, 96, 6, 1, 0, 0, 30, 5, 1, 0, 0, 40, 5, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]>
// CHECK-DAG: memref.global "private" constant @[[BWD:__lmc_attention_layout[_0-9]*]] : memref<42xi64> = dense<[1, 8, 0, 0, 128, 16, 1, 0, 0, 96, 6, 1, 0, 0, 30, 5, 1, 0, 0, 40, 5, 1, 0, 0, 40, 5, 1, 0, 0, 128, 16, 1, 0, 0, 96, 6, 1, 0, 0, 30, 5, 1]>
// CHECK-DAG: memref.global "private" constant @[[GPTF:__lmc_attention_layout[_0-9]*]] : memref<42xi64> = dense<[2, 4, 0, 1536, 16, 192, 1, 64, 1536, 16, 1, 192, 128, 1536, 16, 192, 1, 0, 512, 16, 64, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]>
// CHECK-DAG: memref.global "private" constant @[[GPTB:__lmc_attention_layout[_0-9]*]] : memref<42xi64> = dense<[2, 4, 0, 1536, 16, 192, 1, 64, 1536, 16, 1, 192, 128, 1536, 16, 192, 1, 0, 512, 16, 64, 1, 0, 512, 16, 64, 1, 0, 512, 16, 64, 1, 0, 512, 16, 1, 64, 0, 512, 16, 64, 1]>
// CHECK-DAG: memref.global "private" constant @{{__lmc_attention_layout[_0-9]*}} : memref<42xi64> = dense<[1, 8, 0, 0, 128, 16, 1, 0, 0, 128, 8, 1, 0, 0, 128, 16, 1, 0, 0, 128, 16, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]>
// CHECK-DAG: memref.global "private" constant @{{__lmc_attention_layout[_0-9]*}} : memref<42xi64> = dense<[1, 8, 0, 0, 128, 16, 1, 0, 0, 128, 8, 1, 0, 0, 128, 16, 1, 0, 0, 128, 16, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]>
// CHECK-DAG: memref.global "private" constant @[[CONCAT:__lmc_attention_layout[_0-9]*]] : memref<42xi64> = dense<[2, 4, 0, 512, 128, 16, 1, 0, 512, 128, 8, 1, 0, 512, 128, 16, 1, 0, 512, 128, 16, 1, 0, 512, 128, 16, 1, 0, 1536, 16, 192, 1, 64, 1536, 16, 1, 192, 128, 1536, 16, 192, 1]>
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8x16xf32>, %[[KT:.*]]: tensor<2x4x16x6xf32>, %[[V:.*]]: tensor<2x4x6x5xf32>, %[[M:.*]]: tensor<1x1x8x6xi1>, %[[G:.*]]: tensor<2x4x8x5xf32>)
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<2x4x8x5xf32>
// CHECK: bufferization.to_buffer %[[Q]] read_only : tensor<2x4x8x16xf32> to memref<2x4x8x16xf32>
// CHECK: bufferization.to_buffer %[[KT]] read_only
// CHECK: bufferization.to_buffer %[[V]] read_only
// CHECK: bufferization.to_buffer %[[M]] read_only : tensor<1x1x8x6xi1> to memref<1x1x8x6xi1>
// CHECK: %[[STATS:.*]] = memref.alloc() : memref<2x4x8x2xf32>
// CHECK: %[[NOEXPS:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: memref.get_global @[[FWD]] : memref<42xi64>
// CHECK: arith.constant 8 : i64
// CHECK: arith.constant 6 : i64
// CHECK: arith.constant 16 : i64
// CHECK: arith.constant 5 : i64
// CHECK: %[[SCALE:.*]] = arith.constant 2.500000e-01 : f32
// CHECK: call @lmc_rt_attention_f32({{%[^,]*, %[^,]*, %[^,]*, %[^,]*, %[^,]*, %[^,]*, }}%[[NOEXPS]], {{.*}}, %[[SCALE]])
// CHECK: %[[O:.*]] = bufferization.to_tensor %[[OUT]] restrict writable : memref<2x4x8x5xf32> to tensor<2x4x8x5xf32>
// CHECK: %[[S:.*]] = bufferization.to_tensor %[[STATS]] restrict writable
// CHECK: memref.alloc() : memref<2x4x8x16xf32>
// CHECK: memref.alloc() : memref<2x4x16x6xf32>
// CHECK: memref.alloc() : memref<2x4x6x5xf32>
// CHECK: bufferization.to_buffer %[[Q]] read_only
// CHECK: bufferization.to_buffer %[[KT]] read_only
// CHECK: bufferization.to_buffer %[[V]] read_only
// CHECK: bufferization.to_buffer %[[M]] read_only
// CHECK: bufferization.to_buffer %[[O]] read_only
// CHECK: bufferization.to_buffer %[[S]] read_only
// CHECK: %[[NOEXPSB:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: bufferization.to_buffer %[[G]] read_only
// CHECK: memref.get_global @[[BWD]]
// CHECK: call @lmc_rt_attention_grad_f32({{%[^,]*, %[^,]*, %[^,]*, %[^,]*, %[^,]*, %[^,]*, }}%[[NOEXPSB]], 
// CHECK-NOT: lmc.attention
func.func @step(%q: tensor<2x4x8x16xf32>, %kt: tensor<2x4x16x6xf32>,
                %v: tensor<2x4x6x5xf32>, %m: tensor<1x1x8x6xi1>,
                %g: tensor<2x4x8x5xf32>)
    -> (tensor<2x4x8x5xf32>, tensor<2x4x8x16xf32>, tensor<2x4x16x6xf32>, tensor<2x4x6x5xf32>) {
  %o, %s = lmc.attention %q, %kt, %v, %m {scale = 0.25 : f32} : tensor<2x4x8x16xf32>, tensor<2x4x16x6xf32>, tensor<2x4x6x5xf32>, tensor<1x1x8x6xi1> -> tensor<2x4x8x5xf32>, tensor<2x4x8x2xf32>
  %dq, %dkt, %dv = lmc.attention_grad %q, %kt, %v, %m, %o, %s, %g {scale = 0.25 : f32} : tensor<2x4x8x16xf32>, tensor<2x4x16x6xf32>, tensor<2x4x6x5xf32>, tensor<1x1x8x6xi1>, tensor<2x4x8x5xf32>, tensor<2x4x8x2xf32>, tensor<2x4x8x5xf32>
  return %o, %dq, %dkt, %dv : tensor<2x4x8x5xf32>, tensor<2x4x8x16xf32>, tensor<2x4x16x6xf32>, tensor<2x4x6x5xf32>
}

// A GPT's heads: q, k and v are transposed slices of one [B, T, 3 H D]
// projection (B 2, T 8, H 4, D 16), read there (offsets 0, 64, 128; pair
// strides 1536 and 16; rows 192 apart, the keys' row stride 1: kt is read
// as the keys); out is written in the order its transpose reads it ([B, T,
// H, D]: rows 64 apart), and the gradient reads it, and the cotangent,
// there. dq, dkt and dv are written in their transposes' order. No
// transpose is left: each became a stride. (The layout tables: GPTF and
// GPTB, checked with the others at the module's start.)
// CHECK-LABEL: func.func @gpt
// CHECK-SAME: (%[[QKV:.*]]: tensor<2x8x192xf32>, %[[MASK:.*]]: tensor<1x1x8x8xi1>, %[[DY:.*]]: tensor<2x8x4x16xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: %[[OUTB:.*]] = memref.alloc() : memref<2x8x4x16xf32>
// CHECK: bufferization.to_buffer %[[QKV]] read_only : tensor<2x8x192xf32>
// CHECK: bufferization.to_buffer %[[QKV]] read_only
// CHECK: bufferization.to_buffer %[[QKV]] read_only
// CHECK: memref.get_global @[[GPTF]]
// CHECK: call @lmc_rt_attention_f32(
// CHECK: %[[OUTT:.*]] = bufferization.to_tensor %[[OUTB]] restrict writable : memref<2x8x4x16xf32> to tensor<2x8x4x16xf32>
// CHECK: memref.alloc() : memref<2x8x4x16xf32>
// CHECK: memref.alloc() : memref<2x8x4x16xf32>
// CHECK: memref.alloc() : memref<2x8x4x16xf32>
// CHECK: bufferization.to_buffer %[[OUTT]] read_only
// CHECK: bufferization.to_buffer %[[DY]] read_only
// CHECK: memref.get_global @[[GPTB]]
// CHECK: call @lmc_rt_attention_grad_f32(
// CHECK-NOT: linalg.transpose
// CHECK: return %[[OUTT]]
func.func @gpt(%qkv: tensor<2x8x192xf32>, %m: tensor<1x1x8x8xi1>, %dy: tensor<2x8x4x16xf32>)
    -> (tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>) {
  %qs = tensor.extract_slice %qkv[0, 0, 0] [2, 8, 64] [1, 1, 1] : tensor<2x8x192xf32> to tensor<2x8x64xf32>
  %ks = tensor.extract_slice %qkv[0, 0, 64] [2, 8, 64] [1, 1, 1] : tensor<2x8x192xf32> to tensor<2x8x64xf32>
  %vs = tensor.extract_slice %qkv[0, 0, 128] [2, 8, 64] [1, 1, 1] : tensor<2x8x192xf32> to tensor<2x8x64xf32>
  %qh = tensor.expand_shape %qs [[0], [1], [2, 3]] output_shape [2, 8, 4, 16] : tensor<2x8x64xf32> into tensor<2x8x4x16xf32>
  %kh = tensor.expand_shape %ks [[0], [1], [2, 3]] output_shape [2, 8, 4, 16] : tensor<2x8x64xf32> into tensor<2x8x4x16xf32>
  %vh = tensor.expand_shape %vs [[0], [1], [2, 3]] output_shape [2, 8, 4, 16] : tensor<2x8x64xf32> into tensor<2x8x4x16xf32>
  %e0 = tensor.empty() : tensor<2x4x8x16xf32>
  %e1 = tensor.empty() : tensor<2x4x16x8xf32>
  %e2 = tensor.empty() : tensor<2x8x4x16xf32>
  %q = linalg.transpose ins(%qh : tensor<2x8x4x16xf32>) outs(%e0 : tensor<2x4x8x16xf32>) permutation = [0, 2, 1, 3]
  %kt = linalg.transpose ins(%kh : tensor<2x8x4x16xf32>) outs(%e1 : tensor<2x4x16x8xf32>) permutation = [0, 2, 3, 1]
  %v = linalg.transpose ins(%vh : tensor<2x8x4x16xf32>) outs(%e0 : tensor<2x4x8x16xf32>) permutation = [0, 2, 1, 3]
  %o, %s = lmc.attention %q, %kt, %v, %m {scale = 0.25 : f32} : tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>, tensor<2x4x8x16xf32>, tensor<1x1x8x8xi1> -> tensor<2x4x8x16xf32>, tensor<2x4x8x2xf32>
  %ot = linalg.transpose ins(%o : tensor<2x4x8x16xf32>) outs(%e2 : tensor<2x8x4x16xf32>) permutation = [0, 2, 1, 3]
  %g = linalg.transpose ins(%dy : tensor<2x8x4x16xf32>) outs(%e0 : tensor<2x4x8x16xf32>) permutation = [0, 2, 1, 3]
  %dq, %dkt, %dv = lmc.attention_grad %q, %kt, %v, %m, %o, %s, %g {scale = 0.25 : f32} : tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>, tensor<2x4x8x16xf32>, tensor<1x1x8x8xi1>, tensor<2x4x8x16xf32>, tensor<2x4x8x2xf32>, tensor<2x4x8x16xf32>
  %dqt = linalg.transpose ins(%dq : tensor<2x4x8x16xf32>) outs(%e2 : tensor<2x8x4x16xf32>) permutation = [0, 2, 1, 3]
  %dkh = linalg.transpose ins(%dkt : tensor<2x4x16x8xf32>) outs(%e2 : tensor<2x8x4x16xf32>) permutation = [0, 3, 1, 2]
  %dvt = linalg.transpose ins(%dv : tensor<2x4x8x16xf32>) outs(%e2 : tensor<2x8x4x16xf32>) permutation = [0, 2, 1, 3]
  return %ot, %dqt, %dkh, %dvt : tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>
}

// Views the kernel cannot take stay copies. A q whose rows are not
// contiguous (its head dimension strided): that transpose stays and its
// result is read as a dense buffer (pairs 1 x 8, q's row stride 16; the
// tables of this and the next function, dense alike, are checked at the
// module's start).
// CHECK-LABEL: func.func @columns
// CHECK: %[[QC:.*]] = linalg.transpose
// CHECK: bufferization.to_buffer %[[QC]] read_only : tensor<2x4x8x16xf32>
func.func @columns(%qd: tensor<2x4x16x8xf32>, %kt: tensor<2x4x16x8xf32>, %v: tensor<2x4x8x16xf32>, %m: tensor<1x1x8x8xi1>) -> tensor<2x4x8x16xf32> {
  %e = tensor.empty() : tensor<2x4x8x16xf32>
  %q = linalg.transpose ins(%qd : tensor<2x4x16x8xf32>) outs(%e : tensor<2x4x8x16xf32>) permutation = [0, 1, 3, 2]
  %o, %s = lmc.attention %q, %kt, %v, %m {scale = 0.25 : f32} : tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>, tensor<2x4x8x16xf32>, tensor<1x1x8x8xi1> -> tensor<2x4x8x16xf32>, tensor<2x4x8x2xf32>
  return %o : tensor<2x4x8x16xf32>
}

// Batch dimensions no cut in two groups strides evenly (q's three batch
// strides 256, 512, 128): every matrix dense, the transpose stays.
// CHECK-LABEL: func.func @uneven
// CHECK: %[[QU:.*]] = linalg.transpose
// CHECK: bufferization.to_buffer %[[QU]] read_only : tensor<2x2x2x8x16xf32>
func.func @uneven(%qd: tensor<2x2x2x8x16xf32>, %kt: tensor<2x2x2x16x8xf32>, %v: tensor<2x2x2x8x16xf32>, %m: tensor<1x1x1x8x8xi1>) -> tensor<2x2x2x8x16xf32> {
  %e = tensor.empty() : tensor<2x2x2x8x16xf32>
  %q = linalg.transpose ins(%qd : tensor<2x2x2x8x16xf32>) outs(%e : tensor<2x2x2x8x16xf32>) permutation = [1, 0, 2, 3, 4]
  %o, %s = lmc.attention %q, %kt, %v, %m {scale = 0.25 : f32} : tensor<2x2x2x8x16xf32>, tensor<2x2x2x16x8xf32>, tensor<2x2x2x8x16xf32>, tensor<1x1x1x8x8xi1> -> tensor<2x2x2x8x16xf32>, tensor<2x2x2x8x2xf32>
  return %o : tensor<2x2x2x8x16xf32>
}

// The gradients put back into the gradient of a fused q/k/v projection (a
// GPT's Split, differentiated): dq, dk and dv transposed to [B, T, H, D],
// merged to [B, T, H D] and inserted side by side into [B, T, 3 H D]. The
// call writes them there (offsets 0, 64 and 128; pair strides 1536 and 16;
// rows 192 apart, dkt's row stride 1): one buffer, the concatenation's,
// and no transpose, reshape or insert left (table CONCAT at the module's
// start).
// CHECK-LABEL: func.func @concatenated
// CHECK: %[[WHOLE:.*]] = memref.alloc() : memref<2x8x192xf32>
// CHECK-NOT: memref.alloc() : memref<2x
// CHECK: memref.get_global @[[CONCAT]]
// CHECK: call @lmc_rt_attention_grad_f32(
// CHECK: %[[T:.*]] = bufferization.to_tensor %[[WHOLE]] restrict writable : memref<2x8x192xf32> to tensor<2x8x192xf32>
// CHECK-NOT: linalg.transpose
// CHECK-NOT: tensor.collapse_shape
// CHECK-NOT: tensor.insert_slice
// CHECK: return %[[T]]
func.func @concatenated(%q: tensor<2x4x8x16xf32>, %kt: tensor<2x4x16x8xf32>, %v: tensor<2x4x8x16xf32>, %m: tensor<1x1x8x8xi1>,
                        %o: tensor<2x4x8x16xf32>, %s: tensor<2x4x8x2xf32>, %g: tensor<2x4x8x16xf32>) -> tensor<2x8x192xf32> {
  %dq, %dkt, %dv = lmc.attention_grad %q, %kt, %v, %m, %o, %s, %g {scale = 0.25 : f32} : tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>, tensor<2x4x8x16xf32>, tensor<1x1x8x8xi1>, tensor<2x4x8x16xf32>, tensor<2x4x8x2xf32>, tensor<2x4x8x16xf32>
  %e = tensor.empty() : tensor<2x8x4x16xf32>
  %dqt = linalg.transpose ins(%dq : tensor<2x4x8x16xf32>) outs(%e : tensor<2x8x4x16xf32>) permutation = [0, 2, 1, 3]
  %dkh = linalg.transpose ins(%dkt : tensor<2x4x16x8xf32>) outs(%e : tensor<2x8x4x16xf32>) permutation = [0, 3, 1, 2]
  %dvt = linalg.transpose ins(%dv : tensor<2x4x8x16xf32>) outs(%e : tensor<2x8x4x16xf32>) permutation = [0, 2, 1, 3]
  %dqm = tensor.collapse_shape %dqt [[0], [1], [2, 3]] : tensor<2x8x4x16xf32> into tensor<2x8x64xf32>
  %dkm = tensor.collapse_shape %dkh [[0], [1], [2, 3]] : tensor<2x8x4x16xf32> into tensor<2x8x64xf32>
  %dvm = tensor.collapse_shape %dvt [[0], [1], [2, 3]] : tensor<2x8x4x16xf32> into tensor<2x8x64xf32>
  %w = tensor.empty() : tensor<2x8x192xf32>
  %w0 = tensor.insert_slice %dqm into %w[0, 0, 0] [2, 8, 64] [1, 1, 1] : tensor<2x8x64xf32> into tensor<2x8x192xf32>
  %w1 = tensor.insert_slice %dkm into %w0[0, 0, 64] [2, 8, 64] [1, 1, 1] : tensor<2x8x64xf32> into tensor<2x8x192xf32>
  %w2 = tensor.insert_slice %dvm into %w1[0, 0, 128] [2, 8, 64] [1, 1, 1] : tensor<2x8x64xf32> into tensor<2x8x192xf32>
  return %w2 : tensor<2x8x192xf32>
}

// Parts that leave some of the tensor as it was (here a fourth of it) are
// no concatenation of the results alone: the inserts stay, the results
// have buffers of their own.
// CHECK-LABEL: func.func @partly
// CHECK: call @lmc_rt_attention_grad_f32(
// CHECK-COUNT-3: tensor.insert_slice
func.func @partly(%q: tensor<2x4x8x16xf32>, %kt: tensor<2x4x16x8xf32>, %v: tensor<2x4x8x16xf32>, %m: tensor<1x1x8x8xi1>,
                  %o: tensor<2x4x8x16xf32>, %s: tensor<2x4x8x2xf32>, %g: tensor<2x4x8x16xf32>, %w: tensor<2x8x256xf32>) -> tensor<2x8x256xf32> {
  %dq, %dkt, %dv = lmc.attention_grad %q, %kt, %v, %m, %o, %s, %g {scale = 0.25 : f32} : tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>, tensor<2x4x8x16xf32>, tensor<1x1x8x8xi1>, tensor<2x4x8x16xf32>, tensor<2x4x8x2xf32>, tensor<2x4x8x16xf32>
  %e = tensor.empty() : tensor<2x8x4x16xf32>
  %dqt = linalg.transpose ins(%dq : tensor<2x4x8x16xf32>) outs(%e : tensor<2x8x4x16xf32>) permutation = [0, 2, 1, 3]
  %dkh = linalg.transpose ins(%dkt : tensor<2x4x16x8xf32>) outs(%e : tensor<2x8x4x16xf32>) permutation = [0, 3, 1, 2]
  %dvt = linalg.transpose ins(%dv : tensor<2x4x8x16xf32>) outs(%e : tensor<2x8x4x16xf32>) permutation = [0, 2, 1, 3]
  %dqm = tensor.collapse_shape %dqt [[0], [1], [2, 3]] : tensor<2x8x4x16xf32> into tensor<2x8x64xf32>
  %dkm = tensor.collapse_shape %dkh [[0], [1], [2, 3]] : tensor<2x8x4x16xf32> into tensor<2x8x64xf32>
  %dvm = tensor.collapse_shape %dvt [[0], [1], [2, 3]] : tensor<2x8x4x16xf32> into tensor<2x8x64xf32>
  %w0 = tensor.insert_slice %dqm into %w[0, 0, 0] [2, 8, 64] [1, 1, 1] : tensor<2x8x64xf32> into tensor<2x8x256xf32>
  %w1 = tensor.insert_slice %dkm into %w0[0, 0, 64] [2, 8, 64] [1, 1, 1] : tensor<2x8x64xf32> into tensor<2x8x256xf32>
  %w2 = tensor.insert_slice %dvm into %w1[0, 0, 128] [2, 8, 64] [1, 1, 1] : tensor<2x8x64xf32> into tensor<2x8x256xf32>
  return %w2 : tensor<2x8x256xf32>
}

// The same concatenation with rows far apart (1024 tokens, rows 384 floats
// apart: 1.5 MiB per matrix, over LMC_RT_ATTENTION_IN_PLACE_SPAN): the
// kernel would compute each gradient dense and copy it out, so the results
// keep buffers of their own (in their transposes' order) and the inserts
// stay.
// CHECK-LABEL: func.func @far_apart
// CHECK-NOT: memref.alloc() : memref<1x1024x384xf32>
// CHECK: call @lmc_rt_attention_grad_f32(
// CHECK-COUNT-3: tensor.insert_slice
func.func @far_apart(%q: tensor<1x2x1024x64xf32>, %kt: tensor<1x2x64x1024xf32>, %v: tensor<1x2x1024x64xf32>, %m: tensor<1x1x1024x1024xi1>,
                     %o: tensor<1x2x1024x64xf32>, %s: tensor<1x2x1024x2xf32>, %g: tensor<1x2x1024x64xf32>) -> tensor<1x1024x384xf32> {
  %dq, %dkt, %dv = lmc.attention_grad %q, %kt, %v, %m, %o, %s, %g {scale = 0.125 : f32} : tensor<1x2x1024x64xf32>, tensor<1x2x64x1024xf32>, tensor<1x2x1024x64xf32>, tensor<1x1x1024x1024xi1>, tensor<1x2x1024x64xf32>, tensor<1x2x1024x2xf32>, tensor<1x2x1024x64xf32>
  %e = tensor.empty() : tensor<1x1024x2x64xf32>
  %dqt = linalg.transpose ins(%dq : tensor<1x2x1024x64xf32>) outs(%e : tensor<1x1024x2x64xf32>) permutation = [0, 2, 1, 3]
  %dkh = linalg.transpose ins(%dkt : tensor<1x2x64x1024xf32>) outs(%e : tensor<1x1024x2x64xf32>) permutation = [0, 3, 1, 2]
  %dvt = linalg.transpose ins(%dv : tensor<1x2x1024x64xf32>) outs(%e : tensor<1x1024x2x64xf32>) permutation = [0, 2, 1, 3]
  %dqm = tensor.collapse_shape %dqt [[0], [1], [2, 3]] : tensor<1x1024x2x64xf32> into tensor<1x1024x128xf32>
  %dkm = tensor.collapse_shape %dkh [[0], [1], [2, 3]] : tensor<1x1024x2x64xf32> into tensor<1x1024x128xf32>
  %dvm = tensor.collapse_shape %dvt [[0], [1], [2, 3]] : tensor<1x1024x2x64xf32> into tensor<1x1024x128xf32>
  %w = tensor.empty() : tensor<1x1024x384xf32>
  %w0 = tensor.insert_slice %dqm into %w[0, 0, 0] [1, 1024, 128] [1, 1, 1] : tensor<1x1024x128xf32> into tensor<1x1024x384xf32>
  %w1 = tensor.insert_slice %dkm into %w0[0, 0, 128] [1, 1024, 128] [1, 1, 1] : tensor<1x1024x128xf32> into tensor<1x1024x384xf32>
  %w2 = tensor.insert_slice %dvm into %w1[0, 0, 256] [1, 1024, 128] [1, 1, 1] : tensor<1x1024x128xf32> into tensor<1x1024x384xf32>
  return %w2 : tensor<1x1024x384xf32>
}

// Kept exponentials (lmc-fuse-attention's keep-exponentials): the forward
// writes them into a third dense result after the stats, and the gradient
// reads that buffer in the same place.
// CHECK-LABEL: func.func @kept
// CHECK: %[[STATSK:.*]] = memref.alloc() : memref<2x4x8x2xf32>
// CHECK: %[[EXPS:.*]] = memref.alloc() : memref<2x4x8x8xf32>
// CHECK: extract_aligned_pointer_as_index %[[STATSK]]
// CHECK: extract_aligned_pointer_as_index %[[EXPS]]
// CHECK-NEXT: arith.index_cast
// CHECK-NEXT: %[[EXPSP:.*]] = llvm.inttoptr
// CHECK: call @lmc_rt_attention_f32({{%[^,]*, %[^,]*, %[^,]*, %[^,]*, %[^,]*, %[^,]*, }}%[[EXPSP]], 
// CHECK: %[[E:.*]] = bufferization.to_tensor %[[EXPS]] restrict writable : memref<2x4x8x8xf32> to tensor<2x4x8x8xf32>
// CHECK: bufferization.to_buffer %[[E]] read_only
// CHECK-NEXT: extract_aligned_pointer_as_index
// CHECK-NEXT: arith.index_cast
// CHECK-NEXT: %[[EXPSB:.*]] = llvm.inttoptr
// CHECK: call @lmc_rt_attention_grad_f32({{%[^,]*, %[^,]*, %[^,]*, %[^,]*, %[^,]*, %[^,]*, }}%[[EXPSB]], 
func.func @kept(%q: tensor<2x4x8x16xf32>, %kt: tensor<2x4x16x8xf32>,
                %v: tensor<2x4x8x5xf32>, %m: tensor<1x1x8x8xi1>,
                %g: tensor<2x4x8x5xf32>)
    -> (tensor<2x4x8x5xf32>, tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>, tensor<2x4x8x5xf32>) {
  %o, %s, %e = lmc.attention %q, %kt, %v, %m {scale = 0.25 : f32} : tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>, tensor<2x4x8x5xf32>, tensor<1x1x8x8xi1> -> tensor<2x4x8x5xf32>, tensor<2x4x8x2xf32>, tensor<2x4x8x8xf32>
  %dq, %dkt, %dv = lmc.attention_grad %q, %kt, %v, %m, %o, %s, %g exponentials %e {scale = 0.25 : f32} : tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>, tensor<2x4x8x5xf32>, tensor<1x1x8x8xi1>, tensor<2x4x8x5xf32>, tensor<2x4x8x2xf32>, tensor<2x4x8x5xf32>, tensor<2x4x8x8xf32>
  return %o, %dq, %dkt, %dv : tensor<2x4x8x5xf32>, tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>, tensor<2x4x8x5xf32>
}
