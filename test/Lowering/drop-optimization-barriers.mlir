// RUN: lmc-opt %s -lmc-drop-optimization-barriers | FileCheck %s

// Each barrier's result becomes its operand (after the last CSE, nothing
// merges the ops that read them any more).
// CHECK-LABEL: func.func @barriers
// CHECK-NOT: lmc.optimization_barrier
// CHECK: %[[EA:.*]] = lmc.exp %arg0
// CHECK: %[[EB:.*]] = lmc.exp %arg0
// CHECK: lmc.add %[[EA]], %[[EB]]
func.func @barriers(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = lmc.optimization_barrier %x : tensor<4xf32>
  %b = lmc.optimization_barrier %x : tensor<4xf32>
  %ea = lmc.exp %a : tensor<4xf32>
  %eb = lmc.exp %b : tensor<4xf32>
  %s = lmc.add %ea, %eb : tensor<4xf32>
  return %s : tensor<4xf32>
}
