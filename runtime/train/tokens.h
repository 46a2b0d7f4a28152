//===- tokens.h - Token shards for language models (--tokens) -----------===//
//
// Two on-disk formats, told apart by the first int32:
//  - llm.c: a 256 x int32 little-endian header (header[0] = magic, header[1]
//    = version, header[2] = token count), then the tokens: magic 20240520
//    -> uint16 tokens, 20240801 -> uint32 tokens. The file size must be
//    exactly 1024 + count * width.
//  - nanoGPT: raw uint16 tokens, no header (any file whose first int32 is
//    not one of the magics; its size must be even).
// Each shard is cut into windows of T+1 tokens with stride T (windows do not
// cross shards); window w gives the model input row tokens[s, s+T) and the
// labels/targets row tokens[s+1, s+T+1).
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_TOKENS_H
#define LMC_RUNTIME_TOKENS_H

#include "io/mapped_file.h"
#include "train/dataset.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lmc::rt {

constexpr int32_t kLlmcMagicU16 = 20240520;
constexpr int32_t kLlmcMagicU32 = 20240801;

struct TokenShard {
  std::string path;
  /// The whole file: mapped (readTokenShard) or owned (parseTokenShard).
  MappedFile mapped;
  std::vector<uint8_t> owned;
  size_t dataOffset = 0; // 1024 for llm.c files, 0 for raw
  int width = 2;         // bytes per token: 2 or 4
  int64_t numTokens = 0;

  const uint8_t *bytes() const {
    return mapped.data() ? mapped.data() : owned.data();
  }
  uint32_t token(int64_t i) const;
};

/// Validates a shard's bytes (errors do not name the file).
TokenShard parseTokenShard(std::vector<uint8_t> bytes);
/// Maps and validates one file; errors are prefixed with the path. Its
/// pages are read as batches touch them (a 20 GB set is not read at start).
TokenShard readTokenShard(const std::string &path);
/// Sorted paths matching a glob pattern; error when nothing matches.
std::vector<std::string> expandGlob(const std::string &pattern,
                                    const char *flag);

/// Windows of T+1 tokens as a BatchSource for a model whose inputs are
/// an integer [B, T] token input and `labels` or `targets` [B, T].
class TokenDataset : public BatchSource {
public:
  /// Loads every shard matching `pattern` for the step's `input` specs.
  static TokenDataset load(const std::string &pattern,
                           const std::vector<const TensorSpec *> &specs,
                           const char *flag);
  static TokenDataset fromShards(std::vector<TokenShard> shards,
                                 const std::vector<const TensorSpec *> &specs,
                                 const char *flag);

  int64_t numSamples() const override { return windowsBefore_.back(); }
  void fillBatch(const std::vector<int64_t> &samples,
                 std::vector<AlignedBuffer> &buffers) const override;
  int64_t tokensPerSample() const override { return seqLen_; }
  int64_t numTokens() const;

private:
  std::vector<TokenShard> shards_;
  /// windowsBefore_[s]: the windows of the shards before s (one more entry
  /// at the end: all of them); sample w is in the shard where it falls.
  std::vector<int64_t> windowsBefore_;
  int64_t seqLen_ = 0;
  size_t inputColumn_ = 0, targetColumn_ = 1;
  /// The two inputs' specs: dtypes and bounds (outlive the dataset).
  const TensorSpec *inputSpec_ = nullptr, *targetSpec_ = nullptr;
};

} // namespace lmc::rt

#endif // LMC_RUNTIME_TOKENS_H
