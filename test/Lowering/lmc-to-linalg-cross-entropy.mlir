// RUN: lmc-opt %s -split-input-file -convert-lmc-to-linalg | FileCheck %s --check-prefix=PICK
// RUN: lmc-opt %s -split-input-file -convert-lmc-to-linalg=shardable | FileCheck %s --check-prefix=COMPARE
//
// Both forms compute the same values: Inputs/cross-entropy-program.mlir
// (a loss and its gradient over 3 rows of 5 classes, the third row's label
// 7 outside [0, 5)) lowered each way and run prints numbers NumPy gives
// (float64: logsumexp minus the label's logit, (softmax - onehot) * 2 / 3;
// the out-of-range label picks no logit and no onehot).
// DEFINE: %{lower} = convert-linalg-to-loops,convert-scf-to-cf,expand-strided-metadata,lower-affine,finalize-memref-to-llvm,convert-math-to-llvm,convert-arith-to-llvm,convert-index-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts
// DEFINE: %{run} = mlir-runner -e main -entry-point-result=void -shared-libs=%llvm_lib_dir/libmlir_runner_utils.so,%llvm_lib_dir/libmlir_c_runner_utils.so | sed 's/base@ = 0x[0-9a-f]*//'
// RUN: lmc-opt %S/Inputs/cross-entropy-program.mlir --pass-pipeline="builtin.module(convert-lmc-to-linalg,one-shot-bufferize{bufferize-function-boundaries},%{lower})" | %{run} > %t.pick
// RUN: lmc-opt %S/Inputs/cross-entropy-program.mlir --pass-pipeline="builtin.module(convert-lmc-to-linalg{shardable},one-shot-bufferize{bufferize-function-boundaries},%{lower})" | %{run} > %t.compare
// RUN: FileCheck %s --check-prefix=VALUES < %t.pick
// RUN: FileCheck %s --check-prefix=VALUES < %t.compare
// VALUES: [3.4840{{[0-9]*}}]
// VALUES: {{\[\[}}0.07423{{[0-9]*}}, -0.65376{{[0-9]*}}, 0.33270{{[0-9]*}}, 0.04502{{[0-9]*}}, 0.20179{{[0-9]*}}],
// VALUES-NEXT: [0.53928{{[0-9]*}}, 0.00363{{[0-9]*}}, 0.03447{{[0-9]*}}, 0.07298{{[0-9]*}}, -0.65038{{[0-9]*}}],
// VALUES-NEXT: [0.01498{{[0-9]*}}, 0.08623{{[0-9]*}}, 0.06716{{[0-9]*}}, 0.00202{{[0-9]*}}, 0.49625{{[0-9]*}}]]

// By default the loss reduces over the rows only, gathering each row's
// label logit (a label outside [0, C) picks nothing); then divides by N.
// PICK-LABEL: func.func @cross_entropy
// PICK-SAME: (%[[X:.*]]: tensor<3x5xf32>, %[[L:.*]]: tensor<3xi64>)
// PICK: linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%[[L]], %{{.*}}, %{{.*}} : tensor<3xi64>, tensor<3xf32>, tensor<3xf32>)
// PICK: %[[LSE:.*]] = arith.addf
// PICK: %[[C:.*]] = arith.index_cast %{{.*}} : i64 to index
// PICK: %[[IN:.*]] = arith.andi
// PICK: %[[COL:.*]] = arith.select %[[IN]], %[[C]], %c0
// PICK: %[[N:.*]] = linalg.index 0
// PICK: %[[LOGIT:.*]] = tensor.extract %[[X]][%[[N]], %[[COL]]]
// PICK: %[[PICKED:.*]] = arith.select %[[IN]], %[[LOGIT]], %{{.*}} : f32
// PICK: arith.subf %[[LSE]], %[[PICKED]] : f32
// PICK: %[[N3:.*]] = arith.constant 3.000000e+00 : f32
// PICK: arith.divf %{{.*}}, %[[N3]]
//
// For sharding, one reduction over (n, c) adds each row's log-sum-exp once
// and subtracts the logit where c equals its label.
// COMPARE-LABEL: func.func @cross_entropy
// COMPARE: linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]
// COMPARE: linalg.index 1
// COMPARE: arith.index_cast %{{.*}} : i64 to index
// COMPARE: arith.cmpi eq
// COMPARE: %[[N:.*]] = arith.constant 3.000000e+00 : f32
// COMPARE: arith.divf %{{.*}}, %[[N]]
func.func @cross_entropy(%a: tensor<3x5xf32>, %l: tensor<3xi64>) -> tensor<f32> {
  %0 = lmc.softmax_cross_entropy %a, %l : tensor<3x5xf32>, tensor<3xi64> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// The gradient, (softmax - onehot) * g / N. By default an elementwise pass
// with no onehot (p - 0), then a loop over the rows that rewrites each
// label's entry with onehot 1.
// PICK-LABEL: func.func @cross_entropy_grad
// PICK-SAME: (%[[X:.*]]: tensor<3x5xf32>, %[[L:.*]]: tensor<3xi64>, %[[G:.*]]: tensor<f32>)
// PICK: %[[ALL:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%[[X]], %{{.*}}, %{{.*}}, %[[G]] :
// PICK-NOT: arith.select
// PICK: linalg.yield
// PICK: %[[COT:.*]] = tensor.extract %[[G]][]
// PICK: scf.for %[[N:.*]] = %{{.*}} to %c3 {{.*}} iter_args(%[[ACC:.*]] = %[[ALL]])
// PICK: %[[LABEL:.*]] = tensor.extract %[[L]][%[[N]]]
// PICK: %[[IN:.*]] = arith.andi
// PICK: %[[COL:.*]] = arith.select %[[IN]]
// PICK: scf.if %[[IN]]
// PICK: %[[XL:.*]] = tensor.extract %[[X]][%[[N]], %[[COL]]]
// PICK: %[[E:.*]] = math.exp
// PICK: %[[P:.*]] = arith.divf %[[E]]
// PICK: %[[S:.*]] = arith.divf %[[COT]]
// PICK: %[[D:.*]] = arith.subf %[[P]], %cst{{.*}} : f32
// PICK: %[[V:.*]] = arith.mulf %[[D]], %[[S]] : f32
// PICK: tensor.insert %[[V]] into %[[ACC]][%[[N]], %[[COL]]]
// PICK: } else {
// PICK-NEXT: scf.yield %[[ACC]]
//
// For sharding, one elementwise pass with the onehot from a compare.
// COMPARE-LABEL: func.func @cross_entropy_grad
// COMPARE: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// COMPARE: arith.cmpi eq
// COMPARE: %[[H:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// COMPARE: %[[P:.*]] = arith.divf %{{.*}}, %{{.*}} : f32
// COMPARE: %[[S:.*]] = arith.divf %{{.*}}, %{{.*}} : f32
// COMPARE: %[[D:.*]] = arith.subf %[[P]], %[[H]] : f32
// COMPARE: arith.mulf %[[D]], %[[S]] : f32
// COMPARE-NOT: scf.for
func.func @cross_entropy_grad(%a: tensor<3x5xf32>, %l: tensor<3xi64>, %g: tensor<f32>) -> tensor<3x5xf32> {
  %0 = lmc.softmax_cross_entropy_grad %a, %l, %g : tensor<3x5xf32>, tensor<3xi64>, tensor<f32>
  return %0 : tensor<3x5xf32>
}
