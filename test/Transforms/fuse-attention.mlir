// RUN: lmc-opt %s -split-input-file -lmc-fuse-attention | FileCheck %s
// RUN: lmc-opt %s -split-input-file -lmc-fuse-attention=keep-exponentials | FileCheck %s --check-prefix=KEEP

// The chain of the char GPT's import (torch.onnx.export of
// masked_fill(mask == 0, -inf) and softmax): scores q kt, a broadcast
// scale, -inf where the [1, 1, T, S] mask is set, softmax over the keys,
// the product with v: one lmc.attention on q, kt, v and the mask (the
// broadcasts only the chain read go with it).
// CHECK-LABEL: func.func @causal
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8x16xf32>, %[[KT:.*]]: tensor<2x4x16x8xf32>, %[[V:.*]]: tensor<2x4x8x16xf32>, %[[M:.*]]: tensor<1x1x8x8xi1>)
// CHECK-NEXT: %[[O:.*]], %[[S:.*]] = lmc.attention %[[Q]], %[[KT]], %[[V]], %[[M]] {scale = 2.500000e-01 : f32} : tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>, tensor<2x4x8x16xf32>, tensor<1x1x8x8xi1> -> tensor<2x4x8x16xf32>, tensor<2x4x8x2xf32>
// CHECK-NEXT: return %[[O]]
// With keep-exponentials the op keeps each pair's [T, S] exponentials for
// its gradient: a third result.
// KEEP-LABEL: func.func @causal
// KEEP-NEXT: %[[O:.*]], %{{.*}}, %{{.*}} = lmc.attention %{{.*}} -> tensor<2x4x8x16xf32>, tensor<2x4x8x2xf32>, tensor<2x4x8x8xf32>
// KEEP-NEXT: return %[[O]]
func.func @causal(%q: tensor<2x4x8x16xf32>, %kt: tensor<2x4x16x8xf32>,
                  %v: tensor<2x4x8x16xf32>, %mask: tensor<1x1x8x8xi1>)
    -> tensor<2x4x8x16xf32> {
  %s = lmc.matmul %q, %kt : tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x8x8xf32>
  %c = arith.constant dense<0.25> : tensor<f32>
  %cb = lmc.broadcast_in_dim %c, dims = [] : tensor<f32> -> tensor<2x4x8x8xf32>
  %scaled = lmc.mul %s, %cb : tensor<2x4x8x8xf32>
  %mb = lmc.broadcast_in_dim %mask, dims = [0, 1, 2, 3] : tensor<1x1x8x8xi1> -> tensor<2x4x8x8xi1>
  %inf = arith.constant dense<0xFF800000> : tensor<f32>
  %infb = lmc.broadcast_in_dim %inf, dims = [] : tensor<f32> -> tensor<2x4x8x8xf32>
  %masked = lmc.select %mb, %infb, %scaled : tensor<2x4x8x8xi1>, tensor<2x4x8x8xf32>
  %p = lmc.softmax %masked, axis = 3 : tensor<2x4x8x8xf32>
  %o = lmc.matmul %p, %v : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

// The mask with the other polarity (true: keep, -inf otherwise) becomes a
// negated mask; without a scale the scale is 1; scores of another length
// than the queries (S = 6 keys, T = 8 queries) and a value width of its own.
// CHECK-LABEL: func.func @keep_mask_unscaled
// CHECK-NEXT: %[[N:.*]] = lmc.not %{{.*}} : tensor<1x8x6xi1>
// CHECK-NEXT: lmc.attention %{{.*}}, %{{.*}}, %{{.*}}, %[[N]] {scale = 1.000000e+00 : f32} : tensor<3x8x4xf32>, tensor<3x4x6xf32>, tensor<3x6x5xf32>, tensor<1x8x6xi1> -> tensor<3x8x5xf32>, tensor<3x8x2xf32>
// CHECK-NOT: lmc.softmax
func.func @keep_mask_unscaled(%q: tensor<3x8x4xf32>, %kt: tensor<3x4x6xf32>,
                              %v: tensor<3x6x5xf32>, %keep: tensor<1x8x6xi1>)
    -> tensor<3x8x5xf32> {
  %s = lmc.matmul %q, %kt : tensor<3x8x4xf32>, tensor<3x4x6xf32> -> tensor<3x8x6xf32>
  %kb = lmc.broadcast_in_dim %keep, dims = [0, 1, 2] : tensor<1x8x6xi1> -> tensor<3x8x6xi1>
  %inf = arith.constant dense<0xFF800000> : tensor<f32>
  %infb = lmc.broadcast_in_dim %inf, dims = [] : tensor<f32> -> tensor<3x8x6xf32>
  %masked = lmc.select %kb, %s, %infb : tensor<3x8x6xi1>, tensor<3x8x6xf32>
  %p = lmc.softmax %masked, axis = 2 : tensor<3x8x6xf32>
  %o = lmc.matmul %p, %v : tensor<3x8x6xf32>, tensor<3x6x5xf32> -> tensor<3x8x5xf32>
  return %o : tensor<3x8x5xf32>
}

// -----

// Left alone: the probabilities are also a result (the chain's values
// must feed the next op only), the mask sets a finite value, the softmax
// runs along the queries.
// CHECK-LABEL: func.func @probabilities_returned
// CHECK-NOT: lmc.attention
// CHECK: lmc.softmax
// CHECK-LABEL: func.func @finite_fill
// CHECK-NOT: lmc.attention
// CHECK: lmc.softmax
// CHECK-LABEL: func.func @softmax_over_queries
// CHECK-NOT: lmc.attention
// CHECK: lmc.softmax
func.func @probabilities_returned(%q: tensor<1x4x2xf32>, %kt: tensor<1x2x4xf32>,
                                  %v: tensor<1x4x2xf32>, %mask: tensor<1x4x4xi1>)
    -> (tensor<1x4x2xf32>, tensor<1x4x4xf32>) {
  %s = lmc.matmul %q, %kt : tensor<1x4x2xf32>, tensor<1x2x4xf32> -> tensor<1x4x4xf32>
  %inf = arith.constant dense<0xFF800000> : tensor<f32>
  %infb = lmc.broadcast_in_dim %inf, dims = [] : tensor<f32> -> tensor<1x4x4xf32>
  %mb = lmc.broadcast_in_dim %mask, dims = [0, 1, 2] : tensor<1x4x4xi1> -> tensor<1x4x4xi1>
  %masked = lmc.select %mb, %infb, %s : tensor<1x4x4xi1>, tensor<1x4x4xf32>
  %p = lmc.softmax %masked, axis = 2 : tensor<1x4x4xf32>
  %o = lmc.matmul %p, %v : tensor<1x4x4xf32>, tensor<1x4x2xf32> -> tensor<1x4x2xf32>
  return %o, %p : tensor<1x4x2xf32>, tensor<1x4x4xf32>
}
func.func @finite_fill(%q: tensor<1x4x2xf32>, %kt: tensor<1x2x4xf32>,
                       %v: tensor<1x4x2xf32>, %mask: tensor<1x4x4xi1>)
    -> tensor<1x4x2xf32> {
  %s = lmc.matmul %q, %kt : tensor<1x4x2xf32>, tensor<1x2x4xf32> -> tensor<1x4x4xf32>
  %big = arith.constant dense<-1.0e9> : tensor<f32>
  %bigb = lmc.broadcast_in_dim %big, dims = [] : tensor<f32> -> tensor<1x4x4xf32>
  %mb = lmc.broadcast_in_dim %mask, dims = [0, 1, 2] : tensor<1x4x4xi1> -> tensor<1x4x4xi1>
  %masked = lmc.select %mb, %bigb, %s : tensor<1x4x4xi1>, tensor<1x4x4xf32>
  %p = lmc.softmax %masked, axis = 2 : tensor<1x4x4xf32>
  %o = lmc.matmul %p, %v : tensor<1x4x4xf32>, tensor<1x4x2xf32> -> tensor<1x4x2xf32>
  return %o : tensor<1x4x2xf32>
}
func.func @softmax_over_queries(%q: tensor<1x4x2xf32>, %kt: tensor<1x2x4xf32>,
                                %v: tensor<1x4x2xf32>, %mask: tensor<1x4x4xi1>)
    -> tensor<1x4x2xf32> {
  %s = lmc.matmul %q, %kt : tensor<1x4x2xf32>, tensor<1x2x4xf32> -> tensor<1x4x4xf32>
  %inf = arith.constant dense<0xFF800000> : tensor<f32>
  %infb = lmc.broadcast_in_dim %inf, dims = [] : tensor<f32> -> tensor<1x4x4xf32>
  %mb = lmc.broadcast_in_dim %mask, dims = [0, 1, 2] : tensor<1x4x4xi1> -> tensor<1x4x4xi1>
  %masked = lmc.select %mb, %infb, %s : tensor<1x4x4xi1>, tensor<1x4x4xf32>
  %p = lmc.softmax %masked, axis = 1 : tensor<1x4x4xf32>
  %o = lmc.matmul %p, %v : tensor<1x4x4xf32>, tensor<1x4x2xf32> -> tensor<1x4x2xf32>
  return %o : tensor<1x4x2xf32>
}
