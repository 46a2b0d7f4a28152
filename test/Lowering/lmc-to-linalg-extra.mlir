// RUN: lmc-opt %s -split-input-file -convert-lmc-to-linalg | FileCheck %s
// RUN: lmc-opt %s -split-input-file -convert-lmc-to-linalg=shardable | FileCheck %s --check-prefix=SHARD

// The new elementwise ops map to one scalar op each.
// CHECK-LABEL: func.func @elementwise
// CHECK: math.absf %{{.*}} : f32
// CHECK: math.erf %{{.*}} : f32
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK: arith.minimumf %{{.*}}, %{{.*}} : f32
func.func @elementwise(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lmc.abs %a : tensor<4xf32>
  %1 = lmc.erf %0 : tensor<4xf32>
  %2 = lmc.max %1, %b : tensor<4xf32>
  %3 = lmc.min %2, %b : tensor<4xf32>
  return %3 : tensor<4xf32>
}

// -----

// Trigonometry and rounding: one math op each (Round halves to even).
// CHECK-LABEL: func.func @trig_and_rounding
// CHECK: math.sin %{{.*}} : f32
// CHECK: math.cos %{{.*}} : f32
// CHECK: math.atan %{{.*}} : f32
// CHECK: math.floor %{{.*}} : f32
// CHECK: math.ceil %{{.*}} : f32
// CHECK: math.roundeven %{{.*}} : f32
func.func @trig_and_rounding(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lmc.sin %a : tensor<4xf32>
  %1 = lmc.cos %0 : tensor<4xf32>
  %2 = lmc.atan %1 : tensor<4xf32>
  %3 = lmc.floor %2 : tensor<4xf32>
  %4 = lmc.ceil %3 : tensor<4xf32>
  %5 = lmc.round %4 : tensor<4xf32>
  return %5 : tensor<4xf32>
}

// -----

// Integer comparisons are signed; boolean logic is bitwise on i1.
// CHECK-LABEL: func.func @logical
// CHECK: arith.cmpi sle, %{{.*}}, %{{.*}} : i64
// CHECK: arith.xori %{{.*}}, %{{.*}} : i1
// CHECK: arith.andi %{{.*}}, %{{.*}} : i1
// CHECK: arith.ori %{{.*}}, %{{.*}} : i1
func.func @logical(%i: tensor<4xi64>, %m: tensor<4xi1>) -> tensor<4xi1> {
  %c = lmc.cmp le, %i, %i : tensor<4xi64> -> tensor<4xi1>
  %n = lmc.not %c : tensor<4xi1>
  %a = lmc.and %n, %m : tensor<4xi1>
  %o = lmc.or %a, %m : tensor<4xi1>
  return %o : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @convert
// CHECK: arith.sitofp %{{.*}} : i64 to f32
// CHECK: arith.uitofp %{{.*}} : i1 to f32
// CHECK: arith.extf %{{.*}} : f32 to f64
// CHECK: arith.fptosi %{{.*}} : f32 to i32
func.func @convert(%i: tensor<4xi64>, %m: tensor<4xi1>, %f: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf64>, tensor<4xi32>) {
  %0 = lmc.convert %i : tensor<4xi64> -> tensor<4xf32>
  %1 = lmc.convert %m : tensor<4xi1> -> tensor<4xf32>
  %2 = lmc.convert %f : tensor<4xf32> -> tensor<4xf64>
  %3 = lmc.convert %f : tensor<4xf32> -> tensor<4xi32>
  return %0, %1, %2, %3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf64>, tensor<4xi32>
}

// -----

// reduce_max starts from -inf and keeps the NaN-propagating maximum.
// CHECK-LABEL: func.func @reduce_max
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NINF]] : f32)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.maximumf
func.func @reduce_max(%a: tensor<2x3xf32>) -> tensor<2xf32> {
  %0 = lmc.reduce_max %a, axes = [1] : tensor<2x3xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Concat copies each piece into its slice of the result (bufferization
// writes them in place).
// CHECK-LABEL: func.func @concat
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x5xf32>
// CHECK: %[[S0:.*]] = tensor.extract_slice %[[E]][0, 0] [2, 3] [1, 1]
// CHECK: %[[C0:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<2x3xf32>) outs(%[[S0]] : tensor<2x3xf32>)
// CHECK: %[[R0:.*]] = tensor.insert_slice %[[C0]] into %[[E]][0, 0] [2, 3] [1, 1]
// CHECK: %[[S1:.*]] = tensor.extract_slice %[[R0]][0, 3] [2, 2] [1, 1]
// CHECK: %[[C1:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<2x2xf32>) outs(%[[S1]] : tensor<2x2xf32>)
// CHECK: %[[R1:.*]] = tensor.insert_slice %[[C1]] into %[[R0]][0, 3] [2, 2] [1, 1]
// CHECK: return %[[R1]]
// Shardable, it reads every piece at a clamped position and keeps the one
// whose range holds the output position (one generic, which sharding
// propagation sees through).
// SHARD-LABEL: func.func @concat
// SHARD: linalg.generic {{.*}}outs(%{{.*}} : tensor<2x5xf32>)
// SHARD: %[[I:.*]] = linalg.index 0 : index
// SHARD: %[[J:.*]] = linalg.index 1 : index
// SHARD: %[[B:.*]] = tensor.extract %arg1[%[[I]], %{{.*}}] : tensor<2x2xf32>
// SHARD: %[[A:.*]] = tensor.extract %arg0[%[[I]], %{{.*}}] : tensor<2x3xf32>
// SHARD: %[[FIRST:.*]] = arith.cmpi slt, %[[J]], %{{.*}} : index
// SHARD: arith.select %[[FIRST]], %[[A]], %[[B]] : f32
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x2xf32>) -> tensor<2x5xf32> {
  %0 = lmc.concat axis = 1, %a, %b : tensor<2x3xf32>, tensor<2x2xf32> -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// A slice with positive strides is a tensor.extract_slice (a view after
// bufferization); shardable, it is a generic reading
// operand[start + i * stride].
// CHECK-LABEL: func.func @forward_slice
// CHECK: tensor.extract_slice %arg0[0, 2] [4, 3] [1, 2] : tensor<4x8xf32> to tensor<4x3xf32>
// SHARD-LABEL: func.func @forward_slice
// SHARD: linalg.generic
// SHARD: tensor.extract %arg0
func.func @forward_slice(%a: tensor<4x8xf32>) -> tensor<4x3xf32> {
  %0 = lmc.slice %a, start = [0, 2], stride = [1, 2] : tensor<4x8xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// A slice with a negative stride reads operand[start + i * stride].
// CHECK-LABEL: func.func @slice
// CHECK: %[[J:.*]] = linalg.index 1 : index
// CHECK: %[[M2:.*]] = arith.constant -2 : index
// CHECK: %[[S:.*]] = arith.muli %[[J]], %[[M2]] : index
// CHECK: %[[C7:.*]] = arith.constant 7 : index
// CHECK: %[[K:.*]] = arith.addi %[[S]], %[[C7]] : index
// CHECK: tensor.extract %arg0[%{{.*}}, %[[K]]] : tensor<4x8xf32>
func.func @slice(%a: tensor<4x8xf32>) -> tensor<4x4xf32> {
  %0 = lmc.slice %a, start = [0, 7], stride = [1, -2] : tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// slice_grad keeps positions where (i - start) is a multiple of the stride
// inside the window and writes zero elsewhere.
// CHECK-LABEL: func.func @slice_grad
// CHECK: arith.divsi
// CHECK: arith.remsi
// CHECK: %[[V:.*]] = tensor.extract %arg0
// CHECK: %[[S:.*]] = arith.select %{{.*}}, %[[V]], %{{.*}} : f32
// CHECK: linalg.yield %[[S]]
func.func @slice_grad(%a: tensor<4x4xf32>) -> tensor<4x8xf32> {
  %0 = lmc.slice_grad %a, start = [0, 7], stride = [1, -2] : tensor<4x4xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Gather reads the index through an indexing map, wraps negative values and
// clamps, then extracts the row.
// CHECK-DAG: #[[IDX:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @gather
// CHECK: linalg.generic {indexing_maps = [#[[IDX]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg1 : tensor<2x4xi64>)
// CHECK: %[[I:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK: arith.cmpi slt, %[[I]]
// CHECK: %[[R:.*]] = arith.minsi
// CHECK: %[[T:.*]] = linalg.index 2 : index
// CHECK: tensor.extract %arg0[%[[R]], %[[T]]] : tensor<5x3xf32>
func.func @gather(%t: tensor<5x3xf32>, %i: tensor<2x4xi64>) -> tensor<2x4x3xf32> {
  %0 = lmc.gather %t, %i, axis = 0 : tensor<5x3xf32>, tensor<2x4xi64> -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}

// -----

// A mode_select left for the lowering (a function differentiated directly,
// as lmc-gradcheck does) is the training computation.
// CHECK-LABEL: func.func @mode_select
// CHECK-SAME: (%[[T:.*]]: tensor<3xf32>, %{{.*}}: tensor<3xf32>)
// CHECK-NEXT: return %[[T]]
func.func @mode_select(%t: tensor<3xf32>, %e: tensor<3xf32>) -> tensor<3xf32> {
  %0 = lmc.mode_select train(%t) eval(%e) : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// random_uniform: splitmix64 of the key and the stream once, then per
// element of the linear index; the top 24 bits scaled by 2^-24.
// CHECK-LABEL: func.func @random_uniform
// CHECK: %[[KEY:.*]] = tensor.extract %arg0[] : tensor<i64>
// CHECK: arith.muli %[[KEY]], %{{.*}} : i64
// CHECK: linalg.generic
// CHECK: linalg.index 0 : index
// CHECK: linalg.index 1 : index
// CHECK: arith.index_cast %{{.*}} : index to i64
// CHECK: %[[TOP:.*]] = arith.shrui %{{.*}}, %c40_i64{{.*}} : i64
// CHECK: %[[F:.*]] = arith.uitofp %[[TOP]] : i64 to f32
// CHECK: arith.mulf %[[F]], %{{.*}} : f32
func.func @random_uniform(%key: tensor<i64>) -> tensor<2x3xf32> {
  %0 = lmc.random_uniform %key, stream = 3 : tensor<i64> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Several batch dimensions (attention's [batch, heads]): collapsed into one
// batch_matmul dimension unless shardable; then one generic contraction
// keeps them apart (a split of the heads would not survive the collapse),
// the transposed key read through its map, bf16 widened like linalg.matmul.
// CHECK-LABEL: func.func @attention_scores
// CHECK: linalg.batch_matmul
// SHARD-DAG: #[[Q:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// SHARD-DAG: #[[K:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
// SHARD-DAG: #[[S:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// SHARD-LABEL: func.func @attention_scores
// SHARD-NOT: collapse_shape
// SHARD: linalg.generic {indexing_maps = [#[[Q]], #[[K]], #[[S]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : tensor<2x4x8x16xbf16>, tensor<2x4x8x16xbf16>) outs(%{{.*}} : tensor<2x4x8x8xf32>)
// SHARD: %[[A:.*]] = arith.extf %{{.*}} : bf16 to f32
// SHARD: %[[B:.*]] = arith.extf %{{.*}} : bf16 to f32
// SHARD: %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// SHARD: arith.addf %{{.*}}, %[[P]]
// SHARD-NOT: collapse_shape
// SHARD: return
func.func @attention_scores(%q: tensor<2x4x8x16xbf16>, %k: tensor<2x4x8x16xbf16>) -> tensor<2x4x8x8xf32> {
  %0 = lmc.matmul %q, %k {transpose_rhs} : tensor<2x4x8x16xbf16>, tensor<2x4x8x16xbf16> -> tensor<2x4x8x8xf32>
  return %0 : tensor<2x4x8x8xf32>
}
