// lmc-lora on nn.Linear layouts: q_proj read as x W^T through a transpose,
// v_proj stored transposed ([in, out], read as x W), o_proj read with
// transpose_rhs, head the output layer, norm not a matmul weight.
// RUN: lmc-opt %s -lmc-lora="targets=q_proj,v_proj rank=2 alpha=4" | FileCheck %s
// RUN: lmc-opt %s -lmc-lora="targets=l.[qv]_proj rank=2 alpha=4" | FileCheck %s
// RUN: lmc-opt %s -lmc-lora="targets=all-linear rank=4 alpha=4 rslora" | FileCheck %s --check-prefix=ALL
// RUN: lmc-opt %s -lmc-lora="targets=o_proj rank=2 dropout=0.25 train=norm\.weight|head\.bias" | FileCheck %s --check-prefix=DROP

// A after its weight, PEFT's names, B zeros; the base and the rest frozen.
// The layouts: q_proj's weight is [out, in], v_proj's [in, out].
// CHECK-LABEL: module attributes {lmc.lora = {alpha = 4.000000e+00 : f64, dropout = 0.000000e+00 : f64, layouts = ["out_in", "in_out"], rank = 2 : i64, rslora = false, scaling = 2.000000e+00 : f64, targets = ["l.q_proj", "l.v_proj"], weights = ["l.q_proj.weight", "l.v_proj.weight"]}}
// CHECK: func.func @forward(%[[Q:.*]]: tensor<4x3xf32> {lmc.frozen, {{.*}}lmc.param = "l.q_proj.weight"},
// CHECK-SAME: %[[QA:.*]]: tensor<2x3xf32> {lmc.init = dense<{{.*}}> : tensor<2x3xf32>, lmc.param = "l.q_proj.lora_A.weight"},
// CHECK-SAME: %[[QB:.*]]: tensor<4x2xf32> {lmc.init = dense<0.000000e+00> : tensor<4x2xf32>, lmc.param = "l.q_proj.lora_B.weight"},
// CHECK-SAME: %[[V:.*]]: tensor<4x2xf32> {lmc.frozen, {{.*}}lmc.param = "l.v_proj.weight"},
// CHECK-SAME: %[[VA:.*]]: tensor<2x4xf32> {{{.*}}lmc.param = "l.v_proj.lora_A.weight"},
// CHECK-SAME: %[[VB:.*]]: tensor<2x2xf32> {{{.*}}lmc.param = "l.v_proj.lora_B.weight"},
// CHECK-SAME: tensor<3xf32> {lmc.frozen, {{.*}}lmc.param = "norm.weight"}
// CHECK-NOT: o_proj.lora
// CHECK-SAME: {lmc.frozen, {{.*}}lmc.param = "head.weight"}
// y + 2 * (x A^T) B^T after each adapted product.
// CHECK: %[[QT:.*]] = lmc.transpose %[[Q]]
// CHECK: %[[Y:.*]] = lmc.matmul %[[X:.*]], %[[QT]] :
// CHECK: %[[LOW:.*]] = lmc.matmul %[[X]], %[[QA]] {transpose_rhs} : tensor<8x3xf32>, tensor<2x3xf32> -> tensor<8x2xf32>
// CHECK: %[[UP:.*]] = lmc.matmul %[[LOW]], %[[QB]] {transpose_rhs} : tensor<8x2xf32>, tensor<4x2xf32> -> tensor<8x4xf32>
// CHECK: %[[S:.*]] = arith.constant dense<2.000000e+00> : tensor<8x4xf32>
// CHECK: %[[D:.*]] = lmc.mul %[[UP]], %[[S]]
// CHECK: %[[SUM:.*]] = lmc.add %[[Y]], %[[D]]
// CHECK: lmc.matmul %[[SUM]], %[[V]] :
// CHECK: lmc.matmul %[[SUM]], %[[VA]] {transpose_rhs}

// all-linear: every product's weight but the output layer's (head), the
// scaling alpha / sqrt(r).
// ALL: lmc.lora = {alpha = 4.000000e+00 : f64, dropout = 0.000000e+00 : f64, layouts = ["out_in", "in_out", "out_in"], rank = 4 : i64, rslora = true, scaling = 2.000000e+00 : f64, targets = ["l.q_proj", "l.v_proj", "l.o_proj"], weights = ["l.q_proj.weight", "l.v_proj.weight", "l.o_proj.weight"]}
// ALL-NOT: head.lora_A

// Dropout on the adapter's input in a training step only, from a new
// random key; --train keeps other parameters training.
// DROP: lmc.lora = {alpha = 8.000000e+00 : f64, dropout = 2.500000e-01 : f64, layouts = ["out_in"], rank = 2 : i64, rslora = false, scaling = 4.000000e+00 : f64, targets = ["l.o_proj"], weights = ["l.o_proj.weight"]}
// DROP: {lmc.frozen, {{.*}}lmc.param = "l.q_proj.weight"}
// DROP-SAME: tensor<3xf32> {lmc.init = dense<1.000000e+00> : tensor<3xf32>, lmc.param = "norm.weight"}
// DROP-SAME: {lmc.frozen, {{.*}}lmc.param = "head.weight"}
// DROP-SAME: tensor<5xf32> {lmc.init = {{.*}}, lmc.param = "head.bias"}
// DROP-SAME: %[[KEY:[[:alnum:]]+]]: tensor<i64> {lmc.rng_key})
// DROP: lmc.random_uniform %[[KEY]]
// DROP: %[[DROPPED:[[:alnum:]]+]] = lmc.select
// DROP: %[[IN:[[:alnum:]]+]] = lmc.mode_select train(%[[DROPPED]]) eval(
// DROP: lmc.matmul %[[IN]], %{{.*}} {transpose_rhs} : tensor<8x2xf32>, tensor<2x2xf32>
func.func @forward(
    %q: tensor<4x3xf32> {lmc.param = "l.q_proj.weight", lmc.init = dense<0.5> : tensor<4x3xf32>},
    %v: tensor<4x2xf32> {lmc.param = "l.v_proj.weight", lmc.init = dense<0.25> : tensor<4x2xf32>},
    %o: tensor<4x2xf32> {lmc.param = "l.o_proj.weight", lmc.init = dense<0.125> : tensor<4x2xf32>},
    %norm: tensor<3xf32> {lmc.param = "norm.weight", lmc.init = dense<1.0> : tensor<3xf32>},
    %head: tensor<5x4xf32> {lmc.param = "head.weight", lmc.init = dense<0.0625> : tensor<5x4xf32>},
    %bias: tensor<5xf32> {lmc.param = "head.bias", lmc.init = dense<0.0> : tensor<5xf32>},
    %x: tensor<8x3xf32> {lmc.input = "x"}) -> (tensor<8x5xf32> {lmc.output = "logits"}) {
  %nb = lmc.broadcast_in_dim %norm, dims = [1] : tensor<3xf32> -> tensor<8x3xf32>
  %xn = lmc.mul %x, %nb : tensor<8x3xf32>
  %qt = lmc.transpose %q, perm = [1, 0] : tensor<4x3xf32> -> tensor<3x4xf32>
  %h = lmc.matmul %xn, %qt : tensor<8x3xf32>, tensor<3x4xf32> -> tensor<8x4xf32>
  %g = lmc.matmul %h, %v : tensor<8x4xf32>, tensor<4x2xf32> -> tensor<8x2xf32>
  %k = lmc.matmul %g, %o {transpose_rhs} : tensor<8x2xf32>, tensor<4x2xf32> -> tensor<8x4xf32>
  %hk = lmc.add %h, %k : tensor<8x4xf32>
  %y = lmc.matmul %hk, %head {transpose_rhs} : tensor<8x4xf32>, tensor<5x4xf32> -> tensor<8x5xf32>
  %bb = lmc.broadcast_in_dim %bias, dims = [1] : tensor<5xf32> -> tensor<8x5xf32>
  %z = lmc.add %y, %bb : tensor<8x5xf32>
  return %z : tensor<8x5xf32>
}
