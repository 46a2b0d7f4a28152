func.func private @printMemrefF32(memref<*xf32>)

// Rows 1 and 3 carry the ignored label -100; row 2's label is the
// ignore_index 4 of the second loss, which counts rows 0, 1 and 3. Last, a
// batch with no counted row.
func.func @main() {
  %x = arith.constant dense<[[0.5, -1.25, 2.0, 0.0, 1.5], [3.0, -2.0, 0.25, 1.0, -0.5], [-1.0, 0.75, 0.5, -3.0, 2.5], [1.0, 0.0, -0.5, 2.0, 0.25]]> : tensor<4x5xf32>
  %labels = arith.constant dense<[1, -100, 4, -100]> : tensor<4xi64>
  %other = arith.constant dense<[2, 0, 4, 3]> : tensor<4xi64>
  %none = arith.constant dense<-100> : tensor<4xi64>
  %cot = arith.constant dense<2.0> : tensor<f32>
  %loss = lmc.softmax_cross_entropy %x, %labels ignore_index = -100 : tensor<4x5xf32>, tensor<4xi64> -> tensor<f32>
  %grad = lmc.softmax_cross_entropy_grad %x, %labels, %cot ignore_index = -100 : tensor<4x5xf32>, tensor<4xi64>, tensor<f32>
  %loss4 = lmc.softmax_cross_entropy %x, %other ignore_index = 4 : tensor<4x5xf32>, tensor<4xi64> -> tensor<f32>
  %grad4 = lmc.softmax_cross_entropy_grad %x, %other, %cot ignore_index = 4 : tensor<4x5xf32>, tensor<4xi64>, tensor<f32>
  %loss0 = lmc.softmax_cross_entropy %x, %none ignore_index = -100 : tensor<4x5xf32>, tensor<4xi64> -> tensor<f32>
  %grad0 = lmc.softmax_cross_entropy_grad %x, %none, %cot ignore_index = -100 : tensor<4x5xf32>, tensor<4xi64>, tensor<f32>
  %lb = bufferization.to_buffer %loss : tensor<f32> to memref<f32>
  %lu = memref.cast %lb : memref<f32> to memref<*xf32>
  call @printMemrefF32(%lu) : (memref<*xf32>) -> ()
  %gb = bufferization.to_buffer %grad : tensor<4x5xf32> to memref<4x5xf32>
  %gu = memref.cast %gb : memref<4x5xf32> to memref<*xf32>
  call @printMemrefF32(%gu) : (memref<*xf32>) -> ()
  %lb4 = bufferization.to_buffer %loss4 : tensor<f32> to memref<f32>
  %lu4 = memref.cast %lb4 : memref<f32> to memref<*xf32>
  call @printMemrefF32(%lu4) : (memref<*xf32>) -> ()
  %gb4 = bufferization.to_buffer %grad4 : tensor<4x5xf32> to memref<4x5xf32>
  %gu4 = memref.cast %gb4 : memref<4x5xf32> to memref<*xf32>
  call @printMemrefF32(%gu4) : (memref<*xf32>) -> ()
  %lb0 = bufferization.to_buffer %loss0 : tensor<f32> to memref<f32>
  %lu0 = memref.cast %lb0 : memref<f32> to memref<*xf32>
  call @printMemrefF32(%lu0) : (memref<*xf32>) -> ()
  %gb0 = bufferization.to_buffer %grad0 : tensor<4x5xf32> to memref<4x5xf32>
  %gu0 = memref.cast %gb0 : memref<4x5xf32> to memref<*xf32>
  call @printMemrefF32(%gu0) : (memref<*xf32>) -> ()
  return
}
