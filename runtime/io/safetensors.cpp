//===- safetensors.cpp - safetensors reader and atomic writer ------------===//

#include "io/safetensors.h"

#include "base/error.h"
#include "io/file_io.h"
#include "io/json.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <string_view>

namespace lmc::rt {

namespace {

/// Element sizes of every dtype the format defines, so that files holding
/// tensors this runtime never uses (BF16, U8, ...) still validate.
int64_t safetensorsElementSize(const std::string &dtype) {
  static const std::map<std::string, int64_t> sizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1},
      {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},
      {"U32", 4},  {"F32", 4}, {"F64", 8}, {"I64", 8},     {"U64", 8}};
  auto it = sizes.find(dtype);
  return it == sizes.end() ? -1 : it->second;
}

const JsonValue &member(const JsonValue &entry, const std::string &tensor,
                        std::string_view key) {
  const JsonValue *v = entry.find(key);
  LMC_CHECK(v, "tensor '", tensor, "' has no \"", key, "\"");
  return *v;
}

SafetensorsTensor parseTensorEntry(const std::string &name,
                                   const JsonValue &entry, size_t dataSize) {
  LMC_CHECK(entry.isObject(), "tensor '", name, "' is not a JSON object");
  for (const std::string &key : entry.keys)
    LMC_CHECK(key == "dtype" || key == "shape" || key == "data_offsets",
              "tensor '", name, "' has unexpected key \"", key, "\"");
  SafetensorsTensor t;
  t.name = name;

  const JsonValue &dtype = member(entry, name, "dtype");
  LMC_CHECK(dtype.isString(), "tensor '", name, "': dtype is not a string");
  t.dtype = dtype.string;
  const int64_t elementSize = safetensorsElementSize(t.dtype);
  LMC_CHECK(elementSize > 0, "tensor '", name, "': unknown dtype '", t.dtype,
            "'");

  const JsonValue &shape = member(entry, name, "shape");
  LMC_CHECK(shape.isArray(), "tensor '", name, "': shape is not an array");
  for (const JsonValue &dim : shape.items) {
    LMC_CHECK(dim.isInteger() && dim.integer >= 0, "tensor '", name,
              "': shape entries must be non-negative integers");
    t.shape.push_back(dim.integer);
  }

  const JsonValue &offsets = member(entry, name, "data_offsets");
  LMC_CHECK(offsets.isArray() && offsets.items.size() == 2 &&
                offsets.items[0].isInteger() && offsets.items[1].isInteger(),
            "tensor '", name, "': data_offsets must be [begin, end]");
  const int64_t begin = offsets.items[0].integer;
  const int64_t end = offsets.items[1].integer;
  LMC_CHECK(begin >= 0 && begin <= end, "tensor '", name,
            "': invalid data_offsets [", begin, ", ", end, "]");
  LMC_CHECK(uint64_t(end) <= dataSize, "tensor '", name, "': data_offsets [",
            begin, ", ", end, "] out of range (data buffer has ", dataSize,
            " bytes)");
  t.begin = size_t(begin);
  t.end = size_t(end);

  const int64_t count = numElements(t.shape);
  LMC_CHECK(count <= INT64_MAX / elementSize, "tensor '", name,
            "': shape too large");
  LMC_CHECK(count * elementSize == end - begin, "tensor '", name,
            "': ", t.dtype, " ", formatShape(t.shape), " needs ",
            count * elementSize, " bytes but data_offsets span ", end - begin);
  return t;
}

/// The format requires the tensors to cover the data buffer exactly.
void checkTiling(std::vector<SafetensorsTensor> tensors, size_t dataSize) {
  std::sort(tensors.begin(), tensors.end(),
            [](const SafetensorsTensor &a, const SafetensorsTensor &b) {
              return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
            });
  size_t cursor = 0;
  const SafetensorsTensor *previous = nullptr;
  for (const SafetensorsTensor &t : tensors) {
    LMC_CHECK(t.begin >= cursor, "tensors '", previous ? previous->name : "",
              "' and '", t.name, "' overlap");
    LMC_CHECK(t.begin == cursor, "data_offsets are not contiguous: gap of ",
              t.begin - cursor, " bytes before tensor '", t.name, "'");
    cursor = t.end;
    previous = &t;
  }
  LMC_CHECK(cursor == dataSize,
            "data_offsets are not contiguous: ", dataSize - cursor,
            " unused bytes at the end of the data buffer");
}

} // namespace

const SafetensorsTensor *SafetensorsFile::find(const std::string &name) const {
  for (const SafetensorsTensor &t : tensors)
    if (t.name == name)
      return &t;
  return nullptr;
}

const char *safetensorsDTypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "F32";
  case DType::F64:
    return "F64";
  case DType::I64:
    return "I64";
  case DType::I32:
    return "I32";
  case DType::BF16:
    return "BF16";
  }
  return "?";
}

namespace {

/// The header of the `size`-byte file at `bytes` into `file` (everything
/// but the storage).
void parseHeader(const uint8_t *bytes, size_t size, SafetensorsFile &file) {
  LMC_CHECK(size >= 8, "not a safetensors file (shorter than 8 bytes)");
  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = (headerSize << 8) | bytes[size_t(i)];
  LMC_CHECK(headerSize <= kMaxSafetensorsHeaderSize, "header length ",
            headerSize, " exceeds the ", kMaxSafetensorsHeaderSize,
            "-byte limit");
  LMC_CHECK(headerSize <= size - 8, "header length ", headerSize,
            " is beyond the end of the file (", size, " bytes)");

  file.dataStart = 8 + size_t(headerSize);
  const size_t dataSize = size - file.dataStart;
  JsonValue header = parseJson(std::string_view(
      reinterpret_cast<const char *>(bytes + 8), size_t(headerSize)));
  LMC_CHECK(header.isObject(), "header is not a JSON object");

  for (size_t i = 0; i < header.keys.size(); ++i) {
    const std::string &key = header.keys[i];
    const JsonValue &value = header.items[i];
    if (key == "__metadata__") {
      LMC_CHECK(value.isObject(), "__metadata__ is not a JSON object");
      for (size_t j = 0; j < value.keys.size(); ++j) {
        LMC_CHECK(value.items[j].isString(), "__metadata__ value for '",
                  value.keys[j], "' is not a string");
        file.metadata[value.keys[j]] = value.items[j].string;
      }
      continue;
    }
    file.tensors.push_back(parseTensorEntry(key, value, dataSize));
  }
  checkTiling(file.tensors, dataSize);
}

} // namespace

SafetensorsFile parseSafetensors(std::vector<uint8_t> bytes) {
  SafetensorsFile file;
  parseHeader(bytes.data(), bytes.size(), file);
  file.bytes = std::move(bytes);
  return file;
}

SafetensorsFile parseSafetensors(MappedFile mapping) {
  SafetensorsFile file;
  parseHeader(mapping.data(), mapping.size(), file);
  file.mapping = std::move(mapping);
  return file;
}

SafetensorsFile readSafetensorsFile(const std::string &path) {
  MappedFile mapping = MappedFile::open(path);
  try {
    return parseSafetensors(std::move(mapping));
  } catch (const Error &e) {
    throw Error(concat(path, ": ", e.what()));
  }
}

void SafetensorsFile::release(const uint8_t *data, size_t size) const {
  if (!mapping.size() || size == 0)
    return;
  // Whole pages, outward: a page shared with a neighbour is read again
  // from the page cache if the neighbour is touched later.
  const uintptr_t page = uintptr_t(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = uintptr_t(data) / page * page;
  const uintptr_t end = (uintptr_t(data) + size + page - 1) / page * page;
  ::madvise(reinterpret_cast<void *>(begin), end - begin, MADV_DONTNEED);
}

std::string
serializeSafetensorsHeader(const std::vector<TensorView> &tensors,
                           const std::map<std::string, std::string> &metadata) {
  std::string json = "{";
  if (!metadata.empty()) {
    json += "\"__metadata__\":{";
    bool first = true;
    for (const auto &[key, value] : metadata) {
      if (!first)
        json += ',';
      first = false;
      appendJsonString(json, key);
      json += ':';
      appendJsonString(json, value);
    }
    json += '}';
  }
  std::set<std::string> names;
  size_t offset = 0;
  for (const TensorView &t : tensors) {
    LMC_CHECK(names.insert(t.name).second, "duplicate tensor name '", t.name,
              "'");
    const size_t size = size_t(numElements(t.shape)) * dtypeSize(t.dtype);
    if (json.size() > 1)
      json += ',';
    appendJsonString(json, t.name);
    json += concat(":{\"dtype\":\"", safetensorsDTypeName(t.dtype),
                   "\",\"shape\":[");
    for (size_t i = 0; i < t.shape.size(); ++i)
      json += concat(i ? "," : "", t.shape[i]);
    json += concat("],\"data_offsets\":[", offset, ",", offset + size, "]}");
    offset += size;
  }
  json += '}';
  // Pad so the data buffer starts 8-byte aligned (what the reference writer
  // does); trailing spaces are valid JSON whitespace.
  while ((8 + json.size()) % 8 != 0)
    json += ' ';

  std::string out(8, '\0');
  uint64_t length = json.size();
  for (int i = 0; i < 8; ++i)
    out[size_t(i)] = char((length >> (8 * i)) & 0xFF);
  return out + json;
}

void writeSafetensorsFile(const std::string &path,
                          const std::vector<TensorView> &tensors,
                          const std::map<std::string, std::string> &metadata) {
  const std::string header = serializeSafetensorsHeader(tensors, metadata);
  std::vector<ByteSpan> pieces{{header.data(), header.size()}};
  for (const TensorView &t : tensors)
    pieces.push_back(
        {t.data, size_t(numElements(t.shape)) * dtypeSize(t.dtype)});
  writeFileAtomically(path, pieces);
}

} // namespace lmc::rt
