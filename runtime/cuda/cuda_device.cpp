//===- cuda_device.cpp - device selection, memory and kernel launches ----===//
//
// What a `--target cuda` executable needs from CUDA besides cuBLAS:
//
// - lmc_rt_device_init / lmc_rt_device_alloc / lmc_rt_device_free
//   (lmc/runtime/device.h): the runtime's buffers are managed memory, so the
//   host-side runtime (data loading, checkpoints, MPI) and the kernels share
//   them without explicit copies;
// - lmc_rt_step_arena: the device memory of the step's buffers, planned at
//   compile time (lmc-plan-buffers);
// - _mlir_memref_to_llvm_alloc / _free: the generated code's other buffers
//   (finalize-memref-to-llvm{use-generic-functions}), managed too and kept
//   for reuse by the next step (block_cache.h);
// - the mgpu* functions that MLIR's gpu-to-llvm lowering calls to load the
//   embedded fatbin and launch kernels, written against the CUDA runtime
//   API (linked statically): an executable started on a machine without a
//   GPU or driver then reports it instead of failing to load libcuda.so.
//
// Kernels, copies and cuBLAS calls are queued on one stream in program
// order and the host waits only when a step returns (the generated code
// touches no memory outside them); errors end the process with the failing
// call named.
//
//===----------------------------------------------------------------------===//

#include "cuda_support.h"
#include "memory/block_cache.h"

#include "lmc/runtime/device.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace lmc::cuda {

void check(cudaError_t status, const char *what) {
  if (status == cudaSuccess)
    return;
  std::fprintf(stderr, "error: CUDA: %s failed: %s\n", what,
               cudaGetErrorString(status));
  std::fflush(stdout);
  std::exit(1);
}

cudaStream_t stream() {
  static cudaStream_t s = [] {
    cudaStream_t created;
    check(cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking),
          "cudaStreamCreate");
    return created;
  }();
  return s;
}

void synchronize(const char *after) {
  cudaError_t status = cudaStreamSynchronize(stream());
  if (status != cudaSuccess) {
    std::fprintf(stderr, "error: CUDA: %s failed on the device: %s\n", after,
                 cudaGetErrorString(status));
    std::fflush(stdout);
    std::exit(1);
  }
}

namespace {

/// The first error of a kernel image loaded before main() (global
/// constructors load the embedded fatbins), reported by lmc_rt_device_init.
std::string &loadError() {
  static std::string error;
  return error;
}

/// A CUDA library (cubin, fatbin or PTX) loaded into the current context,
/// or null with the reason kept for the first launch's error (with the
/// JIT's log, if any).
void *loadLibrary(const void *data, cudaJitOption *options, void **values,
                  unsigned count, const char *jitLog) {
  cudaLibrary_t library = nullptr;
  cudaError_t status = cudaLibraryLoadData(&library, data, options, values,
                                           count, nullptr, nullptr, 0);
  if (status == cudaSuccess)
    return library;
  if (loadError().empty())
    loadError() = std::string(cudaGetErrorString(status)) +
                  (jitLog[0] ? std::string(": ") + jitLog : std::string());
  return nullptr;
}

/// This process's index among the processes of its machine, from the
/// launcher's variables (0 without one).
int localRank() {
  for (const char *name : {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
                           "SLURM_LOCALID", "MPI_LOCALRANKID"})
    if (const char *value = std::getenv(name)) {
      char *end = nullptr;
      long rank = std::strtol(value, &end, 10);
      if (end != value && *end == '\0' && rank >= 0 && rank < (1 << 20))
        return static_cast<int>(rank);
    }
  return 0;
}

/// `size` bytes of managed memory, or null. Managed memory can be
/// oversubscribed, and a GPU asked for more than it has free can hang: a
/// request beyond the free device memory is refused instead.
void *allocateManaged(size_t size) {
  size_t freeBytes = 0, totalBytes = 0;
  if (cudaMemGetInfo(&freeBytes, &totalBytes) != cudaSuccess ||
      size > freeBytes)
    return nullptr;
  void *p = nullptr;
  if (cudaMallocManaged(&p, size ? size : 1, cudaMemAttachGlobal) !=
      cudaSuccess)
    return nullptr;
  return p;
}

/// The generated code's buffers, reused from step to step.
lmc::rt::BlockCache &stepBlocks() {
  static lmc::rt::BlockCache cache(allocateManaged,
                                   [](void *p) { cudaFree(p); });
  return cache;
}

} // namespace
} // namespace lmc::cuda

using namespace lmc::cuda;

extern "C" {

int lmc_rt_device_init(char *message, size_t size) {
  const char *prefix = "this executable was compiled with --target cuda and "
                       "needs an NVIDIA GPU";
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    std::snprintf(message, size, "%s: %s", prefix,
                  status != cudaSuccess ? cudaGetErrorString(status)
                                        : "no CUDA device found");
    return 1;
  }
  int device = localRank() % count;
  status = cudaSetDevice(device);
  if (status != cudaSuccess) {
    std::snprintf(message, size, "%s: cudaSetDevice(%d): %s", prefix, device,
                  cudaGetErrorString(status));
    return 1;
  }
  if (!loadError().empty()) {
    std::snprintf(message, size, "cannot load the compiled GPU kernels: %s",
                  loadError().c_str());
    return 1;
  }
  return 0;
}

void *lmc_rt_device_alloc(size_t size) {
  void *p = allocateManaged(size);
  if (p)
    std::memset(p, 0, size);
  return p;
}

void lmc_rt_device_free(void *p) {
  if (!p)
    return;
  // A buffer that outlives main() is freed after the CUDA runtime shut
  // down: the process ends anyway.
  cudaError_t status = cudaFree(p);
  if (status != cudaErrorCudartUnloading)
    check(status, "cudaFree");
}

// Allocation functions of finalize-memref-to-llvm{use-generic-functions}.
void *_mlir_memref_to_llvm_alloc(size_t size) {
  void *p = stepBlocks().allocate(size);
  if (!p) {
    std::fprintf(stderr, "error: CUDA: out of GPU memory allocating %zu "
                         "bytes for the training step\n",
                 size);
    std::fflush(stdout);
    std::exit(1);
  }
  return p;
}

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size) {
  // Managed allocations are aligned to at least 256 bytes.
  if (alignment > 256) {
    std::fprintf(stderr, "error: CUDA: a buffer alignment of %zu bytes is not "
                         "supported (at most 256)\n",
                 alignment);
    std::exit(1);
  }
  return _mlir_memref_to_llvm_alloc(size);
}

void _mlir_memref_to_llvm_free(void *p) { stepBlocks().free(p); }

// The step's planned buffers (lmc-plan-buffers{arena-from-runtime}): one
// block of device memory, allocated at the first step. Only kernels, cuBLAS
// and stream-ordered copies touch it, so it need not be managed memory.
void *lmc_rt_step_arena(int64_t bytes) {
  static void *arena = nullptr;
  static int64_t capacity = 0;
  if (bytes <= capacity)
    return arena;
  if (arena) { // a bigger plan than the last: nothing queued may still use it
    synchronize("a step's kernels");
    check(cudaFree(arena), "cudaFree");
    arena = nullptr;
  }
  if (cudaMalloc(&arena, size_t(bytes)) != cudaSuccess) {
    std::fprintf(stderr,
                 "error: CUDA: out of GPU memory allocating the training "
                 "step's %lld bytes of buffers (see --info)\n",
                 static_cast<long long>(bytes));
    std::fflush(stdout);
    std::exit(1);
  }
  capacity = bytes;
  return arena;
}

// The launch ABI of MLIR's gpu-to-llvm lowering (as its CUDA runtime
// wrappers define it). One stream serves every launch; the lowering's
// create/destroy pairs around each launch do not create streams.
void *mgpuModuleLoad(void *data, size_t /*size*/) {
  return loadLibrary(data, nullptr, nullptr, 0, "");
}

// --gpu-format=ptx: `data` is null-terminated PTX, compiled by the driver's
// JIT at `optLevel` when the executable starts.
void *mgpuModuleLoadJIT(void *data, int optLevel) {
  char log[4096] = {};
  cudaJitOption options[] = {cudaJitOptimizationLevel, cudaJitErrorLogBuffer,
                             cudaJitErrorLogBufferSizeBytes};
  void *values[] = {reinterpret_cast<void *>(intptr_t(optLevel)), log,
                    reinterpret_cast<void *>(sizeof log)};
  return loadLibrary(data, options, values, 3, log);
}

void mgpuModuleUnload(void *module) {
  if (module)
    cudaLibraryUnload(static_cast<cudaLibrary_t>(module));
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  if (!module) {
    std::fprintf(stderr, "error: CUDA: kernel '%s' was not loaded: %s\n",
                 name, loadError().c_str());
    std::exit(1);
  }
  cudaKernel_t kernel = nullptr;
  check(cudaLibraryGetKernel(&kernel, static_cast<cudaLibrary_t>(module),
                             name),
        "cudaLibraryGetKernel");
  return kernel;
}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedMemory, void *stream,
                      void **params, void ** /*extra*/, size_t /*count*/) {
  check(cudaLaunchKernel(function,
                         dim3(unsigned(gridX), unsigned(gridY),
                              unsigned(gridZ)),
                         dim3(unsigned(blockX), unsigned(blockY),
                              unsigned(blockZ)),
                         params, size_t(sharedMemory),
                         static_cast<cudaStream_t>(stream)),
        "cudaLaunchKernel");
}

void *mgpuStreamCreate() { return lmc::cuda::stream(); }

void mgpuStreamDestroy(void * /*stream*/) {}

// The lowering waits after each launch; lmc's kernels, copies and matmuls
// are ordered on the one stream and the compiled step touches no memory
// outside them (lmc-linalg-to-gpu-loops checks it), so only the end of a
// step waits (lmc_rt_device_synchronize).
void mgpuStreamSynchronize(void * /*stream*/) {}

void lmc_rt_device_synchronize() { synchronize("a step's kernels"); }

void lmc_rt_copy_in(void *dst, const void *src, int64_t bytes) {
  check(cudaMemcpyAsync(dst, src, size_t(bytes), cudaMemcpyDefault, stream()),
        "cudaMemcpyAsync");
}

} // extern "C"
