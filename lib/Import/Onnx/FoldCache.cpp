//===- FoldCache.cpp - Folds of constant nodes, computed once -------------===//

#include "FoldCache.h"

using namespace mlir;

namespace lmc::onnx_import {

std::optional<std::string>
FoldCache::keyOf(const onnx::NodeProto &node, int64_t opset,
                 function_ref<DenseElementsAttr(StringRef)> constantOf) {
  if (node.input_size() == 0)
    return std::nullopt;
  std::string key;
  auto append = [&](const void *bytes, size_t size) {
    key.append(static_cast<const char *>(bytes), size);
  };
  // Strings are length-prefixed, so no two different nodes share a key.
  auto appendString = [&](const std::string &text) {
    uint64_t size = text.size();
    append(&size, sizeof(size));
    key += text;
  };
  appendString(node.domain());
  appendString(node.op_type());
  append(&opset, sizeof(opset));
  uint64_t count = node.input_size();
  append(&count, sizeof(count));
  for (const std::string &input : node.input()) {
    const void *constant = nullptr; // an omitted optional input
    if (!input.empty()) {
      DenseElementsAttr value = constantOf(input);
      if (!value)
        return std::nullopt;
      constant = value.getAsOpaquePointer();
    }
    append(&constant, sizeof(constant));
  }
  count = node.output_size();
  append(&count, sizeof(count));
  for (const std::string &output : node.output())
    key += output.empty() ? '0' : '1';
  count = node.attribute_size();
  append(&count, sizeof(count));
  for (const onnx::AttributeProto &attribute : node.attribute())
    appendString(attribute.SerializeAsString());
  return key;
}

const FoldCache::Results *FoldCache::lookup(StringRef key) const {
  auto it = folds.find(key);
  return it == folds.end() ? nullptr : &it->second;
}

void FoldCache::insert(std::string key, Results results) {
  folds.try_emplace(key, std::move(results));
}

} // namespace lmc::onnx_import
