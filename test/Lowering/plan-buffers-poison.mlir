// RUN: lmc-opt %s -lmc-plan-buffers="arena-from-runtime poison" | FileCheck %s
// RUN: lmc-opt %s -lmc-plan-buffers=arena-from-runtime | FileCheck %s --check-prefix=PLAIN

// A checking build (lmc --poison-step-buffers): each buffer's bytes in the
// arena are filled with 0xFF where the buffer is allocated, before anything
// uses it, so a read of a buffer no op wrote sees NaN (or -1, or true)
// instead of what the buffer that held those bytes before left there. c
// takes a's bytes after a dies: they are poisoned again for c.
// CHECK: func.func private @lmc_rt_poison_buffer(memref<1xi8>, i64)
// CHECK-LABEL: func.func @reuse
// CHECK: %[[ARENA:.*]] = call @lmc_rt_step_arena
// CHECK: %[[A:.*]] = memref.view %[[ARENA]][%[[AT0:c0[_0-9]*]]][] {lmc.planned} : memref<1536xi8> to memref<256xf32>
// CHECK-NEXT: %[[A0:.*]] = memref.view %[[ARENA]][%[[AT0]]][] : memref<1536xi8> to memref<1xi8>
// CHECK-NEXT: %[[ABYTES:.*]] = arith.constant 1024 : i64
// CHECK-NEXT: call @lmc_rt_poison_buffer(%[[A0]], %[[ABYTES]])
// CHECK: %[[B:.*]] = memref.view %[[ARENA]][%[[AT1024:c1024[_0-9]*]]][] {lmc.planned} : memref<1536xi8> to memref<128xf32>
// CHECK-NEXT: %[[B0:.*]] = memref.view %[[ARENA]][%[[AT1024]]][] : memref<1536xi8> to memref<1xi8>
// CHECK-NEXT: %[[BBYTES:.*]] = arith.constant 512 : i64
// CHECK-NEXT: call @lmc_rt_poison_buffer(%[[B0]], %[[BBYTES]])
// CHECK: call @use(%[[A]], %[[B]])
// CHECK: %[[C:.*]] = memref.view %[[ARENA]][%[[CAT0:c0[_0-9]*]]][] {lmc.planned} : memref<1536xi8> to memref<256xf32>
// CHECK-NEXT: %[[C0:.*]] = memref.view %[[ARENA]][%[[CAT0]]][] : memref<1536xi8> to memref<1xi8>
// CHECK-NEXT: %[[CBYTES:.*]] = arith.constant 1024 : i64
// CHECK-NEXT: call @lmc_rt_poison_buffer(%[[C0]], %[[CBYTES]])
// CHECK: call @use(%[[C]], %[[B]])
// Without the option nothing is filled.
// PLAIN-NOT: lmc_rt_poison_buffer
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
