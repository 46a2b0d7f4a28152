//===- dtype.cpp - Element types of the model ABI ------------------------===//

#include "base/dtype.h"

#include "base/error.h"

namespace lmc::rt {

size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::BF16:
    return 2;
  }
  return 0;
}

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  case DType::I64:
    return "i64";
  case DType::I32:
    return "i32";
  case DType::BF16:
    return "bf16";
  }
  return "?";
}

std::optional<DType> parseDTypeName(const std::string &name) {
  if (name == "f32")
    return DType::F32;
  if (name == "f64")
    return DType::F64;
  if (name == "i64")
    return DType::I64;
  if (name == "i32")
    return DType::I32;
  if (name == "bf16")
    return DType::BF16;
  return std::nullopt;
}

int64_t numElements(const Shape &shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    LMC_CHECK(dim >= 0, "negative dimension in shape ", formatShape(shape));
    LMC_CHECK(dim == 0 || count <= INT64_MAX / dim, "shape ",
              formatShape(shape), " has too many elements");
    count *= dim;
  }
  return count;
}

std::string formatShape(const Shape &shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

} // namespace lmc::rt
