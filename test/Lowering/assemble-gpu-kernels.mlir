// REQUIRES: cuda-toolkit
// RUN: lmc-opt %s -convert-gpu-to-nvvm -gpu-module-to-binary=format=isa -lmc-assemble-gpu-kernels="toolkit=%cuda_toolkit" | FileCheck %s
// RUN: lmc-opt %s -convert-gpu-to-nvvm -gpu-module-to-binary=format=isa -lmc-assemble-gpu-kernels="toolkit=%cuda_toolkit format=ptx" | FileCheck %s --check-prefix=PTX

// A kernel launched in blocks of 256 threads: ptxas's report of it stays
// on the binary (a one-line kernel needs a handful of registers, no stack,
// no spills, no shared memory) and the PTX object becomes a fatbin (its
// bytes start with the fatbin magic 0xBA55ED50, little-endian); with
// format=ptx the PTX object stays, checked all the same.
// CHECK: gpu.binary @kernels
// CHECK-SAME: lmc.kernel_resources = {scale = {registers = {{[1-9][0-9]?}} : i64, shared_bytes = 0 : i64, spill_loads = 0 : i64, spill_stores = 0 : i64, stack_bytes = 0 : i64}}
// CHECK-SAME: #gpu.object<#nvvm.target<chip = "sm_90">, "P\EDU\BA
// CHECK: gpu.launch_func @kernels::@scale
// PTX: gpu.binary @kernels
// PTX-SAME: lmc.kernel_resources = {scale = {registers =
// PTX-SAME: #gpu.object<#nvvm.target<chip = "sm_90">, properties = {{{.*}}O = 2 : i32}, assembly = "
// PTX-SAME: .entry scale(
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90">] {
    gpu.func @scale(%m: memref<1024xf32>) kernel {
      %i = gpu.thread_id x
      %b = gpu.block_id x
      %c256 = arith.constant 256 : index
      %base = arith.muli %b, %c256 : index
      %j = arith.addi %base, %i : index
      %x = memref.load %m[%j] : memref<1024xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %m[%j] : memref<1024xf32>
      gpu.return
    }
  }
  func.func @host(%m: memref<1024xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c256 = arith.constant 256 : index
    gpu.launch_func @kernels::@scale blocks in (%c4, %c1, %c1) threads in (%c256, %c1, %c1) args(%m : memref<1024xf32>)
    return
  }
}
