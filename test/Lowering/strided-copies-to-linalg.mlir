// RUN: lmc-opt %s -lmc-strided-copies-to-linalg | FileCheck %s

// A copy into a strided slice (a concat piece) becomes linalg.copy; a copy
// between contiguous buffers stays memref.copy (LLVM makes it a memcpy),
// including one into a contiguous slice.
// CHECK-LABEL: func.func @copies
// CHECK: linalg.copy ins(%arg0 : memref<2x3xf32>) outs(%{{.*}} : memref<2x3xf32, strided<[9, 1], offset: 3>>)
// CHECK: memref.copy %arg0, %arg1 : memref<2x3xf32> to memref<2x3xf32>
// CHECK: memref.copy %arg0, %{{.*}} : memref<2x3xf32> to memref<2x3xf32, strided<[3, 1], offset: 6>>
// CHECK-NOT: linalg.copy
func.func @copies(%piece: memref<2x3xf32>, %same: memref<2x3xf32>, %whole: memref<2x9xf32>, %rows: memref<4x3xf32>) {
  %slice = memref.subview %whole[0, 3] [2, 3] [1, 1] : memref<2x9xf32> to memref<2x3xf32, strided<[9, 1], offset: 3>>
  memref.copy %piece, %slice : memref<2x3xf32> to memref<2x3xf32, strided<[9, 1], offset: 3>>
  memref.copy %piece, %same : memref<2x3xf32> to memref<2x3xf32>
  %tail = memref.subview %rows[2, 0] [2, 3] [1, 1] : memref<4x3xf32> to memref<2x3xf32, strided<[3, 1], offset: 6>>
  memref.copy %piece, %tail : memref<2x3xf32> to memref<2x3xf32, strided<[3, 1], offset: 6>>
  return
}
