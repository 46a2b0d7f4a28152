// RUN: lmc-opt %s -split-input-file -lmc-tie-updates-to-arguments | FileCheck %s

// An elementwise update into an empty tensor writes into the param's own
// argument, and the result says which one.
#map = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[W:[^:]*]]: tensor<4xf32> {lmc.name = "w", lmc.role = "param"}
// CHECK-SAME: -> (tensor<4xf32> {lmc.name = "w", lmc.role = "param", lmc.updates_argument = 0 : i64}
// CHECK: linalg.generic {{.*}} outs(%[[W]] : tensor<4xf32>)
func.func @train_step(%w: tensor<4xf32> {lmc.role = "param", lmc.name = "w"},
                      %g: tensor<4xf32> {lmc.role = "input", lmc.name = "g"})
    -> (tensor<4xf32> {lmc.role = "param", lmc.name = "w"}) {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
      ins(%w, %g : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A destination the payload reads (an accumulation) keeps its value; a
// state is matched by role and name, not by position; results of other
// roles and functions other than the steps are left alone.
#map = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @apply_step
// CHECK-SAME: -> (tensor<4xf32> {lmc.name = "w", lmc.role = "param"}, tensor<4xf32> {lmc.name = "w.exp_avg", lmc.role = "state", lmc.updates_argument = 1 : i64}, tensor<f32> {lmc.name = "grad_norm", lmc.role = "grad_norm"})
// CHECK: %[[ACC:.*]] = linalg.generic {{.*}} outs(%arg2 : tensor<4xf32>)
// CHECK: linalg.generic {{.*}} outs(%arg1 : tensor<4xf32>)
func.func @apply_step(%w: tensor<4xf32> {lmc.role = "param", lmc.name = "w"},
                      %m: tensor<4xf32> {lmc.role = "state", lmc.name = "w.exp_avg"},
                      %g: tensor<4xf32> {lmc.role = "grad", lmc.name = "w"})
    -> (tensor<4xf32> {lmc.role = "param", lmc.name = "w"},
        tensor<4xf32> {lmc.role = "state", lmc.name = "w.exp_avg"},
        tensor<f32> {lmc.role = "grad_norm", lmc.name = "grad_norm"}) {
  %acc = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%w : tensor<4xf32>) outs(%g : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %mom = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
      ins(%m, %g : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.mulf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %z = arith.constant dense<0.0> : tensor<f32>
  return %acc, %mom, %z : tensor<4xf32>, tensor<4xf32>, tensor<f32>
}

// CHECK-LABEL: func.func @eval_step
// CHECK-NOT: lmc.updates_argument
func.func @eval_step(%w: tensor<4xf32> {lmc.role = "param", lmc.name = "w"})
    -> (tensor<4xf32> {lmc.role = "param", lmc.name = "w"}) {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.copy ins(%w : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A result of another shape than its argument (no such step is built, but
// the pass must not tie it) and a result returned unchanged stay as they
// are.
#map = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @train_step
// CHECK-NOT: lmc.updates_argument
func.func @train_step(%w: tensor<4xf32> {lmc.role = "param", lmc.name = "w"},
                      %v: tensor<2xf32> {lmc.role = "param", lmc.name = "v"})
    -> (tensor<4xf32> {lmc.role = "param", lmc.name = "w"},
        tensor<4xf32> {lmc.role = "param", lmc.name = "v"}) {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%w : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %w, %r : tensor<4xf32>, tensor<4xf32>
}
