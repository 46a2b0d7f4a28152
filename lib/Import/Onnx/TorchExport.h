//===- TorchExport.h - what PyTorch's dynamo exporter records ---*- C++ -*-===//
//
// torch.onnx.export(..., dynamo=True) translates a torch.export program and
// keeps, on every ONNX node, the FX node it came from
// (`pkg.torch.onnx.fx_node` metadata). Its arguments name the program's
// placeholders: `%p_<path>` for parameters, `%b_<path>` for buffers and
// `%c_<path>` for lifted constants, the module path with its dots as
// underscores. That record tells lmc which initializers PyTorch trains —
// rather than guessing from names — and what the exporter's optimizer
// (optimize=True, the default) folded away.
//
//===----------------------------------------------------------------------===//

#ifndef LMC_LIB_IMPORT_ONNX_TORCHEXPORT_H
#define LMC_LIB_IMPORT_ONNX_TORCHEXPORT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"

#include "onnx/onnx_pb.h"

#include <optional>
#include <string>

namespace lmc::onnx_import {

/// The role PyTorch gives a float initializer of a torch.export-based
/// export.
enum class TorchRole {
  /// A parameter (`p_`): trained.
  Parameter,
  /// A buffer that a training-mode BatchNormalization updates (running
  /// statistics): carried from step to step, not trained.
  UpdatedBuffer,
  /// Anything else: a buffer nothing updates (RoPE's inv_freq), a lifted
  /// constant, the exporter's own scalars (`val_N`): a compile-time
  /// constant.
  Constant,
};

class TorchExportInfo {
public:
  /// Reads the FX records of `model`'s nodes.
  static TorchExportInfo analyze(const onnx::ModelProto &model);

  /// Whether the model carries FX records (a dynamo export).
  bool present() const { return hasRecords; }
  /// The role of float initializer `name`; meaningful when present().
  TorchRole roleOf(llvm::StringRef name) const;

  /// A parameter the FX program reads that no initializer holds: the
  /// exporter's optimizer folded it into a constant (a transposed weight,
  /// a BatchNorm fused into a convolution) or merged it with an equal one.
  struct LostParameter {
    std::string fxName;    // the placeholder's name, without `p_`
    std::string node;      // an ONNX node whose FX node reads it
    std::string rewrites;  // the optimizer's rules recorded there, if any
    std::string folded;    // the constant that node reads instead, if any
  };
  llvm::ArrayRef<LostParameter> lostParameters() const { return lost; }

private:
  bool hasRecords = false;
  llvm::StringSet<> parameters, buffers; // normalized placeholder paths
  llvm::StringSet<> runningStatistics;   // initializer names (BatchNorm)
  llvm::SmallVector<LostParameter> lost;
};

/// The FX record of `node` (`pkg.torch.onnx.fx_node`), or empty.
std::string torchFxNode(const onnx::NodeProto &node);

/// For a BatchNormalization of a dynamo export: whether PyTorch ran it in
/// training mode (the export drops the ONNX attribute), with its momentum
/// in PyTorch's convention (the weight of the batch statistic); nullopt
/// when the node has no such record.
struct TorchBatchNorm {
  bool training;
  double momentum;
};
std::optional<TorchBatchNorm> torchBatchNorm(const onnx::NodeProto &node);

/// For a Gather of a dynamo export that PyTorch ran as
/// `nn.Embedding(padding_idx=p)`: p, whose row receives no gradient (the
/// ONNX op cannot say so). nullopt without one.
std::optional<int64_t> torchEmbeddingPaddingIndex(const onnx::NodeProto &node);

/// For the node of a dynamo export that yields `aten.bernoulli.p(x, p)`
/// (its output is the FX node's value; dropout's and stochastic depth's
/// mask, then divided by p and multiplied in): p. nullopt otherwise.
std::optional<double> torchBernoulliResult(const onnx::NodeProto &node);

/// Whether the Gather's FX record asks for something lmc does not train
/// as PyTorch would (`scale_grad_by_freq`, `sparse`), by name; empty if not.
std::string torchEmbeddingUnsupported(const onnx::NodeProto &node);

} // namespace lmc::onnx_import

#endif // LMC_LIB_IMPORT_ONNX_TORCHEXPORT_H
