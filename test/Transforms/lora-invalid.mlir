// RUN: lmc-opt %s -split-input-file -verify-diagnostics -lmc-lora="targets=k_proj"
// RUN: not lmc-opt %s -split-input-file -lmc-lora="targets=norm" 2>&1 | FileCheck %s --check-prefix=NORM
// RUN: not lmc-opt %s -split-input-file -lmc-lora="targets=q_proj rank=0" 2>&1 | FileCheck %s --check-prefix=RANK
// RUN: not lmc-opt %s -split-input-file -lmc-lora="targets=q_proj alpha=-1" 2>&1 | FileCheck %s --check-prefix=ALPHA
// RUN: not lmc-opt %s -split-input-file -lmc-lora="targets=q_proj dropout=1" 2>&1 | FileCheck %s --check-prefix=DROPOUT
// RUN: not lmc-opt %s -split-input-file -lmc-lora="targets=[q" 2>&1 | FileCheck %s --check-prefix=GLOB
// RUN: not lmc-opt %s -split-input-file -lmc-lora="targets=," 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not lmc-opt %s -split-input-file -lmc-lora="targets=q_proj train=(" 2>&1 | FileCheck %s --check-prefix=TRAIN
// RUN: not lmc-opt %s -split-input-file -lmc-lora="targets=q_proj train=l.q_proj.weight" 2>&1 | FileCheck %s --check-prefix=TRAINADAPTED
// RUN: not lmc-opt %s -split-input-file -lmc-lora="targets=q_proj train=nothing" 2>&1 | FileCheck %s --check-prefix=TRAINNONE

// RANK: error: --lora-rank must be at least 1, not 0
// ALPHA: error: --lora-alpha must be positive, not -1
// DROPOUT: error: --lora-dropout must be in [0, 1), not 1
// GLOB: error: invalid --lora glob '[q': invalid glob pattern, unmatched '['
// EMPTY: error: --lora needs target modules, e.g. --lora q_proj,v_proj or --lora all-linear
// TRAIN: error: invalid --train regex '(': parentheses not balanced
// TRAINADAPTED: error: --train matches 'l.q_proj.weight', which --lora adapts: its adapters train, the weight stays frozen; leave it out of --train
// TRAINNONE: error: --train 'nothing' matches no parameter (whole names, e.g. 'l.q_proj.weight')

// A target that matches nothing names the matmul weights there are.
// expected-error @+1 {{--lora target 'k_proj' matches no matmul weight; the model's: 'l.q_proj', 'head'}}
func.func @forward(
    %q: tensor<4x3xf32> {lmc.param = "l.q_proj.weight", lmc.init = dense<0.5> : tensor<4x3xf32>},
    %norm: tensor<3xf32> {lmc.param = "l.norm.weight", lmc.init = dense<1.0> : tensor<3xf32>},
    %head: tensor<5x4xf32> {lmc.param = "head.weight", lmc.init = dense<0.0625> : tensor<5x4xf32>},
    %x: tensor<8x3xf32> {lmc.input = "x"}) -> (tensor<8x5xf32> {lmc.output = "logits"}) {
  %nb = lmc.broadcast_in_dim %norm, dims = [1] : tensor<3xf32> -> tensor<8x3xf32>
  %xn = lmc.mul %x, %nb : tensor<8x3xf32>
  %h = lmc.matmul %xn, %q {transpose_rhs} : tensor<8x3xf32>, tensor<4x3xf32> -> tensor<8x4xf32>
  %y = lmc.matmul %h, %head {transpose_rhs} : tensor<8x4xf32>, tensor<5x4xf32> -> tensor<8x5xf32>
  return %y : tensor<8x5xf32>
}

// -----

// A target that is not (only) a matmul weight: an embedding table.
// expected-error @+1 {{--lora target 'k_proj' matches parameter 'l.k_proj.weight', which is not a matmul weight (read by lmc.gather); LoRA adapts the weights of linear layers}}
func.func @forward(
    %k: tensor<4x3xf32> {lmc.param = "l.k_proj.weight", lmc.init = dense<0.5> : tensor<4x3xf32>},
    %ids: tensor<8xi64> {lmc.input = "ids"}) -> (tensor<8x3xf32> {lmc.output = "logits"}) {
  %e = lmc.gather %k, %ids, axis = 0 : tensor<4x3xf32>, tensor<8xi64> -> tensor<8x3xf32>
  return %e : tensor<8x3xf32>
}

// -----

// A weight read both as x W and as x W^T has no one input dimension.
// expected-error @+1 {{--lora: parameter 'l.k_proj.weight' is read both as x W and as x W^T; cannot tell its input dimension}}
func.func @forward(
    %k: tensor<3x3xf32> {lmc.param = "l.k_proj.weight", lmc.init = dense<0.5> : tensor<3x3xf32>},
    %x: tensor<8x3xf32> {lmc.input = "x"}) -> (tensor<8x3xf32> {lmc.output = "logits"}) {
  %a = lmc.matmul %x, %k : tensor<8x3xf32>, tensor<3x3xf32> -> tensor<8x3xf32>
  %b = lmc.matmul %a, %k {transpose_rhs} : tensor<8x3xf32>, tensor<3x3xf32> -> tensor<8x3xf32>
  return %b : tensor<8x3xf32>
}

// -----

// The adapters' names are taken.
// expected-error @+1 {{--lora: the model already has a parameter 'l.k_proj.lora_A.weight'}}
func.func @forward(
    %k: tensor<3x3xf32> {lmc.param = "l.k_proj.weight", lmc.init = dense<0.5> : tensor<3x3xf32>},
    %a: tensor<3xf32> {lmc.param = "l.k_proj.lora_A.weight", lmc.init = dense<0.5> : tensor<3xf32>},
    %x: tensor<8x3xf32> {lmc.input = "x"}) -> (tensor<8x3xf32> {lmc.output = "logits"}) {
  %y = lmc.matmul %x, %k : tensor<8x3xf32>, tensor<3x3xf32> -> tensor<8x3xf32>
  %ab = lmc.broadcast_in_dim %a, dims = [1] : tensor<3xf32> -> tensor<8x3xf32>
  %z = lmc.add %y, %ab : tensor<8x3xf32>
  return %z : tensor<8x3xf32>
}

// NORM: error: --lora target 'norm' matches parameter 'l.norm.weight', which is not a matmul weight (tensor<3xf32>, not a 2-D float matrix)
