//===- dataset.h - Input arrays and batch assembly -----------------------===//
#ifndef LMC_RUNTIME_DATASET_H
#define LMC_RUNTIME_DATASET_H

#include "cli/config.h"
#include "io/npy.h"
#include "memory/buffer.h"
#include "model/descriptor.h"

#include <vector>

namespace lmc::rt {

/// Where the batches of a step come from: a set of samples, indexed
/// 0..numSamples()-1, that fill the step's input buffers.
class BatchSource {
public:
  virtual ~BatchSource() = default;
  virtual int64_t numSamples() const = 0;
  /// Copies samples[i] into row i of buffers[c] for every input column c;
  /// samples.size() must equal the batch dimension of every spec.
  virtual void fillBatch(const std::vector<int64_t> &samples,
                         std::vector<AlignedBuffer> &buffers) const = 0;
  /// Tokens per sample for throughput (0: not token data).
  virtual int64_t tokensPerSample() const { return 0; }
};

/// One .npy array per model input, all with the same number of samples
/// (first dimension), validated against the descriptor's batch shapes.
class Dataset : public BatchSource {
public:
  /// Loads `files` for `specs` (the step's `input` buffers, in order).
  /// `flag` ("--input" / "--eval-input") is used in error messages.
  static Dataset load(const std::vector<NamedFile> &files,
                      const std::vector<const TensorSpec *> &specs,
                      const char *flag);

  /// Validates and adopts already-parsed arrays, parallel to `specs`.
  /// `sources` names each array in messages (usually the file path).
  static Dataset fromArrays(std::vector<NpyArray> arrays,
                            const std::vector<const TensorSpec *> &specs,
                            const std::vector<std::string> &sources);

  int64_t numSamples() const override { return numSamples_; }
  size_t numColumns() const { return columns_.size(); }
  const TensorSpec &spec(size_t column) const { return *columns_[column].spec; }
  const NpyArray &array(size_t column) const { return columns_[column].array; }

  void fillBatch(const std::vector<int64_t> &samples,
                 std::vector<AlignedBuffer> &buffers) const override;

  /// A sequence model's input: the first integer input of shape
  /// [batch, T] holds T tokens per sample (0 when there is none).
  int64_t tokensPerSample() const override;

private:
  struct Column {
    const TensorSpec *spec;
    NpyArray array;
    size_t sampleBytes;
    std::string source; // the file, for messages
  };
  std::vector<Column> columns_;
  int64_t numSamples_ = 0;
};

} // namespace lmc::rt

#endif // LMC_RUNTIME_DATASET_H
