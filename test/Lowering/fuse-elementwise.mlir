// RUN: lmc-opt %s -split-input-file -lmc-fuse-elementwise=into-sums | FileCheck %s
// RUN: lmc-opt %s -split-input-file -lmc-fuse-elementwise | FileCheck %s --check-prefix=GPU

// A matmul fed by a collapse_shape stays a named linalg.matmul (upstream's
// linalg-fuse-elementwise-ops expands it into a linalg.generic over the
// uncollapsed dimensions, which lmc-matmul-to-runtime cannot send to BLAS),
// while the elementwise chain after it still fuses into one generic.
// CHECK-LABEL: func.func @matmul_after_reshape
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]]
// CHECK: %[[MM:.*]] = linalg.matmul ins(%[[FLAT]], %{{.*}} : tensor<8x4xf32>, tensor<4x3xf32>)
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[MM]]
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK-NOT: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @matmul_after_reshape(%x: tensor<2x4x4xf32>, %w: tensor<4x3xf32>, %b: tensor<8x3xf32>) -> tensor<8x3xf32> {
  %flat = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x4x4xf32> into tensor<8x4xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x3xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x3xf32>) -> tensor<8x3xf32>
  %mm = linalg.matmul ins(%flat, %w : tensor<8x4xf32>, tensor<4x3xf32>) outs(%init : tensor<8x3xf32>) -> tensor<8x3xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<8x3xf32>, tensor<8x3xf32>) outs(%e : tensor<8x3xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<8x3xf32>
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sum : tensor<8x3xf32>) outs(%e : tensor<8x3xf32>) {
  ^bb0(%p: f32, %o: f32):
    %r = arith.maximumf %p, %zero : f32
    linalg.yield %r : f32
  } -> tensor<8x3xf32>
  return %relu : tensor<8x3xf32>
}

// -----

// The output side: an expand_shape of a matmul result is not folded into
// the matmul either.
// CHECK-LABEL: func.func @reshape_after_matmul
// CHECK: linalg.matmul
// CHECK: tensor.expand_shape
// CHECK-NOT: linalg.generic
func.func @reshape_after_matmul(%a: tensor<8x4xf32>, %w: tensor<4x3xf32>, %c: tensor<8x3xf32>) -> tensor<2x4x3xf32> {
  %mm = linalg.matmul ins(%a, %w : tensor<8x4xf32>, tensor<4x3xf32>) outs(%c : tensor<8x3xf32>) -> tensor<8x3xf32>
  %r = tensor.expand_shape %mm [[0, 1], [2]] output_shape [2, 4, 3] : tensor<8x3xf32> into tensor<2x4x3xf32>
  return %r : tensor<2x4x3xf32>
}

// -----

// A scalar spread to an activation's shape and read by two elementwise ops
// (CSE shares it across layers and the backward pass) is recomputed in
// each: no generic writes the broadcast tensor, both consumers read the
// 0-d constant directly.
// CHECK-LABEL: func.func @shared_broadcast
// CHECK-COUNT-2: linalg.generic {{.*}} ins(%{{.*}}, %arg2 : tensor<4x8xf32>, tensor<f32>)
// CHECK-NOT: linalg.generic
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#scalar2 = affine_map<(d0, d1) -> ()>
func.func @shared_broadcast(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %c: tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %b = linalg.generic {indexing_maps = [#scalar2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<f32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%s: f32, %o: f32):
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %d = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %r = arith.divf %p, %q : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %m = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%y, %b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %r = arith.mulf %p, %q : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %d, %m : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A broadcast also read by a matmul stays for the matmul (which fusion
// cannot take), while the elementwise reader gets its own copy.
// CHECK-LABEL: func.func @broadcast_read_by_matmul
// CHECK: %[[B:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<8xf32>)
// CHECK: linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8xf32>)
// CHECK: linalg.matmul ins(%[[B]], %arg2 :
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @broadcast_read_by_matmul(%x: tensor<4x8xf32>, %v: tensor<8xf32>, %w: tensor<8x8xf32>, %acc: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %b = linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%v : tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%s: f32, %o: f32):
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %r = arith.addf %p, %q : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %mm = linalg.matmul ins(%b, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %s, %mm : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// An elementwise op read by two elementwise ops, each of which would then
// read no more tensors than before (x and y instead of exp(x) and y), is
// recomputed in both: exp(x) is never written.
// CHECK-LABEL: func.func @recomputed_in_all_consumers
// CHECK: linalg.generic {{.*}} ins(%arg0, %arg1 :
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}} ins(%arg0, %arg1 :
// CHECK: math.exp
// CHECK: arith.mulf
// CHECK-NOT: linalg.generic
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @recomputed_in_all_consumers(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %ex = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%p: f32, %o: f32):
    %r = math.exp %p : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %y : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %r = arith.addf %p, %q : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %m = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %y : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %r = arith.mulf %p, %q : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %a, %m : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Not recomputed: a product of two tensors whose consumer would then
// read three tensors instead of two (its consumers share one loop
// instead); an op also returned (a use fusion cannot take: written beside
// its consumer); an op feeding a reduction (LLVM vectorizes a row maximum
// only while its loop stays simple: written beside its elementwise
// consumer, read by the reduction).
// CHECK-LABEL: func.func @kept
// CHECK: linalg.generic {{.*}} ins(%arg0, %arg1, %arg2, %arg3 :
// CHECK: %[[P:.*]] = arith.mulf
// CHECK: arith.addf %[[P]]
// CHECK: arith.subf %[[P]]
// CHECK: } -> (tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK: linalg.generic {{.*}} ins(%arg0, %arg1 :
// CHECK: math.exp
// CHECK: %[[R:.*]]:2 = linalg.generic {{.*}} ins(%arg0, %arg1 :
// CHECK: arith.negf
// CHECK: linalg.generic {{.*}} ins(%[[R]]#0 : tensor<4x8xf32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK: arith.maximumf
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#rows = affine_map<(d0, d1) -> (d0)>
func.func @kept(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %z: tensor<4x8xf32>, %w: tensor<4x8xf32>, %acc: tensor<4xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %p = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %pz = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p, %z : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %pw = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p, %w : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.subf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %sy = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s, %y : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %n = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %ny = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%n, %y : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %max = linalg.generic {indexing_maps = [#id2, #rows], iterator_types = ["parallel", "reduction"]}
      ins(%n : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %pz, %pw, %s, %sy, %ny, %max : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>
}

// -----

// Side by side: an AdamW-like update. The two moments are results of the
// step and read by the parameter update; the three loops become one with
// three results, reading the gradient once.
// CHECK-LABEL: func.func @side_by_side_update
// CHECK: %[[U:.*]]:3 = linalg.generic {{.*}} ins(%arg0, %arg2, %arg1, %arg3 :
// CHECK-DAG: %[[V:.*]] = arith.mulf
// CHECK-DAG: %[[M:.*]] = arith.addf
// CHECK: %[[D:.*]] = arith.divf %[[M]], %[[V]]
// CHECK: %[[P:.*]] = arith.subf %{{.*}}, %[[D]]
// CHECK: linalg.yield %[[V]], %[[M]], %[[P]]
// CHECK-NOT: linalg.generic
// CHECK: return %[[U]]#2, %[[U]]#1, %[[U]]#0
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @side_by_side_update(%g: tensor<4x8xf32>, %m: tensor<4x8xf32>, %v: tensor<4x8xf32>, %p: tensor<4x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %m2 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%g, %m : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %v2 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%g, %v : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %p2 = linalg.generic {indexing_maps = [#id2, #id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%m2, %v2, %p : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %d = arith.divf %a, %b : f32
    %r = arith.subf %c, %d : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %p2, %m2, %v2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Not side by side: another user of the producer comes before the
// consumer (the fused op would take the consumer's place, after it).
// CHECK-LABEL: func.func @user_before_consumer
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%arg0 :
// CHECK: math.exp
// CHECK: linalg.generic {{.*}} ins(%[[P]] : tensor<4x4xf32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[P]] : tensor<4x4xf32>) outs(%{{.*}} : tensor<4x4xf32>)
// CHECK: arith.negf
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#rows = affine_map<(d0, d1) -> (d0)>
func.func @user_before_consumer(%x: tensor<4x4xf32>, %acc: tensor<4xf32>) -> (tensor<4xf32>, tensor<4x4xf32>) {
  %e = tensor.empty() : tensor<4x4xf32>
  %p = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %sum = linalg.generic {indexing_maps = [#id2, #rows], iterator_types = ["parallel", "reduction"]}
      ins(%p : tensor<4x4xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %n = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  return %sum, %n : tensor<4xf32>, tensor<4x4xf32>
}

// -----

// Not side by side: a consumer that reads the producer transposed, and
// one over other loops (the producer's result would be written from a
// loop nest it was not computed in).
// CHECK-LABEL: func.func @other_loops
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%arg0 :
// CHECK: math.exp
// CHECK: linalg.generic {{.*}} ins(%[[P]], %arg1 :
// CHECK: arith.subf
// CHECK: linalg.generic {{.*}} ins(%[[P]] : tensor<4x4xf32>) outs(%{{.*}} : tensor<4x4x2xf32>)
// CHECK: return %[[P]]
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#t2 = affine_map<(d0, d1) -> (d1, d0)>
#id3in2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @other_loops(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>)
    -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4x2xf32>) {
  %e = tensor.empty() : tensor<4x4xf32>
  %e3 = tensor.empty() : tensor<4x4x2xf32>
  %p = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %t = linalg.generic {indexing_maps = [#t2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p, %y : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.subf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %w = linalg.generic {indexing_maps = [#id3in2, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p : tensor<4x4xf32>) outs(%e3 : tensor<4x4x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4x4x2xf32>
  return %p, %t, %w : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4x2xf32>
}

// -----

// A consumer that writes into the producer's result, and never reads what
// it writes into: the init only names a shape, upstream's patterns give it
// a fresh tensor, and the two fuse side by side (the fused op does not
// write into its own result).
// CHECK-LABEL: func.func @consumer_writes_into_producer
// CHECK: %[[R:.*]]:2 = linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%{{[0-9]+}}, %{{[0-9]+}} :
// CHECK: %[[E:.*]] = math.exp
// CHECK: arith.subf %[[E]]
// CHECK: return %[[R]]#0, %[[R]]#1
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @consumer_writes_into_producer(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %e = tensor.empty() : tensor<4x4xf32>
  %p = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %n = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p, %y : tensor<4x4xf32>, tensor<4x4xf32>) outs(%p : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.subf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  return %p, %n : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// Layer norm's backward: g = dY * gamma read by a row sum and by the input
// gradient. A product is plain arithmetic and the reduction a sum: with
// into-sums (the CPU path) g is recomputed in both and never written. Into
// a row maximum it is not (the max in @kept above); without into-sums (the
// GPU path) it is written once and read by both.
// CHECK-LABEL: func.func @product_into_sum
// CHECK-NOT: ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%arg0, %arg1 :
// CHECK: arith.mulf
// CHECK: arith.addf {{.*}} fastmath<reassoc>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1, %arg2 :
// CHECK: arith.mulf
// CHECK: arith.subf
// GPU-LABEL: func.func @product_into_sum
// GPU: %[[G:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// GPU: linalg.generic {{.*}} ins(%[[G]] : tensor<4x8xf32>) outs(%arg3 : tensor<4xf32>)
// GPU: linalg.generic {{.*}} ins(%[[G]], %arg2 :
#id2s = affine_map<(d0, d1) -> (d0, d1)>
#gamma = affine_map<(d0, d1) -> (d1)>
#rows2 = affine_map<(d0, d1) -> (d0)>
func.func @product_into_sum(%dy: tensor<4x8xf32>, %gamma: tensor<8xf32>, %x: tensor<4x8xf32>, %acc: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %g = linalg.generic {indexing_maps = [#id2s, #gamma, #id2s], iterator_types = ["parallel", "parallel"]}
      ins(%dy, %gamma : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %sum = linalg.generic {indexing_maps = [#id2s, #rows2], iterator_types = ["parallel", "reduction"]}
      ins(%g : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o fastmath<reassoc> : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %dx = linalg.generic {indexing_maps = [#id2s, #id2s, #id2s], iterator_types = ["parallel", "parallel"]}
      ins(%g, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.subf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %sum, %dx : tensor<4xf32>, tensor<4x8xf32>
}
