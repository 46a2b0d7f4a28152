// RUN: lmc-opt %s -lmc-approximate-math | FileCheck %s

// f32 exp, erf and tanh become polynomial arithmetic (no libm call left to
// keep the loop scalar); f64 keeps math.exp (libm), as the gradient checker
// needs.

// CHECK-LABEL: func.func @approximated
// CHECK-NOT: math.exp
// CHECK-NOT: math.erf
// CHECK-NOT: math.tanh
// CHECK: math.fma
// CHECK-NOT: math.tanh
// CHECK: return
func.func @approximated(%x: f32, %v: vector<16xf32>) -> (f32, f32, f32, vector<16xf32>) {
  %e = math.exp %x : f32
  %r = math.erf %x : f32
  %t = math.tanh %x : f32
  %w = math.tanh %v : vector<16xf32>
  return %e, %r, %t, %w : f32, f32, f32, vector<16xf32>
}

// CHECK-LABEL: func.func @kept
// CHECK: math.exp %{{.*}} : f64
// CHECK: math.tanh %{{.*}} : f64
// CHECK: math.log %{{.*}} : f32
func.func @kept(%y: f64, %x: f32) -> (f64, f64, f32) {
  %d = math.exp %y : f64
  %t = math.tanh %y : f64
  %l = math.log %x : f32
  return %d, %t, %l : f64, f64, f32
}

// erf is lmc's own rational function: x clamped to [-4, 4], then
// x * P(x^2) / Q(x^2) by Horner's rule (six FMAs for P, four for Q).
// CHECK-LABEL: func.func @erf
// CHECK-DAG: %[[FOUR:.*]] = arith.constant 4.000000e+00 : f32
// CHECK-DAG: %[[MFOUR:.*]] = arith.constant -4.000000e+00 : f32
// CHECK: %[[LOW:.*]] = arith.minimumf %arg0, %[[FOUR]]
// CHECK: %[[X:.*]] = arith.maximumf %[[LOW]], %[[MFOUR]]
// CHECK: %[[X2:.*]] = arith.mulf %[[X]], %[[X]]
// CHECK-COUNT-6: math.fma %[[X2]]
// CHECK-COUNT-4: math.fma %[[X2]]
// CHECK: %[[XP:.*]] = arith.mulf %[[X]], %{{.*}}
// CHECK: %[[R:.*]] = arith.divf %[[XP]], %{{.*}}
// CHECK: return %[[R]]
func.func @erf(%x: f32) -> f32 {
  %r = math.erf %x : f32
  return %r : f32
}
