// RUN: lmc-opt %s -split-input-file -lmc-split-fused-projections="shard=*.qkv.weight=model,_" | FileCheck %s

// GPT-2's attention input as the ONNX importer gives it: the fused weight
// transposed into a matmul, reshaped, the bias broadcast and added, three
// slices. Each slice is computed from its own rows of the weight and bias
// (pieces appended as parameters, initial values cut alike); the fused
// parameters and computation are gone.
// CHECK: module attributes {lmc.pieces = {attn.qkv.bias = ["attn.qkv.bias#0", "attn.qkv.bias#1", "attn.qkv.bias#2"], attn.qkv.weight = ["attn.qkv.weight#0", "attn.qkv.weight#1", "attn.qkv.weight#2"]}}
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X:.*]]: tensor<8x4xf32> {lmc.input = "x"},
// CHECK-SAME: %[[B0:.*]]: tensor<4xf32> {lmc.init = dense<1.000000e+00> : tensor<4xf32>, lmc.param = "attn.qkv.bias#0"},
// CHECK-SAME: %[[B1:.*]]: tensor<4xf32> {lmc.init = dense<1.000000e+00> : tensor<4xf32>, lmc.param = "attn.qkv.bias#1"},
// CHECK-SAME: %[[B2:.*]]: tensor<4xf32> {lmc.init = dense<1.000000e+00> : tensor<4xf32>, lmc.param = "attn.qkv.bias#2"},
// CHECK-SAME: %[[W0:.*]]: tensor<4x4xf32> {lmc.init = dense<{{\[}}[0.000000e+00, {{.*}}]]> : tensor<4x4xf32>, lmc.param = "attn.qkv.weight#0"},
// CHECK-SAME: %[[W1:.*]]: tensor<4x4xf32> {lmc.init = dense<{{\[}}[1.600000e+01, {{.*}}]]> : tensor<4x4xf32>, lmc.param = "attn.qkv.weight#1"},
// CHECK-SAME: %[[W2:.*]]: tensor<4x4xf32> {lmc.init = dense<{{\[}}[3.200000e+01, {{.*}}]]> : tensor<4x4xf32>, lmc.param = "attn.qkv.weight#2"})
// CHECK-DAG: %[[T0:.*]] = lmc.transpose %[[W0]], perm = [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
// CHECK-DAG: %[[M0:.*]] = lmc.matmul %[[X]], %[[T0]] : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
// CHECK-DAG: %[[R0:.*]] = lmc.reshape %[[M0]] : tensor<8x4xf32> -> tensor<2x4x4xf32>
// CHECK-DAG: %[[C0:.*]] = lmc.broadcast_in_dim %[[B0]], dims = [2] : tensor<4xf32> -> tensor<2x4x4xf32>
// CHECK-DAG: %[[Q:.*]] = lmc.add %[[C0]], %[[R0]] : tensor<2x4x4xf32>
// CHECK-DAG: %[[T1:.*]] = lmc.transpose %[[W1]]
// CHECK-DAG: %[[M1:.*]] = lmc.matmul %[[X]], %[[T1]]
// CHECK-DAG: %[[R1:.*]] = lmc.reshape %[[M1]]
// CHECK-DAG: %[[C1:.*]] = lmc.broadcast_in_dim %[[B1]]
// CHECK-DAG: %[[K:.*]] = lmc.add %[[C1]], %[[R1]]
// CHECK-DAG: %[[T2:.*]] = lmc.transpose %[[W2]]
// CHECK-DAG: %[[M2:.*]] = lmc.matmul %[[X]], %[[T2]]
// CHECK-DAG: %[[R2:.*]] = lmc.reshape %[[M2]]
// CHECK-DAG: %[[C2:.*]] = lmc.broadcast_in_dim %[[B2]]
// CHECK-DAG: %[[V:.*]] = lmc.add %[[C2]], %[[R2]]
// CHECK-NOT: lmc.slice
// CHECK: return %[[Q]], %[[K]], %[[V]]
module {
  func.func @forward(%x: tensor<8x4xf32> {lmc.input = "x"},
                     %w: tensor<12x4xf32> {lmc.param = "attn.qkv.weight", lmc.init = dense<[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0], [12.0, 13.0, 14.0, 15.0], [16.0, 17.0, 18.0, 19.0], [20.0, 21.0, 22.0, 23.0], [24.0, 25.0, 26.0, 27.0], [28.0, 29.0, 30.0, 31.0], [32.0, 33.0, 34.0, 35.0], [36.0, 37.0, 38.0, 39.0], [40.0, 41.0, 42.0, 43.0], [44.0, 45.0, 46.0, 47.0]]> : tensor<12x4xf32>},
                     %b: tensor<12xf32> {lmc.param = "attn.qkv.bias", lmc.init = dense<1.0> : tensor<12xf32>})
      -> (tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>) {
    %t = lmc.transpose %w, perm = [1, 0] : tensor<12x4xf32> -> tensor<4x12xf32>
    %m = lmc.matmul %x, %t : tensor<8x4xf32>, tensor<4x12xf32> -> tensor<8x12xf32>
    %r = lmc.reshape %m : tensor<8x12xf32> -> tensor<2x4x12xf32>
    %bb = lmc.broadcast_in_dim %b, dims = [2] : tensor<12xf32> -> tensor<2x4x12xf32>
    %h = lmc.add %bb, %r : tensor<2x4x12xf32>
    %q = lmc.slice %h, start = [0, 0, 0], stride = [1, 1, 1] : tensor<2x4x12xf32> -> tensor<2x4x4xf32>
    %k = lmc.slice %h, start = [0, 0, 4], stride = [1, 1, 1] : tensor<2x4x12xf32> -> tensor<2x4x4xf32>
    %v = lmc.slice %h, start = [0, 0, 8], stride = [1, 1, 1] : tensor<2x4x12xf32> -> tensor<2x4x4xf32>
    return %q, %k, %v : tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>
  }
}

// -----

// The DSL's form: the transpose is a matmul flag; a piece read twice,
// the second time after another slice's use (the pieces are computed
// where the fused value was).
// CHECK: lmc.pieces = {attn.qkv.weight = ["attn.qkv.weight#0", "attn.qkv.weight#1"]}
// CHECK-LABEL: func.func @forward
// CHECK-SAME: %[[W0:[^:]*]]: tensor<2x4xf32> {lmc.param = "attn.qkv.weight#0"}, %[[W1:[^:]*]]: tensor<2x4xf32> {lmc.param = "attn.qkv.weight#1"})
// CHECK-DAG: %[[Q:.*]] = lmc.matmul %{{.*}}, %[[W0]] {transpose_rhs} : tensor<8x4xf32>, tensor<2x4xf32> -> tensor<8x2xf32>
// CHECK-DAG: %[[K:.*]] = lmc.matmul %{{.*}}, %[[W1]] {transpose_rhs} : tensor<8x4xf32>, tensor<2x4xf32> -> tensor<8x2xf32>
// CHECK: %[[S:.*]] = lmc.add %[[Q]], %[[K]]
// CHECK: return %[[Q]], %[[S]], %[[Q]]
module {
  func.func @forward(%x: tensor<8x4xf32> {lmc.input = "x"},
                     %w: tensor<4x4xf32> {lmc.param = "attn.qkv.weight"})
      -> (tensor<8x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>) {
    %m = lmc.matmul %x, %w {transpose_rhs} : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
    %q = lmc.slice %m, start = [0, 0], stride = [1, 1] : tensor<8x4xf32> -> tensor<8x2xf32>
    %k = lmc.slice %m, start = [0, 2], stride = [1, 1] : tensor<8x4xf32> -> tensor<8x2xf32>
    %sum = lmc.add %q, %k : tensor<8x2xf32>
    %q2 = lmc.slice %m, start = [0, 0], stride = [1, 1] : tensor<8x4xf32> -> tensor<8x2xf32>
    return %q, %sum, %q2 : tensor<8x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>
  }
}

// -----

// Left alone: a weight no rule splits, a weight also read whole (tied),
// and slices of unequal size.
// CHECK-NOT: lmc.pieces
// CHECK-LABEL: func.func @forward
// CHECK-COUNT-6: lmc.slice
module {
  func.func @forward(%x: tensor<8x4xf32> {lmc.input = "x"},
                     %a: tensor<4x4xf32> {lmc.param = "mlp.weight"},
                     %t: tensor<4x4xf32> {lmc.param = "tied.qkv.weight"},
                     %u: tensor<6x4xf32> {lmc.param = "odd.qkv.weight"})
      -> (tensor<8x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<4x4xf32>, tensor<8x2xf32>, tensor<8x4xf32>) {
    %m = lmc.matmul %x, %a {transpose_rhs} : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
    %m0 = lmc.slice %m, start = [0, 0], stride = [1, 1] : tensor<8x4xf32> -> tensor<8x2xf32>
    %m1 = lmc.slice %m, start = [0, 2], stride = [1, 1] : tensor<8x4xf32> -> tensor<8x2xf32>
    %n = lmc.matmul %x, %t {transpose_rhs} : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
    %n0 = lmc.slice %n, start = [0, 0], stride = [1, 1] : tensor<8x4xf32> -> tensor<8x2xf32>
    %n1 = lmc.slice %n, start = [0, 2], stride = [1, 1] : tensor<8x4xf32> -> tensor<8x2xf32>
    %o = lmc.matmul %x, %u {transpose_rhs} : tensor<8x4xf32>, tensor<6x4xf32> -> tensor<8x6xf32>
    %o0 = lmc.slice %o, start = [0, 0], stride = [1, 1] : tensor<8x6xf32> -> tensor<8x2xf32>
    %o1 = lmc.slice %o, start = [0, 2], stride = [1, 1] : tensor<8x6xf32> -> tensor<8x4xf32>
    return %m0, %m1, %n0, %n1, %t, %o0, %o1 : tensor<8x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<4x4xf32>, tensor<8x2xf32>, tensor<8x4xf32>
  }
}

// -----

// Left alone: one of the slices reads the whole value, and pieces that do
// not cover it (10 rows in slices of 4).
// CHECK-NOT: lmc.pieces
// CHECK-LABEL: func.func @forward
// CHECK-COUNT-5: lmc.slice
module {
  func.func @forward(%x: tensor<8x4xf32> {lmc.input = "x"},
                     %w: tensor<4x4xf32> {lmc.param = "a.qkv.weight"},
                     %u: tensor<10x4xf32> {lmc.param = "b.qkv.weight"})
      -> (tensor<8x2xf32>, tensor<8x2xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
    %m = lmc.matmul %x, %w {transpose_rhs} : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
    %m0 = lmc.slice %m, start = [0, 0], stride = [1, 1] : tensor<8x4xf32> -> tensor<8x2xf32>
    %m1 = lmc.slice %m, start = [0, 2], stride = [1, 1] : tensor<8x4xf32> -> tensor<8x2xf32>
    %all = lmc.slice %m, start = [0, 0], stride = [1, 1] : tensor<8x4xf32> -> tensor<8x4xf32>
    %n = lmc.matmul %x, %u {transpose_rhs} : tensor<8x4xf32>, tensor<10x4xf32> -> tensor<8x10xf32>
    %n0 = lmc.slice %n, start = [0, 0], stride = [1, 1] : tensor<8x10xf32> -> tensor<8x4xf32>
    %n1 = lmc.slice %n, start = [0, 4], stride = [1, 1] : tensor<8x10xf32> -> tensor<8x4xf32>
    return %m0, %m1, %all, %n0, %n1 : tensor<8x2xf32>, tensor<8x2xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
  }
}
