// RUN: lmc-opt %s -split-input-file -lmc-untie-fills | FileCheck %s

// One zero tensor (as CSE leaves it) is the destination of two matmuls and
// read by an add: each matmul gets a fill of its own, placed in front of
// it, and the reader keeps the original.
// CHECK-LABEL: func.func @shared_zero
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<4x4xf32>
// CHECK: %[[FILL:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[EMPTY]] : tensor<4x4xf32>)
// CHECK: %[[FILL1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[EMPTY]] : tensor<4x4xf32>)
// CHECK: %[[M1:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x4xf32>, tensor<4x4xf32>) outs(%[[FILL1]] : tensor<4x4xf32>)
// CHECK: %[[FILL2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[EMPTY]] : tensor<4x4xf32>)
// CHECK: %[[M2:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x4xf32>, tensor<4x4xf32>) outs(%[[FILL2]] : tensor<4x4xf32>)
// CHECK: linalg.add ins(%[[M1]], %[[FILL]] : tensor<4x4xf32>, tensor<4x4xf32>) outs(%[[M2]] : tensor<4x4xf32>)
func.func @shared_zero(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x4xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m1 = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%fill : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m2 = linalg.matmul ins(%b, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%fill : tensor<4x4xf32>) -> tensor<4x4xf32>
  %sum = linalg.add ins(%m1, %fill : tensor<4x4xf32>, tensor<4x4xf32>) outs(%m2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %sum : tensor<4x4xf32>
}

// -----

// Only destinations: the first keeps the original fill, the second gets a
// clone. A fill with one use is left alone.
// CHECK-LABEL: func.func @only_destinations
// CHECK: %[[FILL:.*]] = linalg.fill
// CHECK: linalg.matmul {{.*}} outs(%[[FILL]] : tensor<4x4xf32>)
// CHECK: %[[CLONE:.*]] = linalg.fill
// CHECK: linalg.matmul {{.*}} outs(%[[CLONE]] : tensor<4x4xf32>)
// CHECK: %[[SINGLE:.*]] = linalg.fill
// CHECK-NEXT: linalg.matmul {{.*}} outs(%[[SINGLE]] : tensor<2x2xf32>)
// CHECK-NOT: linalg.fill
func.func @only_destinations(%a: tensor<4x4xf32>, %c: tensor<2x2xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<2x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x4xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m1 = linalg.matmul ins(%a, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%fill : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m2 = linalg.matmul ins(%a, %m1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%fill : tensor<4x4xf32>) -> tensor<4x4xf32>
  %small = tensor.empty() : tensor<2x2xf32>
  %single = linalg.fill ins(%zero : f32) outs(%small : tensor<2x2xf32>) -> tensor<2x2xf32>
  %m3 = linalg.matmul ins(%c, %c : tensor<2x2xf32>, tensor<2x2xf32>) outs(%single : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %m1, %m2, %m3 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<2x2xf32>
}

// -----

// One tensor.empty as the destination of six ops: each run of four
// consecutive destinations shares an empty, the first run the original.
// CHECK-LABEL: func.func @shared_empty
// CHECK: %[[E0:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: %[[R1:.*]] = linalg.exp ins(%{{.*}} : tensor<4xf32>) outs(%[[E0]] : tensor<4xf32>)
// CHECK: %[[R2:.*]] = linalg.exp ins(%[[R1]] : tensor<4xf32>) outs(%[[E0]] : tensor<4xf32>)
// CHECK: %[[R3:.*]] = linalg.exp ins(%[[R2]] : tensor<4xf32>) outs(%[[E0]] : tensor<4xf32>)
// CHECK: %[[R4:.*]] = linalg.exp ins(%[[R3]] : tensor<4xf32>) outs(%[[E0]] : tensor<4xf32>)
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[R5:.*]] = linalg.exp ins(%[[R4]] : tensor<4xf32>) outs(%[[E1]] : tensor<4xf32>)
// CHECK-NEXT: linalg.exp ins(%[[R5]] : tensor<4xf32>) outs(%[[E1]] : tensor<4xf32>)
// CHECK-NOT: tensor.empty
func.func @shared_empty(%x: tensor<4xf32>) -> tensor<4xf32> {
  %empty = tensor.empty() : tensor<4xf32>
  %r1 = linalg.exp ins(%x : tensor<4xf32>) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
  %r2 = linalg.exp ins(%r1 : tensor<4xf32>) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
  %r3 = linalg.exp ins(%r2 : tensor<4xf32>) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
  %r4 = linalg.exp ins(%r3 : tensor<4xf32>) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
  %r5 = linalg.exp ins(%r4 : tensor<4xf32>) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
  %r6 = linalg.exp ins(%r5 : tensor<4xf32>) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
  return %r6 : tensor<4xf32>
}

// -----

// Runs stay within a block: the destinations in the loop body and those
// after the loop count apart, and a clone made in the body is not used
// outside it.
// CHECK-LABEL: func.func @runs_per_block
// CHECK: %[[E0:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: scf.for
// CHECK-COUNT-4: linalg.exp ins(%{{.*}} : tensor<4xf32>) outs(%[[E0]] : tensor<4xf32>)
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: linalg.exp ins(%{{.*}} : tensor<4xf32>) outs(%[[E1]] : tensor<4xf32>)
// CHECK: scf.yield
// CHECK: linalg.exp ins(%{{.*}} : tensor<4xf32>) outs(%[[E0]] : tensor<4xf32>)
// CHECK-NOT: tensor.empty
func.func @runs_per_block(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %empty = tensor.empty() : tensor<4xf32>
  %loop = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> tensor<4xf32> {
    %r1 = linalg.exp ins(%acc : tensor<4xf32>) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
    %r2 = linalg.exp ins(%r1 : tensor<4xf32>) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
    %r3 = linalg.exp ins(%r2 : tensor<4xf32>) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
    %r4 = linalg.exp ins(%r3 : tensor<4xf32>) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
    %r5 = linalg.exp ins(%r4 : tensor<4xf32>) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
    scf.yield %r5 : tensor<4xf32>
  }
  %r6 = linalg.exp ins(%loop : tensor<4xf32>) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
  return %r6 : tensor<4xf32>
}
