//===- init_matching.h - An --init file's tensors to the model's names ---===//
//
// A Hugging Face checkpoint (`save_pretrained`'s model.safetensors) rarely
// names its tensors as the ONNX export does: the export of a wrapper adds
// a prefix (`m.transformer.h.0.attn.c_attn.weight`), a bare model lacks
// HF's base prefix (`h.0...` for `transformer.h.0...`), a tied head is
// absent, and the values are often bf16 or f16. Each parameter the model
// expects is matched
//
//   1. by its exact name, else
//   2. by the one file tensor of which it is a suffix at a `.` boundary, or
//      that is such a suffix of it (`h.0.ln_1.weight` ~
//      `transformer.h.0.ln_1.weight`), a PEFT adapter's name also without
//      PEFT's `base_model.model.` (`m.model.layers.0.q_proj.lora_A.weight`
//      ~ `base_model.model.model.layers.0.q_proj.lora_A.weight`);
//
// a file tensor serves one parameter at most. A head that save_pretrained
// left out because it is tied to the input embedding (`lm_head.weight`
// and `transformer.wte.weight`, `model.embed_tokens.weight`, ...) is
// filled from that embedding. bf16/f16 values are widened to f32 (exactly).
// Every parameter without a match, and every one with several candidates,
// is named in one error; nothing is loaded then.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_INIT_MATCHING_H
#define LMC_RUNTIME_INIT_MATCHING_H

#include "io/safetensors.h"
#include "model/descriptor.h"

#include <string>
#include <vector>

namespace lmc::rt {

struct MatchedInit {
  /// The expected tensors under the model's names, in the model's dtypes
  /// where the file had bf16/f16 for an f32 tensor (other dtype or shape
  /// mismatches are left for the caller's checks to report).
  SafetensorsFile file;
  /// Per expected tensor, the name it had in the file (a tied head beside
  /// its own embedding: "lm_head.weight"): the names --save-hf writes.
  std::vector<std::string> sourceNames;
  /// "--init X: 148 tensors matched (2 by exact name, 146 by a name
  /// suffix, e.g. 'h.0.ln_1.weight' = 'transformer.h.0.ln_1.weight'), 148
  /// widened from bf16; 1 tensor of the file unused: 'lm_head.weight'".
  std::string summary;
};

/// Matches `file`'s tensors to `expected` (the params and buffers, whole
/// shapes). Throws Error naming `source` and every unmatched or ambiguous
/// tensor.
MatchedInit matchInitTensors(const SafetensorsFile &file,
                             const std::vector<const TensorSpec *> &expected,
                             const std::string &source);
/// The same over the shards of one checkpoint (names unique across them).
MatchedInit matchInitTensors(const std::vector<const SafetensorsFile *> &shards,
                             const std::vector<const TensorSpec *> &expected,
                             const std::string &source);

/// How many of `expected` have a candidate among the shards' tensors (an
/// exact name, a name suffix either way, a tied head's embedding): which
/// groups of tensors a file means to hold.
size_t countMatchable(const std::vector<const SafetensorsFile *> &shards,
                      const std::vector<const TensorSpec *> &expected);

} // namespace lmc::rt

#endif // LMC_RUNTIME_INIT_MATCHING_H
