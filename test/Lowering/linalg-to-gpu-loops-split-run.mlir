// Split reductions (lmc-linalg-to-gpu-loops, SplitReductions.cpp) compute
// the sums and maxima they replace: Inputs/split-reductions-program.mlir
// (column sums into outputs holding 1, row maxima and sums of squares in
// one op, row sums weighted by the column index, a sum to a scalar over
// three dimensions) run on the CPU with
// reductions split for 64 threads (one split each) and for 100000 (the sum
// to a scalar split twice) prints the values derived by hand (small
// integers: exact in any order of summation), as plain loops do.
// DEFINE: %{lower} = convert-scf-to-cf,expand-strided-metadata,lower-affine,finalize-memref-to-llvm,convert-math-to-llvm,convert-arith-to-llvm,convert-index-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts
// DEFINE: %{run} = mlir-runner -e main -entry-point-result=void -shared-libs=%llvm_lib_dir/libmlir_runner_utils.so,%llvm_lib_dir/libmlir_c_runner_utils.so | sed 's/base@ = 0x[0-9a-f]*//'
// DEFINE: %{program} = %S/Inputs/split-reductions-program.mlir
// RUN: lmc-opt %{program} --pass-pipeline="builtin.module(lmc-linalg-to-gpu-loops{block-size=32 reduction-threads=64},%{lower})" | %{run} > %t.64
// RUN: lmc-opt %{program} --pass-pipeline="builtin.module(lmc-linalg-to-gpu-loops{reduction-threads=100000},%{lower})" | %{run} > %t.100000
// RUN: lmc-opt %{program} --pass-pipeline="builtin.module(convert-linalg-to-loops,%{lower})" | %{run} > %t.loops
// RUN: FileCheck %s < %t.64
// RUN: FileCheck %s < %t.100000
// RUN: FileCheck %s < %t.loops

// The splits happen, with the partial counts the rules give (S: the
// largest divisor of the reduced iterations R that is at most both
// ceil(threads / outputs) and R / 32). 64 threads: columns S = 16, rows
// S = 10 (1000 has no divisor in 11..16), the scalar S = 64. 100000
// threads: columns 16, rows 25, the scalar 1024 = 32768 / 32, whose
// 1024 partials are split again into 32.
// RUN: lmc-opt %{program} -lmc-linalg-to-gpu-loops=reduction-threads=64 | FileCheck %s --check-prefix=SPLIT64
// RUN: lmc-opt %{program} -lmc-linalg-to-gpu-loops=reduction-threads=100000 | FileCheck %s --check-prefix=SPLIT100K
// SPLIT64: memref.alloc() : memref<16x3xf32>
// SPLIT64: memref.alloc() : memref<10x4xf32>
// SPLIT64: memref.alloc() : memref<10x4xf32>
// SPLIT64: memref.alloc() : memref<10x4xf32>
// SPLIT64: memref.alloc() : memref<64xf32>
// SPLIT100K: memref.alloc() : memref<16x3xf32>
// SPLIT100K: memref.alloc() : memref<25x4xf32>
// SPLIT100K: memref.alloc() : memref<25x4xf32>
// SPLIT100K: memref.alloc() : memref<25x4xf32>
// SPLIT100K: memref.alloc() : memref<1024xf32>
// SPLIT100K: memref.alloc() : memref<32xf32>

// CHECK: sizes = [3]
// CHECK-NEXT: [-1,  6,  2]
// CHECK: sizes = [4]
// CHECK-NEXT: [-5,  -5,  -5,  -5]
// CHECK: sizes = [4]
// CHECK-NEXT: [10001,  10009,  9985,  10006]
// CHECK: sizes = [4]
// CHECK-NEXT: [1004,  -2003,  3999,  -3001]
// CHECK: sizes = []
// CHECK-NEXT: [3]
