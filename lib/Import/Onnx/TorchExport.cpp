//===- TorchExport.cpp - what PyTorch's dynamo exporter records -----------===//

#include "TorchExport.h"

#include "llvm/ADT/StringExtras.h"

#include <google/protobuf/unknown_field_set.h>

using namespace llvm;

namespace lmc::onnx_import {

namespace {

constexpr StringLiteral kFxNodeKey = "pkg.torch.onnx.fx_node";
constexpr StringLiteral kRewriteKey = "pkg.onnxscript.rewriter.rule_name";

constexpr StringLiteral kSignatureKey =
    "pkg.torch.export.ExportedProgram.graph_signature";

/// NodeProto's and GraphProto's `metadata_props` (fields 9 and 16, ONNX
/// 1.16) are newer than the libonnx lmc builds against: protobuf keeps
/// them among the unknown fields.
constexpr int kNodeMetadataField = 9;
constexpr int kGraphMetadataField = 16;

template <typename Message>
std::string metadata(const Message &message, int fieldNumber, StringRef key) {
  const google::protobuf::UnknownFieldSet &unknown = message.unknown_fields();
  for (int i = 0; i < unknown.field_count(); ++i) {
    const google::protobuf::UnknownField &field = unknown.field(i);
    if (field.number() != fieldNumber ||
        field.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      continue;
    onnx::StringStringEntryProto entry;
    if (entry.ParseFromString(field.length_delimited()) && entry.key() == key)
      return entry.value();
  }
  return {};
}

std::string metadata(const onnx::NodeProto &node, StringRef key) {
  return metadata(node, kNodeMetadataField, key);
}

/// A module path as FX spells its placeholders: lower case, every
/// character but letters and digits an underscore (`m.model.LayerNorm.weight`
/// and `m_model_layernorm_weight` agree).
std::string normalized(StringRef path) {
  std::string out;
  out.reserve(path.size());
  for (char c : path)
    out.push_back(isAlnum(c) ? toLower(c) : '_');
  return out;
}

/// Calls `visit(kind, path)` for every `%p_`, `%b_`, `%c_` placeholder an
/// FX record names.
template <typename Visit>
void forEachPlaceholder(StringRef fx, Visit visit) {
  for (size_t at = fx.find('%'); at != StringRef::npos;
       at = fx.find('%', at + 1)) {
    StringRef rest = fx.drop_front(at + 1);
    if (rest.size() < 3 || rest[1] != '_' ||
        (rest[0] != 'p' && rest[0] != 'b' && rest[0] != 'c'))
      continue;
    StringRef path = rest.drop_front(2).take_while(
        [](char c) { return isAlnum(c) || c == '_'; });
    if (!path.empty())
      visit(rest[0], path);
  }
}

/// The top-level arguments of an FX record's `args = (...)`.
SmallVector<StringRef> fxArguments(StringRef fx) {
  SmallVector<StringRef> args;
  size_t start = fx.find("args = (");
  if (start == StringRef::npos)
    return args;
  StringRef rest = fx.drop_front(start + 8);
  int depth = 0;
  size_t begin = 0;
  for (size_t i = 0; i < rest.size(); ++i) {
    char c = rest[i];
    if (c == '(' || c == '[')
      ++depth;
    else if ((c == ')' || c == ']') && depth > 0)
      --depth;
    else if (c == ')' || (c == ',' && depth == 0)) {
      args.push_back(rest.slice(begin, i).trim());
      begin = i + 1;
      if (c == ')')
        break;
    }
  }
  return args;
}

} // namespace

std::string torchFxNode(const onnx::NodeProto &node) {
  return metadata(node, kFxNodeKey);
}

std::optional<TorchBatchNorm> torchBatchNorm(const onnx::NodeProto &node) {
  std::string fx = torchFxNode(node);
  SmallVector<StringRef> args = fxArguments(fx);
  auto number = [](StringRef text) -> std::optional<double> {
    double value;
    if (text.getAsDouble(value))
      return std::nullopt;
    return value;
  };
  // (input, weight, bias, running_mean, running_var, training, momentum,
  // eps)
  if (StringRef(fx).contains("aten._native_batch_norm_legit_functional.") &&
      args.size() == 8 && (args[5] == "True" || args[5] == "False"))
    if (std::optional<double> momentum = number(args[6]))
      return TorchBatchNorm{args[5] == "True", *momentum};
  // (input, weight, bias, running_mean, running_var, momentum, eps)
  if (StringRef(fx).contains("aten._native_batch_norm_legit_no_training.") &&
      args.size() == 7)
    if (std::optional<double> momentum = number(args[5]))
      return TorchBatchNorm{false, *momentum};
  return std::nullopt;
}

std::optional<double> torchBernoulliResult(const onnx::NodeProto &node) {
  std::string fx = torchFxNode(node);
  StringRef record(fx);
  if (!record.contains("aten.bernoulli.p") || !record.starts_with("%") ||
      node.output_size() == 0)
    return std::nullopt;
  // "%bernoulli : [num_users=1] = call_function[...](args = (%x, 0.8), ...)"
  StringRef value = record.drop_front(1).take_until([](char c) {
    return c == ' ';
  });
  SmallVector<StringRef> args = fxArguments(record);
  double p;
  if (value != node.output(0) || args.size() != 2 || args[1].getAsDouble(p))
    return std::nullopt;
  return p;
}

namespace {
/// The arguments of an `aten.embedding` FX record: (weight, indices[,
/// padding_idx[, scale_grad_by_freq[, sparse]]]); empty for other nodes.
SmallVector<StringRef> embeddingArguments(StringRef fx) {
  if (!fx.contains("aten.embedding.default"))
    return {};
  return fxArguments(fx);
}
} // namespace

std::optional<int64_t> torchEmbeddingPaddingIndex(const onnx::NodeProto &node) {
  std::string fx = torchFxNode(node);
  SmallVector<StringRef> args = embeddingArguments(fx);
  int64_t padding;
  if (args.size() < 3 || args[2].getAsInteger(10, padding) || padding < 0)
    return std::nullopt;
  return padding;
}

std::string torchEmbeddingUnsupported(const onnx::NodeProto &node) {
  std::string fx = torchFxNode(node);
  SmallVector<StringRef> args = embeddingArguments(fx);
  if (args.size() > 3 && args[3] == "True")
    return "scale_grad_by_freq";
  if (args.size() > 4 && args[4] == "True")
    return "sparse";
  return "";
}

TorchExportInfo TorchExportInfo::analyze(const onnx::ModelProto &model) {
  TorchExportInfo info;
  const onnx::GraphProto &graph = model.graph();
  StringSet<> initializers, floatInitializers;
  for (const onnx::TensorProto &init : graph.initializer()) {
    initializers.insert(normalized(init.name()));
    if (init.data_type() == onnx::TensorProto::FLOAT ||
        init.data_type() == onnx::TensorProto::DOUBLE)
      floatInitializers.insert(init.name());
  }
  // The program's signature lists every placeholder, also those no node
  // reads any more: `p_<path>: PARAMETER target='...'`, one a line (a tied
  // parameter once per alias, while the export holds one initializer: a
  // listed parameter without an initializer is not necessarily lost).
  StringSet<> placeholders; // normalized paths of p_, b_ and c_
  std::string signature = metadata(graph, kGraphMetadataField, kSignatureKey);
  SmallVector<StringRef> lines;
  StringRef(signature).split(lines, '\n');
  for (StringRef line : lines) {
    auto [name, kind] = line.trim().split(": ");
    if (name.size() < 3 || name[1] != '_')
      continue;
    std::string path = normalized(name.drop_front(2));
    if (kind.starts_with("PARAMETER") && name[0] == 'p')
      info.parameters.insert(path);
    else if (kind.starts_with("BUFFER") && name[0] == 'b')
      info.buffers.insert(path);
    else if (!kind.starts_with("CONSTANT_TENSOR") || name[0] != 'c')
      continue;
    placeholders.insert(path);
    info.hasRecords = true;
  }
  for (const onnx::NodeProto &node : graph.node())
    forEachPlaceholder(torchFxNode(node), [&](char, StringRef path) {
      placeholders.insert(normalized(path));
    });
  StringSet<> reported;
  auto lose = [&](StringRef path, std::string node, std::string rewrites,
                  StringRef folded) {
    if (reported.insert(normalized(path)).second)
      info.lost.push_back({path.str(), std::move(node), std::move(rewrites),
                           folded.str()});
  };
  for (int index = 0; index < graph.node_size(); ++index) {
    const onnx::NodeProto &node = graph.node(index);
    std::string fx = torchFxNode(node);
    if (fx.empty())
      continue;
    info.hasRecords = true;
    std::string nodeName = node.name().empty()
                               ? node.op_type() + "_" + std::to_string(index)
                               : node.name();
    // A float initializer the exporter made (no placeholder of the
    // program) read where the program read a parameter: that parameter,
    // folded (a transposed weight), is read as a constant.
    StringRef folded;
    for (const std::string &input : node.input())
      if (floatInitializers.contains(input) &&
          !placeholders.contains(normalized(input)))
        folded = input;
    forEachPlaceholder(fx, [&](char kind, StringRef path) {
      std::string name = normalized(path);
      if (kind == 'b')
        info.buffers.insert(name);
      if (kind != 'p')
        return;
      info.parameters.insert(name);
      if (!initializers.contains(name) || !folded.empty())
        lose(path, nodeName, metadata(node, kRewriteKey), folded);
    });
    std::optional<TorchBatchNorm> norm = torchBatchNorm(node);
    if (node.op_type() == "BatchNormalization" && norm && norm->training)
      for (int i : {3, 4})
        if (i < node.input_size())
          info.runningStatistics.insert(node.input(i));
  }

  return info;
}

TorchRole TorchExportInfo::roleOf(StringRef name) const {
  std::string path = normalized(name);
  if (parameters.contains(path))
    return TorchRole::Parameter;
  if (buffers.contains(path) && runningStatistics.contains(name))
    return TorchRole::UpdatedBuffer;
  return TorchRole::Constant;
}

} // namespace lmc::onnx_import
