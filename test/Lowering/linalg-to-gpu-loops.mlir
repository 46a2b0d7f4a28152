// RUN: lmc-opt %s -split-input-file -lmc-linalg-to-gpu-loops | FileCheck %s
// RUN: not lmc-opt %s -split-input-file -lmc-linalg-to-gpu-loops=block-size=0 2>&1 | FileCheck %s --check-prefix=SIZE
// RUN: not lmc-opt %s -split-input-file -lmc-linalg-to-gpu-loops=block-size=2048 2>&1 | FileCheck %s --check-prefix=SIZE2K

// SIZE: error: block-size must be in [1, 1024], got 0
// SIZE2K: error: block-size must be in [1, 1024], got 2048

// A reduction over the leading dimension (a bias gradient): the parallel
// dimension moves first, so each of the 10 outputs is one thread that sums
// its column; one block of 256 threads, the last 246 idle.
// CHECK-LABEL: func.func @reduce_first
// CHECK-DAG: %[[C10:.*]] = arith.constant 10 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK: %[[STEP:.*]] = arith.muli %{{.*}}, %[[C256]] : index
// CHECK: scf.parallel (%[[TILE:.*]]) = (%{{.*}}) to (%[[C10]]) step (%[[STEP]]) {
// CHECK:   scf.parallel (%[[THREAD:.*]]) = (%{{.*}}) to (%[[STEP]]) step (%{{.*}}) {
// CHECK:     %[[J:.*]] = arith.addi %[[THREAD]], %[[TILE]] : index
// CHECK:     %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %[[C10]] : index
// CHECK:     scf.if
// CHECK:       scf.for %[[I:.*]] = %{{.*}} to %[[C32]]
// CHECK:         memref.load %arg0[%{{.*}}, %{{.*}}] : memref<32x10xf32>
// CHECK:         memref.store %{{.*}}, %arg1[%{{.*}}] : memref<10xf32>
// CHECK:   } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
func.func @reduce_first(%g: memref<32x10xf32>, %b: memref<10xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%g : memref<32x10xf32>) outs(%b : memref<10xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A named op is generalized; its two dimensions collapse into one of 1200
// iterations (5 blocks), delinearized with div/rem by the inner size.
// CHECK-LABEL: func.func @fill_2d
// CHECK: %[[N:.*]] = arith.muli %{{.*}}, %c300{{.*}} : index
// CHECK: scf.parallel (%[[TILE:.*]]) = (%{{.*}}) to (%[[N]]) step
// CHECK:   scf.parallel (%[[THREAD:.*]]) =
// CHECK:     %[[FLAT:.*]] = arith.addi %[[THREAD]], %[[TILE]] : index
// CHECK:     scf.if
// CHECK:       arith.remsi %[[FLAT]], %c300{{.*}} : index
// CHECK:       arith.divsi %[[FLAT]], %c300{{.*}} : index
// CHECK:       memref.store %{{.*}}, %arg0[%{{.*}}, %{{.*}}] : memref<4x300xf32>
// CHECK:   } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x
// CHECK-NOT: linalg.
func.func @fill_2d(%m: memref<4x300xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%m : memref<4x300xf32>)
  return
}

// -----

// Without a parallel dimension (a sum to a scalar) the op runs on one
// thread: a one-iteration loop mapped to one block around its loop nest.
// CHECK-LABEL: func.func @to_scalar
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: scf.parallel (%{{.*}}) = (%[[C0]]) to (%[[C1]]) step (%[[C1]]) {
// CHECK:   scf.for
// CHECK:     memref.store %{{.*}}, %arg1[] : memref<f32>
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x
// CHECK-NEXT: return
func.func @to_scalar(%x: memref<8xf32>, %s: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%x : memref<8xf32>) outs(%s : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %acc, %in : f32
    linalg.yield %a : f32
  }
  return
}

// -----

// A global the kernel reads is copied into a buffer of the step at its
// start by the runtime (the host binary's constants are out of the GPU's
// reach) and freed before every return.
// CHECK-LABEL: func.func @reads_global
// CHECK: %[[TABLE:.*]] = memref.get_global @table : memref<4xf32>
// CHECK: %[[COPY:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK: memref.extract_aligned_pointer_as_index %[[COPY]]
// CHECK: memref.extract_aligned_pointer_as_index %[[TABLE]]
// CHECK: %[[BYTES:.*]] = arith.constant 16 : i64
// CHECK: call @lmc_rt_copy_in(%{{.*}}, %{{.*}}, %[[BYTES]]) : (!llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK: scf.parallel
// CHECK: memref.load %[[COPY]]
// CHECK: memref.dealloc %[[COPY]]
// CHECK-NEXT: return

memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func @reads_global(%out: memref<4xf32>) {
  %t = memref.get_global @table : memref<4xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t : memref<4xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

// A boolean global (a folded mask) takes a byte per element in its
// buffer: all 32 bytes are copied, not 32 bits.
// CHECK-LABEL: func.func @reads_mask
// CHECK: memref.get_global @mask : memref<4x8xi1>
// CHECK: %[[BYTES:.*]] = arith.constant 32 : i64
// CHECK: call @lmc_rt_copy_in(%{{.*}}, %{{.*}}, %[[BYTES]])

memref.global "private" constant @mask : memref<4x8xi1> = dense<true>
func.func @reads_mask(%x: memref<4x8xf32>, %out: memref<4x8xf32>) {
  %m = memref.get_global @mask : memref<4x8xi1>
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%m, %x : memref<4x8xi1>, memref<4x8xf32>) outs(%out : memref<4x8xf32>) {
  ^bb0(%keep: i1, %in: f32, %o: f32):
    %v = arith.select %keep, %in, %zero : f32
    linalg.yield %v : f32
  }
  return
}

// -----

// A copy into a step's result becomes a kernel, and a loop nest over
// buffers (a scatter-add built before bufferization) runs on one thread.
// CHECK-LABEL: func.func @copy_and_loop
// CHECK-NOT: memref.copy
// CHECK: scf.parallel
// CHECK:   scf.parallel
// CHECK:     memref.store %{{.*}}, %arg1[%{{.*}}] : memref<8xf32>
// CHECK:   } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x
// CHECK: scf.parallel
// CHECK:   scf.for
// CHECK:     memref.store %{{.*}}, %arg1[%{{.*}}] : memref<8xf32>
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x
// CHECK-NEXT: return
func.func @copy_and_loop(%x: memref<8xf32>, %out: memref<8xf32>, %idx: memref<3xindex>) {
  memref.copy %x, %out : memref<8xf32> to memref<8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.for %i = %c0 to %c3 step %c1 {
    %row = memref.load %idx[%i] : memref<3xindex>
    %v = memref.load %out[%row] : memref<8xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %out[%row] : memref<8xf32>
  }
  return
}

// -----

// Scalars packed into one buffer for a collective and unpacked after it
// (lmc-bucket-all-reduces, bufferized): each run of element moves becomes
// one one-thread kernel, its allocations in front of it.
// CHECK-LABEL: func.func @scalar_moves
// CHECK: %[[PACK:.*]] = memref.alloc() : memref<2xf32>
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step
// CHECK:   %[[A:.*]] = memref.load %arg0[] : memref<f32>
// CHECK:   %[[B:.*]] = memref.load %arg1[] : memref<f32>
// CHECK:   memref.store %[[A]], %[[PACK]][%{{.*}}] : memref<2xf32>
// CHECK:   memref.store %[[B]], %[[PACK]][%{{.*}}] : memref<2xf32>
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x
// CHECK: call @all_reduce(%[[PACK]])
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<f32>
// CHECK: scf.parallel
// CHECK:   %[[SUM:.*]] = memref.load %[[PACK]][%{{.*}}] : memref<2xf32>
// CHECK:   memref.store %[[SUM]], %[[OUT]][] : memref<f32>
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x
// CHECK: call @use(%[[OUT]])
func.func private @all_reduce(memref<2xf32>)
func.func private @use(memref<f32>)
func.func @scalar_moves(%a: memref<f32>, %b: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %x = memref.load %a[] : memref<f32>
  %y = memref.load %b[] : memref<f32>
  %pack = memref.alloc() : memref<2xf32>
  memref.store %x, %pack[%c0] : memref<2xf32>
  memref.store %y, %pack[%c1] : memref<2xf32>
  call @all_reduce(%pack) : (memref<2xf32>) -> ()
  %s = memref.load %pack[%c0] : memref<2xf32>
  %out = memref.alloc() : memref<f32>
  memref.store %s, %out[] : memref<f32>
  call @use(%out) : (memref<f32>) -> ()
  memref.dealloc %out : memref<f32>
  memref.dealloc %pack : memref<2xf32>
  return
}

// -----

// One-thread kernels that follow each other (two short sums to scalars and
// the division of one by the other) are one launch: their loops in order
// in one one-iteration loop; the allocation between them moves in front,
// the deallocation behind.
// CHECK-LABEL: func.func @one_thread_kernels
// CHECK: %[[Q:.*]] = memref.alloc() : memref<f32>
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK:   scf.for
// CHECK:     memref.store %{{.*}}, %arg1[] : memref<f32>
// CHECK:   scf.for
// CHECK:     memref.store %{{.*}}, %arg2[] : memref<f32>
// CHECK:   arith.divf
// CHECK:   memref.store %{{.*}}, %[[Q]][] : memref<f32>
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x
// CHECK-NEXT: memref.dealloc %[[Q]] : memref<f32>
// CHECK-NEXT: return
func.func @one_thread_kernels(%x: memref<8xf32>, %s: memref<f32>, %t: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%x : memref<8xf32>) outs(%s : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %acc, %in : f32
    linalg.yield %a : f32
  }
  %q = memref.alloc() : memref<f32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%x : memref<8xf32>) outs(%t : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.mulf %in, %in : f32
    %a = arith.addf %acc, %m : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%s, %t : memref<f32>, memref<f32>) outs(%q : memref<f32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %d = arith.divf %a, %b : f32
    linalg.yield %d : f32
  }
  memref.dealloc %q : memref<f32>
  return
}

// -----

// The step's random key, loaded and hashed at function level for the masks
// two kernels draw (an exported model's dropout): each kernel reads and
// hashes it itself at its start, so that the host touches no memory and the
// read is ordered with the kernels. Nothing of it stays at function level.
// CHECK-LABEL: func.func @key_read_in_kernels
// CHECK-SAME: (%[[KEY:[a-z0-9]+]]: memref<i64>, %[[A:[a-z0-9]+]]: memref<8xi64>, %[[B:[a-z0-9]+]]: memref<4xi64>)
// CHECK: %[[THREE:.*]] = arith.constant 3 : i64
// CHECK-NOT: memref.load %[[KEY]]
// CHECK: scf.parallel
// CHECK-NEXT: %[[K1:.*]] = memref.load %[[KEY]][] : memref<i64>
// CHECK-NEXT: %[[H1:.*]] = arith.muli %[[K1]], %[[THREE]] : i64
// CHECK: memref.store %[[H1]], %[[A]]
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x
// CHECK-NOT: memref.load %[[KEY]]
// CHECK: scf.parallel
// CHECK-NEXT: %[[K2:.*]] = memref.load %[[KEY]][] : memref<i64>
// CHECK-NEXT: %[[H2:.*]] = arith.muli %[[K2]], %[[THREE]] : i64
// CHECK: %[[SUM:.*]] = arith.addi %{{.*}}, %[[H2]] : i64
// CHECK: memref.store %[[SUM]], %[[B]]
func.func @key_read_in_kernels(%key: memref<i64>, %a: memref<8xi64>, %b: memref<4xi64>) {
  %k = memref.load %key[] : memref<i64>
  %c = arith.constant 3 : i64
  %h = arith.muli %k, %c : i64
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%a : memref<8xi64>) {
  ^bb0(%o: i64):
    linalg.yield %h : i64
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%b : memref<4xi64>) {
  ^bb0(%o: i64):
    %x = arith.addi %o, %h : i64
    linalg.yield %x : i64
  }
  return
}
