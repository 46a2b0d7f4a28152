//===- driver.h - main() of a training executable ------------------------===//
#ifndef LMC_RUNTIME_DRIVER_H
#define LMC_RUNTIME_DRIVER_H

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
};

/// Runs the training executable. Never throws: errors are printed as one
/// "error: ..." line on stderr. Returns 0 on success, 1 on a runtime error,
/// 2 on a usage error.
int runTrainingMain(int argc, char **argv, const CompiledModel &model);

} // namespace lmc::rt

#endif // LMC_RUNTIME_DRIVER_H
