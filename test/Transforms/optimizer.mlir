// RUN: lmc-opt %s -lmc-autodiff -lmc-optimizer="optimizer=sgd weight-decay=0.5" | FileCheck %s --check-prefix=SGD
// RUN: lmc-opt %s -lmc-autodiff -lmc-optimizer="optimizer=sgd" | FileCheck %s --check-prefix=CLIP
// RUN: lmc-opt %s -lmc-autodiff -lmc-optimizer="optimizer=momentum momentum=0.75" | FileCheck %s --check-prefix=MOMENTUM
// RUN: lmc-opt %s -lmc-autodiff -lmc-optimizer="optimizer=adam beta1=0.5 beta2=0.75 eps=0.125" | FileCheck %s --check-prefix=ADAM
// RUN: lmc-opt %s -lmc-autodiff -lmc-optimizer="optimizer=adamw weight-decay=0.25" | FileCheck %s --check-prefix=ADAMW

// Entry points, tagged for the runtime (docs/runtime-abi.md):
//   grad_step(params, inputs) -> (grads, loss)
//   apply_step(params, state, grads, hypers) -> (params, state, grad_norm)
//   train_step(params, state, inputs, hypers) -> (params, state, loss,
//              grad_norm), which calls @forward_grad and @apply_step
//   eval_step(params, inputs) -> (loss, outputs)
// @forward and @forward_grad become private; only train_step's params carry
// the initial values.

// SGD with L2 weight decay: p - lr * (clip(g) + wd * p).
// SGD: func.func private @forward(
// SGD: func.func private @forward_grad(
// SGD-LABEL: func.func @grad_step(
// SGD-SAME: %[[GP:[a-z0-9]+]]: tensor<4xf32> {lmc.name = "w", lmc.role = "param"}
// SGD-SAME: %[[GX:[a-z0-9]+]]: tensor<4xf32> {lmc.name = "x", lmc.role = "input"}
// SGD-SAME: -> (tensor<4xf32> {lmc.name = "w", lmc.role = "grad"}, tensor<f32> {lmc.name = "loss", lmc.role = "loss"})
// SGD: %[[GG:.*]]:2 = call @forward_grad(%[[GP]], %[[GX]])
// SGD: return %[[GG]]#1, %[[GG]]#0
// SGD-LABEL: func.func @apply_step(
// SGD-SAME: %[[P:[a-z0-9]+]]: tensor<4xf32> {lmc.name = "w", lmc.role = "param"}
// SGD-SAME: %[[G:[a-z0-9]+]]: tensor<4xf32> {lmc.name = "w", lmc.role = "grad"}
// SGD-SAME: %[[LR:[a-z0-9]+]]: tensor<f32> {lmc.name = "lr", lmc.role = "hyper"}
// SGD-SAME: %[[MAX:[a-z0-9]+]]: tensor<f32> {lmc.name = "max_grad_norm", lmc.role = "hyper"}
// SGD-SAME: -> (tensor<4xf32> {lmc.name = "w", lmc.role = "param"}, tensor<f32> {lmc.name = "grad_norm", lmc.role = "grad_norm"})
// SGD: %[[CLIPPED:.*]] = lmc.mul %[[G]], %{{[0-9]+}} : tensor<4xf32>
// SGD: %[[LRB:.*]] = lmc.broadcast_in_dim %[[LR]], dims = []
// SGD: %[[WD:.*]] = arith.constant dense<5.000000e-01>
// SGD: %[[PWD:.*]] = lmc.mul %[[P]], %[[WD]]
// SGD: %[[GW:.*]] = lmc.add %[[CLIPPED]], %[[PWD]]
// SGD: %[[STEP:.*]] = lmc.mul %[[LRB]], %[[GW]]
// SGD: %[[NEW:.*]] = lmc.sub %[[P]], %[[STEP]]
// A step whose gradient norm is not finite keeps the param (the runtime
// updates it in place and cannot discard the update afterwards).
// SGD: %[[INF:.*]] = arith.constant dense<0x7F800000> : tensor<f32>
// SGD: %[[FINITE:.*]] = lmc.cmp lt, %[[NORM:.*]], %[[INF]]
// SGD: %[[FINITEB:.*]] = lmc.broadcast_in_dim %[[FINITE]], dims = [] : tensor<i1> -> tensor<4xi1>
// SGD: %[[KEPT:.*]] = lmc.select %[[FINITEB]], %[[NEW]], %[[P]]
// SGD: return %[[KEPT]], %[[NORM]] : tensor<4xf32>, tensor<f32>
// SGD-LABEL: func.func @train_step(
// SGD-SAME: %[[TP:[a-z0-9]+]]: tensor<4xf32> {lmc.init = dense<2.500000e-01> : tensor<4xf32>, lmc.name = "w", lmc.role = "param"}
// SGD-SAME: %[[TX:[a-z0-9]+]]: tensor<4xf32> {lmc.name = "x", lmc.role = "input"}
// SGD-SAME: %[[TLR:[a-z0-9]+]]: tensor<f32> {lmc.name = "lr", lmc.role = "hyper"}
// SGD-SAME: %[[TMAX:[a-z0-9]+]]: tensor<f32> {lmc.name = "max_grad_norm", lmc.role = "hyper"}
// SGD-SAME: -> (tensor<4xf32> {lmc.name = "w", lmc.role = "param"}, tensor<f32> {lmc.name = "loss", lmc.role = "loss"}, tensor<f32> {lmc.name = "grad_norm", lmc.role = "grad_norm"})
// SGD: %[[TG:.*]]:2 = call @forward_grad(%[[TP]], %[[TX]])
// SGD: %[[UP:.*]]:2 = call @apply_step(%[[TP]], %[[TG]]#1, %[[TLR]], %[[TMAX]])
// So does a step whose loss is not finite (|loss| < inf fails).
// SGD: %[[ABS:.*]] = lmc.abs %[[TG]]#0
// SGD: %[[LOSSOK:.*]] = lmc.cmp lt, %[[ABS]], %{{.*}}
// SGD: %[[LOSSOKB:.*]] = lmc.broadcast_in_dim %[[LOSSOK]]
// SGD: %[[TKEPT:.*]] = lmc.select %[[LOSSOKB]], %[[UP]]#0, %[[TP]]
// SGD: return %[[TKEPT]], %[[TG]]#0, %[[UP]]#1 : tensor<4xf32>, tensor<f32>, tensor<f32>
// SGD-LABEL: func.func @eval_step(
// SGD-SAME: -> (tensor<f32> {lmc.name = "loss", lmc.role = "loss"}, tensor<4xf32> {lmc.name = "y", lmc.role = "output"})

// Global-norm clipping as torch.nn.utils.clip_grad_norm_: the norm of the
// per-parameter norms; scale by min(1, max / (norm + 1e-6)), or 1 when max
// is 0. The norm before clipping is returned last.
// CLIP-LABEL: func.func @apply_step(
// CLIP-SAME: %[[G:[a-z0-9]+]]: tensor<4xf32> {lmc.name = "w", lmc.role = "grad"}
// CLIP: %[[SQ:.*]] = lmc.mul %[[G]], %[[G]]
// CLIP: %[[SUM:.*]] = lmc.reduce_sum %[[SQ]], axes = [0]
// CLIP: %[[N1:.*]] = lmc.sqrt %[[SUM]]
// CLIP: %[[N1SQ:.*]] = lmc.mul %[[N1]], %[[N1]]
// CLIP: %[[TOT:.*]] = lmc.add %{{.*}}, %[[N1SQ]]
// CLIP: %[[NORM:.*]] = lmc.sqrt %[[TOT]]
// CLIP: %[[EPS:.*]] = arith.constant dense<9.99999997E-7>
// CLIP: %[[DEN:.*]] = lmc.add %[[NORM]], %[[EPS]]
// CLIP: %[[RATIO:.*]] = lmc.div %[[MAX:.*]], %[[DEN]]
// CLIP: %[[BELOW:.*]] = lmc.cmp lt, %[[RATIO]], %[[ONE:.*]] :
// CLIP: %[[CLAMPED:.*]] = lmc.select %[[BELOW]], %[[RATIO]], %[[ONE]]
// CLIP: %[[ON:.*]] = lmc.cmp gt, %[[MAX]], %{{.*}} :
// CLIP: %[[COEF:.*]] = lmc.select %[[ON]], %[[CLAMPED]], %[[ONE]]
// CLIP: %[[COEFB:.*]] = lmc.broadcast_in_dim %[[COEF]]
// CLIP: lmc.mul %[[G]], %[[COEFB]]
// CLIP: return %{{.*}}, %[[NORM]]

// Momentum (torch, dampening 0): buf = momentum * buf + g; p - lr * buf.
// MOMENTUM-LABEL: func.func @apply_step(
// MOMENTUM-SAME: %[[P:[a-z0-9]+]]: tensor<4xf32> {lmc.name = "w", lmc.role = "param"}
// MOMENTUM-SAME: %[[BUF:[a-z0-9]+]]: tensor<4xf32> {lmc.name = "w.momentum_buffer", lmc.role = "state"}
// MOMENTUM-SAME: %[[G:[a-z0-9]+]]: tensor<4xf32> {lmc.name = "w", lmc.role = "grad"}
// MOMENTUM-SAME: -> (tensor<4xf32> {lmc.name = "w", lmc.role = "param"}, tensor<4xf32> {lmc.name = "w.momentum_buffer", lmc.role = "state"}, tensor<f32>
// MOMENTUM: %[[CG:.*]] = lmc.mul %[[G]], %{{[0-9]+}} : tensor<4xf32>
// MOMENTUM: %[[M:.*]] = arith.constant dense<7.500000e-01>
// MOMENTUM: %[[BM:.*]] = lmc.mul %[[BUF]], %[[M]]
// MOMENTUM: %[[NB:.*]] = lmc.add %[[BM]], %[[CG]]
// MOMENTUM: %[[ST:.*]] = lmc.mul %{{.*}}, %[[NB]]
// MOMENTUM: %[[NP:.*]] = lmc.sub %[[P]], %[[ST]]
// MOMENTUM: %[[KP:.*]] = lmc.select %{{.*}}, %[[NP]], %[[P]]
// MOMENTUM: %[[KB:.*]] = lmc.select %{{.*}}, %[[NB]], %[[BUF]]
// MOMENTUM: return %[[KP]], %[[KB]], %{{.*}}
// MOMENTUM-LABEL: func.func @train_step(
// MOMENTUM-SAME: -> (tensor<4xf32> {lmc.name = "w", lmc.role = "param"}, tensor<4xf32> {lmc.name = "w.momentum_buffer", lmc.role = "state"}, tensor<f32> {lmc.name = "loss", lmc.role = "loss"}, tensor<f32> {lmc.name = "grad_norm", lmc.role = "grad_norm"})
// MOMENTUM: %[[TG:.*]]:2 = call @forward_grad
// MOMENTUM: %[[UP:.*]]:3 = call @apply_step(%arg0, %arg1, %[[TG]]#1, %arg3, %arg4)
// MOMENTUM: %[[KP:.*]] = lmc.select %{{.*}}, %[[UP]]#0, %arg0
// MOMENTUM: %[[KB:.*]] = lmc.select %{{.*}}, %[[UP]]#1, %arg1
// MOMENTUM: return %[[KP]], %[[KB]], %[[TG]]#0, %[[UP]]#2

// Adam: m = m + (1-b1)(g-m); v = b2 v + (1-b2) g g;
// p - step_size * m / (sqrt(v) / bc2_sqrt + eps).
// ADAM-LABEL: func.func @apply_step(
// ADAM-SAME: %[[P:[a-z0-9]+]]: tensor<4xf32> {lmc.name = "w", lmc.role = "param"}
// ADAM-SAME: %[[M:[a-z0-9]+]]: tensor<4xf32> {lmc.name = "w.exp_avg", lmc.role = "state"}
// ADAM-SAME: %[[V:[a-z0-9]+]]: tensor<4xf32> {lmc.name = "w.exp_avg_sq", lmc.role = "state"}
// ADAM-SAME: %[[G:[a-z0-9]+]]: tensor<4xf32> {lmc.name = "w", lmc.role = "grad"}
// ADAM-SAME: %{{[a-z0-9]+}}: tensor<f32> {lmc.name = "lr", lmc.role = "hyper"}
// ADAM-SAME: %[[SS:[a-z0-9]+]]: tensor<f32> {lmc.name = "adam_step_size", lmc.role = "hyper"}
// ADAM-SAME: %[[BC2:[a-z0-9]+]]: tensor<f32> {lmc.name = "adam_bc2_sqrt", lmc.role = "hyper"}
// ADAM: %[[CG:.*]] = lmc.mul %[[G]], %{{[0-9]+}} : tensor<4xf32>
// ADAM: %[[D:.*]] = lmc.sub %[[CG]], %[[M]]
// ADAM: %[[B1C:.*]] = arith.constant dense<5.000000e-01>
// ADAM: %[[DM:.*]] = lmc.mul %[[B1C]], %[[D]]
// ADAM: %[[NM:.*]] = lmc.add %[[M]], %[[DM]]
// ADAM: %[[B2:.*]] = arith.constant dense<7.500000e-01>
// ADAM: %[[VB:.*]] = lmc.mul %[[V]], %[[B2]]
// ADAM: %[[B2C:.*]] = arith.constant dense<2.500000e-01>
// ADAM: %[[GS:.*]] = lmc.mul %[[B2C]], %[[CG]]
// ADAM: %[[GG:.*]] = lmc.mul %[[GS]], %[[CG]]
// ADAM: %[[NV:.*]] = lmc.add %[[VB]], %[[GG]]
// ADAM: %[[SQ:.*]] = lmc.sqrt %[[NV]]
// ADAM: %[[BC2B:.*]] = lmc.broadcast_in_dim %[[BC2]]
// ADAM: %[[Q:.*]] = lmc.div %[[SQ]], %[[BC2B]]
// ADAM: %[[EPS:.*]] = arith.constant dense<1.250000e-01>
// ADAM: %[[DEN:.*]] = lmc.add %[[Q]], %[[EPS]]
// ADAM: %[[R:.*]] = lmc.div %[[NM]], %[[DEN]]
// ADAM: %[[SSB:.*]] = lmc.broadcast_in_dim %[[SS]]
// ADAM: %[[UP:.*]] = lmc.mul %[[SSB]], %[[R]]
// ADAM: %[[NP:.*]] = lmc.sub %[[P]], %[[UP]]
// ADAM: %[[KP:.*]] = lmc.select %{{.*}}, %[[NP]], %[[P]]
// ADAM: %[[KM:.*]] = lmc.select %{{.*}}, %[[NM]], %[[M]]
// ADAM: %[[KV:.*]] = lmc.select %{{.*}}, %[[NV]], %[[V]]
// ADAM: return %[[KP]], %[[KM]], %[[KV]], %{{.*}}

// AdamW: decoupled decay p * (1 - lr * wd) before the Adam update.
// ADAMW-LABEL: func.func @apply_step(
// ADAMW-SAME: %[[P:[a-z0-9]+]]: tensor<4xf32> {lmc.name = "w", lmc.role = "param"}
// ADAMW: %[[LRB:.*]] = lmc.broadcast_in_dim %{{arg[0-9]+}}, dims = [] : tensor<f32> -> tensor<4xf32>
// ADAMW-NEXT: %[[ONE:.*]] = arith.constant dense<1.000000e+00>
// ADAMW: %[[WD:.*]] = arith.constant dense<2.500000e-01>
// ADAMW: %[[LW:.*]] = lmc.mul %[[LRB]], %[[WD]]
// ADAMW: %[[F:.*]] = lmc.sub %[[ONE]], %[[LW]]
// ADAMW: %[[DECAYED:.*]] = lmc.mul %[[P]], %[[F]]
// ADAMW: lmc.sub %[[DECAYED]], %{{.*}}
func.func @forward(%w: tensor<4xf32> {lmc.param = "w", lmc.init = dense<0.25> : tensor<4xf32>},
                   %x: tensor<4xf32> {lmc.input = "x"})
    -> (tensor<f32> {lmc.output = "loss"}, tensor<4xf32> {lmc.output = "y"}) {
  %y = lmc.mul %x, %w : tensor<4xf32>
  %l = lmc.reduce_sum %y, axes = [0] : tensor<4xf32> -> tensor<f32>
  return %l, %y : tensor<f32>, tensor<4xf32>
}
