// RUN: lmc-opt %s -verify-diagnostics -lmc-rematerialize=policy=everything
// A segment count that is not a count, or given to selective:
// RUN: not lmc-opt %s -lmc-rematerialize=policy=per-block:x 2>&1 | FileCheck %s --check-prefix=COUNT
// RUN: not lmc-opt %s -lmc-rematerialize=policy=per-block:-1 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not lmc-opt %s -lmc-rematerialize=policy=selective:2 2>&1 | FileCheck %s --check-prefix=SELECTIVE
// COUNT: unknown rematerialization policy 'per-block:x'
// NEGATIVE: unknown rematerialization policy 'per-block:-1'
// SELECTIVE: unknown rematerialization policy 'selective:2'

// expected-error@+1 {{unknown rematerialization policy 'everything' (expected per-block, per-block:<segments> or selective)}}
module {
  func.func @forward_grad(%x: tensor<4xf32> {lmc.input = "x"}) -> tensor<f32> {
    %l = lmc.reduce_sum %x, axes = [0] : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
