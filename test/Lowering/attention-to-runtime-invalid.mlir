// RUN: lmc-opt %s -verify-diagnostics -lmc-attention-to-runtime

// The runtime's kernel is f32 (lmc-fuse-attention fuses f32 chains only).
func.func @bf16(%q: tensor<1x4x2xbf16>, %kt: tensor<1x2x4xbf16>, %v: tensor<1x4x2xbf16>, %m: tensor<1x4x4xi1>) -> tensor<1x4x2xbf16> {
  // expected-error @+1 {{lmc runs 'lmc.attention' on f32 only}}
  %o, %s = lmc.attention %q, %kt, %v, %m {scale = 1.0 : f32} : tensor<1x4x2xbf16>, tensor<1x2x4xbf16>, tensor<1x4x2xbf16>, tensor<1x4x4xi1> -> tensor<1x4x2xbf16>, tensor<1x4x2xbf16>
  return %o : tensor<1x4x2xbf16>
}
