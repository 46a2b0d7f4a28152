//===- kernel_symbols.h - The kernels by name, for JIT symbol resolution -===//
//
// Tools that JIT-compile lmc-generated code (lmc-gradcheck,
// lmc-onnx-conformance) link lmc_kernels and hand these to the JIT.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_KERNEL_SYMBOLS_H
#define LMC_RUNTIME_KERNEL_SYMBOLS_H

#include "lmc/runtime/kernels.h"

#include <utility>
#include <vector>

namespace lmc::rt {

inline std::vector<std::pair<const char *, void *>> kernelSymbols() {
  return {{"lmc_rt_matmul_f32", reinterpret_cast<void *>(&lmc_rt_matmul_f32)},
          {"lmc_rt_matmul_f64", reinterpret_cast<void *>(&lmc_rt_matmul_f64)},
          {"lmc_rt_matmul_bf16", reinterpret_cast<void *>(&lmc_rt_matmul_bf16)},
          {"lmc_rt_matmul_f16", reinterpret_cast<void *>(&lmc_rt_matmul_f16)},
          {"lmc_rt_conv_f32", reinterpret_cast<void *>(&lmc_rt_conv_f32)},
          {"lmc_rt_conv_input_grad_f32",
           reinterpret_cast<void *>(&lmc_rt_conv_input_grad_f32)},
          {"lmc_rt_conv_weight_grad_f32",
           reinterpret_cast<void *>(&lmc_rt_conv_weight_grad_f32)},
          {"lmc_rt_profile_begin",
           reinterpret_cast<void *>(&lmc_rt_profile_begin)},
          {"lmc_rt_profile_end", reinterpret_cast<void *>(&lmc_rt_profile_end)},
          {"lmc_rt_gradient_ready",
           reinterpret_cast<void *>(&lmc_rt_gradient_ready)},
          {"lmc_rt_thread_count",
           reinterpret_cast<void *>(&lmc_rt_thread_count)},
          {"lmc_rt_index_out_of_range",
           reinterpret_cast<void *>(&lmc_rt_index_out_of_range)},
          {"lmc_rt_integer_division_by_zero",
           reinterpret_cast<void *>(&lmc_rt_integer_division_by_zero)},
          // The CPU pipeline always takes the step's scratch from the
          // runtime (lmc-plan-buffers{arena-from-runtime}).
          {"lmc_rt_step_arena", reinterpret_cast<void *>(&lmc_rt_step_arena)}};
}

} // namespace lmc::rt

#endif // LMC_RUNTIME_KERNEL_SYMBOLS_H
