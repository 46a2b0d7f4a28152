//===- peft_adapter.h - LoRA adapters in Hugging Face PEFT's format -*- C++ -*-===//
//
// What `PeftModel.save_pretrained(DIR)` writes for a LoRA model and
// `PeftModel.from_pretrained(base, DIR)` reads: DIR/adapter_model.safetensors
// with the adapters under `base_model.model.<module>.lora_A.weight` /
// `.lora_B.weight` (<module> the base model's module name), and
// DIR/adapter_config.json (peft_type LORA, r, lora_alpha, lora_dropout,
// use_rslora, target_modules: the adapted modules by full name).
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_PEFT_ADAPTER_H
#define LMC_RUNTIME_PEFT_ADAPTER_H

#include "io/safetensors.h"

#include <optional>
#include <string>
#include <vector>

namespace lmc::rt {

/// adapter_config.json's hyperparameters (the descriptor's `lora` line).
struct PeftLoraConfig {
  int64_t rank = 0;
  double alpha = 0, dropout = 0;
  bool rslora = false;
  /// The adapted weights are stored [in, out] (GPT-2's Conv1D), which PEFT
  /// must know to merge them.
  bool fanInFanOut = false;
};

/// Writes the adapters among `params` (names ending in .lora_A.weight or
/// .lora_B.weight, each module with both) to `directory` (created if
/// needed; each file atomically). `stripPrefix` is removed from every
/// module name first (an export of a wrapper module: `m.`). Throws Error
/// for a trained parameter that is not an adapter (PEFT's modules_to_save
/// are not written), a module without its pair, or a name without the
/// prefix.
void writePeftAdapter(const std::string &directory,
                      const std::vector<TensorView> &params,
                      const PeftLoraConfig &lora,
                      const std::string &stripPrefix);

/// The hyperparameters of `directory`/adapter_config.json (what
/// PeftModel.save_pretrained wrote), or nothing when there is none. Throws
/// Error naming the file when it is not a LoRA config (peft_type, r,
/// lora_alpha).
std::optional<PeftLoraConfig> readPeftLoraConfig(const std::string &directory);

} // namespace lmc::rt

#endif // LMC_RUNTIME_PEFT_ADAPTER_H
