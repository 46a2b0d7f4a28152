// RUN: lmc-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// RUN: lmc-opt %s -split-input-file -verify-diagnostics -canonicalize -cse | FileCheck %s --check-prefix=CSE

// Round trip; CSE merges neither two barriers of one value nor the equal
// ops computing from them (what lmc-rematerialize relies on).
// CHECK-LABEL: func.func @barrier
// CHECK: lmc.optimization_barrier %{{.*}} : tensor<4xf32>
// CSE-LABEL: func.func @barrier
// CSE: %[[A:.*]] = lmc.optimization_barrier %arg0
// CSE: %[[B:.*]] = lmc.optimization_barrier %arg0
// CSE: %[[EA:.*]] = lmc.exp %[[A]]
// CSE: %[[EB:.*]] = lmc.exp %[[B]]
// CSE: lmc.add %[[EA]], %[[EB]]
func.func @barrier(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = lmc.optimization_barrier %x : tensor<4xf32>
  %b = lmc.optimization_barrier %x : tensor<4xf32>
  %ea = lmc.exp %a : tensor<4xf32>
  %eb = lmc.exp %b : tensor<4xf32>
  %s = lmc.add %ea, %eb : tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

func.func @mismatch(%x: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{'lmc.optimization_barrier' op failed to verify that all of {operand, result} have same type}}
  %a = "lmc.optimization_barrier"(%x) : (tensor<4xf32>) -> tensor<8xf32>
  return %a : tensor<8xf32>
}
