//===- cuda_support.h - shared helpers of the CUDA support library -------===//
#ifndef LMC_RUNTIME_CUDA_SUPPORT_H
#define LMC_RUNTIME_CUDA_SUPPORT_H

#include <cuda_runtime_api.h>

namespace lmc::cuda {

/// Ends the process with `what` and CUDA's message unless `status` is
/// cudaSuccess (the runtime's exceptions cannot cross the C ABI).
void check(cudaError_t status, const char *what);

/// The stream every kernel and cuBLAS call runs on.
cudaStream_t stream();

/// Waits for the stream; a failure is reported as happening in `after`.
void synchronize(const char *after);

} // namespace lmc::cuda

#endif // LMC_RUNTIME_CUDA_SUPPORT_H
