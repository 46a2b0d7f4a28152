func.func private @printMemrefF32(memref<*xf32>)

func.func @main() {
  %x = arith.constant dense<[[0.5, -1.25, 2.0, 0.0, 1.5], [3.0, -2.0, 0.25, 1.0, -0.5], [-1.0, 0.75, 0.5, -3.0, 2.5]]> : tensor<3x5xf32>
  %labels = arith.constant dense<[1, 4, 7]> : tensor<3xi64>
  %cot = arith.constant dense<2.0> : tensor<f32>
  %loss = lmc.softmax_cross_entropy %x, %labels : tensor<3x5xf32>, tensor<3xi64> -> tensor<f32>
  %grad = lmc.softmax_cross_entropy_grad %x, %labels, %cot : tensor<3x5xf32>, tensor<3xi64>, tensor<f32>
  %lb = bufferization.to_buffer %loss : tensor<f32> to memref<f32>
  %lu = memref.cast %lb : memref<f32> to memref<*xf32>
  call @printMemrefF32(%lu) : (memref<*xf32>) -> ()
  %gb = bufferization.to_buffer %grad : tensor<3x5xf32> to memref<3x5xf32>
  %gu = memref.cast %gb : memref<3x5xf32> to memref<*xf32>
  call @printMemrefF32(%gu) : (memref<*xf32>) -> ()
  return
}
