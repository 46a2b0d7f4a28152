//===- safetensors.h - safetensors reader and atomic writer --------------===//
//
// Format: 8-byte little-endian header length N, N bytes of JSON header
// {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ...,
//  "__metadata__": {"k": "v"}}, then the data buffer; offsets are relative
// to the data buffer, and the tensors must tile it exactly (no gaps, no
// overlaps), as https://github.com/huggingface/safetensors specifies.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_SAFETENSORS_H
#define LMC_RUNTIME_SAFETENSORS_H

#include "base/dtype.h"
#include "io/mapped_file.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace lmc::rt {

/// Reject headers larger than this (the reference implementation's limit).
constexpr uint64_t kMaxSafetensorsHeaderSize = 100'000'000;

struct SafetensorsTensor {
  std::string name;
  std::string dtype; // safetensors spelling: "F32", "BF16", ...
  Shape shape;
  size_t begin = 0; // byte offsets into the data buffer
  size_t end = 0;
};

struct SafetensorsFile {
  std::vector<uint8_t> bytes; // the whole file, held in memory, or
  MappedFile mapping;         // mapped (readSafetensorsFile)
  size_t dataStart = 0;       // where the data buffer begins in the file
  std::vector<SafetensorsTensor> tensors; // in header order
  std::map<std::string, std::string> metadata;

  const SafetensorsTensor *find(const std::string &name) const;
  const uint8_t *fileData() const {
    return mapping.size() ? mapping.data() : bytes.data();
  }
  size_t fileSize() const {
    return mapping.size() ? mapping.size() : bytes.size();
  }
  const uint8_t *data(const SafetensorsTensor &t) const {
    return fileData() + dataStart + t.begin;
  }
  /// Done with `size` bytes at `data` (inside the file): a mapped file's
  /// pages leave this process's resident set (they are read again if
  /// touched), so reading a checkpoint as large as the model does not
  /// double its memory. Nothing for a file held in memory.
  void release(const uint8_t *data, size_t size) const;
};

/// Safetensors spelling of an ABI dtype: F32 F64 I64 I32.
const char *safetensorsDTypeName(DType dtype);

/// Parses safetensors bytes. Throws Error describing the problem.
SafetensorsFile parseSafetensors(std::vector<uint8_t> bytes);
/// Parses a mapped safetensors file, the same way.
SafetensorsFile parseSafetensors(MappedFile mapping);
/// Maps and parses a file (its pages are read as tensors are touched);
/// errors are prefixed with the path.
SafetensorsFile readSafetensorsFile(const std::string &path);

struct TensorView {
  std::string name;
  DType dtype;
  Shape shape;
  const void *data; // numElements(shape) * dtypeSize(dtype) bytes
};

/// The 8-byte length plus the JSON header, padded with spaces so the data
/// buffer starts 8-byte aligned.
std::string
serializeSafetensorsHeader(const std::vector<TensorView> &tensors,
                           const std::map<std::string, std::string> &metadata);

/// Writes tensors (in the given order) atomically to `path`.
void writeSafetensorsFile(const std::string &path,
                          const std::vector<TensorView> &tensors,
                          const std::map<std::string, std::string> &metadata);

} // namespace lmc::rt

#endif // LMC_RUNTIME_SAFETENSORS_H
