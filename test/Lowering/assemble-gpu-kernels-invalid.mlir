// REQUIRES: cuda-toolkit
// RUN: lmc-opt %s -split-input-file -verify-diagnostics -gpu-module-to-binary=format=isa -lmc-assemble-gpu-kernels="toolkit=%cuda_toolkit"
// RUN: not lmc-opt %s -split-input-file -gpu-module-to-binary=format=isa -lmc-assemble-gpu-kernels="toolkit=%t.none" 2>&1 | FileCheck %s --check-prefix=TOOLKIT

// TOOLKIT: error: the CUDA toolkit's ptxas is not at '{{.*}}.none/bin/ptxas' (the pass's toolkit option)

// 128 f32 values loaded before any is stored (two volatile loads of 64,
// one volatile store): ptxas gives the kernel 90 registers (CUDA 13.0),
// 3072 per warp, and a block of 1024 threads (32 warps) would need 98,304
// of the 65,536 registers a block may use.
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90">] {
    llvm.func @heavy(%p: !llvm.ptr<1>) attributes {gpu.kernel, nvvm.kernel} {
      %a = llvm.load volatile %p : !llvm.ptr<1> -> vector<64xf32>
      %q = llvm.getelementptr %p[64] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
      %b = llvm.load volatile %q : !llvm.ptr<1> -> vector<64xf32>
      %s = llvm.fmul %a, %b : vector<64xf32>
      %t = llvm.fadd %s, %a : vector<64xf32>
      llvm.store volatile %t, %p : vector<64xf32>, !llvm.ptr<1>
      llvm.return
    }
  }
  func.func @host(%p: !llvm.ptr<1>) {
    %c1 = arith.constant 1 : index
    %c1024 = arith.constant 1024 : index
    // expected-error-re @+1 {{kernel kernels::heavy cannot launch: {{[0-9]+}} registers per thread, allocated {{[0-9]+}} per warp, make {{[0-9]+}} for a block of 1024 threads, more than the 65536 a block may use}}
    gpu.launch_func @kernels::@heavy blocks in (%c1, %c1, %c1) threads in (%c1024, %c1, %c1) args(%p : !llvm.ptr<1>)
    return
  }
}

// -----

// The same kernel compiled for blocks of at most 1024 threads (.maxntid):
// ptxas keeps it within 64 registers by spilling the rest to local memory,
// which launches but is slow: a warning. A launch of more threads than
// .maxntid says is refused by the driver: an error.
module attributes {gpu.container_module} {
  // expected-warning-re @+1 {{1 kernel(s) spill registers to local memory: heavy ({{[1-9][0-9]*}} bytes stored, {{[1-9][0-9]*}} loaded)}}
  gpu.module @kernels [#nvvm.target<chip = "sm_90">] {
    llvm.func @heavy(%p: !llvm.ptr<1>) attributes {gpu.kernel, nvvm.kernel, nvvm.maxntid = array<i32: 1024, 1, 1>} {
      %a = llvm.load volatile %p : !llvm.ptr<1> -> vector<64xf32>
      %q = llvm.getelementptr %p[64] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
      %b = llvm.load volatile %q : !llvm.ptr<1> -> vector<64xf32>
      %s = llvm.fmul %a, %b : vector<64xf32>
      %t = llvm.fadd %s, %a : vector<64xf32>
      llvm.store volatile %t, %p : vector<64xf32>, !llvm.ptr<1>
      llvm.return
    }
    llvm.func @small(%p: !llvm.ptr<1>) attributes {gpu.kernel, nvvm.kernel, nvvm.maxntid = array<i32: 128, 2, 1>} {
      %a = llvm.load %p : !llvm.ptr<1> -> f32
      %b = llvm.fadd %a, %a : f32
      llvm.store %b, %p : f32, !llvm.ptr<1>
      llvm.return
    }
  }
  func.func @host(%p: !llvm.ptr<1>) {
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    %c512 = arith.constant 512 : index
    %c1024 = arith.constant 1024 : index
    gpu.launch_func @kernels::@heavy blocks in (%c1, %c1, %c1) threads in (%c1024, %c1, %c1) args(%p : !llvm.ptr<1>)
    gpu.launch_func @kernels::@small blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1) args(%p : !llvm.ptr<1>)
    // expected-error @+1 {{kernel kernels::small cannot launch: blocks of 512 threads, more than its .maxntid 256}}
    gpu.launch_func @kernels::@small blocks in (%c1, %c1, %c1) threads in (%c512, %c1, %c1) args(%p : !llvm.ptr<1>)
    return
  }
}

// -----

// 40 KiB of static shared memory and 16 KiB more at launch: over the
// 48 KiB a block may have without opting in.
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90">] {
    llvm.mlir.global internal @tile() {addr_space = 3 : i32} : !llvm.array<10240 x f32>
    llvm.func @staged(%p: !llvm.ptr<1>, %i: i32) attributes {gpu.kernel, nvvm.kernel} {
      %tile = llvm.mlir.addressof @tile : !llvm.ptr<3>
      %at = llvm.getelementptr %tile[%i] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
      %x = llvm.load %p : !llvm.ptr<1> -> f32
      llvm.store volatile %x, %at : f32, !llvm.ptr<3>
      %y = llvm.load volatile %at : !llvm.ptr<3> -> f32
      llvm.store %y, %p : f32, !llvm.ptr<1>
      llvm.return
    }
  }
  func.func @host(%p: !llvm.ptr<1>, %i: i32) {
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    %none = arith.constant 0 : i32
    %more = arith.constant 16384 : i32
    gpu.launch_func @kernels::@staged blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1) dynamic_shared_memory_size %none args(%p : !llvm.ptr<1>, %i : i32)
    // expected-error @+1 {{kernel kernels::staged cannot launch: 57344 bytes of shared memory per block (40960 static, 16384 dynamic), more than 49152}}
    gpu.launch_func @kernels::@staged blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1) dynamic_shared_memory_size %more args(%p : !llvm.ptr<1>, %i : i32)
    return
  }
}

// -----

// Machine code already: nothing for ptxas to assemble.
module attributes {gpu.container_module} {
  // expected-error @+1 {{expected one PTX object for an NVVM target (gpu-module-to-binary{format=isa})}}
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90">, bin = "\7FELF">]
}

// -----

// PTX that ptxas rejects: its log comes with the error.
module attributes {gpu.container_module} {
  // expected-error @+1 {{ptxas failed}}
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90">, assembly = ".version 8.0\0A.target sm_90\0A.address_size 64\0Anot_an_instruction;\0A">]
}

// -----

// A launch of a kernel the PTX does not define.
module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_90">, assembly = ".version 8.0\0A.target sm_90\0A.address_size 64\0A.visible .entry present()\0A{\0Aret;\0A}\0A">]
  func.func @host() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@present blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    // expected-error @+1 {{ptxas did not report kernel absent}}
    gpu.launch_func @kernels::@absent blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
}
