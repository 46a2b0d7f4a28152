// RUN: lmc-opt %s -split-input-file -convert-lmc-to-linalg | FileCheck %s --check-prefix=PICK
// RUN: lmc-opt %s -split-input-file -convert-lmc-to-linalg=shardable | FileCheck %s --check-prefix=COMPARE
//
// Cross-entropy with ignore_index (PyTorch's, -100 in every Hugging Face
// model): rows whose label equals it count neither in the sum nor in the
// mean, whose divisor is max(counted rows, 1), and their gradient is 0.
// Inputs/cross-entropy-ignore-program.mlir lowered both ways and run
// prints what NumPy gives in float64 (the counted rows' logsumexp minus
// the label's logit over their count; (softmax - onehot) * 2 / count on
// them): two rows ignored by -100, row 2 ignored by ignore_index 4, and a
// batch with no counted row (loss 0, gradient 0).
// DEFINE: %{lower} = convert-linalg-to-loops,convert-scf-to-cf,expand-strided-metadata,lower-affine,finalize-memref-to-llvm,convert-math-to-llvm,convert-arith-to-llvm,convert-index-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts
// DEFINE: %{run} = mlir-runner -e main -entry-point-result=void -shared-libs=%llvm_lib_dir/libmlir_runner_utils.so,%llvm_lib_dir/libmlir_c_runner_utils.so | sed 's/base@ = 0x[0-9a-f]*//'
// RUN: lmc-opt %S/Inputs/cross-entropy-ignore-program.mlir --pass-pipeline="builtin.module(convert-lmc-to-linalg,one-shot-bufferize{bufferize-function-boundaries},%{lower})" | %{run} > %t.pick
// RUN: lmc-opt %S/Inputs/cross-entropy-ignore-program.mlir --pass-pipeline="builtin.module(convert-lmc-to-linalg{shardable},one-shot-bufferize{bufferize-function-boundaries},%{lower})" | %{run} > %t.compare
// RUN: FileCheck %s --check-prefix=VALUES < %t.pick
// RUN: FileCheck %s --check-prefix=VALUES < %t.compare
// VALUES: [2.1201{{[0-9]*}}]
// VALUES: {{\[\[}}0.1113{{[0-9]*}}, -0.9806{{[0-9]*}}, 0.4990{{[0-9]*}}, 0.0675{{[0-9]*}}, 0.3026{{[0-9]*}}],
// VALUES-NEXT: [0, 0, 0, 0, 0],
// VALUES-NEXT: [0.0224{{[0-9]*}}, 0.1293{{[0-9]*}}, 0.1007{{[0-9]*}}, 0.0030{{[0-9]*}}, -0.2556{{[0-9]*}}],
// VALUES-NEXT: [0, 0, 0, 0, 0]]
// VALUES: [0.4906{{[0-9]*}}]
// VALUES: {{\[\[}}0.0742{{[0-9]*}}, 0.0129{{[0-9]*}}, -0.3339{{[0-9]*}}, 0.0450{{[0-9]*}}, 0.2017{{[0-9]*}}],
// VALUES-NEXT: [-0.1273{{[0-9]*}}, 0.0036{{[0-9]*}}, 0.0344{{[0-9]*}}, 0.0729{{[0-9]*}}, 0.0162{{[0-9]*}}],
// VALUES-NEXT: [0, 0, 0, 0, 0],
// VALUES-NEXT: [0.1394{{[0-9]*}}, 0.0512{{[0-9]*}}, 0.0311{{[0-9]*}}, -0.2876{{[0-9]*}}, 0.0658{{[0-9]*}}]]
// VALUES: [0]
// VALUES: {{\[\[}}0, 0, 0, 0, 0],
// VALUES-NEXT: [0, 0, 0, 0, 0],
// VALUES-NEXT: [0, 0, 0, 0, 0],
// VALUES-NEXT: [0, 0, 0, 0, 0]]

// The counted rows, at least 1, divide the sum; an ignored row adds 0.
// PICK-LABEL: func.func @cross_entropy
// PICK: %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["reduction"]}
// PICK: %[[IGNORE:.*]] = arith.constant -100 : i64
// PICK: %[[KEEP:.*]] = arith.cmpi ne, %{{.*}}, %[[IGNORE]] : i64
// PICK: arith.select %[[KEEP]]
// PICK: %[[COUNT:.*]] = linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%{{.*}} : tensor<3xi64>)
// PICK: arith.cmpi ne
// PICK: %[[AT_LEAST_1:.*]] = linalg.generic
// PICK: arith.maximumf
// PICK: linalg.generic {{.*}} ins(%[[SUM]], %[[AT_LEAST_1]] : tensor<f32>, tensor<f32>)
// PICK: arith.divf
// COMPARE-LABEL: func.func @cross_entropy
// COMPARE: linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]
// COMPARE: arith.cmpi ne
// COMPARE: arith.maximumf
func.func @cross_entropy(%a: tensor<3x5xf32>, %l: tensor<3xi64>) -> tensor<f32> {
  %0 = lmc.softmax_cross_entropy %a, %l ignore_index = -100 : tensor<3x5xf32>, tensor<3xi64> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// The gradient: the pass over every class zeroes the ignored rows and
// divides by the counted rows; the loop writes the label entry of counted
// rows only.
// PICK-LABEL: func.func @cross_entropy_grad
// PICK: linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%{{.*}} : tensor<3xi64>)
// PICK: %[[COUNT:.*]] = linalg.generic {{.*}}iterator_types = []}
// PICK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[COUNT]] :
// PICK: arith.cmpi ne
// PICK: scf.for
// PICK: %[[IN:.*]] = arith.andi
// PICK: %[[KEEP:.*]] = arith.cmpi ne
// PICK: %[[WRITE:.*]] = arith.andi %[[IN]], %[[KEEP]]
// PICK: scf.if %[[WRITE]]
// COMPARE-LABEL: func.func @cross_entropy_grad
// COMPARE: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// COMPARE: arith.cmpi eq
// COMPARE: arith.cmpi ne
// COMPARE-NOT: scf.for
func.func @cross_entropy_grad(%a: tensor<3x5xf32>, %l: tensor<3xi64>, %g: tensor<f32>) -> tensor<3x5xf32> {
  %0 = lmc.softmax_cross_entropy_grad %a, %l, %g ignore_index = -100 : tensor<3x5xf32>, tensor<3xi64>, tensor<f32>
  return %0 : tensor<3x5xf32>
}
