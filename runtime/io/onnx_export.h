//===- onnx_export.h - --export-onnx: the ONNX model with trained weights -===//
//
// The compiler embeds the input ONNX model with the initializers that became
// trainable parameters removed (docs/runtime-abi.md, lmc_model_onnx). The
// runtime writes those bytes followed by a second `graph` field holding one
// initializer per parameter with its current value: protobuf parsers merge
// repeated occurrences of a message field, so every ONNX reader sees the
// original graph with the trained initializers. No protobuf library needed.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_ONNX_EXPORT_H
#define LMC_RUNTIME_ONNX_EXPORT_H

#include "io/file_io.h"
#include "io/safetensors.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lmc::rt {

/// A protobuf message (the whole ModelProto) cannot exceed 2 GiB; larger
/// exports put the initializers' data in a file of their own.
constexpr uint64_t kMaxInlineOnnxBytes = (uint64_t(1) << 31) - (uint64_t(1) << 20);

/// ONNX external data: every tensor's bytes at `offsets[i]` of the file
/// `location` (relative to the model file).
struct ExternalData {
  std::string location;
  std::vector<uint64_t> offsets; // parallel to the tensors
};

/// The protobuf encoding of `graph { initializer { ... } ... }` as a
/// ModelProto field, for tensors of f32/f64/i32/i64: small header pieces
/// interleaved with the tensors' data, in order; with `external`, each
/// initializer refers to its data there instead (data_location EXTERNAL,
/// external_data location/offset/length). `storage` owns the headers (its
/// strings must not move while the pieces are used).
std::vector<ByteSpan>
encodeInitializers(const std::vector<TensorView> &tensors,
                   std::vector<std::string> &storage,
                   const ExternalData *external = nullptr);

/// Writes `model` (the embedded ONNX bytes) + the initializers of `params`
/// to `path`, atomically. Above kMaxInlineOnnxBytes, or with
/// `forceExternal`, the initializers' data go to `path`.data (written
/// first, 4 KiB-aligned) as ONNX external data. Returns whether they did.
bool exportOnnx(const std::string &path, const unsigned char *model,
                uint64_t modelSize, const std::vector<TensorView> &params,
                bool forceExternal = false);

} // namespace lmc::rt

#endif // LMC_RUNTIME_ONNX_EXPORT_H
