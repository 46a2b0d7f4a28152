//===- index_check.h - Integer inputs within the model's range -----------===//
//
// A token id at or past an embedding's rows, or a label past the classes,
// would be read by the step as some other row (or memory) without a word;
// PyTorch raises. Each batch is checked where it is assembled, before the
// step reads it (the `bound` lines of docs/runtime-abi.md).
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_INDEX_CHECK_H
#define LMC_RUNTIME_INDEX_CHECK_H

#include "model/descriptor.h"

#include <cstdint>
#include <string>

namespace lmc::rt {

/// The message for `value` of input `spec` outside its bound: `where` says
/// which file, sample and position held it.
std::string indexOutOfRange(const TensorSpec &spec, int64_t value,
                            const std::string &where);

/// Throws when an element of one sample of `spec` (its shape without the
/// batch dimension, dtype i64 or i32) lies outside spec.bound; `source` and
/// `sample` name it. No-op for specs without a bound.
void checkSampleIndices(const TensorSpec &spec, const uint8_t *sample,
                        const std::string &source, int64_t sampleIndex);

} // namespace lmc::rt

#endif // LMC_RUNTIME_INDEX_CHECK_H
