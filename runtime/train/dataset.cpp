//===- dataset.cpp - Input arrays and batch assembly ---------------------===//

#include "train/dataset.h"

#include "base/error.h"
#include "train/index_check.h"

#include <cstring>
#include <map>

namespace lmc::rt {

namespace {

/// i64 model inputs also accept int32 files (what many tools write for
/// labels); everything else must match exactly.
NpyArray convertForSpec(NpyArray array, const TensorSpec &spec,
                        const std::string &source) {
  if (array.dtype == spec.dtype)
    return array;
  if (spec.dtype == DType::I64 && array.dtype == DType::I32) {
    const size_t count = size_t(numElements(array.shape));
    std::vector<uint8_t> widened(count * sizeof(int64_t));
    const uint8_t *src = array.data();
    for (size_t i = 0; i < count; ++i) {
      int32_t v;
      std::memcpy(&v, src + i * sizeof v, sizeof v);
      int64_t w = v;
      std::memcpy(widened.data() + i * sizeof w, &w, sizeof w);
    }
    array.bytes = std::move(widened);
    array.dataOffset = 0;
    array.dtype = DType::I64;
    return array;
  }
  throw Error(concat(source, ": dtype ", dtypeName(array.dtype),
                     " does not match model input '", spec.name, "' (",
                     dtypeName(spec.dtype), ")"));
}

std::string inputNames(const std::vector<const TensorSpec *> &specs) {
  std::string names;
  for (const TensorSpec *spec : specs)
    names += (names.empty() ? "" : ", ") + spec->name;
  return names.empty() ? "(none)" : names;
}

} // namespace

Dataset Dataset::load(const std::vector<NamedFile> &files,
                      const std::vector<const TensorSpec *> &specs,
                      const char *flag) {
  std::map<std::string, std::string> pathByName;
  for (const NamedFile &file : files) {
    bool known = false;
    for (const TensorSpec *spec : specs)
      known |= spec->name == file.name;
    LMC_CHECK(known, flag, " '", file.name,
              "': the model has no such input (inputs: ", inputNames(specs),
              ")");
    pathByName[file.name] = file.path;
  }
  std::vector<NpyArray> arrays;
  std::vector<std::string> sources;
  for (const TensorSpec *spec : specs) {
    auto it = pathByName.find(spec->name);
    LMC_CHECK(it != pathByName.end(), "missing ", flag, " ", spec->name,
              "=FILE.npy for model input '", spec->name, "' (",
              dtypeName(spec->dtype), formatShape(spec->shape), ")");
    arrays.push_back(readNpyFile(it->second));
    sources.push_back(it->second);
  }
  return fromArrays(std::move(arrays), specs, sources);
}

Dataset Dataset::fromArrays(std::vector<NpyArray> arrays,
                            const std::vector<const TensorSpec *> &specs,
                            const std::vector<std::string> &sources) {
  Dataset dataset;
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorSpec &spec = *specs[i];
    const std::string &source = sources[i];
    NpyArray array = convertForSpec(std::move(arrays[i]), spec, source);
    LMC_CHECK(!array.shape.empty(), source,
              ": expected samples along the first dimension, got a scalar");
    Shape sampleShape(array.shape.begin() + 1, array.shape.end());
    Shape expected(spec.shape.begin() + 1, spec.shape.end());
    LMC_CHECK(sampleShape == expected, source, ": shape ",
              formatShape(array.shape), " does not match model input '",
              spec.name, "': expected [N", expected.empty() ? "" : ", ",
              formatShape(expected).substr(1));
    const int64_t n = array.shape[0];
    LMC_CHECK(n > 0, source, ": no samples");
    if (i == 0)
      dataset.numSamples_ = n;
    LMC_CHECK(n == dataset.numSamples_, source, " has ", n, " samples but ",
              sources[0], " has ", dataset.numSamples_);
    const size_t sampleBytes =
        size_t(numElements(expected)) * dtypeSize(spec.dtype);
    dataset.columns_.push_back({&spec, std::move(array), sampleBytes, source});
  }
  return dataset;
}

void Dataset::fillBatch(const std::vector<int64_t> &samples,
                        std::vector<AlignedBuffer> &buffers) const {
  for (size_t c = 0; c < columns_.size(); ++c) {
    const Column &column = columns_[c];
    auto *dst = static_cast<uint8_t *>(buffers[c].data());
    for (size_t i = 0; i < samples.size(); ++i) {
      const uint8_t *sample =
          column.array.data() + size_t(samples[i]) * column.sampleBytes;
      checkSampleIndices(*column.spec, sample, column.source, samples[i]);
      std::memcpy(dst + i * column.sampleBytes, sample, column.sampleBytes);
    }
  }
}

int64_t Dataset::tokensPerSample() const {
  for (const Column &column : columns_) {
    const TensorSpec &spec = *column.spec;
    bool integer = spec.dtype == DType::I64 || spec.dtype == DType::I32;
    if (integer && spec.shape.size() == 2)
      return spec.shape[1];
  }
  return 0;
}

} // namespace lmc::rt
