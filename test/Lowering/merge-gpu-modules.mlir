// RUN: lmc-opt %s -split-input-file -lmc-merge-gpu-modules | FileCheck %s

// Two host functions with two outlined kernels each (as
// gpu-kernel-outlining leaves them: a module per kernel, the kernel named
// after the function): each function's kernels move into one module named
// after it, each kernel renamed after its old module, and every launch
// (one kernel is launched twice) points at the new place.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: func.func @step
// CHECK: gpu.launch_func @step_kernels::@step_kernel blocks
// CHECK: gpu.launch_func @step_kernels::@step_kernel_0 blocks
// CHECK: gpu.launch_func @step_kernels::@step_kernel blocks
// CHECK: func.func @eval
// CHECK: gpu.launch_func @eval_kernels::@eval_kernel blocks
// CHECK: gpu.launch_func @eval_kernels::@eval_kernel_0 blocks
// CHECK: gpu.module @step_kernels {
// CHECK-NEXT: gpu.func @step_kernel(%{{.*}}: memref<4xf32>) kernel
// CHECK: gpu.func @step_kernel_0(%{{.*}}: memref<4xf32>) kernel
// CHECK: gpu.module @eval_kernels {
// CHECK-NEXT: gpu.func @eval_kernel(
// CHECK: gpu.func @eval_kernel_0(
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  func.func @step(%m: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @step_kernel::@step_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.launch_func @step_kernel_0::@step_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.launch_func @step_kernel::@step_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    return
  }
  func.func @eval(%m: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @eval_kernel::@eval_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.launch_func @eval_kernel_0::@eval_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    return
  }
  gpu.module @step_kernel {
    gpu.func @step_kernel(%m: memref<4xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @step_kernel_0 {
    gpu.func @step_kernel(%m: memref<4xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @eval_kernel {
    gpu.func @eval_kernel(%m: memref<4xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @eval_kernel_0 {
    gpu.func @eval_kernel(%m: memref<4xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// Modules the pass cannot merge without losing something stay as they
// are: one with a target attached, one with a helper beside its kernel.
// The merged module's name is made unique against an existing symbol.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: func.func private @step_kernels()
// CHECK: gpu.launch_func @targeted::@targeted
// CHECK: gpu.launch_func @helped::@helped
// CHECK: gpu.launch_func @[[MERGED:step_kernels_[0-9]+]]::@plain
// CHECK-DAG: gpu.module @targeted [#nvvm.target]
// CHECK-DAG: gpu.module @helped {
// CHECK-DAG: gpu.module @[[MERGED]] {
module attributes {gpu.container_module} {
  func.func private @step_kernels()
  func.func @step(%m: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @targeted::@targeted blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.launch_func @helped::@helped blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.launch_func @plain::@plain blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    return
  }
  gpu.module @targeted [#nvvm.target] {
    gpu.func @targeted(%m: memref<4xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @helped {
    func.func @helper() {
      return
    }
    gpu.func @helped(%m: memref<4xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @plain {
    gpu.func @plain(%m: memref<4xf32>) kernel {
      gpu.return
    }
  }
}
