// RUN: lmc-opt %s -split-input-file -lmc-linalg-to-gpu-loops | FileCheck %s

// An embedding gradient's scatter-add over [4, 64] token positions of 128
// columns (the loop nest lmc builds before bufferization): rows repeat, so
// the token loops must stay in order, but the column loop's iterations
// write different elements. One thread per column (one block of 256, 128
// busy) runs the token loops in their order, so each element adds its
// updates in the order the CPU does.
// CHECK-LABEL: func.func @embedding_gradient
// CHECK: scf.parallel (%[[TILE:.*]]) = (%{{.*}}) to (%c128) step
// CHECK:   scf.parallel (%[[THREAD:.*]]) =
// CHECK:     %[[COL:.*]] = arith.addi %[[THREAD]], %[[TILE]] : index
// CHECK:     scf.if
// CHECK:       scf.for %[[B:.*]] = %c0 to %c4 step %c1 {
// CHECK:         scf.for %[[T:.*]] = %c0 to %c64 step %c1 {
// CHECK:           %[[TOKEN:.*]] = memref.load %arg0[%[[B]], %[[T]]] : memref<4x64xi64>
// CHECK:           %[[ROW:.*]] = arith.index_cast %[[TOKEN]] : i64 to index
// CHECK:           %[[U:.*]] = memref.load %arg1[%[[B]], %[[T]], %[[COL]]] : memref<4x64x128xf32>
// CHECK:           %[[OLD:.*]] = memref.load %[[TABLE:.*]][%[[ROW]], %[[COL]]] : memref<256x128xf32>
// CHECK:           %[[NEW:.*]] = arith.addf %[[OLD]], %[[U]] : f32
// CHECK:           memref.store %[[NEW]], %[[TABLE]][%[[ROW]], %[[COL]]] : memref<256x128xf32>
// CHECK:   } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x
func.func private @use(memref<256x128xf32>)
func.func @embedding_gradient(%tokens: memref<4x64xi64>, %updates: memref<4x64x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %table = memref.alloc() : memref<256x128xf32>
  scf.for %b = %c0 to %c4 step %c1 {
    scf.for %t = %c0 to %c64 step %c1 {
      scf.for %d = %c0 to %c128 step %c1 {
        %token = memref.load %tokens[%b, %t] : memref<4x64xi64>
        %row = arith.index_cast %token : i64 to index
        %u = memref.load %updates[%b, %t, %d] : memref<4x64x128xf32>
        %old = memref.load %table[%row, %d] : memref<256x128xf32>
        %new = arith.addf %old, %u : f32
        memref.store %new, %table[%row, %d] : memref<256x128xf32>
      }
    }
  }
  call @use(%table) : (memref<256x128xf32>) -> ()
  memref.dealloc %table : memref<256x128xf32>
  return
}

// -----

// Left on one thread (a one-iteration loop mapped to a block around the
// nests; the five one-thread kernels, one after another, are one): a nest
// writing a function argument (it could alias what it reads), one reading
// its target elsewhere than it writes, one whose store indices are all
// computed (no loop writes apart), one storing twice, and one that is not
// a perfect nest.
// CHECK-LABEL: func.func @kept
// CHECK: scf.parallel (%{{.*}}) = (%c0{{.*}}) to (%c1{{.*}}) step (%c1{{.*}}) {
// CHECK-NOT: scf.parallel
// CHECK-COUNT-5: scf.for %{{.*}} = %c0 to %c64 step %c1 {
// CHECK-NOT: scf.for %{{.*}} = %c0 to %c64
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @kept(%idx: memref<64xindex>, %src: memref<64x8xf32>, %out: memref<16x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  scf.for %n = %c0 to %c64 step %c1 {
    scf.for %d = %c0 to %c8 step %c1 {
      %r = memref.load %idx[%n] : memref<64xindex>
      %u = memref.load %src[%n, %d] : memref<64x8xf32>
      %o = memref.load %out[%r, %d] : memref<16x8xf32>
      %s = arith.addf %o, %u : f32
      memref.store %s, %out[%r, %d] : memref<16x8xf32>
    }
  }
  %t = memref.alloc() : memref<16x8xf32>
  scf.for %n = %c0 to %c64 step %c1 {
    scf.for %d = %c0 to %c8 step %c1 {
      %r = memref.load %idx[%n] : memref<64xindex>
      %o = memref.load %t[%c0, %d] : memref<16x8xf32>
      memref.store %o, %t[%r, %d] : memref<16x8xf32>
    }
  }
  scf.for %n = %c0 to %c64 step %c1 {
    scf.for %d = %c0 to %c8 step %c1 {
      %r = memref.load %idx[%n] : memref<64xindex>
      %e = arith.remui %d, %c8 : index
      %u = memref.load %src[%n, %d] : memref<64x8xf32>
      memref.store %u, %t[%r, %e] : memref<16x8xf32>
    }
  }
  scf.for %n = %c0 to %c64 step %c1 {
    scf.for %d = %c0 to %c8 step %c1 {
      %u = memref.load %src[%n, %d] : memref<64x8xf32>
      memref.store %u, %t[%c0, %d] : memref<16x8xf32>
      memref.store %u, %t[%c1, %d] : memref<16x8xf32>
    }
  }
  scf.for %n = %c0 to %c64 step %c1 {
    %r = memref.load %idx[%n] : memref<64xindex>
    scf.for %d = %c0 to %c8 step %c1 {
      %u = memref.load %src[%n, %d] : memref<64x8xf32>
      memref.store %u, %t[%r, %d] : memref<16x8xf32>
    }
  }
  memref.dealloc %t : memref<16x8xf32>
  return
}
