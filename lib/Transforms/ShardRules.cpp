//===- ShardRules.cpp - the user's --shard rules --------------------------===//

#include "ShardRules.h"

using namespace mlir;

namespace lmc {
namespace {

FailureOr<ShardRule> parseRule(StringRef text, llvm::raw_ostream &error) {
  auto [pattern, axesText] = text.split('=');
  llvm::Expected<llvm::GlobPattern> glob = llvm::GlobPattern::create(pattern);
  if (!glob || axesText.empty() || pattern.empty()) {
    if (!glob)
      llvm::consumeError(glob.takeError());
    error << "--shard '" << text
          << "': expected GLOB=AXES, e.g. '*.fc1.weight=model,_'";
    return failure();
  }
  ShardRule rule{text.str(), std::move(*glob), {}, false};
  SmallVector<StringRef> dims;
  axesText.split(dims, ',');
  for (StringRef dim : dims) {
    dim = dim.trim();
    if (dim == "data") {
      error << "--shard '" << text
            << "': parameters are replicated over 'data' (data "
               "parallelism); split them over 'model'";
      return failure();
    }
    if (dim != "_" && dim != "model") {
      error << "--shard '" << text << "': '" << dim
            << "' is neither '_' nor 'model'";
      return failure();
    }
    rule.splitOverModel.push_back(dim == "model");
  }
  if (llvm::count(rule.splitOverModel, true) > 1) {
    error << "--shard '" << text << "' splits two dimensions over 'model'";
    return failure();
  }
  return rule;
}

} // namespace

FailureOr<SmallVector<ShardRule>> parseShardRules(StringRef spec,
                                                  llvm::raw_ostream &error) {
  SmallVector<ShardRule> rules;
  SmallVector<StringRef> texts;
  spec.split(texts, ';', -1, /*KeepEmpty=*/false);
  for (StringRef text : texts) {
    FailureOr<ShardRule> rule = parseRule(text, error);
    if (failed(rule))
      return failure();
    rules.push_back(std::move(*rule));
  }
  return rules;
}

} // namespace lmc
