//===- index_check.cpp - Integer inputs within the model's range ---------===//

#include "train/index_check.h"

#include "base/error.h"

#include <cstring>

namespace lmc::rt {

std::string indexOutOfRange(const TensorSpec &spec, int64_t value,
                            const std::string &where) {
  const IndexBound &bound = *spec.bound;
  return concat(where, ": value ", value, " of input '", spec.name,
                "' is outside [0, ", bound.limit, "), the ", bound.what,
                bound.what == "classes"
                    ? " of the model's output"
                    : " (a vocabulary larger than the model's?)",
                bound.ignored ? concat(", and is not the ignored label ",
                                       *bound.ignored, " (lmc --ignore-index)")
                              : std::string());
}

void checkSampleIndices(const TensorSpec &spec, const uint8_t *sample,
                        const std::string &source, int64_t sampleIndex) {
  if (!spec.bound)
    return;
  const Shape sampleShape(spec.shape.begin() + 1, spec.shape.end());
  const int64_t count = numElements(sampleShape);
  const int64_t limit = spec.bound->limit;
  for (int64_t i = 0; i < count; ++i) {
    int64_t value;
    if (spec.dtype == DType::I64) {
      std::memcpy(&value, sample + i * 8, 8);
    } else {
      int32_t narrow;
      std::memcpy(&narrow, sample + i * 4, 4);
      value = narrow;
    }
    if ((value >= 0 && value < limit) || value == spec.bound->ignored)
      continue;
    // The element's position within the sample, row-major.
    std::string position;
    for (int64_t d = int64_t(sampleShape.size()) - 1, rest = i; d >= 0; --d) {
      position = concat(rest % sampleShape[d], position.empty() ? "" : ", ",
                        position);
      rest /= sampleShape[d];
    }
    throw Error(indexOutOfRange(
        spec, value,
        concat(source, ": sample ", sampleIndex,
               position.empty() ? "" : ", position [" + position + "]")));
  }
}

} // namespace lmc::rt
