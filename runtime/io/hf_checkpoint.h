//===- hf_checkpoint.h - Hugging Face save_pretrained directories --------===//
//
// What `PreTrainedModel.save_pretrained(dir)` writes and `from_pretrained`
// reads: config.json (and the tokenizer's and generation's files beside
// it), the weights either in one `model.safetensors` or, above the shard
// size (5 GB by default), in `model-00001-of-0000N.safetensors` files
// listed by `model.safetensors.index.json`:
//
//   {"metadata": {"total_size": BYTES}, "weight_map": {"name": "file", ...}}
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_HF_CHECKPOINT_H
#define LMC_RUNTIME_HF_CHECKPOINT_H

#include "io/safetensors.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lmc::rt {

inline constexpr const char *kHfWeightsName = "model.safetensors";
inline constexpr const char *kHfIndexName = "model.safetensors.index.json";
/// What PeftModel.save_pretrained writes (LoRA adapters).
inline constexpr const char *kPeftWeightsName = "adapter_model.safetensors";
/// save_pretrained's default max_shard_size, "5GB" (decimal).
inline constexpr uint64_t kHfDefaultShardBytes = 5'000'000'000;

struct HfCheckpoint {
  /// The directory of the checkpoint (of the file, for a plain
  /// .safetensors file): where its config.json would be.
  std::string directory;
  std::vector<std::string> shardPaths;
  std::vector<SafetensorsFile> shards; // mapped; names unique across them
};

/// Reads a checkpoint from `path`: a save_pretrained directory
/// (model.safetensors, else model.safetensors.index.json), an index file,
/// or one .safetensors file. Throws Error naming the file at fault: an
/// index that is not an object with a string-valued "weight_map", a shard
/// name with a '/', a shard that lacks a tensor the index puts in it, a
/// name in two shards.
HfCheckpoint readHfCheckpoint(const std::string &path);

/// Whether `directory` holds a config.json (what --save-hf copies).
bool hasHfConfig(const std::string &directory);

/// Writes `tensors` (under the names they carry) into `directory` as
/// save_pretrained does: one model.safetensors, or shards of at most
/// `maxShardBytes` (a tensor larger than that gets a shard of its own)
/// with model.safetensors.index.json; every file atomically. Weight files
/// of an earlier save in `directory` that this one did not write are
/// removed (from_pretrained would read a stale model.safetensors before
/// the index). config.json is copied from `sourceDirectory` with its dtype
/// set to float32 (the tensors' type: from_pretrained's dtype="auto" would
/// otherwise round them to the source's bf16), as are the generation
/// config and tokenizer files there.
void writeHfCheckpoint(const std::string &directory,
                       const std::vector<TensorView> &tensors,
                       uint64_t maxShardBytes,
                       const std::string &sourceDirectory);

/// config.json's text with every "dtype"/"torch_dtype" value replaced by
/// "float32".
std::string withFloat32Dtype(const std::string &configJson);

} // namespace lmc::rt

#endif // LMC_RUNTIME_HF_CHECKPOINT_H
