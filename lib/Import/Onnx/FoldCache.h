//===- FoldCache.h - Folds of constant nodes, computed once ---------------===//
//
// A node whose inputs are all compile-time constants is folded by its
// handler (shape arithmetic, a causal mask's Slice / Equal). Exports repeat
// the same folds in every layer: GPT-2's attention slices and compares its
// [1, 1, 1024, 1024] mask in each of its 12 to 48 blocks, element by
// element, which made the import of a 24-layer model take 10 s. A fold is
// a function of the node's domain, op type, opset, attributes, input
// constants (uniqued attributes: equal values are the same pointer) and
// which outputs it has, so its results are reused for any node that agrees
// on all of these.
//
//===----------------------------------------------------------------------===//

#ifndef LMC_IMPORT_ONNX_FOLDCACHE_H
#define LMC_IMPORT_ONNX_FOLDCACHE_H

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include "onnx/onnx_pb.h"

#include <optional>
#include <string>

namespace lmc::onnx_import {

class FoldCache {
public:
  using Results = llvm::SmallVector<mlir::DenseElementsAttr>;

  /// What determines the fold of `node`, or std::nullopt when some input is
  /// not a compile-time constant (`constantOf` returns null for it) or the
  /// node has no inputs (a Constant, a random generator).
  static std::optional<std::string>
  keyOf(const onnx::NodeProto &node, int64_t opset,
        llvm::function_ref<mlir::DenseElementsAttr(llvm::StringRef)>
            constantOf);

  /// The results of an earlier node with `key`, one per output (null for an
  /// unnamed one), or null.
  const Results *lookup(llvm::StringRef key) const;
  void insert(std::string key, Results results);

private:
  llvm::StringMap<Results> folds;
};

} // namespace lmc::onnx_import

#endif // LMC_IMPORT_ONNX_FOLDCACHE_H
