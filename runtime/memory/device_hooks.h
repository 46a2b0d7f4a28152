//===- device_hooks.h - weak references to the device support library ----===//
//
// The functions of lmc/runtime/device.h, referenced weakly: null in CPU
// executables, defined in `--target cuda` executables (runtime/cuda).
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_DEVICE_HOOKS_H
#define LMC_RUNTIME_DEVICE_HOOKS_H

#include <cstddef>
#include <cstdint>

extern "C" {
__attribute__((weak)) int lmc_rt_device_init(char *message, size_t size);
__attribute__((weak)) void *lmc_rt_device_alloc(size_t size);
__attribute__((weak)) void lmc_rt_device_free(void *p);
__attribute__((weak)) double lmc_rt_device_matmul_flops(const char *precision);
__attribute__((weak)) double lmc_rt_device_peak_flops(const char *precision,
                                                    char *source,
                                                    size_t size);
__attribute__((weak)) void lmc_rt_device_synchronize();
__attribute__((weak)) void lmc_rt_device_axpy_f32(int64_t n, float a,
                                                  const float *x, float *y);
__attribute__((weak)) void lmc_rt_device_scale_f32(int64_t n, float a,
                                                   float *x);
}

#endif // LMC_RUNTIME_DEVICE_HOOKS_H
