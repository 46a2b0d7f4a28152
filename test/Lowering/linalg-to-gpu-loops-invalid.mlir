// RUN: lmc-opt %s -split-input-file -lmc-linalg-to-gpu-loops -verify-diagnostics

memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func @global_in_loop(%out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    // expected-error @+1 {{reads a global inside a nested region; the GPU lowering copies globals at the start of a step only}}
    %t = memref.get_global @table : memref<4xf32>
    %v = memref.load %t[%i] : memref<4xf32>
    memref.store %v, %out[%i] : memref<4xf32>
  }
  return
}

// -----

// A loop that returns a value cannot run as a kernel; it reads memory on
// the host, out of the kernels' order.
func.func @loop_with_result(%x: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{reads or writes memory outside the GPU's kernels; the CUDA target cannot order it with them}}
  %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> f32 {
    %v = memref.load %x[%i] : memref<4xf32>
    %s = arith.addf %acc, %v : f32
    scf.yield %s : f32
  }
  return %sum : f32
}

// -----

// A loaded scalar the host needs (an argument of a call) cannot move into
// a kernel with the load.
func.func private @consume(f32)
func.func @scalar_for_host(%x: memref<f32>) {
  // expected-error @+1 {{reads or writes memory outside the GPU's kernels; the CUDA target cannot order it with them}}
  %v = memref.load %x[] : memref<f32>
  call @consume(%v) : (f32) -> ()
  return
}
