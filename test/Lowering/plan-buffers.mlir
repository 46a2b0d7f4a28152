// RUN: lmc-opt %s -lmc-plan-buffers -split-input-file | FileCheck %s

// a and b live at the same time; c is allocated after a is freed and takes
// a's bytes. In program order: a at 0, b after it at 1024, c at 0 (a is
// dead by then). An arena of 1536 bytes, a global: the function is an
// entry point (nothing calls it).
// CHECK: module attributes {lmc.arenas = {reuse = 1536 : i64}}
// CHECK: memref.global "private" @__lmc_arena : memref<1536xi8> = uninitialized {alignment = 64 : i64}
// CHECK-LABEL: func.func @reuse
// CHECK: %[[ARENA:.*]] = memref.get_global @__lmc_arena : memref<1536xi8>
// CHECK: %[[A:.*]] = memref.view %[[ARENA]][%c0{{.*}}][] {lmc.planned} : memref<1536xi8> to memref<256xf32>
// CHECK: %[[B:.*]] = memref.view %[[ARENA]][%c1024{{.*}}][] {lmc.planned} : memref<1536xi8> to memref<128xf32>
// CHECK: call @use(%[[A]], %[[B]])
// CHECK: %[[C:.*]] = memref.view %[[ARENA]][%c0{{.*}}][] {lmc.planned} : memref<1536xi8> to memref<256xf32>
// CHECK: call @use(%[[C]], %[[B]])
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func private @use(memref<256xf32>, memref<128xf32>)
func.func @reuse() {
  %a = memref.alloc() : memref<256xf32>
  %b = memref.alloc() : memref<128xf32>
  call @use(%a, %b) : (memref<256xf32>, memref<128xf32>) -> ()
  memref.dealloc %a : memref<256xf32>
  %c = memref.alloc() : memref<256xf32>
  call @use(%c, %b) : (memref<256xf32>, memref<128xf32>) -> ()
  memref.dealloc %b : memref<128xf32>
  memref.dealloc %c : memref<256xf32>
  return
}

// -----

// Program order fragments: a (64 bytes) at 0, b (64) at 64; a dies and c
// (128) fits in neither a's bytes nor below b: at 128, an arena of 256.
// Largest first places c at 0, a below it in time (a is dead before c is
// made) at 0 too, and b, alive beside both, at 128: 192 bytes, the most
// ever alive at once, a quarter less, so that plan is taken.
// CHECK: module attributes {lmc.arenas = {fragments = 192 : i64}}
// CHECK-LABEL: func.func @fragments
// CHECK: %[[A:.*]] = memref.view %{{.*}}[%c0{{.*}}][] {lmc.planned} : memref<192xi8> to memref<16xf32>
// CHECK: %[[B:.*]] = memref.view %{{.*}}[%c128{{.*}}][] {lmc.planned} : memref<192xi8> to memref<16xf32>
// CHECK: %[[C:.*]] = memref.view %{{.*}}[%c0{{.*}}][] {lmc.planned} : memref<192xi8> to memref<32xf32>
func.func private @use16(memref<16xf32>)
func.func private @use32(memref<32xf32>, memref<16xf32>)
func.func @fragments() {
  %a = memref.alloc() : memref<16xf32>
  %b = memref.alloc() : memref<16xf32>
  call @use16(%a) : (memref<16xf32>) -> ()
  memref.dealloc %a : memref<16xf32>
  %c = memref.alloc() : memref<32xf32>
  call @use32(%c, %b) : (memref<32xf32>, memref<16xf32>) -> ()
  memref.dealloc %b : memref<16xf32>
  memref.dealloc %c : memref<32xf32>
  return
}

// -----

// Left alone: a buffer the function returns (no dealloc), one of dynamic
// size, one of i1 (no whole bytes per element), one freed inside a region,
// one with an alignment above 64 bytes. No arena, no attribute.
// CHECK-LABEL: module {
// CHECK-NOT: memref.global
// CHECK-LABEL: func.func @kept
// CHECK-NOT: memref.view
// CHECK: return
func.func private @use_dyn(memref<?xf32>)
func.func private @use_i1(memref<8xi1>)
func.func @kept(%n: index, %flag: i1) -> memref<16xf32> {
  %r = memref.alloc() : memref<16xf32>
  %d = memref.alloc(%n) : memref<?xf32>
  call @use_dyn(%d) : (memref<?xf32>) -> ()
  memref.dealloc %d : memref<?xf32>
  %m = memref.alloc() : memref<8xi1>
  call @use_i1(%m) : (memref<8xi1>) -> ()
  memref.dealloc %m : memref<8xi1>
  %s = memref.alloc() : memref<16xf32>
  scf.if %flag {
    memref.dealloc %s : memref<16xf32>
  }
  %w = memref.alloc() {alignment = 128 : i64} : memref<16xf32>
  memref.dealloc %w : memref<16xf32>
  return %r : memref<16xf32>
}

// -----

// Two entry points share one arena as big as the larger of theirs; a
// function one of them calls keeps its allocations (its buffers live while
// its caller's do, and a recursive call would need a second copy).
// CHECK: module attributes {lmc.arenas = {big = 4096 : i64, small = 1024 : i64}}
// CHECK: memref.global "private" @__lmc_arena : memref<4096xi8>
// CHECK-NOT: memref.global
// CHECK-LABEL: func.func private @helper
// CHECK: memref.alloc() : memref<16xf32>
// CHECK: memref.dealloc
// CHECK-LABEL: func.func @small
// CHECK: memref.get_global @__lmc_arena :
// CHECK-LABEL: func.func @big
// CHECK: memref.get_global @__lmc_arena :
func.func private @consume(memref<16xf32>)
func.func private @helper() {
  %h = memref.alloc() : memref<16xf32>
  call @consume(%h) : (memref<16xf32>) -> ()
  memref.dealloc %h : memref<16xf32>
  return
}
func.func @small() {
  %s = memref.alloc() : memref<256xf32>
  call @helper() : () -> ()
  memref.dealloc %s : memref<256xf32>
  return
}
func.func @big() {
  %b = memref.alloc() : memref<1024xf32>
  memref.dealloc %b : memref<1024xf32>
  return
}

// -----

// Ownership-based deallocation frees every buffer at the end of the body;
// a buffer is dead after the last op that reaches it, here through a view
// (a) and inside a loop nest (b): c and d, allocated after those, take
// their bytes. An arena of 1024 bytes instead of 2048.
// CHECK: module attributes {lmc.arenas = {last_use = 1024 : i64}}
// CHECK-LABEL: func.func @last_use
// CHECK: %[[A:.*]] = memref.view %{{.*}}[%c0{{.*}}][] {lmc.planned} : memref<1024xi8> to memref<128xf32>
// CHECK: %[[B:.*]] = memref.view %{{.*}}[%c512{{.*}}][] {lmc.planned} : memref<1024xi8> to memref<128xf32>
// CHECK: scf.for
// CHECK: %[[C:.*]] = memref.view %{{.*}}[%c0{{.*}}][] {lmc.planned} : memref<1024xi8> to memref<128xf32>
// CHECK: %[[D:.*]] = memref.view %{{.*}}[%c512{{.*}}][] {lmc.planned} : memref<1024xi8> to memref<128xf32>
func.func private @use2(memref<128xf32>, memref<128xf32>)
func.func private @use_view(memref<2x64xf32>)
func.func @last_use() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %a = memref.alloc() : memref<128xf32>
  %b = memref.alloc() : memref<128xf32>
  %view = memref.expand_shape %a [[0, 1]] output_shape [2, 64] : memref<128xf32> into memref<2x64xf32>
  call @use_view(%view) : (memref<2x64xf32>) -> ()
  scf.for %i = %c0 to %c128 step %c1 {
    %x = memref.load %b[%i] : memref<128xf32>
    memref.store %x, %b[%i] : memref<128xf32>
  }
  %c = memref.alloc() : memref<128xf32>
  %d = memref.alloc() : memref<128xf32>
  call @use2(%c, %d) : (memref<128xf32>, memref<128xf32>) -> ()
  memref.dealloc %a : memref<128xf32>
  memref.dealloc %b : memref<128xf32>
  memref.dealloc %c : memref<128xf32>
  memref.dealloc %d : memref<128xf32>
  return
}
