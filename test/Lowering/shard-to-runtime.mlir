// RUN: lmc-opt %s -lmc-shard-to-runtime | FileCheck %s
// RUN: lmc-opt %s -lmc-shard-to-runtime -one-shot-bufferize -o /dev/null

// The grid goes away; the collectives become calls on buffer copies.
// CHECK-NOT: shard.
// CHECK-DAG: func.func private @lmc_rt_model_all_reduce_f32(!llvm.ptr, i64)
// CHECK-DAG: func.func private @lmc_rt_model_all_reduce_max_f32(!llvm.ptr, i64)
// CHECK-DAG: func.func private @lmc_rt_model_all_gather_f32(!llvm.ptr, !llvm.ptr, i64, i64)
// CHECK-DAG: func.func private @lmc_rt_model_rank() -> i64
shard.grid @mesh(shape = 2)

// CHECK-LABEL: func.func @sum(
// CHECK: %[[IN:.*]] = bufferization.to_buffer %arg0 read_only : tensor<8x10xf32> to memref<8x10xf32>
// CHECK: %[[BUF:.*]] = memref.alloc() : memref<8x10xf32>
// CHECK: memref.copy %[[IN]], %[[BUF]]
// CHECK: %[[COUNT:.*]] = arith.constant 80 : i64
// CHECK: call @lmc_rt_model_all_reduce_f32(%{{.*}}, %[[COUNT]])
// CHECK: %[[OUT:.*]] = bufferization.to_tensor %[[BUF]] restrict writable
// CHECK: return %[[OUT]]
func.func @sum(%x: tensor<8x10xf32>) -> tensor<8x10xf32> {
  %r = shard.all_reduce %x on @mesh grid_axes = [0] : tensor<8x10xf32> -> tensor<8x10xf32>
  return %r : tensor<8x10xf32>
}

// CHECK-LABEL: func.func @max(
// CHECK: call @lmc_rt_model_all_reduce_max_f32(%{{.*}}, %{{.*}})
func.func @max(%x: tensor<8xf32>) -> tensor<8xf32> {
  %r = shard.all_reduce %x on @mesh grid_axes = [0] reduction = max : tensor<8xf32> -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// Gathering [8, 5] slices on axis 1 into [8, 10]: 8 blocks of 5 floats.
// CHECK-LABEL: func.func @gather(
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<8x10xf32>
// CHECK-DAG: %[[OUTER:.*]] = arith.constant 8 : i64
// CHECK-DAG: %[[CHUNK:.*]] = arith.constant 5 : i64
// CHECK: call @lmc_rt_model_all_gather_f32(%{{.*}}, %{{.*}}, %[[OUTER]], %[[CHUNK]])
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable : memref<8x10xf32> to tensor<8x10xf32>
func.func @gather(%x: tensor<8x5xf32>) -> tensor<8x10xf32> {
  %r = shard.all_gather %x on @mesh grid_axes = [0] gather_axis = 1 : tensor<8x5xf32> -> tensor<8x10xf32>
  return %r : tensor<8x10xf32>
}

// A slice at this process's offset: rank x 4 rows.
// CHECK-LABEL: func.func @slice(
// CHECK: %[[RANK:.*]] = call @lmc_rt_model_rank() : () -> i64
// CHECK: %[[R:.*]] = arith.index_cast %[[RANK]] : i64 to index
// CHECK: %[[OFF:.*]] = arith.muli %[[R]], %{{.*}} : index
// CHECK: tensor.extract_slice %arg0[%[[OFF]], 0] [4, 3] [1, 1] : tensor<8x3xf32> to tensor<4x3xf32>
func.func @slice(%x: tensor<8x3xf32>) -> tensor<4x3xf32> {
  %r = shard.all_slice %x on @mesh grid_axes = [0] slice_axis = 0 : tensor<8x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @index(
// CHECK: %[[RANK:.*]] = call @lmc_rt_model_rank() : () -> i64
// CHECK: %[[R:.*]] = arith.index_cast %[[RANK]] : i64 to index
// CHECK: return %[[R]]
func.func @index() -> index {
  %i = shard.process_multi_index on @mesh axes = [0] : index
  return %i : index
}
