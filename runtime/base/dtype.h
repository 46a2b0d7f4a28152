//===- dtype.h - Element types of the model ABI --------------------------===//
#ifndef LMC_RUNTIME_DTYPE_H
#define LMC_RUNTIME_DTYPE_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lmc::rt {

/// The element types the descriptor can name (docs/runtime-abi.md).
/// BF16: only for frozen tensors (lmc --lora --base-precision bf16), which
/// the steps read and no input or file format of the runtime feeds.
enum class DType { F32, F64, I64, I32, BF16 };

/// Bytes per element.
size_t dtypeSize(DType dtype);
/// Descriptor spelling: "f32", "f64", "i64", "i32".
const char *dtypeName(DType dtype);
std::optional<DType> parseDTypeName(const std::string &name);

using Shape = std::vector<int64_t>;

/// Number of elements (1 for a scalar). Throws on overflow.
int64_t numElements(const Shape &shape);
/// "[4, 3]" ("[]" for a scalar).
std::string formatShape(const Shape &shape);

} // namespace lmc::rt

#endif // LMC_RUNTIME_DTYPE_H
