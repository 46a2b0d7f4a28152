// RUN: lmc-opt %s -split-input-file -lmc-linalg-to-gpu-loops=reduction-threads=64 | FileCheck %s

// A column sum (a bias gradient) over 512 rows into 3 outputs: 3 threads
// would each add 512 numbers. Split for 64 threads: S = 16 partials per
// output (the largest divisor of 512 that is at most ceil(64 / 3) = 22 and
// 512 / 32 = 16), each over 32 rows. Partial s of column j adds rows
// s, s + 16, ..., from 0 (the neutral element of addf) in a register; the
// threads are (s, j), j fastest, as the input's columns are. A second
// kernel adds the 16 partials of each column to the output.
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1, d2) -> (d2 * 16 + d0)>
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @column_sum
// CHECK: %[[PARTIAL:.*]] = memref.alloc() : memref<16x3xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: scf.parallel
// CHECK:   scf.parallel
// CHECK:     scf.if
// CHECK:       %[[J:.*]] = arith.remsi %{{.*}}, %c3{{.*}} : index
// CHECK:       %[[S:.*]] = arith.divsi %{{.*}}, %c3{{.*}} : index
// CHECK:       %[[SUM:.*]] = scf.for %[[K:.*]] = %{{.*}} to %c32 step %{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f32) {
// CHECK:         %[[R:.*]] = affine.apply #[[ROW]](%[[S]], %[[J]], %[[K]])
// CHECK:         %[[C:.*]] = affine.apply #[[COL]](%[[S]], %[[J]], %[[K]])
// CHECK:         %[[X:.*]] = memref.load %arg0[%[[R]], %[[C]]] : memref<512x3xf32>
// CHECK:         %[[NEXT:.*]] = arith.addf %[[ACC]], %[[X]] : f32
// CHECK:         scf.yield %[[NEXT]] : f32
// CHECK:       memref.store %[[SUM]], %[[PARTIAL]][%[[S]], %[[J]]] : memref<16x3xf32>
// CHECK:   } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x
// CHECK: scf.parallel
// CHECK:   scf.parallel
// CHECK:     scf.if
// CHECK:       scf.for %{{.*}} = %{{.*}} to %c16
// CHECK:         %[[P:.*]] = memref.load %[[PARTIAL]][%{{.*}}, %{{.*}}] : memref<16x3xf32>
// CHECK:         %[[OUT:.*]] = memref.load %arg1[%{{.*}}] : memref<3xf32>
// CHECK:         %[[NEW:.*]] = arith.addf %[[OUT]], %[[P]] : f32
// CHECK:         memref.store %[[NEW]], %arg1[%{{.*}}] : memref<3xf32>
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x
// CHECK: memref.dealloc %[[PARTIAL]] : memref<16x3xf32>
// CHECK-NEXT: return
func.func @column_sum(%x: memref<512x3xf32>, %c: memref<3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>], iterator_types = ["reduction", "parallel"]} ins(%x : memref<512x3xf32>) outs(%c : memref<3xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Row maxima over 1024 columns: the input is read along the reduced
// dimension, so s is the fastest thread index (partial s of row i takes
// columns s, s + 16, ...: neighbouring threads, neighbouring columns).
// S = 16 (ceil(64 / 4)); the partials start from -inf, the neutral
// element of maximumf.
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1, d2) -> (d2 * 16 + d1)>
// CHECK-LABEL: func.func @row_max
// CHECK: memref.alloc() : memref<16x4xf32>
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:       %[[S:.*]] = arith.remsi %{{.*}}, %c16{{.*}} : index
// CHECK:       %[[I:.*]] = arith.divsi %{{.*}}, %c16{{.*}} : index
// CHECK:       scf.for %[[K:.*]] = %{{.*}} to %c64 step %{{.*}} iter_args(%{{.*}} = %[[NINF]]) -> (f32) {
// CHECK:         affine.apply #[[ROW]](%[[I]], %[[S]], %[[K]])
// CHECK:         affine.apply #[[COL]](%[[I]], %[[S]], %[[K]])
// CHECK:         arith.maximumf
// CHECK:       memref.store %{{.*}}[%[[S]], %[[I]]] : memref<16x4xf32>
// CHECK:         arith.maximumf
func.func @row_max(%x: memref<4x1024xf32>, %m: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<4x1024xf32>) outs(%m : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maximumf %acc, %in : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Not split: 300 outputs (more than 64 threads); 256 iterations per output
// (few enough for one thread); 1031 iterations (prime: no partials of
// equal length); an output updated by two ops (no single combiner to
// merge partials with).
// CHECK-LABEL: func.func @kept
// CHECK-NOT: memref.alloc
// CHECK: return
func.func @kept(%wide: memref<512x300xf32>, %o300: memref<300xf32>,
                %short: memref<4x256xf32>, %prime: memref<4x1031xf32>,
                %long: memref<4x1024xf32>, %o4: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>], iterator_types = ["reduction", "parallel"]} ins(%wide : memref<512x300xf32>) outs(%o300 : memref<300xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%short : memref<4x256xf32>) outs(%o4 : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%prime : memref<4x1031xf32>) outs(%o4 : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%long : memref<4x1024xf32>) outs(%o4 : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %half = arith.constant 0.5 : f32
    %d = arith.mulf %acc, %half : f32
    %s = arith.addf %d, %in : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A body that reads its indices (a loss's one-hot, here a weighted sum
// Σ_j j·x[i, j]) reads them as the original op's: the reduced index is
// delinearized from k·S + s, the output's is the thread's.
// CHECK-DAG: #[[J:.*]] = affine_map<(d0, d1, d2) -> (d2 * 16 + d1)>
// CHECK-LABEL: func.func @weighted
// CHECK:       %[[S:.*]] = arith.remsi %{{.*}}, %c16{{.*}} : index
// CHECK:       %[[I:.*]] = arith.divsi %{{.*}}, %c16{{.*}} : index
// CHECK:       scf.for %[[K:.*]] = %{{.*}} to %c64
// CHECK:         memref.load %arg0
// CHECK:         %[[IDX:.*]] = affine.apply #[[J]](%[[I]], %[[S]], %[[K]])
// CHECK:         arith.index_cast %[[IDX]] : index to i64
// CHECK-NOT:     linalg.index
func.func @weighted(%long: memref<4x1024xf32>, %o4: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%long : memref<4x1024xf32>) outs(%o4 : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %jf = arith.sitofp %ji : i64 to f32
    %p = arith.mulf %in, %jf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
