// RUN: lmc-opt %s -lmc-plan-buffers=arena-from-runtime | FileCheck %s

// The CUDA target's kernels cannot read a global of the host binary: each
// planned entry point asks the runtime for the arena, sized for the larger
// plan (1024 floats = 4096 bytes), so every call gets the same block. The
// offsets are planned as with a global (c reuses a's bytes after a dies).
// CHECK: module attributes {lmc.arenas = {big = 4096 : i64, reuse = 1536 : i64}}
// CHECK-NOT: memref.global
// CHECK: func.func private @lmc_rt_step_arena(i64) -> memref<4096xi8>
// CHECK-LABEL: func.func @reuse
// CHECK: %[[BYTES:.*]] = arith.constant 4096 : i64
// CHECK: %[[ARENA:.*]] = call @lmc_rt_step_arena(%[[BYTES]]) : (i64) -> memref<4096xi8>
// CHECK: memref.view %[[ARENA]][%c0{{.*}}][] {lmc.planned} : memref<4096xi8> to memref<256xf32>
// CHECK: memref.view %[[ARENA]][%c1024{{.*}}][] {lmc.planned} : memref<4096xi8> to memref<128xf32>
// CHECK: memref.view %[[ARENA]][%c0{{.*}}][] {lmc.planned} : memref<4096xi8> to memref<256xf32>
// CHECK-NOT: memref.dealloc
// CHECK: return
// CHECK-LABEL: func.func @big
// CHECK: call @lmc_rt_step_arena(%{{.*}}) : (i64) -> memref<4096xi8>
// CHECK: memref.view {{.*}} to memref<1024xf32>
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
func.func private @consume(memref<1024xf32>)
func.func @big() {
  %b = memref.alloc() : memref<1024xf32>
  call @consume(%b) : (memref<1024xf32>) -> ()
  memref.dealloc %b : memref<1024xf32>
  return
}
