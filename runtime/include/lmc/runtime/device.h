//===- device.h - C ABI of the optional device support library -----------===//
//
// A training executable compiled with `--target cuda` links the CUDA support
// library (runtime/cuda), which defines these functions; a CPU executable
// does not, and the runtime then uses host memory. The runtime references
// them weakly, so one runtime library serves both.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_DEVICE_H
#define LMC_RUNTIME_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Selects this process's device (its local rank modulo the devices) before
/// anything else runs on it. Returns 0, or non-zero with a NUL-terminated
/// message in `message` (at most `size` bytes): no device, no driver, or a
/// kernel image the device cannot load.
int lmc_rt_device_init(char *message, size_t size);

/// `size` zeroed bytes that the host and the device both reach (CUDA
/// managed memory), 256-byte aligned; null when out of memory.
void *lmc_rt_device_alloc(size_t size);
void lmc_rt_device_free(void *p);

/// Waits until the device has run everything queued (a step's kernels, its
/// copies and matmuls run in order and return before they finish).
void lmc_rt_device_synchronize(void);

/// y[i] += a * x[i] and x[i] *= a for i < n, queued on the device's stream
/// (the runtime's gradient sums: managed memory that a host loop would move
/// to the host and back every step).
void lmc_rt_device_axpy_f32(int64_t n, float a, const float *x, float *y);
void lmc_rt_device_scale_f32(int64_t n, float a, float *x);

/// The best FLOP/s of the device's matmul kernel for `precision` ("f32",
/// "bf16", "f16") on a large product: the achieved BLAS rate printed at
/// startup.
double lmc_rt_device_matmul_flops(const char *precision);

/// The device's peak FLOP/s for products in `precision` (the units the
/// matmul kernel uses: CUDA cores for f32, tensor cores for bf16/f16), the
/// denominator of MFU; `source` gets how it was found. 0 (and the reason in
/// `source`) where the device is not known.
double lmc_rt_device_peak_flops(const char *precision, char *source,
                                size_t size);

#ifdef __cplusplus
}
#endif

#endif // LMC_RUNTIME_DEVICE_H
