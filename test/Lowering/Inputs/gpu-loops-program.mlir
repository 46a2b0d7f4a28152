func.func private @printMemrefF32(memref<*xf32>)

// Deterministic data: x[i, j, k] = sin(i * 100 + j * 10 + k).
func.func @iota3(%m: memref<3x5x7xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>], iterator_types = ["parallel", "parallel", "parallel"]} outs(%m : memref<3x5x7xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = linalg.index 2 : index
    %c100 = arith.constant 100 : index
    %c10 = arith.constant 10 : index
    %a = arith.muli %i, %c100 : index
    %b = arith.muli %j, %c10 : index
    %s = arith.addi %a, %b : index
    %t = arith.addi %s, %k : index
    %ti = arith.index_cast %t : index to i64
    %f = arith.sitofp %ti : i64 to f32
    %v = math.sin %f : f32
    linalg.yield %v : f32
  }
  return
}

func.func @main() {
  %x = memref.alloc() : memref<3x5x7xf32>
  call @iota3(%x) : (memref<3x5x7xf32>) -> ()
  // Reduction over the first and last dimensions (parallel one in between).
  %r = memref.alloc() : memref<5xf32>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%r : memref<5xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> (j)>], iterator_types = ["reduction", "parallel", "reduction"]} ins(%x : memref<3x5x7xf32>) outs(%r : memref<5xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  }
  // A transposing elementwise op over 105 elements (not a multiple of a
  // block): y[k, i, j] = 2 x[i, j, k] + 1.
  %y = memref.alloc() : memref<7x3x5xf32>
  linalg.generic {indexing_maps = [affine_map<(k, i, j) -> (i, j, k)>, affine_map<(k, i, j) -> (k, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : memref<3x5x7xf32>) outs(%y : memref<7x3x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %two = arith.constant 2.0 : f32
    %one = arith.constant 1.0 : f32
    %m = arith.mulf %in, %two : f32
    %a = arith.addf %m, %one : f32
    linalg.yield %a : f32
  }
  // A full reduction to a scalar (stays on the host).
  %t = memref.alloc() : memref<f32>
  linalg.fill ins(%zero : f32) outs(%t : memref<f32>)
  linalg.generic {indexing_maps = [affine_map<(k, i, j) -> (k, i, j)>, affine_map<(k, i, j) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]} ins(%y : memref<7x3x5xf32>) outs(%t : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  %r_ = memref.cast %r : memref<5xf32> to memref<*xf32>
  %y_ = memref.cast %y : memref<7x3x5xf32> to memref<*xf32>
  %t_ = memref.cast %t : memref<f32> to memref<*xf32>
  call @printMemrefF32(%r_) : (memref<*xf32>) -> ()
  call @printMemrefF32(%y_) : (memref<*xf32>) -> ()
  call @printMemrefF32(%t_) : (memref<*xf32>) -> ()
  memref.dealloc %x : memref<3x5x7xf32>
  memref.dealloc %r : memref<5xf32>
  memref.dealloc %y : memref<7x3x5xf32>
  memref.dealloc %t : memref<f32>
  return
}
