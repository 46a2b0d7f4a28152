// A fused parameter cut into pieces (lmc-split-fused-projections, the
// module's lmc.pieces) is frozen or trained by its fused name: both pieces
// become constants under --freeze, both stay trained under --train.
// RUN: lmc-opt %s -lmc-autodiff="freeze=attn\.qkv\.weight" | FileCheck %s --check-prefix=FREEZE
// RUN: lmc-opt %s -lmc-autodiff="train=attn\.qkv\.weight" | FileCheck %s --check-prefix=TRAIN

// FREEZE-LABEL: func.func @forward_grad(
// FREEZE-SAME: -> (tensor<f32> {lmc.output = "loss"}, tensor<2xf32> {lmc.param = "other"})
// FREEZE-DAG: arith.constant dense<3.000000e+00> : tensor<2xf32>
// FREEZE-DAG: arith.constant dense<4.000000e+00> : tensor<2xf32>

// TRAIN-LABEL: func.func @forward_grad(
// TRAIN-SAME: -> (tensor<f32> {lmc.output = "loss"}, tensor<2xf32> {lmc.param = "attn.qkv.weight#0"}, tensor<2xf32> {lmc.param = "attn.qkv.weight#1"})
module attributes {lmc.pieces = {attn.qkv.weight = ["attn.qkv.weight#0", "attn.qkv.weight#1"]}} {
  func.func @forward(%q: tensor<2xf32> {lmc.param = "attn.qkv.weight#0", lmc.init = dense<3.0> : tensor<2xf32>},
                     %k: tensor<2xf32> {lmc.param = "attn.qkv.weight#1", lmc.init = dense<4.0> : tensor<2xf32>},
                     %o: tensor<2xf32> {lmc.param = "other", lmc.init = dense<1.0> : tensor<2xf32>},
                     %x: tensor<2xf32> {lmc.input = "x"}) -> (tensor<f32> {lmc.output = "loss"}) {
    %a = lmc.mul %x, %q : tensor<2xf32>
    %b = lmc.mul %a, %k : tensor<2xf32>
    %c = lmc.mul %b, %o : tensor<2xf32>
    %l = lmc.reduce_sum %c, axes = [0] : tensor<2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
