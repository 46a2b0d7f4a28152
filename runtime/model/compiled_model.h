//===- compiled_model.h - The symbols of a compiled model object ----------===//
//
// What the driver, the step runners and ZeRO-1 call: the compiled steps and
// the descriptor, weights and ONNX model the compiler embedded
// (docs/runtime-abi.md).
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_COMPILED_MODEL_H
#define LMC_RUNTIME_COMPILED_MODEL_H

#include <cstdint>

namespace lmc::rt {

using StepFn = void (*)(void **buffers);

/// The symbols of a compiled model object (docs/runtime-abi.md), gathered so
/// the driver can be run against any model, including test doubles.
struct CompiledModel {
  const char *descriptor;
  const unsigned char *weights;
  uint64_t weightsSize;
  StepFn trainStep;
  StepFn evalStep;
  /// The train step in two halves; null for models without them.
  StepFn gradStep = nullptr;
  StepFn applyStep = nullptr;
  /// apply_step's update of one chunk of the flattened parameters (ZeRO-1);
  /// null for models without it.
  StepFn chunkStep = nullptr;
  /// The ONNX model to export with trained weights (lmc_model_onnx); null
  /// for models not compiled from ONNX.
  const unsigned char *onnx = nullptr;
  uint64_t onnxSize = 0;
  /// The weights (weightsSize bytes) are not at `weights` but in the
  /// payload after the executable's own file (io/weights_payload.h).
  bool weightsInPayload = false;
  /// lmc_build_info: the compiler's version line and command; null for
  /// models without it.
  const char *buildInfo = nullptr;
  /// lmc_target_cpu and lmc_target_cpu_features: the CPU the code was
  /// compiled for and the extensions it needs; null for models without
  /// them (nothing is checked). The compiler emits both or neither.
  const char *targetCpu = nullptr;
  const char *targetCpuFeatures = nullptr;
};

} // namespace lmc::rt

#endif // LMC_RUNTIME_COMPILED_MODEL_H
