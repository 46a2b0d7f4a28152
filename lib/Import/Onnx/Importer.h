//===- Importer.h - internals shared by the ONNX importer -------*- C++ -*-===//
//
// The graph driver (Onnx.cpp) walks the nodes and hands each one to an op
// handler through a NodeImporter, which gives typed access to the node's
// inputs, constant inputs and attributes and reports errors that name the
// node, its op type and the opset. Handlers are grouped by op family, one
// file each (Elementwise.cpp, Contractions.cpp, ...).
//
//===----------------------------------------------------------------------===//

#ifndef LMC_LIB_IMPORT_ONNXIMPORTER_H
#define LMC_LIB_IMPORT_ONNXIMPORTER_H

#include "lmc/Import/Onnx/Onnx.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"

#include "onnx/onnx_pb.h"

#include <memory>
#include <optional>
#include <vector>

namespace lmc::onnx_import {

/// A named value of the ONNX graph: an SSA value, a compile-time constant, or
/// both (a constant is materialized as `arith.constant` on its first use as a
/// value).
struct Binding {
  mlir::Value value;
  mlir::DenseElementsAttr constant;
  /// A sequence (SplitToSequence's result): its tensors, read only by
  /// SequenceAt; value and constant are null.
  std::shared_ptr<std::vector<Binding>> sequence;
};

class GraphImporter;

/// `--batch N` on a model exported with a fixed batch (no dynamic_axes):
/// the inputs' leading dimension `fixed` becomes `bound`, and so does the
/// leading entry of the constant shapes that carry it (Reshape, Expand).
struct BatchRebinding {
  std::string input; // the first input rebound, for messages
  int64_t fixed = 0;
  int64_t bound = 0;
};

/// One node as an op handler sees it.
class NodeImporter {
public:
  NodeImporter(GraphImporter &graph, const onnx::NodeProto &node,
               mlir::Location loc, llvm::StringRef name, int64_t opset);

  const onnx::NodeProto &node;
  mlir::OpBuilder &b;
  mlir::Location loc;
  std::string name;
  int64_t opset;

  /// An error at the node: "node 'name' (OpType, opset N): ...".
  mlir::InFlightDiagnostic error();

  /// Checks the number of inputs (trailing empty names count as absent) and
  /// that the node has exactly `numOutputs` outputs.
  mlir::LogicalResult checkArity(unsigned minInputs, unsigned maxInputs,
                                 unsigned numOutputs = 1);
  /// The node's outputs without trailing unnamed (unused) ones, at least 1.
  unsigned numOutputs() const;
  /// Rejects any attribute not in `allowed`.
  mlir::LogicalResult checkAttributes(llvm::ArrayRef<llvm::StringRef> allowed);

  /// Whether optional input `i` is present (exists and has a non-empty name).
  bool hasInput(unsigned i) const;
  /// Input `i` as an SSA value (constants are materialized).
  mlir::FailureOr<mlir::Value> input(unsigned i);
  /// The graph value named `valueName` (an attribute's reference, as
  /// Gradient's `xs` and `y`), materialized; an error mentioning `what`.
  mlir::FailureOr<mlir::Value> valueNamed(llvm::StringRef valueName,
                                          llvm::StringRef what);
  /// Input `i`, which must be a float tensor.
  mlir::FailureOr<mlir::Value> floatInput(unsigned i);
  /// Input `i`, which must be a float, int32 or int64 tensor (what lmc's
  /// arithmetic computes on at run time).
  mlir::FailureOr<mlir::Value> numericInput(unsigned i);
  /// Input `i`, which must be a float, bool, int32 or int64 tensor (what
  /// lmc's data movement ops take).
  mlir::FailureOr<mlir::Value> dataInput(unsigned i);
  /// The compile-time value of input `i`, or null when it is not known.
  mlir::DenseElementsAttr constantInput(unsigned i);
  /// The initial value of input `i` when it is a float initializer (an
  /// `lmc.param`), or null.
  mlir::DenseElementsAttr paramInitInput(unsigned i);
  /// constantInput, else paramInitInput: a value the op reads as fixed (a
  /// Pow exponent, a Clip bound, a pad value), not trained.
  mlir::DenseElementsAttr fixedInput(unsigned i);
  /// Makes input `i`, a float initializer, a buffer (non-trainable state
  /// carried across training steps and saved in checkpoints) whose value
  /// after a training step is `update`.
  mlir::LogicalResult carryBuffer(unsigned i, mlir::Value update);
  /// The training step's random key (an i64 scalar argument of @forward).
  mlir::Value rngKey();
  /// The static type of input `i` (its value or constant).
  mlir::FailureOr<mlir::RankedTensorType> inputType(unsigned i);
  /// Input `i` as a compile-time list of integers (rank 0 or 1); an error
  /// mentioning `what` when it is not a constant integer tensor.
  mlir::FailureOr<llvm::SmallVector<int64_t>> intsInput(unsigned i,
                                                        llvm::StringRef what);
  /// Under a BatchRebinding: `shape` (a constant target shape of an op on
  /// a tensor of `inputType`) with its leading entry rebound when it is the
  /// exported batch and the tensor's leading dimension is the new batch (or
  /// 1 when `broadcasts`: Expand's batch broadcast). Otherwise unchanged.
  void rebindBatch(llvm::SmallVectorImpl<int64_t> &shape,
                   mlir::RankedTensorType inputType, bool broadcasts = false);
  /// Under a BatchRebinding: Reshape's constant `target` for input 0, a
  /// tensor of `inputType`, rebound where the batch sits in it — at any
  /// position, possibly merged with its neighbours (the dynamo exporter's
  /// [B*H, T, d] views, torch.nn.MultiheadAttention's sequence-first
  /// [T, B, ...]). Only when the input is computed from a rebound input
  /// (GraphImporter::carriesBatch) and the target does not fit it as it
  /// is: its exported size was its size × fixed / bound, which resolves a
  /// -1 as the export did; the leftmost target entry that is a multiple of
  /// the fixed batch and starts or (scaled) ends where a run of the input's
  /// dimensions does is scaled by bound / fixed, unless it is the -1, which
  /// takes the new batch by itself. [fixed, ..., -1] on a [bound, ...]
  /// input rebinds its leading entry.
  void rebindReshapeTarget(llvm::SmallVectorImpl<int64_t> &target,
                           mlir::RankedTensorType inputType);
  /// Under a BatchRebinding: Gather's constant `indices` into input 0, a
  /// 1-D tensor of `dataType` computed from a rebound input (the dynamo
  /// exporter's as_strided over a flattened tensor: torchvision's pooling
  /// heads), rebound when they read the export's batch at a fixed stride —
  /// `fixed` leading rows, row b the first row + b × S, S the data's size
  /// ÷ bound — as `bound` such rows. Null when they do not.
  mlir::DenseElementsAttr rebindStridedIndices(mlir::DenseElementsAttr indices,
                                               mlir::RankedTensorType dataType);

  const onnx::AttributeProto *attr(llvm::StringRef attrName) const;
  /// The value of tensor attribute `a` (Constant's `value`); external data
  /// is read next to the model file, as initializers' is.
  mlir::FailureOr<mlir::DenseElementsAttr>
  tensorAttr(const onnx::AttributeProto &a);
  mlir::FailureOr<int64_t> intAttr(llvm::StringRef attrName, int64_t dflt);
  mlir::FailureOr<float> floatAttr(llvm::StringRef attrName, float dflt);
  mlir::FailureOr<std::string> stringAttr(llvm::StringRef attrName,
                                          llvm::StringRef dflt);
  /// std::nullopt when the attribute is absent.
  mlir::FailureOr<std::optional<llvm::SmallVector<int64_t>>>
  intsAttr(llvm::StringRef attrName);
  /// The `axes` of a reduction or (un)squeeze: constant input 1 when
  /// `asInput` (newer opsets), else the attribute; std::nullopt when absent.
  mlir::FailureOr<std::optional<llvm::SmallVector<int64_t>>>
  axes(bool asInput);

  /// Normalizes `axis` into [0, rank) (negative counts from the back).
  mlir::FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank,
                                         llvm::StringRef what = "axis");
  /// Normalizes, sorts and checks the uniqueness of a list of axes.
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  normalizeAxes(llvm::ArrayRef<int64_t> axes, int64_t rank);

  /// Input `i`, which must be a sequence.
  mlir::FailureOr<llvm::ArrayRef<Binding>> sequenceInput(unsigned i);

  /// Binds output `i` to a value / a compile-time constant / a sequence /
  /// another binding.
  mlir::LogicalResult setResult(mlir::Value value, unsigned i = 0);
  mlir::LogicalResult setSequenceResult(std::vector<Binding> elements,
                                        unsigned i = 0);
  mlir::LogicalResult setBindingResult(const Binding &binding, unsigned i = 0);
  mlir::LogicalResult setConstantResult(mlir::DenseElementsAttr value,
                                        unsigned i = 0);

private:
  mlir::FailureOr<Binding *> lookup(unsigned i);
  GraphImporter &graph;
};

using OpHandler = mlir::LogicalResult (*)(NodeImporter &);
using OpTable = llvm::StringMap<OpHandler>;

void registerActivationOps(OpTable &table);
void registerContractionOps(OpTable &table);
void registerConvolutionOps(OpTable &table);
void registerElementwiseOps(OpTable &table);
void registerLayoutOps(OpTable &table);
void registerLogicalOps(OpTable &table);
void registerLossOps(OpTable &table);
void registerIndexingOps(OpTable &table);
void registerNormalizationOps(OpTable &table);
void registerReductionOps(OpTable &table);
void registerResizeOps(OpTable &table);
void registerShapeOps(OpTable &table);
/// The optimizers of `ai.onnx.preview.training` (a table of their own).
void registerTrainingOps(OpTable &table);
constexpr llvm::StringLiteral kTrainingDomain = "ai.onnx.preview.training";

//===----------------------------------------------------------------------===//
// Tensors (Tensors.cpp)
//===----------------------------------------------------------------------===//

/// The MLIR element type of an ONNX TensorProto::DataType, or null when the
/// importer does not support it.
mlir::Type convertElementType(mlir::MLIRContext *context, int32_t dataType);
/// The ONNX name of a data type, for messages.
llvm::StringRef dataTypeName(int32_t dataType);

/// Converts a TensorProto (raw_data or the typed repeated fields) to a dense
/// attribute, checking dimensions and sizes. Errors go to `emitError()`.
/// External data (`data_location = EXTERNAL`) is read from a file inside
/// `externalDataDir` (see readExternalData); with an empty directory it is
/// rejected.
mlir::FailureOr<mlir::DenseElementsAttr>
convertTensor(mlir::MLIRContext *context, const onnx::TensorProto &tensor,
              llvm::function_ref<mlir::InFlightDiagnostic()> emitError,
              llvm::StringRef externalDataDir = "");

/// The bytes shape x dtype of a tensor needs (bool: one byte), or failure
/// for an unsupported data type, a negative dimension or an overflow.
mlir::FailureOr<int64_t> tensorByteSize(const onnx::TensorProto &tensor);

/// Where external tensor data of the model at `modelPath` is looked up:
/// the model file's directory ("." for a bare file name).
std::string externalDataDirOf(llvm::StringRef modelPath);
/// Reads the `expectedBytes` bytes of an external tensor: `location` must be
/// a relative path without `..` components, every directory on the way and
/// the file itself must not be symbolic links, the file must be a regular
/// file with a single hard link, and [offset, offset + length) must lie in
/// it. Opened with openat/O_NOFOLLOW from `baseDir` (the model's directory).
mlir::FailureOr<std::string>
readExternalData(const onnx::TensorProto &tensor, llvm::StringRef baseDir,
                 int64_t expectedBytes,
                 llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// Parses the model file at `path` (a regular file within protobuf's 2 GiB
/// limit): a binary one as it is read, the text syntax when `isText`.
/// Errors are emitted at `path`.
bool parseModelFile(mlir::MLIRContext &context, llvm::StringRef path,
                    bool isText, onnx::ModelProto &model);

/// Parses a binary ModelProto (with kOnnxRecursionLimit) or, when `isText`,
/// the ONNX text syntax. Errors are emitted at `path`.
bool parseModel(mlir::MLIRContext &context, llvm::StringRef bytes,
                llvm::StringRef path, bool isText, onnx::ModelProto &model);

/// Number of elements of a static shape, or failure on overflow.
mlir::FailureOr<int64_t> checkedNumElements(llvm::ArrayRef<int64_t> shape);

/// The elements of an integer constant as int64.
llvm::SmallVector<int64_t> intValues(mlir::DenseElementsAttr attr);
/// The elements of a float, integer or boolean constant as doubles.
llvm::SmallVector<double> doubleValues(mlir::DenseElementsAttr attr);
/// A constant of `type` (float, integer or boolean elements) from doubles
/// (integers truncate toward zero, booleans test != 0).
mlir::DenseElementsAttr constantFromDoubles(mlir::RankedTensorType type,
                                            llvm::ArrayRef<double> values);

/// The index into a tensor of `inShape` that numpy broadcasting reads for the
/// row-major `linear` index of a tensor of `outShape`.
int64_t broadcastSource(int64_t linear, llvm::ArrayRef<int64_t> outShape,
                        llvm::ArrayRef<int64_t> inShape);
/// Row-major index conversions.
llvm::SmallVector<int64_t> delinearize(int64_t linear,
                                       llvm::ArrayRef<int64_t> shape);
int64_t linearize(llvm::ArrayRef<int64_t> index,
                  llvm::ArrayRef<int64_t> shape);
/// Whether data movement on constant `c` (null: not a constant) is folded
/// into a constant of `resultType`: a splat, or not too large.
bool foldable(mlir::DenseElementsAttr c, mlir::RankedTensorType resultType);
/// A constant of `type` (same element type as `source`) whose element i is
/// `source`'s element sourceIndex(i): folds data movement on constants.
mlir::DenseElementsAttr
remapConstant(mlir::DenseElementsAttr source, mlir::RankedTensorType type,
              llvm::function_ref<int64_t(int64_t)> sourceIndex);

/// A transpose to `perm`, or `v` itself for the identity.
mlir::Value buildPermute(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                         llvm::ArrayRef<int64_t> perm);
/// The permutation that moves `axis` of a rank-`rank` tensor last and keeps
/// the other dimensions in order.
llvm::SmallVector<int64_t> axisLastPermutation(int64_t rank, int64_t axis);
/// offset, offset + 1, ... along dimension `axis` of `type`, broadcast to
/// its shape (its element type).
mlir::Value buildIota(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::RankedTensorType type, int64_t axis,
                      int64_t offset = 0);
/// Where `indices` (already broadcast) equal the position along `axis`, a
/// negative index counting from that dimension's end (OneHot,
/// GatherElements).
mlir::Value buildIndexHits(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value indices, int64_t axis);

/// Constants larger than this are not folded (a larger folded result of shape
/// arithmetic means a malformed model).
constexpr int64_t kMaxFoldedElements = 1 << 20;

/// `value`, built by a node's handler from compile-time constants,
/// evaluated as the compiled code would (float arithmetic, comparisons,
/// selects, broadcasts, conversions: ConstantEvaluation.cpp); null where
/// it holds another op or more than `maxElements` elements.
mlir::DenseElementsAttr evaluateConstant(mlir::Value value,
                                         int64_t maxElements);
/// The largest float result evaluated at import (index arithmetic, not
/// tensors of data).
constexpr int64_t kMaxEvaluatedElements = 1 << 16;

} // namespace lmc::onnx_import

namespace lmc {

struct OnnxExportSource::State {
  std::string path;
  onnx::ModelProto model;
  /// The float initializers whose values the import moved out of `model`
  /// (into these attributes).
  llvm::StringMap<mlir::DenseElementsAttr> movedValues;
};

} // namespace lmc

#endif // LMC_LIB_IMPORT_ONNXIMPORTER_H
