// Every verifier diagnostic of lmc.attention and lmc.attention_grad.
// RUN: lmc-opt %s -split-input-file -verify-diagnostics

func.func @query_rank(%q: tensor<4xf32>, %kt: tensor<4xf32>, %v: tensor<4xf32>, %m: tensor<4x4xi1>) {
  // expected-error @+1 {{expected a statically shaped query of rank 2 or more}}
  %o, %s = lmc.attention %q, %kt, %v, %m {scale = 1.0 : f32} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x4xi1> -> tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @keys_rank(%q: tensor<2x8x4xf32>, %kt: tensor<4x8xf32>, %v: tensor<2x8x4xf32>, %m: tensor<1x8x8xi1>) {
  // expected-error @+1 {{expected the transposed keys to have the query's rank}}
  %o, %s = lmc.attention %q, %kt, %v, %m {scale = 1.0 : f32} : tensor<2x8x4xf32>, tensor<4x8xf32>, tensor<2x8x4xf32>, tensor<1x8x8xi1> -> tensor<2x8x4xf32>, tensor<2x8x2xf32>
  return
}

// -----

func.func @keys_width(%q: tensor<2x8x4xf32>, %kt: tensor<2x5x8xf32>, %v: tensor<2x8x4xf32>, %m: tensor<1x8x8xi1>) {
  // expected-error @+1 {{expected the transposed keys to be [batch.., D, S] with the query's batch and D}}
  %o, %s = lmc.attention %q, %kt, %v, %m {scale = 1.0 : f32} : tensor<2x8x4xf32>, tensor<2x5x8xf32>, tensor<2x8x4xf32>, tensor<1x8x8xi1> -> tensor<2x8x4xf32>, tensor<2x8x2xf32>
  return
}

// -----

func.func @values(%q: tensor<2x8x4xf32>, %kt: tensor<2x4x8xf32>, %v: tensor<2x6x4xf32>, %m: tensor<1x8x8xi1>) {
  // expected-error @+1 {{expected the values to be [batch.., S, Dv]}}
  %o, %s = lmc.attention %q, %kt, %v, %m {scale = 1.0 : f32} : tensor<2x8x4xf32>, tensor<2x4x8xf32>, tensor<2x6x4xf32>, tensor<1x8x8xi1> -> tensor<2x8x4xf32>, tensor<2x8x2xf32>
  return
}

// -----

func.func @mask(%q: tensor<2x8x4xf32>, %kt: tensor<2x4x8xf32>, %v: tensor<2x8x4xf32>, %m: tensor<2x8x8xi1>) {
  // expected-error @+1 {{expected the mask to be [1.., T, S]}}
  %o, %s = lmc.attention %q, %kt, %v, %m {scale = 1.0 : f32} : tensor<2x8x4xf32>, tensor<2x4x8xf32>, tensor<2x8x4xf32>, tensor<2x8x8xi1> -> tensor<2x8x4xf32>, tensor<2x8x2xf32>
  return
}

// -----

func.func @element_types(%q: tensor<2x8x4xf32>, %kt: tensor<2x4x8xf32>, %v: tensor<2x8x4xf64>, %m: tensor<1x8x8xi1>) {
  // expected-error @+1 {{expected one float element type}}
  %o, %s = lmc.attention %q, %kt, %v, %m {scale = 1.0 : f32} : tensor<2x8x4xf32>, tensor<2x4x8xf32>, tensor<2x8x4xf64>, tensor<1x8x8xi1> -> tensor<2x8x4xf32>, tensor<2x8x2xf32>
  return
}

// -----

func.func @result(%q: tensor<2x8x4xf32>, %kt: tensor<2x4x8xf32>, %v: tensor<2x8x3xf32>, %m: tensor<1x8x8xi1>) {
  // expected-error @+1 {{expected the result to be [batch.., T, Dv]}}
  %o, %s = lmc.attention %q, %kt, %v, %m {scale = 1.0 : f32} : tensor<2x8x4xf32>, tensor<2x4x8xf32>, tensor<2x8x3xf32>, tensor<1x8x8xi1> -> tensor<2x8x4xf32>, tensor<2x8x2xf32>
  return
}

// -----

func.func @statistics(%q: tensor<2x8x4xf32>, %kt: tensor<2x4x8xf32>, %v: tensor<2x8x4xf32>, %m: tensor<1x8x8xi1>) {
  // expected-error @+1 {{expected the statistics to be [batch.., T, 2]}}
  %o, %s = lmc.attention %q, %kt, %v, %m {scale = 1.0 : f32} : tensor<2x8x4xf32>, tensor<2x4x8xf32>, tensor<2x8x4xf32>, tensor<1x8x8xi1> -> tensor<2x8x4xf32>, tensor<2x8x1xf32>
  return
}

// -----

func.func @exponentials(%q: tensor<2x8x4xf32>, %kt: tensor<2x4x6xf32>, %v: tensor<2x6x4xf32>, %m: tensor<1x8x6xi1>) {
  // expected-error @+1 {{expected the exponentials to be [batch.., T, S] of the query's element type}}
  %o, %s, %e = lmc.attention %q, %kt, %v, %m {scale = 1.0 : f32} : tensor<2x8x4xf32>, tensor<2x4x6xf32>, tensor<2x6x4xf32>, tensor<1x8x6xi1> -> tensor<2x8x4xf32>, tensor<2x8x2xf32>, tensor<2x8x8xf32>
  return
}

// -----

func.func @gradient_exponentials(%q: tensor<2x8x4xf32>, %kt: tensor<2x4x6xf32>, %v: tensor<2x6x4xf32>, %m: tensor<1x8x6xi1>,
                                 %o: tensor<2x8x4xf32>, %s: tensor<2x8x2xf32>, %do: tensor<2x8x4xf32>, %e: tensor<2x8x6xf64>) {
  // expected-error @+1 {{expected the exponentials to be [batch.., T, S] of the query's element type}}
  %dq, %dkt, %dv = lmc.attention_grad %q, %kt, %v, %m, %o, %s, %do exponentials %e {scale = 1.0 : f32} : tensor<2x8x4xf32>, tensor<2x4x6xf32>, tensor<2x6x4xf32>, tensor<1x8x6xi1>, tensor<2x8x4xf32>, tensor<2x8x2xf32>, tensor<2x8x4xf32>, tensor<2x8x6xf64>
  return
}
