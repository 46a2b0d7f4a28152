// RUN: lmc-opt %s -split-input-file -lmc-outline-loop-nests | FileCheck %s

// Each top-level loop nest moves into a private function of its own, called
// in its place. Constants and views are cloned in with their operands; the
// buffers (each once) and scalars become arguments. The buffer the caller
// allocated and the caller's own buffer argument (a tensor the runtime
// passes in a buffer of its own) are noalias.
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[ARG:.*]]: memref<4x8xf32>, %[[SCALE:.*]]: f32)
// CHECK: %[[ALLOC:.*]] = memref.alloc() : memref<32xf32>
// CHECK: call @step_loop0(%[[ARG]], %[[SCALE]], %[[ALLOC]]) : (memref<4x8xf32>, f32, memref<32xf32>) -> ()
// CHECK: call @step_loop1(%[[ALLOC]]) : (memref<32xf32>) -> ()
// CHECK-NOT: scf.for
// CHECK: return
// CHECK: func.func private @step_loop0(%[[IN:.*]]: memref<4x8xf32> {llvm.noalias}, %[[S:.*]]: f32, %[[BUF:.*]]: memref<32xf32> {llvm.noalias}) attributes {lmc.outlined}
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[VIEW:.*]] = memref.expand_shape %[[BUF]] {{\[\[}}0, 1]] output_shape [4, 8]
// CHECK: scf.for %[[I:.*]] = %[[C0]] to %[[C4]]
// CHECK: scf.for %[[J:.*]] =
// CHECK: memref.load %[[IN]][%[[I]], %[[J]]]
// CHECK: arith.mulf %{{.*}}, %[[S]]
// CHECK: memref.store %{{.*}}, %[[VIEW]][%[[I]], %[[J]]]
// CHECK: return
// CHECK: func.func private @step_loop1(%{{.*}}: memref<32xf32> {llvm.noalias}) attributes {lmc.outlined}
func.func @step(%arg: memref<4x8xf32>, %scale: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  %buf = memref.alloc() : memref<32xf32>
  %view = memref.expand_shape %buf [[0, 1]] output_shape [4, 8] : memref<32xf32> into memref<4x8xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %x = memref.load %arg[%i, %j] : memref<4x8xf32>
      %y = arith.mulf %x, %scale : f32
      memref.store %y, %view[%i, %j] : memref<4x8xf32>
    }
  }
  scf.for %k = %c0 to %c32 step %c1 {
    memref.store %zero, %buf[%k] : memref<32xf32>
  }
  memref.dealloc %buf : memref<32xf32>
  return
}

// -----

// A nest with results, and one that reads a strided buffer that is not a
// view (the bare-pointer convention cannot pass it), stay in place.
// CHECK-LABEL: func.func @kept
// CHECK: scf.for {{.*}} iter_args
// CHECK: scf.for
// CHECK-NOT: func.func private
#strided = strided<[16, 1], offset: 2>
func.func @kept(%a: memref<4xf32>, %s: memref<4x4xf32, #strided>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f32) {
    %x = memref.load %a[%i] : memref<4xf32>
    %next = arith.addf %acc, %x : f32
    scf.yield %next : f32
  }
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %sum, %s[%i, %i] : memref<4x4xf32, #strided>
  }
  return %sum : f32
}

// -----

// A name already taken gets a fresh one.
// CHECK-LABEL: func.func @f
// CHECK: call @f_loop0_0()
// CHECK: func.func private @f_loop0_0() attributes {lmc.outlined}
// CHECK: func.func private @f_loop0()
func.func @f() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c1 step %c1 {
    func.call @f_loop0() : () -> ()
  }
  return
}
func.func private @f_loop0()

// -----

// A parallel nest (an OpenMP loop later) is outlined the same way.
// CHECK-LABEL: func.func @parallel
// CHECK: call @parallel_loop0(%{{.*}}) : (memref<64xf32>) -> ()
// CHECK: func.func private @parallel_loop0(%{{.*}}: memref<64xf32> {llvm.noalias}) attributes {lmc.outlined}
// CHECK: scf.parallel
func.func @parallel(%a: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    memref.store %zero, %a[%i] : memref<64xf32>
  }
  return
}

// -----

// A buffer another argument views (memref.view is not cloned in) is not
// noalias: both arguments reach the same memory.
// CHECK-LABEL: func.func @viewed
// CHECK: func.func private @viewed_loop0(%{{.*}}: memref<128xi8>, %{{.*}}: memref<32xf32>) attributes {lmc.outlined}
func.func @viewed() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  %byte = arith.constant 0 : i8
  %buf = memref.alloc() : memref<128xi8>
  %v = memref.view %buf[%c0][] : memref<128xi8> to memref<32xf32>
  scf.for %i = %c0 to %c32 step %c1 {
    memref.store %byte, %buf[%i] : memref<128xi8>
    memref.store %zero, %v[%i] : memref<32xf32>
  }
  return
}

// -----

// The same for a buffer argument of the caller that another argument views.
// CHECK-LABEL: func.func @viewed_argument
// CHECK: func.func private @viewed_argument_loop0(%{{.*}}: memref<128xi8>, %{{.*}}: memref<32xf32>) attributes {lmc.outlined}
func.func @viewed_argument(%buf: memref<128xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  %byte = arith.constant 0 : i8
  %v = memref.view %buf[%c0][] : memref<128xi8> to memref<32xf32>
  scf.for %i = %c0 to %c32 step %c1 {
    memref.store %byte, %buf[%i] : memref<128xi8>
    memref.store %zero, %v[%i] : memref<32xf32>
  }
  return
}

// -----

// Two buffers lmc-plan-buffers placed in one arena (views tagged
// lmc.planned) are buffers of their own, noalias like allocations; an
// untagged view of the same arena is not.
// CHECK-LABEL: func.func @planned
// CHECK: func.func private @planned_loop0(%{{.*}}: memref<16xf32> {llvm.noalias}, %{{.*}}: memref<16xf32> {llvm.noalias}, %{{.*}}: memref<16xf32>) attributes {lmc.outlined}
func.func @planned() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %arena = memref.alloc() {alignment = 64 : i64} : memref<192xi8>
  %a = memref.view %arena[%c0][] {lmc.planned} : memref<192xi8> to memref<16xf32>
  %b = memref.view %arena[%c64][] {lmc.planned} : memref<192xi8> to memref<16xf32>
  %c = memref.view %arena[%c128][] : memref<192xi8> to memref<16xf32>
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %a[%i] : memref<16xf32>
    memref.store %x, %b[%i] : memref<16xf32>
    memref.store %x, %c[%i] : memref<16xf32>
  }
  memref.dealloc %arena : memref<192xi8>
  return
}
