//===- main.cpp - Entry point of every training executable ---------------===//
//
// The only file that references the compiled model's symbols; everything
// else takes a CompiledModel so it can be tested without one.
//
//===----------------------------------------------------------------------===//

#include "driver.h"

#include "lmc/runtime/model_abi.h"

int main(int argc, char **argv) {
  const bool hasOnnx = lmc_model_onnx && &lmc_model_onnx_size;
  const lmc::rt::CompiledModel model{
      lmc_model_descriptor,
      lmc_model_weights,
      lmc_model_weights_size,
      lmc_train_step,
      lmc_eval_step,
      lmc_grad_step,
      lmc_apply_step,
      lmc_chunk_step,
      hasOnnx ? lmc_model_onnx : nullptr,
      hasOnnx ? lmc_model_onnx_size : 0};
  return lmc::rt::runTrainingMain(argc, argv, model);
}
