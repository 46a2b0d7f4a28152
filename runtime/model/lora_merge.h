//===- lora_merge.h - LoRA adapters merged into their weights ---*- C++ -*-===//
//
// What PEFT's `merge_and_unload()` leaves: every adapted weight W becomes
// W + scaling · B A (transposed for a weight stored [in, out]), the
// adapters are gone, and the rest of the model is as it is — a plain f32
// model (a bf16 base widened) that `--save`, `--save-hf` and
// `--export-onnx` write with `--merge-adapter`.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_LORA_MERGE_H
#define LMC_RUNTIME_LORA_MERGE_H

#include "io/safetensors.h"
#include "memory/buffer.h"
#include "model/model_state.h"

#include <vector>

namespace lmc::rt {

/// The current params other than the adapters, the buffers and the frozen
/// tensors, the adapted ones merged (into new blocks kept in `merged`).
/// `desc` must have LoRA adapters.
std::vector<TensorView> mergedModel(const Descriptor &desc, ModelState &state,
                                    std::vector<AlignedBuffer> &merged);

} // namespace lmc::rt

#endif // LMC_RUNTIME_LORA_MERGE_H
