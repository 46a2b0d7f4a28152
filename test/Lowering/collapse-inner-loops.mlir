// RUN: lmc-opt %s -split-input-file -lmc-collapse-inner-loops | FileCheck %s

// An SGD-like update of a [16, 8, 3, 3] convolution weight in place (read
// and written): dense operands, identity maps. The three trailing loops (72
// iterations, under 256) fold into one: the nest runs over [16, 72], the
// first loop kept, and the weight is viewed once for its read and its
// write.
// CHECK-LABEL: func.func @weight_update
// CHECK-SAME: (%[[P:.*]]: memref<16x8x3x3xf32>, %[[G:.*]]: memref<16x8x3x3xf32>)
// CHECK-DAG: %[[GC:.*]] = memref.collapse_shape %[[G]] {{\[}}[0], [1, 2, 3]] : memref<16x8x3x3xf32> into memref<16x72xf32>
// CHECK-DAG: %[[PC:.*]] = memref.collapse_shape %[[P]] {{\[}}[0], [1, 2, 3]] : memref<16x8x3x3xf32> into memref<16x72xf32>
// CHECK-NOT: memref.collapse_shape
// CHECK: linalg.generic {indexing_maps = [#[[ID:.*]], #[[ID]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[GC]], %[[PC]] : memref<16x72xf32>, memref<16x72xf32>) outs(%[[PC]] : memref<16x72xf32>)
// CHECK: arith.mulf
// CHECK: arith.subf
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @weight_update(%p: memref<16x8x3x3xf32>, %g: memref<16x8x3x3xf32>) {
  %lr = arith.constant 1.0e-3 : f32
  linalg.generic {indexing_maps = [#id4, #id4, #id4],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%g, %p : memref<16x8x3x3xf32>, memref<16x8x3x3xf32>) outs(%p : memref<16x8x3x3xf32>) {
  ^bb0(%gi: f32, %pi: f32, %out: f32):
    %step = arith.mulf %gi, %lr : f32
    %new = arith.subf %pi, %step : f32
    linalg.yield %new : f32
  }
  return
}

// -----

// Fewest loops that reach 256 iterations: [4, 64, 16, 16] becomes
// [4, 64, 256], the bias read per channel (dimension 1) keeping the
// channel loop of its own.
// CHECK-LABEL: func.func @bias_add
// CHECK: memref.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : memref<4x64x16x16xf32> into memref<4x64x256xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: memref<4x64x256xf32>, memref<64xf32>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#chan = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @bias_add(%x: memref<4x64x16x16xf32>, %b: memref<64xf32>, %y: memref<4x64x16x16xf32>) {
  linalg.generic {indexing_maps = [#id, #chan, #id],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %b : memref<4x64x16x16xf32>, memref<64xf32>) outs(%y : memref<4x64x16x16xf32>) {
  ^bb0(%xi: f32, %bi: f32, %yi: f32):
    %s = arith.addf %xi, %bi : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Left alone: a map that does not keep the trailing loops adjacent (a
// transpose of the last two), a reduction, an innermost loop already long
// enough, a strided operand (a subview), and two loops (the first is
// never folded).
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: memref.collapse_shape
// CHECK: return
#t_in = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
#id4b = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#r_out = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @untouched(%a: memref<4x8x3x3xf32>, %b: memref<4x8x3x3xf32>, %r: memref<4x8x3xf32>,
                     %l: memref<4x8x512xf32>, %m: memref<4x8x512xf32>,
                     %big: memref<4x8x6xf32>, %s: memref<4x8x3xf32>,
                     %u: memref<64x3xf32>, %v: memref<64x3xf32>) {
  linalg.generic {indexing_maps = [#t_in, #id4b],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%a : memref<4x8x3x3xf32>) outs(%b : memref<4x8x3x3xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [#id4b, #r_out],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a : memref<4x8x3x3xf32>) outs(%r : memref<4x8x3xf32>) {
  ^bb0(%x: f32, %y: f32):
    %s2 = arith.addf %x, %y : f32
    linalg.yield %s2 : f32
  }
  linalg.generic {indexing_maps = [#id3, #id3],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%l : memref<4x8x512xf32>) outs(%m : memref<4x8x512xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  %view = memref.subview %big[0, 0, 0] [4, 8, 3] [1, 1, 2] : memref<4x8x6xf32> to memref<4x8x3xf32, strided<[48, 6, 2]>>
  linalg.generic {indexing_maps = [#id3, #id3],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%view : memref<4x8x3xf32, strided<[48, 6, 2]>>) outs(%s : memref<4x8x3xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [#id2, #id2],
                  iterator_types = ["parallel", "parallel"]}
      ins(%u : memref<64x3xf32>) outs(%v : memref<64x3xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  return
}
