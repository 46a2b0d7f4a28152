//===- model_abi.h - Symbols a compiled model object exports -------------===//
//
// See docs/runtime-abi.md. The compiler emits these; the runtime's main()
// references them. Hand-written fake models (tests) include this header.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_MODEL_ABI_H
#define LMC_RUNTIME_MODEL_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

extern const char lmc_model_descriptor[];
extern const unsigned char lmc_model_weights[];
extern const uint64_t lmc_model_weights_size;
/* Nonzero: lmc_model_weights is a placeholder and the weights follow the
 * executable's file as a payload (docs/runtime-abi.md). Optional (weak):
 * objects without it (--emit=obj, fake models) embed their weights. */
__attribute__((weak)) extern const unsigned char lmc_model_weights_in_payload;
void lmc_train_step(void **buffers);
void lmc_eval_step(void **buffers);
/* The train step in two halves (gradient accumulation, data parallelism).
 * Optional: weak, so null when a model object does not define them; the
 * descriptor then has no `grad` / `apply` lines. */
__attribute__((weak)) void lmc_grad_step(void **buffers);
__attribute__((weak)) void lmc_apply_step(void **buffers);
/* apply_step's update of one chunk of the flattened parameters, for ZeRO-1.
 * Optional (weak): absent with dynamic loss scaling; the descriptor then has
 * no `chunk` lines. */
__attribute__((weak)) void lmc_chunk_step(void **buffers);
/* The input ONNX model minus the initializers that became parameters, for
 * --export-onnx. Optional: weak, absent for models not compiled from ONNX. */
__attribute__((weak)) extern const unsigned char lmc_model_onnx[];
__attribute__((weak)) extern const uint64_t lmc_model_onnx_size;
/* `--version` of the executable: the compiler's version line, a newline and
 * the command that compiled the model (NUL-terminated). Optional (weak). */
__attribute__((weak)) extern const char lmc_build_info[];
/* The CPU the code was compiled for (`lmc --cpu`, LLVM's name: "znver4",
 * "x86-64-v3") and the extensions of lmc/runtime/cpu_features.h it may use,
 * comma-separated: checked before the first step. Optional (weak): objects
 * without them (fake models) are not checked. */
__attribute__((weak)) extern const char lmc_target_cpu[];
__attribute__((weak)) extern const char lmc_target_cpu_features[];

#ifdef __cplusplus
}
#endif

#endif // LMC_RUNTIME_MODEL_ABI_H
