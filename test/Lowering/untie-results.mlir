// RUN: lmc-opt %s -split-input-file -lmc-untie-results | FileCheck %s
// RUN: lmc-opt %s -split-input-file -lmc-untie-results -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -buffer-results-to-out-params="hoist-static-allocs modify-public-functions" | FileCheck %s --check-prefix=OUT

// One tensor returned twice (CSE merged two equal gradients): the second
// occurrence becomes a copy of its own; the first, and results returned
// once, are unchanged. Bufferized and turned into out-params, each result
// has its own buffer (one returned twice was freed twice).
// CHECK-LABEL: func.func @twice
// CHECK: %[[G:.*]] = linalg.add
// CHECK: %[[COPY:.*]] = bufferization.alloc_tensor() copy(%[[G]]) : tensor<4xf32>
// CHECK: return %[[G]], %[[COPY]], %arg1 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
// OUT-LABEL: func.func @twice
// OUT-SAME: (%{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>, %[[OUT0:.*]]: memref<4xf32>, %[[OUT1:.*]]: memref<4xf32>, %[[OUT2:.*]]: memref<4xf32>)
// OUT: linalg.add ins(%{{.*}}, %{{.*}} : memref<4xf32>, memref<4xf32>) outs(%[[OUT0]] : memref<4xf32>)
// OUT: memref.copy %[[OUT0]], %[[OUT1]]
// OUT: memref.copy %{{.*}}, %[[OUT2]]
// OUT: return
func.func @twice(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %empty = tensor.empty() : tensor<4xf32>
  %g = linalg.add ins(%a, %a : tensor<4xf32>, tensor<4xf32>) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
  return %g, %g, %b : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Scalars and distinct tensors are left alone.
// CHECK-LABEL: func.func @distinct
// CHECK-NOT: bufferization.alloc_tensor
// CHECK: return %arg0, %arg1, %arg2, %arg2 : tensor<4xf32>, tensor<2xf32>, f32, f32
func.func @distinct(%a: tensor<4xf32>, %b: tensor<2xf32>, %s: f32) -> (tensor<4xf32>, tensor<2xf32>, f32, f32) {
  return %a, %b, %s, %s : tensor<4xf32>, tensor<2xf32>, f32, f32
}
