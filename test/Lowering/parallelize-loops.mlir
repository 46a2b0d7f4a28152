// RUN: lmc-opt %s -split-input-file -lmc-parallelize-loops | FileCheck %s
// RUN: lmc-opt %s -split-input-file -lmc-parallelize-loops=min-work=1 | FileCheck %s --check-prefix=ALL

// 8 x 128 x 256 iterations: the leading dimensions stay parallel until they
// give 64 chunks (8 x 128 here), the last one becomes an inner scf.for.
// CHECK-LABEL: func.func @big
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = (%c0, %c0) to (%c8, %c128) step (%c1, %c1)
// CHECK-NEXT: scf.for %[[K:.*]] = %c0 to %c256 step %c1
// CHECK-NEXT: memref.load %{{.*}}[%[[I]], %[[J]], %[[K]]]
// CHECK-NOT: scf.parallel
func.func @big(%a: memref<8x128x256xf32>, %b: memref<8x128x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%c8, %c128, %c256) step (%c1, %c1, %c1) {
    %x = memref.load %a[%i, %j, %k] : memref<8x128x256xf32>
    memref.store %x, %b[%i, %j, %k] : memref<8x128x256xf32>
  }
  return
}

// -----

// The work counts the sequential loops inside (a reduction over 1024
// columns of 64 rows: 65536 iterations): one parallel dimension is kept,
// the only one.
// CHECK-LABEL: func.func @rows_reduction
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c64) step (%c1)
// CHECK-NEXT: scf.for
func.func @rows_reduction(%a: memref<64x1024xf32>, %sum: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    scf.for %k = %c0 to %c1024 step %c1 {
      %x = memref.load %a[%i, %k] : memref<64x1024xf32>
      %s = memref.load %sum[%i] : memref<64xf32>
      %t = arith.addf %s, %x : f32
      memref.store %t, %sum[%i] : memref<64xf32>
    }
    scf.reduce
  }
  return
}

// -----

// Below min-work (4 x 16 iterations) a nest is sequential loops in the
// same order; with min-work=1 it stays parallel on its first dimension.
// CHECK-LABEL: func.func @small
// CHECK-NOT: scf.parallel
// CHECK: scf.for %[[I:.*]] = %c0 to %c4 step %c1
// CHECK-NEXT: scf.for %[[J:.*]] = %c0 to %c16 step %c1
// CHECK-NEXT: memref.load %{{.*}}[%[[I]], %[[J]]]
// ALL-LABEL: func.func @small
// ALL: scf.parallel (%{{.*}}) = (%c0) to (%c4) step (%c1)
// ALL-NEXT: scf.for %{{.*}} = %c0 to %c16 step %c1
func.func @small(%a: memref<4x16xf32>, %b: memref<4x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c16) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<4x16xf32>
    memref.store %x, %b[%i, %j] : memref<4x16xf32>
  }
  return
}

// -----

// A keep-dims row sum after sharding gave its size-1 output dimension a
// loop of its own: a parallel loop inside the reduction's loop inside the
// rows' parallel loop. The rows stay parallel; the inner parallel loop
// becomes an scf.for (as a nested OpenMP region it would fork once per
// column).
// CHECK-LABEL: func.func @nested
// CHECK: scf.parallel (%[[I:.*]]) = (%c0) to (%c64) step (%c1)
// CHECK-NEXT: scf.for %[[K:.*]] = %c0 to %c1024 step %c1
// CHECK-NEXT: scf.for %[[U:.*]] = %c0 to %c1 step %c1
// CHECK-NEXT: memref.load %{{.*}}[%[[I]], %[[K]]]
// CHECK-NOT: scf.parallel
// ALL-LABEL: func.func @nested
// ALL-COUNT-1: scf.parallel
// ALL-NOT: scf.parallel
func.func @nested(%a: memref<64x1024xf32>, %sum: memref<64x1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    scf.for %k = %c0 to %c1024 step %c1 {
      scf.parallel (%u) = (%c0) to (%c1) step (%c1) {
        %x = memref.load %a[%i, %k] : memref<64x1024xf32>
        %s = memref.load %sum[%i, %u] : memref<64x1xf32>
        %t = arith.addf %s, %x : f32
        memref.store %t, %sum[%i, %u] : memref<64x1xf32>
      }
    }
    scf.reduce
  }
  return
}

// -----

// A bias gradient: a sum over 8 x 128 rows per column, the reduction loops
// outside the columns' parallel loop (too little work per instance to fork
// for). The columns move out, one run per thread: the thread count read at
// run time, clamped to [1, 1024 / 128 = 8] runs, each ceil(64 lines /
// runs) lines of 16 columns; the rows' loops inside, in their order, and
// the run's columns innermost.
// CHECK: func.func private @lmc_rt_thread_count() -> i64
// CHECK-LABEL: func.func @column_sum
// CHECK: %[[THREADS:.*]] = call @lmc_rt_thread_count() : () -> i64
// CHECK: %[[T:.*]] = arith.index_cast %[[THREADS]] : i64 to index
// CHECK: %[[ATLEAST1:.*]] = arith.maxsi %[[T]], %c1{{.*}} : index
// CHECK: %[[RUNS:.*]] = arith.minsi %[[ATLEAST1]], %c8{{.*}} : index
// CHECK: %[[LINES:.*]] = arith.ceildivsi %c64{{.*}}, %[[RUNS]] : index
// CHECK: %[[WIDTH:.*]] = arith.muli %[[LINES]], %c16{{.*}} : index
// CHECK: scf.parallel (%[[C:.*]]) = (%{{.*}}) to (%[[RUNS]]) step
// CHECK: %[[OFFSET:.*]] = arith.muli %[[C]], %[[WIDTH]] : index
// CHECK: %[[FIRST:.*]] = arith.addi %{{.*}}, %[[OFFSET]] : index
// CHECK: %[[END:.*]] = arith.addi %[[FIRST]], %[[WIDTH]] : index
// CHECK: %[[LAST:.*]] = arith.minsi %[[END]], %{{.*}} : index
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT: scf.for %[[K:.*]] = %[[FIRST]] to %[[LAST]] step
// CHECK-NEXT: memref.load %{{.*}}[%[[I]], %[[J]], %[[K]]]
// CHECK-NEXT: memref.load %{{.*}}[%[[K]]]
// CHECK-NOT: scf.parallel
// ALL-LABEL: func.func @column_sum
func.func @column_sum(%a: memref<8x128x1024xf32>, %sum: memref<1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c128 = arith.constant 128 : index
  %c1024 = arith.constant 1024 : index
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c128 step %c1 {
      scf.parallel (%k) = (%c0) to (%c1024) step (%c1) {
        %x = memref.load %a[%i, %j, %k] : memref<8x128x1024xf32>
        %s = memref.load %sum[%k] : memref<1024xf32>
        %t = arith.addf %s, %x : f32
        memref.store %t, %sum[%k] : memref<1024xf32>
      }
    }
  }
  return
}

// -----

// Left inside their loops (then sequential: under min-work): fewer than
// two runs of 128 columns, and a loop body that holds more than the
// parallel loop (not a perfect nest: moving the parallel loop out would
// move the other op's iterations too).
// CHECK-LABEL: func.func @column_sums_left
// CHECK-NOT: scf.parallel
// ALL-LABEL: func.func @column_sums_left
// ALL: scf.for
// ALL-NEXT: scf.parallel
// ALL: scf.for
// ALL-NEXT: memref.store
// ALL-NEXT: scf.parallel
func.func @column_sums_left(%a: memref<512x200xf32>, %sum: memref<200xf32>, %b: memref<512x1024xf32>, %sum2: memref<1024xf32>, %rows: memref<512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c200 = arith.constant 200 : index
  %c512 = arith.constant 512 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c512 step %c1 {
    scf.parallel (%k) = (%c0) to (%c200) step (%c1) {
      %x = memref.load %a[%i, %k] : memref<512x200xf32>
      %s = memref.load %sum[%k] : memref<200xf32>
      %t = arith.addf %s, %x : f32
      memref.store %t, %sum[%k] : memref<200xf32>
    }
  }
  scf.for %i = %c0 to %c512 step %c1 {
    memref.store %zero, %rows[%i] : memref<512xf32>
    scf.parallel (%k) = (%c0) to (%c1024) step (%c1) {
      %x = memref.load %b[%i, %k] : memref<512x1024xf32>
      %s = memref.load %sum2[%k] : memref<1024xf32>
      %t = arith.addf %s, %x : f32
      memref.store %t, %sum2[%k] : memref<1024xf32>
    }
  }
  return
}
