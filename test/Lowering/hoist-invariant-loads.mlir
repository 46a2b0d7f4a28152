// RUN: lmc-opt %s -split-input-file -lmc-hoist-invariant-loads | FileCheck %s

// An embedding gather as linalg-to-loops leaves it: the row's token id and
// position are read for every column. The stores go to a noalias argument,
// so neither index can change in the column loop: both are read once,
// before it (the position from a constant global). The table rows, whose
// indices change with the column, stay.
// CHECK-LABEL: func.func private @gather
// CHECK: scf.parallel (%[[B:.*]], %[[T:.*]]) =
// CHECK: %[[ID:.*]] = memref.load %{{.*}}[%[[B]], %[[T]]] : memref<2x4xi64>
// CHECK: %[[POS:.*]] = memref.load %{{.*}}[%[[T]]] : memref<4xi64>
// CHECK: scf.for %[[D:.*]] =
// CHECK-NOT: memref.load %{{.*}} : memref<2x4xi64>
// CHECK: arith.index_cast %[[ID]]
// CHECK: arith.index_cast %[[POS]]
// CHECK: memref.load %{{.*}}[%{{.*}}, %[[D]]] : memref<16x8xf32>
// CHECK: memref.load %{{.*}}[%{{.*}}, %[[D]]] : memref<4x8xf32>
// CHECK: memref.store
memref.global "private" constant @positions : memref<4xi64> = dense<[0, 1, 2, 3]>
func.func private @gather(%ids: memref<2x4xi64>, %table: memref<16x8xf32>,
                          %pos_table: memref<4x8xf32>,
                          %out: memref<2x4x8xf32> {llvm.noalias})
    attributes {lmc.outlined} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %positions = memref.get_global @positions : memref<4xi64>
  scf.parallel (%b, %t) = (%c0, %c0) to (%c2, %c4) step (%c1, %c1) {
    scf.for %d = %c0 to %c8 step %c1 {
      %id = memref.load %ids[%b, %t] : memref<2x4xi64>
      %p = memref.load %positions[%t] : memref<4xi64>
      %row = arith.index_cast %id : i64 to index
      %prow = arith.index_cast %p : i64 to index
      %x = memref.load %table[%row, %d] : memref<16x8xf32>
      %y = memref.load %pos_table[%prow, %d] : memref<4x8xf32>
      %sum = arith.addf %x, %y : f32
      memref.store %sum, %out[%b, %t, %d] : memref<2x4x8xf32>
    }
    scf.reduce
  }
  return
}

// -----

// Scalars an optimizer update reads per element (a flag, a factor in a
// noalias argument) leave the loop; the stored buffers are the others
// (plain arguments) and a view of one of them.
// CHECK-LABEL: func.func private @update
// CHECK: %[[FLAG:.*]] = memref.load %{{.*}}[] : memref<i1>
// CHECK: %[[FACTOR:.*]] = memref.load %{{.*}}[] : memref<f32>
// CHECK: scf.for
// CHECK-NOT: memref.load %{{.*}}[] :
// CHECK: arith.mulf %{{.*}}, %[[FACTOR]]
// CHECK: arith.select %[[FLAG]]
func.func private @update(%param: memref<8xf32>, %grad: memref<2x4xf32>,
                          %flag: memref<i1> {llvm.noalias},
                          %factor: memref<f32> {llvm.noalias})
    attributes {lmc.outlined} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %flat = memref.collapse_shape %grad [[0, 1]] : memref<2x4xf32> into memref<8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    %keep = memref.load %flag[] : memref<i1>
    %f = memref.load %factor[] : memref<f32>
    %p = memref.load %param[%i] : memref<8xf32>
    %g = memref.load %flat[%i] : memref<8xf32>
    %step = arith.mulf %g, %f : f32
    %new = arith.subf %p, %step : f32
    %chosen = arith.select %keep, %new, %p : f32
    memref.store %chosen, %param[%i] : memref<8xf32>
    memref.store %step, %flat[%i] : memref<8xf32>
  }
  return
}

// -----

// What stays. A load from the buffer the loop stores to; a load from a
// buffer that may be the stored one (two plain arguments); a load in a
// loop that may not run (its bound an argument); a load in a loop that
// calls a function (which may store anywhere); and anything in a function
// that is not an outlined nest.
// CHECK-LABEL: func.func private @stays
// CHECK: scf.for
// CHECK-NEXT: memref.load %{{.*}}[] : memref<f32>
// CHECK-NEXT: memref.load %{{.*}}[] : memref<f32>
// CHECK: scf.for
// CHECK-NEXT: memref.load %{{.*}}[] : memref<f32>
// CHECK: scf.for
// CHECK-NEXT: memref.load %{{.*}}[] : memref<f32>
// CHECK-LABEL: func.func @not_outlined
// CHECK: scf.for
// CHECK-NEXT: memref.load
func.func private @opaque()
func.func private @stays(%a: memref<f32> {llvm.noalias}, %b: memref<f32>,
                         %c: memref<f32>, %out: memref<8xf32>, %n: index)
    attributes {lmc.outlined} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %a[] : memref<f32>
    %y = memref.load %b[] : memref<f32>
    %s = arith.addf %x, %y : f32
    memref.store %s, %a[] : memref<f32>
    memref.store %s, %c[] : memref<f32>
  }
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[] : memref<f32>
    memref.store %x, %out[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %a[] : memref<f32>
    func.call @opaque() : () -> ()
    memref.store %x, %out[%i] : memref<8xf32>
  }
  return
}
func.func @not_outlined(%a: memref<f32> {llvm.noalias}, %out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %a[] : memref<f32>
    memref.store %x, %out[%i] : memref<8xf32>
  }
  return
}
