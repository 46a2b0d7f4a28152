//===- main.cpp - Entry point of every training executable ---------------===//
//
// The only file that references the compiled model's symbols; everything
// else takes a CompiledModel so it can be tested without one.
//
//===----------------------------------------------------------------------===//

#include "memory/device_hooks.h"
#include "train/driver.h"

#include "lmc/runtime/model_abi.h"

namespace {

/// A --target cuda step returns while its kernels may still run (they are
/// queued in order on one stream); the runtime reads a step's results only
/// after the GPU has finished it.
template <void (*Step)(void **)> void finishedOnDevice(void **buffers) {
  Step(buffers);
  lmc_rt_device_synchronize();
}

template <void (*Step)(void **)> lmc::rt::StepFn entry() {
  return lmc_rt_device_synchronize ? finishedOnDevice<Step> : Step;
}

} // namespace

int main(int argc, char **argv) {
  const bool hasOnnx = lmc_model_onnx && &lmc_model_onnx_size;
  const lmc::rt::CompiledModel model{
      lmc_model_descriptor,
      lmc_model_weights,
      lmc_model_weights_size,
      entry<lmc_train_step>(),
      entry<lmc_eval_step>(),
      entry<lmc_grad_step>(),
      entry<lmc_apply_step>(),
      lmc_chunk_step ? entry<lmc_chunk_step>() : nullptr, // optional (weak)
      hasOnnx ? lmc_model_onnx : nullptr,
      hasOnnx ? lmc_model_onnx_size : 0,
      &lmc_model_weights_in_payload && lmc_model_weights_in_payload != 0,
      lmc_build_info, // optional (weak): null when absent
      lmc_target_cpu, // optional (weak), both or neither
      lmc_target_cpu_features ? lmc_target_cpu_features : ""};
  return lmc::rt::runTrainingMain(argc, argv, model);
}
