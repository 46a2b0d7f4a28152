// RUN: lmc-opt %s -lmc-mark-gradients-ready -split-input-file | FileCheck %s

// grad_step's gradients (out-parameters with role grad, in order 0, 1, 2):
// the bias gradient is final after the generic that sums into it, the
// weight gradient after the runtime matmul that writes it through a
// pointer (the last op reaching it), the third after a copy into a view of
// it. The calls come right after those ops, not at the end.
// CHECK-LABEL: func.func @grad_step
// CHECK: linalg.generic
// CHECK-SAME: outs(%arg2 : memref<4xf32>)
// CHECK: %[[C0:.*]] = arith.constant 0 : i64
// CHECK-NEXT: call @lmc_rt_gradient_ready(%[[C0]]) : (i64) -> ()
// CHECK: call @matmul(%{{.*}})
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : i64
// CHECK-NEXT: call @lmc_rt_gradient_ready(%[[C1]]) : (i64) -> ()
// CHECK: memref.copy %{{.*}}, %[[VIEW:.*]] :
// CHECK-NEXT: %[[C2:.*]] = arith.constant 2 : i64
// CHECK-NEXT: call @lmc_rt_gradient_ready(%[[C2]]) : (i64) -> ()
// CHECK-NEXT: call @other()
func.func private @matmul(!llvm.ptr)
func.func private @other()
func.func @grad_step(%x: memref<8x4xf32> {lmc.role = "input"},
                     %loss: memref<f32> {lmc.role = "loss"},
                     %db: memref<4xf32> {lmc.role = "grad"},
                     %dw: memref<4x4xf32> {lmc.role = "grad"},
                     %dv: memref<2x4xf32> {lmc.role = "grad"}) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>], iterator_types = ["reduction", "parallel"]} ins(%x : memref<8x4xf32>) outs(%db : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  %intptr = memref.extract_aligned_pointer_as_index %dw : memref<4x4xf32> -> index
  %i = arith.index_cast %intptr : index to i64
  %p = llvm.inttoptr %i : i64 to !llvm.ptr
  call @matmul(%p) : (!llvm.ptr) -> ()
  %flat = memref.collapse_shape %dv [[0, 1]] : memref<2x4xf32> into memref<8xf32>
  %src = memref.alloc() : memref<8xf32>
  memref.copy %src, %flat : memref<8xf32> to memref<8xf32>
  call @other() : () -> ()
  memref.dealloc %src : memref<8xf32>
  return
}

// -----

// Other functions get no calls; a module without grad_step is unchanged.
// CHECK-LABEL: func.func @train_step
// CHECK-NOT: lmc_rt_gradient_ready
func.func @train_step(%g: memref<4xf32> {lmc.role = "grad"}) {
  return
}
