//===- onnx_export.cpp - --export-onnx: the ONNX model with trained weights ===//

#include "io/onnx_export.h"

#include "base/error.h"
#include "io/file_io.h"
#include "io/protobuf_wire.h"

namespace lmc::rt {

namespace {

// onnx.proto field numbers and wire types.
constexpr uint32_t kModelGraph = 7;       // ModelProto.graph
constexpr uint32_t kGraphInitializer = 5; // GraphProto.initializer
constexpr uint32_t kTensorDims = 1, kTensorDataType = 2, kTensorName = 8,
                   kTensorRawData = 9, kTensorExternalData = 13,
                   kTensorDataLocation = 14;
constexpr uint32_t kEntryKey = 1, kEntryValue = 2; // StringStringEntryProto
constexpr uint64_t kLocationExternal = 1;          // TensorProto.EXTERNAL
/// External data offsets are page-aligned, so readers may map them.
constexpr uint64_t kExternalAlignment = 4096;
using wire::appendKey;
using wire::appendLengthDelimited;
using wire::appendVarint;
using wire::kLengthDelimited;
using wire::kVarint;

/// TensorProto.DataType of a runtime dtype.
uint64_t onnxDataType(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return 1;
  case DType::I32:
    return 6;
  case DType::I64:
    return 7;
  case DType::F64:
    return 11;
  case DType::BF16:
    return 16;
  }
  throw Error("unsupported dtype for ONNX export");
}

/// An external_data entry {key, value}.
void appendEntry(std::string &out, const std::string &key,
                 const std::string &value) {
  std::string entry;
  appendLengthDelimited(entry, kEntryKey, key);
  appendLengthDelimited(entry, kEntryValue, value);
  appendLengthDelimited(out, kTensorExternalData, entry);
}

} // namespace

std::vector<ByteSpan>
encodeInitializers(const std::vector<TensorView> &tensors,
                   std::vector<std::string> &storage,
                   const ExternalData *external) {
  // Each TensorProto: dims, data_type, name, then the raw_data key and
  // length; the data itself is a piece of its own.
  std::vector<std::string> heads;
  std::vector<size_t> dataSizes;
  uint64_t graphSize = 0;
  for (const TensorView &t : tensors) {
    std::string head;
    for (int64_t dim : t.shape) {
      appendKey(head, kTensorDims, kVarint);
      appendVarint(head, uint64_t(dim));
    }
    appendKey(head, kTensorDataType, kVarint);
    appendVarint(head, onnxDataType(t.dtype));
    appendLengthDelimited(head, kTensorName, t.name);
    const size_t dataSize = size_t(numElements(t.shape)) * dtypeSize(t.dtype);
    size_t inlineSize = dataSize;
    if (external) { // the data goes to the file at its offset
      appendEntry(head, "location", external->location);
      appendEntry(head, "offset", std::to_string(external->offsets[heads.size()]));
      appendEntry(head, "length", std::to_string(dataSize));
      appendKey(head, kTensorDataLocation, kVarint);
      appendVarint(head, kLocationExternal);
      inlineSize = 0;
    } else {
      appendKey(head, kTensorRawData, kLengthDelimited);
      appendVarint(head, dataSize);
    }
    const uint64_t tensorSize = head.size() + inlineSize;
    // The initializer's own key and length go in front of the tensor.
    std::string framed;
    appendKey(framed, kGraphInitializer, kLengthDelimited);
    appendVarint(framed, tensorSize);
    graphSize += framed.size() + tensorSize;
    heads.push_back(framed + head);
    dataSizes.push_back(inlineSize);
  }
  std::string graphHead;
  appendKey(graphHead, kModelGraph, kLengthDelimited);
  appendVarint(graphHead, graphSize);

  storage.clear();
  storage.reserve(tensors.size() + 1);
  storage.push_back(std::move(graphHead));
  std::vector<ByteSpan> pieces{{storage.back().data(), storage.back().size()}};
  for (size_t i = 0; i < tensors.size(); ++i) {
    storage.push_back(std::move(heads[i]));
    pieces.push_back({storage.back().data(), storage.back().size()});
    if (dataSizes[i])
      pieces.push_back({tensors[i].data, dataSizes[i]});
  }
  return pieces;
}

bool exportOnnx(const std::string &path, const unsigned char *model,
                uint64_t modelSize, const std::vector<TensorView> &params,
                bool forceExternal) {
  uint64_t total = modelSize;
  for (const TensorView &t : params)
    total += uint64_t(numElements(t.shape)) * dtypeSize(t.dtype) + 64;
  std::vector<std::string> storage;
  std::vector<ByteSpan> pieces{{model, size_t(modelSize)}};
  if (!forceExternal && total <= kMaxInlineOnnxBytes) {
    for (const ByteSpan &piece : encodeInitializers(params, storage))
      pieces.push_back(piece);
    writeFileAtomically(path, pieces);
    return false;
  }
  // FILE.onnx.data next to FILE.onnx, named relative to it; written first,
  // so a model file never refers to data that is not there.
  ExternalData external;
  const size_t slash = path.rfind('/');
  external.location =
      (slash == std::string::npos ? path : path.substr(slash + 1)) + ".data";
  static const char zeros[kExternalAlignment] = {};
  std::vector<ByteSpan> data;
  uint64_t offset = 0;
  for (const TensorView &t : params) {
    const uint64_t padding = (kExternalAlignment - offset % kExternalAlignment) %
                             kExternalAlignment;
    if (padding)
      data.push_back({zeros, size_t(padding)});
    offset += padding;
    external.offsets.push_back(offset);
    const size_t bytes = size_t(numElements(t.shape)) * dtypeSize(t.dtype);
    data.push_back({t.data, bytes});
    offset += bytes;
  }
  writeFileAtomically(path + ".data", data);
  for (const ByteSpan &piece : encodeInitializers(params, storage, &external))
    pieces.push_back(piece);
  writeFileAtomically(path, pieces);
  return true;
}

} // namespace lmc::rt
