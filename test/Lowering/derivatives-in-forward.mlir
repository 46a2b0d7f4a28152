// RUN: lmc-opt %s -split-input-file -lmc-derivatives-in-forward -cse -canonicalize | FileCheck %s
// (cse and canonicalize, which follow the pass in lmc's pipeline, merge the
// forward's erf with the copy the derivative brings and fold 1 * 0.5.)

#row = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// An exact GELU after a biased product, as lmc-fuse-elementwise leaves its
// forward (y) and its gradient (dy times the derivative, erf and exp
// recomputed from h and b). The forward loop gains the derivative (the
// gradient's body with dy = 1: its erf shared, the factor 0.5 folded) as a
// second result; the gradient becomes dy times it, and h, read by the
// forward alone, can die there.
// CHECK-LABEL: func.func @gelu
// CHECK-SAME: (%[[H:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8xf32>, %[[DY:.*]]: tensor<4x8xf32>)
// CHECK: %[[FWD:.*]]:2 = linalg.generic {{.*}} ins(%[[B]], %[[H]] : tensor<8xf32>, tensor<4x8xf32>)
// CHECK: math.erf
// CHECK-NOT: math.erf
// CHECK: math.exp
// CHECK: linalg.yield %{{.*}}, %{{.*}} : f32, f32
// CHECK: %[[GRAD:.*]] = linalg.generic {{.*}} ins(%[[DY]], %[[FWD]]#1 : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-NEXT: ^bb0(%[[G:.*]]: f32, %[[D:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[D]] : f32
// CHECK-NEXT: linalg.yield %[[P]] : f32
// CHECK: return %[[FWD]]#0, %[[GRAD]]
func.func @gelu(%h: tensor<4x8xf32>, %b: tensor<8xf32>, %dy: tensor<4x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %c = arith.constant 0.707106769 : f32
  %k = arith.constant 1.12837923 : f32
  %e0 = tensor.empty() : tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#col, #row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%b, %h : tensor<8xf32>, tensor<4x8xf32>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%bi: f32, %hi: f32, %o: f32):
    %x = arith.addf %bi, %hi : f32
    %u = arith.mulf %x, %c : f32
    %erf = math.erf %u : f32
    %cdf = arith.addf %erf, %one : f32
    %xc = arith.mulf %x, %cdf : f32
    %yi = arith.mulf %xc, %half : f32
    linalg.yield %yi : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %dx = linalg.generic {indexing_maps = [#row, #col, #row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%dy, %b, %h : tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%g: f32, %bi: f32, %hi: f32, %o: f32):
    %x = arith.addf %bi, %hi : f32
    %u = arith.mulf %x, %c : f32
    %erf = math.erf %u : f32
    %cdf = arith.addf %erf, %one : f32
    %gh = arith.mulf %g, %half : f32
    %u2 = arith.mulf %u, %u : f32
    %nu2 = arith.negf %u2 : f32
    %ex = math.exp %nu2 : f32
    %pdf = arith.mulf %ex, %k : f32
    %t0 = arith.mulf %gh, %x : f32
    %t1 = arith.mulf %t0, %pdf : f32
    %t2 = arith.mulf %t1, %c : f32
    %t3 = arith.mulf %gh, %cdf : f32
    %dxi = arith.addf %t3, %t2 : f32
    linalg.yield %dxi : f32
  } -> tensor<4x8xf32>
  return %y, %dx : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

#row = affine_map<(d0, d1) -> (d0, d1)>

// A gradient that is not the cotangent times a factor (dy * dy * e^h, and
// e^h + dy) stays as it is.
// CHECK-LABEL: func.func @not_linear
// CHECK-COUNT-3: math.exp
// CHECK-NOT: linalg.yield %{{.*}}, %{{.*}} : f32, f32
func.func @not_linear(%h: tensor<4x8xf32>, %dy: tensor<4x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%hi: f32, %o: f32):
    %ex = math.exp %hi : f32
    linalg.yield %ex : f32
  } -> tensor<4x8xf32>
  %square = linalg.generic {indexing_maps = [#row, #row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%dy, %h : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%g: f32, %hi: f32, %o: f32):
    %ex = math.exp %hi : f32
    %gg = arith.mulf %g, %g : f32
    %r = arith.mulf %gg, %ex : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %affine = linalg.generic {indexing_maps = [#row, #row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%dy, %h : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%g: f32, %hi: f32, %o: f32):
    %ex = math.exp %hi : f32
    %r = arith.addf %ex, %g : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %y, %square, %affine : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

#row = affine_map<(d0, d1) -> (d0, d1)>

// dy * e^h where h is also returned (read after the forward by another
// op): saving the derivative would keep both alive, so nothing changes.
// CHECK-LABEL: func.func @input_still_read
// CHECK-COUNT-2: math.exp
// CHECK-NOT: linalg.yield %{{.*}}, %{{.*}} : f32, f32
func.func @input_still_read(%h: tensor<4x8xf32>, %dy: tensor<4x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%hi: f32, %o: f32):
    %ex = math.exp %hi : f32
    linalg.yield %ex : f32
  } -> tensor<4x8xf32>
  %dx = linalg.generic {indexing_maps = [#row, #row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%dy, %h : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%g: f32, %hi: f32, %o: f32):
    %ex = math.exp %hi : f32
    %r = arith.mulf %g, %ex : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %y, %dx, %h : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

#row = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// The forward reads h transposed, the gradient in order: no loop computes
// both, nothing changes.
// CHECK-LABEL: func.func @other_order
// CHECK-COUNT-2: math.exp
// CHECK-NOT: linalg.yield %{{.*}}, %{{.*}} : f32, f32
func.func @other_order(%h: tensor<8x8xf32>, %dy: tensor<8x8xf32>)
    -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %e = tensor.empty() : tensor<8x8xf32>
  %y = linalg.generic {indexing_maps = [#tr, #row], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%hi: f32, %o: f32):
    %ex = math.exp %hi : f32
    linalg.yield %ex : f32
  } -> tensor<8x8xf32>
  %dx = linalg.generic {indexing_maps = [#row, #row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%dy, %h : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%g: f32, %hi: f32, %o: f32):
    %ex = math.exp %hi : f32
    %r = arith.mulf %g, %ex : f32
    linalg.yield %r : f32
  } -> tensor<8x8xf32>
  return %y, %dx : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

#row = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// GPT-2's tanh GELU, as side-by-side fusion leaves it: the forward saves
// t = 1 + tanh(u) beside y, and the gradient reads dy, t, h and b (no math
// function, but two full-size tensors besides dy). The derivative, built
// from the forward's own t, replaces t as the forward's second result
// (nothing else read t); the gradient becomes dy times it.
// CHECK-LABEL: func.func @tanh_gelu
// CHECK-SAME: (%[[H:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8xf32>, %[[DY:.*]]: tensor<4x8xf32>)
// CHECK: %[[FWD:.*]]:2 = linalg.generic {{.*}} ins(%[[B]], %[[H]] : tensor<8xf32>, tensor<4x8xf32>)
// CHECK: math.tanh
// CHECK: linalg.yield %{{.*}}, %{{.*}} : f32, f32
// CHECK-NEXT: } -> (tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK: %[[GRAD:.*]] = linalg.generic {{.*}} ins(%[[DY]], %[[FWD]]#1 : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-NEXT: ^bb0(%[[G:.*]]: f32, %[[D:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[G]], %[[D]] : f32
// CHECK-NEXT: linalg.yield %[[P]] : f32
// CHECK: return %[[FWD]]#0, %[[GRAD]]
func.func @tanh_gelu(%h: tensor<4x8xf32>, %b: tensor<8xf32>, %dy: tensor<4x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %k = arith.constant 0.797884583 : f32
  %e0 = tensor.empty() : tensor<4x8xf32>
  %fwd:2 = linalg.generic {indexing_maps = [#col, #row, #row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%b, %h : tensor<8xf32>, tensor<4x8xf32>) outs(%e0, %e0 : tensor<4x8xf32>, tensor<4x8xf32>) {
  ^bb0(%bi: f32, %hi: f32, %o0: f32, %o1: f32):
    %x = arith.addf %bi, %hi : f32
    %u = arith.mulf %x, %k : f32
    %th = math.tanh %u : f32
    %t = arith.addf %th, %one : f32
    %xt = arith.mulf %x, %t : f32
    %yi = arith.mulf %xt, %half : f32
    linalg.yield %t, %yi : f32, f32
  } -> (tensor<4x8xf32>, tensor<4x8xf32>)
  %e1 = tensor.empty() : tensor<4x8xf32>
  %dx = linalg.generic {indexing_maps = [#row, #row, #col, #row, #row], iterator_types = ["parallel", "parallel"]}
      ins(%dy, %fwd#0, %b, %h : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%g: f32, %t: f32, %bi: f32, %hi: f32, %o: f32):
    %x = arith.addf %bi, %hi : f32
    %th = arith.subf %t, %one : f32
    %th2 = arith.mulf %th, %th : f32
    %sech2 = arith.subf %one, %th2 : f32
    %gh = arith.mulf %g, %half : f32
    %a = arith.mulf %gh, %t : f32
    %c = arith.mulf %gh, %x : f32
    %d = arith.mulf %c, %sech2 : f32
    %e = arith.mulf %d, %k : f32
    %dxi = arith.addf %a, %e : f32
    linalg.yield %dxi : f32
  } -> tensor<4x8xf32>
  return %fwd#1, %dx : tensor<4x8xf32>, tensor<4x8xf32>
}
