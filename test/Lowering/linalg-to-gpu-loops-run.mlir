// The GPU loop structure of lmc-linalg-to-gpu-loops (interchanged,
// collapsed, tiled into blocks with a guarded last tile) computes what
// plain linalg loops compute: Inputs/gpu-loops-program.mlir (a reduction
// over the first and last of three dimensions, a transposing elementwise op
// over 105 elements with blocks of 32, a sum to a scalar) run on the CPU
// both ways prints the same values.
// DEFINE: %{lower} = convert-scf-to-cf,expand-strided-metadata,lower-affine,finalize-memref-to-llvm,convert-math-to-llvm,convert-arith-to-llvm,convert-index-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts
// DEFINE: %{run} = mlir-runner -e main -entry-point-result=void -shared-libs=%llvm_lib_dir/libmlir_runner_utils.so,%llvm_lib_dir/libmlir_c_runner_utils.so | sed 's/base@ = 0x[0-9a-f]*//'
// RUN: lmc-opt %S/Inputs/gpu-loops-program.mlir --pass-pipeline="builtin.module(lmc-linalg-to-gpu-loops{block-size=32},%{lower})" | %{run} > %t.gpu-loops
// RUN: lmc-opt %S/Inputs/gpu-loops-program.mlir --pass-pipeline="builtin.module(convert-linalg-to-loops,%{lower})" | %{run} > %t.loops
// RUN: diff %t.gpu-loops %t.loops
// RUN: FileCheck %s < %t.gpu-loops

// CHECK: rank = 1 offset = 0 sizes = [5] strides = [1] data =
// CHECK-NEXT: {{^}}[{{[-0-9]}}
// CHECK: rank = 3 offset = 0 sizes = [7, 3, 5] strides = [15, 5, 1] data =
// CHECK: rank = 0 offset = 0 sizes = [] strides = [] data =
// CHECK-NEXT: {{^}}[{{[-0-9]}}
