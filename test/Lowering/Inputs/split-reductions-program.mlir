func.func private @printMemrefF32(memref<*xf32>)

// Small integers as floats, so that every order of summation is exact:
// x[i, j] = (7 i + 3 j) mod 11 - 5.
func.func @fill2(%m: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%m : memref<?x?xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c7 = arith.constant 7 : index
    %c3 = arith.constant 3 : index
    %c11 = arith.constant 11 : index
    %c5 = arith.constant 5 : index
    %a = arith.muli %i, %c7 : index
    %b = arith.muli %j, %c3 : index
    %s = arith.addi %a, %b : index
    %r = arith.remui %s, %c11 : index
    %v = arith.subi %r, %c5 : index
    %vi = arith.index_cast %v : index to i64
    %f = arith.sitofp %vi : i64 to f32
    linalg.yield %f : f32
  }
  return
}

func.func @print(%m: memref<?xf32>) {
  %u = memref.cast %m : memref<?xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

func.func @main() {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  // Column sums (a bias gradient): x[512, 3] over its rows, into outputs
  // that already hold 1 (the reduction adds to them).
  %x = memref.alloc() : memref<512x3xf32>
  %xd = memref.cast %x : memref<512x3xf32> to memref<?x?xf32>
  call @fill2(%xd) : (memref<?x?xf32>) -> ()
  %cols = memref.alloc() : memref<3xf32>
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%cols : memref<3xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>], iterator_types = ["reduction", "parallel"]} ins(%x : memref<512x3xf32>) outs(%cols : memref<3xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  // Row maxima of y - 10 (all negative) and row sums of squares in one op
  // (two outputs): y[4, 1000].
  %y = memref.alloc() : memref<4x1000xf32>
  %yd = memref.cast %y : memref<4x1000xf32> to memref<?x?xf32>
  call @fill2(%yd) : (memref<?x?xf32>) -> ()
  %max = memref.alloc() : memref<4xf32>
  %sq = memref.alloc() : memref<4xf32>
  linalg.fill ins(%ninf : f32) outs(%max : memref<4xf32>)
  linalg.fill ins(%zero : f32) outs(%sq : memref<4xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%y : memref<4x1000xf32>) outs(%max, %sq : memref<4xf32>, memref<4xf32>) {
  ^bb0(%in: f32, %m: f32, %q: f32):
    %ten = arith.constant 10.0 : f32
    %d = arith.subf %in, %ten : f32
    %mx = arith.maximumf %m, %d : f32
    %p = arith.mulf %in, %in : f32
    %a = arith.addf %p, %q : f32
    linalg.yield %mx, %a : f32, f32
  }
  // Row sums weighted by the column index (the body reads linalg.index).
  %w = memref.alloc() : memref<4xf32>
  linalg.fill ins(%zero : f32) outs(%w : memref<4xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%y : memref<4x1000xf32>) outs(%w : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %jf = arith.sitofp %ji : i64 to f32
    %p = arith.mulf %in, %jf : f32
    %a = arith.addf %acc, %p : f32
    linalg.yield %a : f32
  }
  // A sum to a scalar over three dimensions: z[16, 32, 64] viewed from a
  // [512, 64] matrix.
  %z = memref.alloc() : memref<512x64xf32>
  %zd = memref.cast %z : memref<512x64xf32> to memref<?x?xf32>
  call @fill2(%zd) : (memref<?x?xf32>) -> ()
  %z3 = memref.expand_shape %z [[0, 1], [2]] output_shape [16, 32, 64] : memref<512x64xf32> into memref<16x32x64xf32>
  %t = memref.alloc() : memref<f32>
  linalg.fill ins(%zero : f32) outs(%t : memref<f32>)
  linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]} ins(%z3 : memref<16x32x64xf32>) outs(%t : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  %cols_ = memref.cast %cols : memref<3xf32> to memref<?xf32>
  %max_ = memref.cast %max : memref<4xf32> to memref<?xf32>
  %sq_ = memref.cast %sq : memref<4xf32> to memref<?xf32>
  call @print(%cols_) : (memref<?xf32>) -> ()
  call @print(%max_) : (memref<?xf32>) -> ()
  call @print(%sq_) : (memref<?xf32>) -> ()
  %w_ = memref.cast %w : memref<4xf32> to memref<?xf32>
  call @print(%w_) : (memref<?xf32>) -> ()
  %t_ = memref.cast %t : memref<f32> to memref<*xf32>
  call @printMemrefF32(%t_) : (memref<*xf32>) -> ()
  memref.dealloc %x : memref<512x3xf32>
  memref.dealloc %cols : memref<3xf32>
  memref.dealloc %y : memref<4x1000xf32>
  memref.dealloc %max : memref<4xf32>
  memref.dealloc %sq : memref<4xf32>
  memref.dealloc %w : memref<4xf32>
  memref.dealloc %z : memref<512x64xf32>
  memref.dealloc %t : memref<f32>
  return
}
