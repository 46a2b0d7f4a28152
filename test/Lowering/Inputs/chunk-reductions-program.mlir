func.func private @printMemrefF32(memref<*xf32>)

// x[i, j] = (512 i + j) mod 7 over 256 x 512; prints the sum of the
// squares into an init of 1 less its value by hand (131,072 = 7 x 18,724
// + 4: 18,724 x (0 + 1 + 4 + ... + 36) + (0 + 1 + 4 + 9) + 1 = 1,703,899;
// every partial sum is an integer below 2^24, so exact: 0), and the
// maximum into an init of 1 (6).
func.func @main() {
  %empty = tensor.empty() : tensor<256x512xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%empty : tensor<256x512xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c512 = arith.constant 512 : index
    %c7 = arith.constant 7 : index
    %row = arith.muli %i, %c512 : index
    %flat = arith.addi %row, %j : index
    %r = arith.remui %flat, %c7 : index
    %ri = arith.index_cast %r : index to i64
    %f = arith.sitofp %ri : i64 to f32
    linalg.yield %f : f32
  } -> tensor<256x512xf32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %sum = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<256x512xf32>) outs(%one : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %sq, %acc fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %max = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<256x512xf32>) outs(%one : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %in, %acc : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  %expected = arith.constant dense<1703899.0> : tensor<f32>
  %diff = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%sum, %expected : tensor<f32>, tensor<f32>) outs(%one : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<f32>
  %sb = bufferization.to_buffer %diff : tensor<f32> to memref<f32>
  %su = memref.cast %sb : memref<f32> to memref<*xf32>
  call @printMemrefF32(%su) : (memref<*xf32>) -> ()
  %mb = bufferization.to_buffer %max : tensor<f32> to memref<f32>
  %mu = memref.cast %mb : memref<f32> to memref<*xf32>
  call @printMemrefF32(%mu) : (memref<*xf32>) -> ()
  return
}
