//===- Onnx.cpp - ONNX model importer: files, graph, signature ------------===//
//
// Reads a binary or textual ONNX model and builds `func.func @forward`:
// float initializers become `lmc.param` arguments, the remaining graph inputs
// `lmc.input` arguments, the graph outputs `lmc.output` results. Nodes are
// imported in order by the handlers registered in OpTable.
//
//===----------------------------------------------------------------------===//

#include "lmc/Import/Onnx/Onnx.h"
#include "FoldCache.h"
#include "Importer.h"
#include "TorchExport.h"

#include "lmc/Dialect/Lmc/IR/LmcBuilders.h"
#include "lmc/Dialect/Lmc/IR/LmcDialect.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"
#include "lmc/Support/Bytes.h"
#include "lmc/Dialect/Lmc/IR/LmcAttributes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Location.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include "onnx/defs/parser.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <cstring>
#include <limits>

using namespace mlir;

namespace lmc::onnx_import {

//===----------------------------------------------------------------------===//
// GraphImporter
//===----------------------------------------------------------------------===//

class GraphImporter {
public:
  /// Float initializers' values move out of `model` into `lmc.init`
  /// attributes (recorded in `kept` when given).
  GraphImporter(MLIRContext &context, StringRef path,
                const OnnxImportOptions &options, onnx::ModelProto &model,
                OnnxExportSource::State *kept = nullptr)
      : context(context), path(path.str()), options(options), model(model),
        builder(&context), kept(kept) {}

  OwningOpRef<ModuleOp> run();

  Location fileLoc() { return FileLineColLoc::get(&context, path, 0, 0); }
  /// External data is looked up next to the model file.
  std::string externalDataDir() const {
    return onnx_import::externalDataDirOf(path);
  }
  InFlightDiagnostic error() { return emitError(fileLoc()); }

  /// Binds `name` (a node or graph output); an error if already bound.
  LogicalResult define(NodeImporter &node, StringRef name, Binding binding);
  FailureOr<Binding *> lookup(NodeImporter &node, StringRef name);
  DenseElementsAttr lookupParamInit(StringRef name) {
    for (auto &param : params)
      if (param.first == name)
        return param.second;
    return nullptr;
  }
  /// The binding of `name`, or null.
  Binding *findBinding(StringRef name) {
    auto it = symbols.find(name);
    return it == symbols.end() ? nullptr : &it->second;
  }
  DenseElementsAttr lookupConstant(StringRef name) {
    auto it = symbols.find(name);
    return it == symbols.end() ? nullptr : it->second.constant;
  }
  /// The binding's SSA value, materializing a constant on first use.
  Value materialize(Binding &binding, Location loc);
  /// Turns the float initializer `name` from a parameter into a buffer whose
  /// value after a training step is `update`.
  LogicalResult carryBuffer(NodeImporter &node, StringRef name, Value update);
  /// The forward's random key argument, added on first use.
  Value rngKey();
  /// Under a BatchRebinding: whether `value` is computed from an input
  /// whose batch was rebound (its sizes then differ from the export's).
  bool carriesBatch(Value value);
  /// Rebinds `name`, the mask of a dynamo export's `aten.bernoulli.p`
  /// (dropout, stochastic depth: `x * mask / p`), to its expectation `p`
  /// in an evaluation step (lmc.mode_select): there `x * p / p` is `x`,
  /// what PyTorch's eval mode computes.
  void evaluateAtExpectation(StringRef name, double p, Location loc);

  MLIRContext &context;
  std::string path;
  const OnnxImportOptions &options;
  onnx::ModelProto &model;
  OpBuilder builder;
  OnnxExportSource::State *kept;
  /// Set when --batch rebinds a fixed exported batch (findFixedBatch).
  std::optional<BatchRebinding> rebinding;
  /// The inputs whose leading size was rebound, and carriesBatch's answers.
  llvm::StringSet<> reboundInputs;
  llvm::DenseMap<Value, bool> carriesBatchMemo;
  /// The first node that losesBatch (name, op type), for the message.
  std::optional<std::pair<std::string, std::string>> batchLostAt;

private:
  LogicalResult checkParamBudget();
  /// A dynamo export whose optimizer folded parameters away is refused.
  LogicalResult checkTorchExport();
  LogicalResult importInitializers();
  /// Frees the bytes of float initializer `init` once `value` holds them.
  void releaseValue(onnx::TensorProto &init, DenseElementsAttr value);
  LogicalResult importInputs();
  FailureOr<RankedTensorType> convertInputType(const onnx::ValueInfoProto &);
  LogicalResult importNodes();
  /// After `node`'s handler: its results under `key` when it folded.
  void rememberFold(const onnx::NodeProto &node, std::string key);
  LogicalResult importOutputs(func::FuncOp func);
  /// --batch on an export whose every input has a fixed leading size:
  /// the first input's is the batch (BatchRebinding), rebound to --batch.
  void findFixedBatch();
  /// After a node failed under a rebinding: whether one of its inputs still
  /// has the exported batch as its leading size, and what to do about it.
  bool readsFixedBatch(const onnx::NodeProto &node);
  /// After `node` imported: when its inputs are all constants, its results
  /// that its handler built as ops are evaluated (evaluateConstant) and
  /// bound as constants, the ops erased.
  void evaluateBuiltResults(const onnx::NodeProto &node);
  /// After `node` imported under a rebinding: whether it reads a tensor
  /// computed from a rebound input and its result starts with the export's
  /// batch (a constant of the export's batch read at run time, such as a
  /// gather's indices) — the suspect the graph's output check names.
  bool losesBatch(const onnx::NodeProto &node);
  void explainRebinding(StringRef node, StringRef opType);

  int64_t opset = 0;         // of the default domain; 0: not imported
  int64_t trainingOpset = 0; // of ai.onnx.preview.training
  llvm::StringMap<Binding> symbols;
  SmallVector<Type> argTypes;
  SmallVector<NamedAttrList> argAttrs;
  SmallVector<std::pair<std::string, DenseElementsAttr>> params;
  /// Buffers and their values after a training step, in update order.
  SmallVector<std::pair<std::string, Value>> bufferUpdates;
  func::FuncOp forward;
  Value randomKey; // rngKey(), once added
  OpTable ops;
  OpTable trainingOps; // ai.onnx.preview.training
  FoldCache folds;
  TorchExportInfo torchExport;
};

LogicalResult GraphImporter::define(NodeImporter &node, StringRef name,
                                    Binding binding) {
  if (name.empty())
    return success(); // an omitted optional output
  auto [it, inserted] = symbols.try_emplace(name, binding);
  if (!inserted)
    return node.error() << "output '" << name
                        << "' is already defined (values must have a single "
                           "producer)";
  return success();
}

FailureOr<Binding *> GraphImporter::lookup(NodeImporter &node,
                                           StringRef name) {
  auto it = symbols.find(name);
  if (it == symbols.end())
    return node.error() << "uses undefined value '" << name
                        << "' (nodes must be in topological order)";
  return &it->second;
}

LogicalResult GraphImporter::carryBuffer(NodeImporter &node, StringRef name,
                                         Value update) {
  // Parameters are the first arguments, in `params` order.
  auto it = llvm::find_if(params, [&](auto &param) { return param.first == name; });
  if (it == params.end())
    return node.error() << "'" << name << "' is not a float initializer";
  for (auto &[buffer, value] : bufferUpdates)
    if (buffer == name)
      return node.error() << "buffer '" << name
                          << "' is already updated by another node";
  unsigned index = it - params.begin();
  forward.removeArgAttr(index, attrs::kParam);
  forward.setArgAttr(index, attrs::kBuffer, builder.getStringAttr(name));
  bufferUpdates.emplace_back(name.str(), update);
  return success();
}

Value GraphImporter::rngKey() {
  if (randomKey)
    return randomKey;
  unsigned index = forward.getNumArguments();
  if (failed(forward.insertArgument(
          index, RankedTensorType::get({}, builder.getI64Type()),
          builder.getDictionaryAttr(
              builder.getNamedAttr(attrs::kRngKey, builder.getUnitAttr())),
          fileLoc())))
    return Value();
  randomKey = forward.getArgument(index);
  return randomKey;
}

void GraphImporter::evaluateAtExpectation(StringRef name, double p,
                                          Location loc) {
  Binding &binding = symbols.find(name)->second;
  Value mask = materialize(binding, loc);
  if (!mask || !isa<FloatType>(
                   cast<RankedTensorType>(mask.getType()).getElementType()))
    return;
  Value expected = buildSplatLike(builder, loc, mask, p);
  binding = Binding{ModeSelectOp::create(builder, loc, mask, expected),
                    nullptr};
}

Value GraphImporter::materialize(Binding &binding, Location loc) {
  if (!binding.value)
    binding.value =
        arith::ConstantOp::create(builder, loc, binding.constant).getResult();
  return binding.value;
}

LogicalResult GraphImporter::checkParamBudget() {
  // Declared sizes only: nothing is converted or read before this check.
  if (options.maxParamBytes == 0)
    return success();
  uint64_t total = 0;
  for (const onnx::TensorProto &init : model.graph().initializer()) {
    if (init.data_type() != onnx::TensorProto::FLOAT &&
        init.data_type() != onnx::TensorProto::DOUBLE)
      continue;
    FailureOr<int64_t> bytes = tensorByteSize(init);
    if (failed(bytes))
      continue; // reported by convertTensor with the initializer's name
    std::optional<uint64_t> sum =
        llvm::checkedAddUnsigned(total, static_cast<uint64_t>(*bytes));
    if (!sum)
      return error() << "the model's parameters need more than 2^64 bytes, "
                        "more than the budget of "
                     << describeBytes(options.maxParamBytes);
    total = *sum;
  }
  if (total <= options.maxParamBytes)
    return success();
  return error() << "the model's parameters need " << describeBytes(total)
                 << ", more than the budget of "
                 << describeBytes(options.maxParamBytes)
                 << "; raise it with --max-param-bytes";
}

LogicalResult GraphImporter::checkTorchExport() {
  ArrayRef<TorchExportInfo::LostParameter> lost = torchExport.lostParameters();
  if (lost.empty())
    return success();
  InFlightDiagnostic diag = error();
  diag << "the export lost " << lost.size()
       << " of the model's parameters: the exporter's optimizer folded them "
          "into constants or merged equal ones (";
  for (auto [i, param] : llvm::enumerate(lost.take_front(3))) {
    diag << (i ? ", " : "") << "'" << param.fxName << "' read by node '"
         << param.node << "'";
    if (!param.folded.empty())
      diag << " as the constant '" << param.folded << "'";
  }
  if (lost.size() > 3)
    diag << ", and " << lost.size() - 3 << " more";
  // The optimizer's rewrite rules recorded on the nodes that read them,
  // each once.
  llvm::SetVector<StringRef> rules;
  for (const TorchExportInfo::LostParameter &param : lost) {
    SmallVector<StringRef> names;
    StringRef(param.rewrites).split(names, ',', -1, /*KeepEmpty=*/false);
    for (StringRef name : names)
      rules.insert(name.trim());
  }
  if (!rules.empty())
    diag << "; rewritten by " << llvm::join(rules, ", ");
  return diag << "), so lmc would train another model; export with "
                 "torch.onnx.export(..., dynamo=True, optimize=False)";
}

void GraphImporter::releaseValue(onnx::TensorProto &init,
                                 DenseElementsAttr value) {
  // f32 values only: those of other types were converted, and the kept
  // model must give them back as they were.
  bool external = init.data_location() == onnx::TensorProto::EXTERNAL ||
                  init.external_data_size() > 0;
  if (init.data_type() != onnx::TensorProto::FLOAT || external)
    return;
  init.clear_raw_data();
  init.clear_float_data();
  if (kept)
    kept->movedValues[init.name()] = value;
}

LogicalResult GraphImporter::importInitializers() {
  if (failed(checkParamBudget()))
    return failure();
  std::string modelDir = externalDataDir();
  for (onnx::TensorProto &init : *model.mutable_graph()->mutable_initializer()) {
    const std::string &name = init.name();
    if (name.empty())
      return error() << "initializer without a name";
    if (symbols.count(name))
      return error() << "initializer '" << name << "' is defined twice";
    FailureOr<DenseElementsAttr> value = convertTensor(
        &context, init,
        [&] { return error() << "initializer '" << name << "': "; },
        modelDir);
    if (failed(value))
      return failure();
    auto type = cast<RankedTensorType>(value->getType());
    // Shape tensors, axes, indices, and in a dynamo export every float
    // tensor PyTorch does not train or update: compile-time constants.
    if (!isa<FloatType>(type.getElementType()) ||
        (torchExport.present() &&
         torchExport.roleOf(name) == TorchRole::Constant)) {
      symbols[name] = Binding{Value(), *value};
      continue;
    }
    releaseValue(init, *value);
    NamedAttrList attrs;
    attrs.set(attrs::kParam, builder.getStringAttr(name));
    attrs.set(attrs::kInit, *value);
    argTypes.push_back(type);
    argAttrs.push_back(attrs);
    params.emplace_back(name, *value);
    symbols[name] = Binding(); // bound to the block argument below
  }
  return success();
}

FailureOr<RankedTensorType>
GraphImporter::convertInputType(const onnx::ValueInfoProto &info) {
  const std::string &name = info.name();
  if (!info.has_type() || !info.type().has_tensor_type())
    return error() << "input '" << name << "' is not a tensor";
  const onnx::TypeProto::Tensor &tensor = info.type().tensor_type();
  Type elementType = convertElementType(&context, tensor.elem_type());
  if (!elementType)
    return error() << "input '" << name << "' has unsupported data type "
                   << dataTypeName(tensor.elem_type());
  if (!tensor.has_shape())
    return error() << "input '" << name
                   << "' has an unknown rank; the importer needs static shapes";
  SmallVector<int64_t> shape;
  for (auto [index, dim] : llvm::enumerate(tensor.shape().dim())) {
    if (dim.has_dim_value()) {
      if (dim.dim_value() < 0)
        return error() << "input '" << name << "' has negative dimension "
                       << dim.dim_value();
      int64_t size = dim.dim_value();
      if (index == 0 && rebinding && size == rebinding->fixed) {
        size = rebinding->bound; // findFixedBatch
        reboundInputs.insert(name);
      }
      shape.push_back(size);
      continue;
    }
    // Every symbolic dimension, and an unknown first dimension, is the batch.
    bool symbolic = dim.has_dim_param() && !dim.dim_param().empty();
    if (!symbolic && index != 0)
      return error() << "input '" << name << "' has an unknown dimension "
                     << index << " that is not the batch dimension";
    if (options.batch <= 0) {
      if (symbolic)
        return error() << "input '" << name << "' has a symbolic dimension '"
                       << dim.dim_param() << "'; pass --batch N";
      return error() << "input '" << name
                     << "' has an unknown first dimension; pass --batch N";
    }
    shape.push_back(options.batch);
  }
  if (failed(checkedNumElements(shape)))
    return error() << "input '" << name << "' has too many elements";
  return RankedTensorType::get(shape, elementType);
}

void GraphImporter::findFixedBatch() {
  if (!options.rebindFixedBatch || options.batch <= 0)
    return;
  const onnx::ValueInfoProto *first = nullptr;
  for (const onnx::ValueInfoProto &info : model.graph().input()) {
    if (symbols.count(info.name())) // an initializer listed as an input
      continue;
    if (!info.type().tensor_type().has_shape())
      return;
    const onnx::TensorShapeProto &shape = info.type().tensor_type().shape();
    // A symbolic or unknown leading dimension: --batch binds that one.
    if (shape.dim_size() > 0 && !shape.dim(0).has_dim_value())
      return;
    if (!first)
      first = &info;
  }
  if (!first || first->type().tensor_type().shape().dim_size() == 0)
    return;
  int64_t fixed = first->type().tensor_type().shape().dim(0).dim_value();
  if (fixed > 0 && fixed != options.batch)
    rebinding = BatchRebinding{first->name(), fixed, options.batch};
}

LogicalResult GraphImporter::importInputs() {
  findFixedBatch();
  llvm::StringSet<> seen;
  for (const onnx::ValueInfoProto &info : model.graph().input()) {
    const std::string &name = info.name();
    if (name.empty())
      return error() << "graph input without a name";
    if (!seen.insert(name).second)
      return error() << "graph input '" << name << "' is listed twice";
    // Older exporters also list initializers as inputs; they stay params.
    if (symbols.count(name))
      continue;
    FailureOr<RankedTensorType> type = convertInputType(info);
    if (failed(type))
      return failure();
    NamedAttrList attrs;
    attrs.set(attrs::kInput, builder.getStringAttr(name));
    argTypes.push_back(*type);
    argAttrs.push_back(attrs);
    symbols[name] = Binding();
  }
  return success();
}

LogicalResult GraphImporter::importNodes() {
  for (auto [index, node] : llvm::enumerate(model.graph().node())) {
    std::string name = node.name();
    if (name.empty())
      name = node.op_type() + "_" + std::to_string(index);
    Location loc = NameLoc::get(builder.getStringAttr(name), fileLoc());
    NodeImporter importer(*this, node, loc, name, opset);
    const bool training = node.domain() == kTrainingDomain;
    if (!node.domain().empty() && node.domain() != "ai.onnx" && !training)
      return importer.error() << "unsupported op domain '" << node.domain()
                              << "'";
    if (training ? trainingOpset != 1 : opset == 0)
      return importer.error()
             << "the model imports no opset of the node's domain"
             << (training ? " (ai.onnx.preview.training version 1)" : "");
    const OpTable &table = training ? trainingOps : ops;
    auto it = table.find(node.op_type());
    if (it == table.end())
      return importer.error() << "unsupported op";
    if (node.output_size() == 0)
      return importer.error() << "node has no outputs";
    std::optional<std::string> foldKey = FoldCache::keyOf(
        node, training ? trainingOpset : opset,
        [&](StringRef input) { return lookupConstant(input); });
    if (foldKey)
      if (const FoldCache::Results *folded = folds.lookup(*foldKey)) {
        for (auto [output, value] : llvm::zip(node.output(), *folded))
          if (failed(define(importer, output, Binding{Value(), value})))
            return failure();
        continue;
      }
    if (failed(it->second(importer))) {
      if (rebinding && readsFixedBatch(node))
        explainRebinding(name, node.op_type());
      return failure();
    }
    if (rebinding && !batchLostAt && losesBatch(node))
      batchLostAt = {name, node.op_type()};
    evaluateBuiltResults(node);
    if (std::optional<double> p = torchBernoulliResult(node))
      evaluateAtExpectation(node.output(0), *p, loc);
    if (foldKey)
      rememberFold(node, std::move(*foldKey));
  }
  return success();
}

void GraphImporter::rememberFold(const onnx::NodeProto &node,
                                 std::string key) {
  FoldCache::Results results;
  for (const std::string &output : node.output()) {
    if (output.empty()) {
      results.push_back(nullptr);
      continue;
    }
    DenseElementsAttr value = lookupConstant(output);
    if (!value)
      return; // the handler built a value: not a fold
    results.push_back(value);
  }
  folds.insert(std::move(key), std::move(results));
}

void GraphImporter::evaluateBuiltResults(const onnx::NodeProto &node) {
  for (const std::string &input : node.input()) {
    Binding *binding = input.empty() ? nullptr : findBinding(input);
    if (!input.empty() && (!binding || !binding->constant))
      return;
  }
  for (const std::string &output : node.output()) {
    Binding *binding = output.empty() ? nullptr : findBinding(output);
    if (!binding || !binding->value || binding->constant)
      continue;
    DenseElementsAttr value =
        evaluateConstant(binding->value, kMaxEvaluatedElements);
    if (!value)
      continue;
    Operation *built = binding->value.getDefiningOp();
    *binding = Binding{Value(), value};
    // The node's own ops; the constants they read may be bound to other
    // names, and stay for canonicalization to drop.
    SmallVector<Operation *> dead{built};
    llvm::SmallPtrSet<Operation *, 8> erased; // an op may be queued twice
    while (!dead.empty()) {
      Operation *op = dead.pop_back_val();
      if (!op || erased.contains(op) || isa<arith::ConstantOp>(op) ||
          !isOpTriviallyDead(op))
        continue;
      for (Value operand : op->getOperands())
        dead.push_back(operand.getDefiningOp());
      // A later op may be allocated where this one was: no stale answer.
      for (Value result : op->getResults())
        carriesBatchMemo.erase(result);
      erased.insert(op);
      op->erase();
    }
  }
}

bool GraphImporter::readsFixedBatch(const onnx::NodeProto &node) {
  for (const std::string &input : node.input()) {
    Binding *binding = findBinding(input);
    if (!binding)
      continue;
    Type type = binding->value ? binding->value.getType()
                : binding->constant ? binding->constant.getType()
                                    : Type();
    auto ranked = dyn_cast_or_null<RankedTensorType>(type);
    if (ranked && ranked.getRank() > 0 &&
        ranked.getDimSize(0) == rebinding->fixed)
      return true;
  }
  return false;
}

bool GraphImporter::carriesBatch(Value value) {
  // Iteratively over the operands (a deep model's chain would overflow a
  // recursion), each value decided once.
  SmallVector<Value> stack{value};
  while (!stack.empty()) {
    Value top = stack.back();
    if (carriesBatchMemo.count(top)) {
      stack.pop_back();
      continue;
    }
    if (auto arg = dyn_cast<BlockArgument>(top)) {
      auto name = forward.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                       attrs::kInput);
      carriesBatchMemo[top] = name && reboundInputs.contains(name.getValue());
      stack.pop_back();
      continue;
    }
    Operation *op = top.getDefiningOp();
    bool pending = false, carries = false;
    for (Value operand : op->getOperands()) {
      auto known = carriesBatchMemo.find(operand);
      if (known == carriesBatchMemo.end()) {
        stack.push_back(operand);
        pending = true;
      } else {
        carries |= known->second;
      }
    }
    if (!pending) {
      carriesBatchMemo[top] = carries;
      stack.pop_back();
    }
  }
  return carriesBatchMemo.lookup(value);
}

bool GraphImporter::losesBatch(const onnx::NodeProto &node) {
  auto leading = [&](const std::string &name) -> int64_t {
    Binding *binding = findBinding(name);
    if (!binding || !binding->value)
      return -1;
    auto type = dyn_cast<RankedTensorType>(binding->value.getType());
    return type && type.getRank() > 0 ? type.getDimSize(0) : -1;
  };
  if (rebinding->fixed == rebinding->bound)
    return false;
  bool readsBatch = llvm::any_of(node.input(), [&](const std::string &in) {
    Binding *binding = findBinding(in);
    return binding && binding->value && carriesBatch(binding->value);
  });
  return readsBatch && llvm::any_of(node.output(), [&](const std::string &out) {
           return leading(out) == rebinding->fixed;
         });
}

void GraphImporter::explainRebinding(StringRef node, StringRef opType) {
  InFlightDiagnostic diag = error();
  diag << "input '" << rebinding->input << "' was exported with a fixed "
       << "batch of " << rebinding->fixed << " and --batch "
       << rebinding->bound << " rebinds it, but ";
  if (node.empty())
    diag << "a node";
  else
    diag << "node '" << node << "' (" << opType << ")";
  diag << " pins the batch at " << rebinding->fixed
          << ": export with "
          << (torchExport.present()
                  ? "dynamic_shapes=({0: torch.export.Dim('batch')},) "
                    "(torch.onnx.export(..., dynamo=True))"
                  : "dynamic_axes={'" + rebinding->input +
                        "': {0: 'batch'}} (torch.onnx.export)")
          << " to train at another batch, or compile with --batch "
          << rebinding->fixed;
}

LogicalResult GraphImporter::importOutputs(func::FuncOp func) {
  const onnx::GraphProto &graph = model.graph();
  if (graph.output_size() == 0)
    return error() << "graph has no outputs";
  SmallVector<Value> results;
  llvm::StringSet<> seen;
  for (const onnx::ValueInfoProto &info : graph.output()) {
    const std::string &name = info.name();
    if (name.empty())
      return error() << "graph output without a name";
    if (!seen.insert(name).second)
      return error() << "graph output '" << name << "' is listed twice";
    auto it = symbols.find(name);
    if (it == symbols.end())
      return error() << "graph output '" << name << "' is never defined";
    if (it->second.sequence)
      return error() << "graph output '" << name
                     << "' is a sequence; outputs must be tensors";
    Value value = materialize(it->second, fileLoc());
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getNumElements() == 0)
      return error() << "graph output '" << name << "' is " << type
                     << ", which has no elements; empty tensors are not "
                        "supported at the model's boundary";
    // Cross-check what the model declares (symbolic dims match anything).
    if (info.has_type() && info.type().has_tensor_type()) {
      const onnx::TypeProto::Tensor &declared = info.type().tensor_type();
      Type declaredElement =
          convertElementType(&context, declared.elem_type());
      if (declared.elem_type() != onnx::TensorProto::UNDEFINED &&
          declaredElement != type.getElementType())
        return error() << "graph output '" << name << "' is declared "
                       << dataTypeName(declared.elem_type())
                       << " but computes " << type;
      if (declared.has_shape()) {
        bool matches = declared.shape().dim_size() == type.getRank();
        // Under a rebinding, an output computed from a rebound input has
        // one declared size that held the export's batch, alone or merged
        // with others (a sequence-first or [B*H, ...] output): there the
        // computed size is the declared ÷ fixed × bound — and where the
        // declared shape starts with the export's batch, it must be there.
        const bool carries = rebinding && carriesBatch(value);
        bool rebound = false;
        for (int i = 0; matches && i < declared.shape().dim_size(); ++i) {
          const auto &dim = declared.shape().dim(i);
          int64_t expected = dim.dim_value(), computed = type.getDimSize(i);
          if (!dim.has_dim_value() || expected == computed)
            continue;
          matches = carries && !rebound && expected % rebinding->fixed == 0 &&
                    expected / rebinding->fixed * rebinding->bound == computed;
          rebound = true;
        }
        if (matches && carries && !rebound && type.getRank() > 0 &&
            declared.shape().dim(0).dim_value() == rebinding->fixed)
          matches = false;
        if (!matches) {
          error() << "graph output '" << name
                  << "' has a declared shape that does not match the "
                     "computed "
                  << type;
          if (carries)
            explainRebinding(batchLostAt ? batchLostAt->first : "",
                             batchLostAt ? batchLostAt->second : "");
          return failure();
        }
      }
    }
    results.push_back(value);
  }
  // Checked only now: an empty input that is bound to a constant or never
  // used does not reach the compiled function.
  for (auto [type, attrs] : llvm::zip(argTypes, argAttrs))
    if (auto input = dyn_cast_or_null<StringAttr>(attrs.get(attrs::kInput));
        input && cast<RankedTensorType>(type).getNumElements() == 0)
      return error() << "input '" << input.getValue() << "' is " << type
                     << ", which has no elements; empty tensors are not "
                        "supported at the model's boundary";
  // Buffer results follow the buffer arguments' order (the contract of
  // @forward), not the order the nodes updated them in: a ResNet block
  // updates its shortcut's statistics before those of its first layer.
  auto argumentIndex = [&](StringRef name) {
    return llvm::find_if(params, [&](auto &p) { return p.first == name; }) -
           params.begin();
  };
  llvm::stable_sort(bufferUpdates, [&](auto &a, auto &b) {
    return argumentIndex(a.first) < argumentIndex(b.first);
  });
  for (auto &update : bufferUpdates)
    results.push_back(update.second);
  func::ReturnOp::create(builder, fileLoc(), results);
  // Nodes no output needs (an exporter's leftovers, a Div whose Erf reads a
  // product instead) go: lmc-rematerialize takes every reader of a forward
  // value outside the forward for the backward pass, and would recompute
  // values in front of such a node, before their operands.
  SmallVector<Operation *> last;
  for (Operation &op : func.getBody().front().without_terminator())
    last.push_back(&op);
  for (Operation *op : llvm::reverse(last)) // readers before what they read
    if (isOpTriviallyDead(op))
      op->erase();
  SmallVector<Type> resultTypes;
  for (Value v : results)
    resultTypes.push_back(v.getType());
  func.setFunctionType(builder.getFunctionType(func.getArgumentTypes(),
                                               resultTypes));
  for (auto [i, info] : llvm::enumerate(graph.output()))
    func.setResultAttr(i, attrs::kOutput, builder.getStringAttr(info.name()));
  for (auto [i, update] : llvm::enumerate(bufferUpdates))
    func.setResultAttr(graph.output_size() + i, attrs::kBuffer,
                       builder.getStringAttr(update.first));
  return success();
}

OwningOpRef<ModuleOp> GraphImporter::run() {
  context.loadDialect<arith::ArithDialect, func::FuncDialect, LmcDialect>();

  if (!model.has_graph()) {
    error() << "not an ONNX model (no graph)";
    return nullptr;
  }
  for (const onnx::OperatorSetIdProto &id : model.opset_import()) {
    if (id.domain().empty() || id.domain() == "ai.onnx")
      opset = id.version();
    if (id.domain() == kTrainingDomain)
      trainingOpset = id.version();
  }
  // A model of only ai.onnx.preview.training ops needs no default opset.
  if (opset == 0 && trainingOpset == 0) {
    error() << "model imports no opset of the default ONNX domain";
    return nullptr;
  }
  if (opset != 0 && (opset < 7 || opset > 21)) {
    error() << "unsupported opset " << opset << " (supported: 7 to 21)";
    return nullptr;
  }
  if (model.graph().output_size() == 0) {
    error() << "graph has no outputs";
    return nullptr;
  }
  registerActivationOps(ops);
  registerContractionOps(ops);
  registerConvolutionOps(ops);
  registerElementwiseOps(ops);
  registerIndexingOps(ops);
  registerLayoutOps(ops);
  registerLogicalOps(ops);
  registerLossOps(ops);
  registerNormalizationOps(ops);
  registerReductionOps(ops);
  registerResizeOps(ops);
  registerShapeOps(ops);
  registerTrainingOps(trainingOps);

  torchExport = TorchExportInfo::analyze(model);
  if (failed(checkTorchExport()) || failed(importInitializers()) ||
      failed(importInputs()))
    return nullptr;

  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc());
  builder.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(builder, fileLoc(), attrs::kForward,
                                   builder.getFunctionType(argTypes, {}));
  forward = func;
  Block *entry = func.addEntryBlock();
  for (auto [i, attrs] : llvm::enumerate(argAttrs))
    func.setArgAttrs(i, attrs.getDictionary(&context));

  // Bind the parameters and inputs to the block arguments, in order.
  unsigned argIndex = 0;
  for (auto &param : params)
    symbols[param.first].value = entry->getArgument(argIndex++);
  for (const onnx::ValueInfoProto &info : model.graph().input()) {
    Binding &binding = symbols[info.name()];
    if (!binding.value && !binding.constant)
      binding.value = entry->getArgument(argIndex++);
  }

  builder.setInsertionPointToEnd(entry);
  if (failed(importNodes()) || failed(importOutputs(func)))
    return nullptr;
  return module;
}

//===----------------------------------------------------------------------===//
// NodeImporter
//===----------------------------------------------------------------------===//

NodeImporter::NodeImporter(GraphImporter &graph, const onnx::NodeProto &node,
                           Location loc, StringRef name, int64_t opset)
    : node(node), b(graph.builder), loc(loc), name(name.str()), opset(opset),
      graph(graph) {}

FailureOr<DenseElementsAttr>
NodeImporter::tensorAttr(const onnx::AttributeProto &a) {
  return convertTensor(
      b.getContext(), a.t(),
      [&] { return error() << "attribute '" << a.name() << "': "; },
      graph.externalDataDir());
}

InFlightDiagnostic NodeImporter::error() {
  return emitError(loc) << "node '" << name << "' (" << node.op_type()
                        << ", opset " << opset << "): ";
}

unsigned NodeImporter::numOutputs() const {
  unsigned outputs = node.output_size();
  while (outputs > 1 && node.output(outputs - 1).empty())
    --outputs;
  return outputs;
}

LogicalResult NodeImporter::checkArity(unsigned minInputs, unsigned maxInputs,
                                       unsigned numOutputs) {
  unsigned count = node.input_size();
  while (count > 0 && node.input(count - 1).empty())
    --count;
  for (unsigned i = 0; i < minInputs && i < count; ++i)
    if (node.input(i).empty())
      return error() << "input " << i << " is required but has no name";
  if (count < minInputs || count > maxInputs) {
    InFlightDiagnostic diag = error() << "expected ";
    if (minInputs == maxInputs)
      diag << minInputs;
    else
      diag << minInputs << " to " << maxInputs;
    return diag << (maxInputs == 1 ? " input" : " inputs") << ", got "
                << count;
  }
  unsigned outputs = node.output_size();
  while (outputs > numOutputs && node.output(outputs - 1).empty())
    --outputs;
  if (outputs != numOutputs)
    return error() << "expected " << numOutputs << " output"
                   << (numOutputs == 1 ? "" : "s") << ", got " << outputs;
  return success();
}

LogicalResult NodeImporter::checkAttributes(ArrayRef<StringRef> allowed) {
  for (const onnx::AttributeProto &a : node.attribute())
    if (!llvm::is_contained(allowed, a.name()))
      return error() << "unsupported attribute '" << a.name() << "'";
  return success();
}

bool NodeImporter::hasInput(unsigned i) const {
  return static_cast<int>(i) < node.input_size() && !node.input(i).empty();
}

FailureOr<Binding *> NodeImporter::lookup(unsigned i) {
  if (!hasInput(i))
    return error() << "missing input " << i;
  FailureOr<Binding *> binding = graph.lookup(*this, node.input(i));
  if (succeeded(binding) && (*binding)->sequence)
    return error() << "input " << i << " ('" << node.input(i)
                   << "') is a sequence; only SequenceAt reads sequences";
  return binding;
}

FailureOr<ArrayRef<Binding>> NodeImporter::sequenceInput(unsigned i) {
  if (!hasInput(i))
    return error() << "missing input " << i;
  FailureOr<Binding *> binding = graph.lookup(*this, node.input(i));
  if (failed(binding))
    return failure();
  if (!(*binding)->sequence)
    return error() << "input " << i << " ('" << node.input(i)
                   << "') must be a sequence";
  return ArrayRef<Binding>(*(*binding)->sequence);
}

FailureOr<Value> NodeImporter::input(unsigned i) {
  FailureOr<Binding *> binding = lookup(i);
  if (failed(binding))
    return failure();
  return graph.materialize(**binding, loc);
}

FailureOr<Value> NodeImporter::valueNamed(StringRef valueName,
                                          StringRef what) {
  Binding *binding = graph.findBinding(valueName);
  if (!binding)
    return error() << what << " '" << valueName
                   << "' names no value defined before the node";
  return graph.materialize(*binding, loc);
}

FailureOr<Value> NodeImporter::floatInput(unsigned i) {
  FailureOr<RankedTensorType> type = inputType(i);
  if (failed(type))
    return failure();
  if (!isa<FloatType>(type->getElementType()))
    return error() << "input " << i << " ('" << node.input(i)
                   << "') must be a float tensor, got " << *type
                   << " (integer tensors are only supported as compile-time "
                      "constants)";
  return input(i);
}

FailureOr<Value> NodeImporter::numericInput(unsigned i) {
  FailureOr<RankedTensorType> type = inputType(i);
  if (failed(type))
    return failure();
  // Tensors are float, bool, int32 or int64 (the importer refuses other
  // element types): arithmetic takes all but bool.
  if (type->getElementType().isInteger(1))
    return error() << "input " << i << " ('" << node.input(i)
                   << "') must be a float, int32 or int64 tensor, got "
                   << *type;
  return input(i);
}

DenseElementsAttr NodeImporter::constantInput(unsigned i) {
  if (!hasInput(i))
    return nullptr;
  // Silent: a caller that needs the input reports an undefined one.
  return graph.lookupConstant(node.input(i));
}

LogicalResult NodeImporter::carryBuffer(unsigned i, Value update) {
  return graph.carryBuffer(*this, node.input(i), update);
}

Value NodeImporter::rngKey() { return graph.rngKey(); }

DenseElementsAttr NodeImporter::paramInitInput(unsigned i) {
  if (!hasInput(i))
    return nullptr;
  return graph.lookupParamInit(node.input(i));
}

DenseElementsAttr NodeImporter::fixedInput(unsigned i) {
  if (DenseElementsAttr constant = constantInput(i))
    return constant;
  return paramInitInput(i);
}

FailureOr<RankedTensorType> NodeImporter::inputType(unsigned i) {
  FailureOr<Binding *> binding = lookup(i);
  if (failed(binding))
    return failure();
  if ((*binding)->constant)
    return cast<RankedTensorType>((*binding)->constant.getType());
  return cast<RankedTensorType>((*binding)->value.getType());
}

FailureOr<std::optional<SmallVector<int64_t>>>
NodeImporter::axes(bool asInput) {
  if (!asInput)
    return intsAttr("axes");
  if (!hasInput(1))
    return std::optional<SmallVector<int64_t>>();
  FailureOr<SmallVector<int64_t>> given = intsInput(1, "axes");
  if (failed(given))
    return failure();
  return std::optional<SmallVector<int64_t>>(std::move(*given));
}

FailureOr<SmallVector<int64_t>> NodeImporter::intsInput(unsigned i,
                                                        StringRef what) {
  FailureOr<Binding *> binding = lookup(i);
  if (failed(binding))
    return failure();
  DenseElementsAttr value = (*binding)->constant;
  if (!value || !isa<IntegerType>(value.getElementType()))
    return error() << what << " (input " << i << ", '" << node.input(i)
                   << "') must be a compile-time constant integer tensor";
  if (cast<RankedTensorType>(value.getType()).getRank() > 1)
    return error() << what << " (input " << i << ") must be a 1-D tensor";
  return intValues(value);
}

void NodeImporter::rebindBatch(SmallVectorImpl<int64_t> &shape,
                               RankedTensorType inputType, bool broadcasts) {
  const std::optional<BatchRebinding> &rebinding = graph.rebinding;
  if (!rebinding || shape.empty() || shape[0] != rebinding->fixed ||
      inputType.getRank() == 0)
    return;
  int64_t leading = inputType.getDimSize(0);
  if (leading == rebinding->bound || (broadcasts && leading == 1))
    shape[0] = rebinding->bound;
}

void NodeImporter::rebindReshapeTarget(SmallVectorImpl<int64_t> &target,
                                       RankedTensorType inputType) {
  const std::optional<BatchRebinding> &rebinding = graph.rebinding;
  if (!rebinding || llvm::is_contained(target, 0))
    return;
  FailureOr<Binding *> input = lookup(0);
  if (failed(input) || !(*input)->value ||
      !graph.carriesBatch((*input)->value))
    return;
  const int64_t inputElements = inputType.getNumElements();
  if (inputElements % rebinding->bound != 0)
    return;
  const int64_t exported = inputElements / rebinding->bound * rebinding->fixed;
  SmallVector<int64_t> resolved(target.begin(), target.end());
  auto inferred = llvm::find(resolved, -1);
  int64_t known = 1;
  for (int64_t dim : resolved)
    if (dim != -1)
      known *= dim;
  if (inferred != resolved.end()) {
    // [fixed, -1] flattening a [bound, ...] tensor: -1 is not the batch.
    if (target.front() == rebinding->fixed &&
        inputType.getDimSize(0) == rebinding->bound) {
      target.front() = rebinding->bound;
      return;
    }
    // A target the legacy exporter computed from Shape (already the new
    // batch's) resolves as it is.
    if (known == 0 || inputElements % known == 0 || exported % known != 0)
      return;
    *inferred = exported / known; // the target as the export resolved it
  } else if (known == inputElements || known != exported) {
    return; // this input's shape already, or not a rebinding's to make
  }
  // Where runs of the input's dimensions start: products of its leading
  // dimensions.
  llvm::SmallDenseSet<int64_t> starts{1};
  int64_t product = 1;
  for (int64_t dim : inputType.getShape())
    starts.insert(product *= dim);
  product = 1;
  for (auto [i, dim] : llvm::enumerate(resolved)) {
    int64_t rebound = dim / rebinding->fixed * rebinding->bound;
    if (dim % rebinding->fixed == 0 &&
        (starts.contains(product) || starts.contains(product * rebound))) {
      if (target[i] != -1)
        target[i] = rebound;
      return;
    }
    product *= dim;
  }
}

DenseElementsAttr
NodeImporter::rebindStridedIndices(DenseElementsAttr indices,
                                   RankedTensorType dataType) {
  const std::optional<BatchRebinding> &rebinding = graph.rebinding;
  if (!rebinding || !indices || dataType.getRank() != 1)
    return nullptr;
  auto indicesType = cast<RankedTensorType>(indices.getType());
  FailureOr<Binding *> data = lookup(0);
  if (indicesType.getRank() == 0 ||
      indicesType.getDimSize(0) != rebinding->fixed || failed(data) ||
      !(*data)->value || !graph.carriesBatch((*data)->value) ||
      dataType.getDimSize(0) % rebinding->bound != 0)
    return nullptr;
  const int64_t stride = dataType.getDimSize(0) / rebinding->bound;
  const int64_t exported = stride * rebinding->fixed;
  SmallVector<int64_t> values = intValues(indices);
  const int64_t row = int64_t(values.size()) / rebinding->fixed;
  for (int64_t &index : values)
    if (index < 0)
      index += exported; // Gather's negative indices, at the export's size
  for (int64_t b = 0; b < rebinding->fixed; ++b)
    for (int64_t j = 0; j < row; ++j)
      if (values[b * row + j] != values[j] + b * stride)
        return nullptr;
  SmallVector<int64_t> shape(indicesType.getShape());
  shape[0] = rebinding->bound;
  auto type = RankedTensorType::get(shape, indicesType.getElementType());
  auto width = cast<IntegerType>(indicesType.getElementType()).getWidth();
  SmallVector<APInt> rebound;
  rebound.reserve(rebinding->bound * row);
  for (int64_t b = 0; b < rebinding->bound; ++b)
    for (int64_t j = 0; j < row; ++j)
      rebound.push_back(APInt(width, values[j] + b * stride, /*isSigned=*/true));
  return DenseElementsAttr::get(type, rebound);
}

const onnx::AttributeProto *NodeImporter::attr(StringRef attrName) const {
  for (const onnx::AttributeProto &a : node.attribute())
    if (a.name() == attrName)
      return &a;
  return nullptr;
}

FailureOr<int64_t> NodeImporter::intAttr(StringRef attrName, int64_t dflt) {
  const onnx::AttributeProto *a = attr(attrName);
  if (!a)
    return dflt;
  if (a->type() != onnx::AttributeProto::INT)
    return error() << "attribute '" << attrName << "' must be an int";
  return a->i();
}

FailureOr<float> NodeImporter::floatAttr(StringRef attrName, float dflt) {
  const onnx::AttributeProto *a = attr(attrName);
  if (!a)
    return dflt;
  if (a->type() != onnx::AttributeProto::FLOAT)
    return error() << "attribute '" << attrName << "' must be a float";
  return a->f();
}

FailureOr<std::string> NodeImporter::stringAttr(StringRef attrName,
                                               StringRef dflt) {
  const onnx::AttributeProto *a = attr(attrName);
  if (!a)
    return dflt.str();
  if (a->type() != onnx::AttributeProto::STRING)
    return error() << "attribute '" << attrName << "' must be a string";
  return a->s();
}

FailureOr<std::optional<SmallVector<int64_t>>>
NodeImporter::intsAttr(StringRef attrName) {
  const onnx::AttributeProto *a = attr(attrName);
  if (!a)
    return std::optional<SmallVector<int64_t>>();
  if (a->type() != onnx::AttributeProto::INTS)
    return error() << "attribute '" << attrName << "' must be a list of ints";
  return std::optional<SmallVector<int64_t>>(
      SmallVector<int64_t>(a->ints().begin(), a->ints().end()));
}

FailureOr<int64_t> NodeImporter::normalizeAxis(int64_t axis, int64_t rank,
                                               StringRef what) {
  if (axis < -rank || axis >= rank)
    return error() << what << " " << axis << " is out of range for rank "
                   << rank;
  return axis < 0 ? axis + rank : axis;
}

FailureOr<SmallVector<int64_t>>
NodeImporter::normalizeAxes(ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<int64_t> result;
  for (int64_t axis : axes) {
    FailureOr<int64_t> normalized = normalizeAxis(axis, rank);
    if (failed(normalized))
      return failure();
    result.push_back(*normalized);
  }
  llvm::sort(result);
  if (std::adjacent_find(result.begin(), result.end()) != result.end())
    return error() << "axes contain a repeated axis";
  return result;
}

LogicalResult NodeImporter::setResult(Value value, unsigned i) {
  return graph.define(*this, node.output(i), Binding{value, nullptr});
}

LogicalResult NodeImporter::setConstantResult(DenseElementsAttr value,
                                              unsigned i) {
  return graph.define(*this, node.output(i), Binding{Value(), value});
}

LogicalResult NodeImporter::setSequenceResult(std::vector<Binding> elements,
                                              unsigned i) {
  Binding binding;
  binding.sequence = std::make_shared<std::vector<Binding>>(std::move(elements));
  return graph.define(*this, node.output(i), binding);
}

LogicalResult NodeImporter::setBindingResult(const Binding &binding,
                                             unsigned i) {
  return graph.define(*this, node.output(i), binding);
}

} // namespace lmc::onnx_import

//===----------------------------------------------------------------------===//
// Reading files
//===----------------------------------------------------------------------===//

namespace lmc {

bool onnx_import::parseModel(MLIRContext &context, StringRef bytes,
                             StringRef path, bool isText,
                             onnx::ModelProto &model) {
  Location loc = FileLineColLoc::get(&context, path, 0, 0);
  if (bytes.size() > kMaxOnnxFileBytes) {
    emitError(loc) << "ONNX model is larger than protobuf's 2 GiB limit";
    return false;
  }
  if (isText) {
    std::string text = bytes.str(); // the parser wants a C string
    onnx::Status status = onnx::OnnxParser::Parse(model, text.c_str());
    if (!status.IsOK()) {
      emitError(loc) << "cannot parse ONNX text: " << status.ErrorMessage();
      return false;
    }
    return true;
  }
  google::protobuf::io::CodedInputStream stream(
      reinterpret_cast<const uint8_t *>(bytes.data()),
      static_cast<int>(bytes.size()));
  stream.SetRecursionLimit(kOnnxRecursionLimit);
  if (!model.ParseFromCodedStream(&stream) ||
      !stream.ConsumedEntireMessage()) {
    emitError(loc) << "cannot parse ONNX protobuf (truncated or not an ONNX "
                      "model)";
    return false;
  }
  return true;
}

bool onnx_import::parseModelFile(MLIRContext &context, StringRef path,
                                 bool isText, onnx::ModelProto &model) {
  Location loc = FileLineColLoc::get(&context, path, 0, 0);
  // Check the size before reading anything: protobuf messages are limited to
  // 2 GiB (larger models keep their weights in external data), and a FIFO or
  // device could be endless.
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status)) {
    emitError(loc) << "cannot read ONNX model: " << ec.message();
    return false;
  }
  if (status.type() != llvm::sys::fs::file_type::regular_file) {
    emitError(loc) << "cannot read ONNX model: not a regular file";
    return false;
  }
  if (status.getSize() > kMaxOnnxFileBytes) {
    emitError(loc) << "ONNX model is " << status.getSize()
                   << " bytes, larger than protobuf's 2 GiB limit (keep the "
                      "weights in external data)";
    return false;
  }
  if (isText) {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
        llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
    if (!file) {
      emitError(loc) << "cannot read ONNX model: "
                     << file.getError().message();
      return false;
    }
    return parseModel(context, (*file)->getBuffer(), path, isText, model);
  }
  // Parsed from the file descriptor in chunks: a mapping of the whole file
  // would hold a second copy of the weights while protobuf copies them.
  int fd = -1;
  if (std::error_code ec = llvm::sys::fs::openFileForRead(path, fd)) {
    emitError(loc) << "cannot read ONNX model: " << ec.message();
    return false;
  }
  google::protobuf::io::FileInputStream input(fd);
  input.SetCloseOnDelete(true);
  google::protobuf::io::CodedInputStream stream(&input);
  stream.SetRecursionLimit(kOnnxRecursionLimit);
  if (!model.ParseFromCodedStream(&stream) ||
      !stream.ConsumedEntireMessage()) {
    if (input.GetErrno() != 0)
      emitError(loc) << "cannot read ONNX model: "
                     << std::strerror(input.GetErrno());
    else
      emitError(loc) << "cannot parse ONNX protobuf (truncated or not an ONNX "
                        "model)";
    return false;
  }
  return true;
}

OnnxExportSource::OnnxExportSource() = default;
OnnxExportSource::~OnnxExportSource() = default;

OwningOpRef<ModuleOp> importOnnxFile(MLIRContext &context, StringRef path,
                                     const OnnxImportOptions &options,
                                     OnnxExportSource *exportSource) {
  auto kept = std::make_unique<OnnxExportSource::State>();
  kept->path = path.str();
  if (!onnx_import::parseModelFile(context, path, path.ends_with(".onnxtxt"),
                                   kept->model))
    return nullptr;
  onnx_import::GraphImporter importer(context, path, options, kept->model,
                                      exportSource ? kept.get() : nullptr);
  OwningOpRef<ModuleOp> module = importer.run();
  if (module && exportSource)
    exportSource->state = std::move(kept);
  return module;
}

FailureOr<DenseElementsAttr> readOnnxTensorProto(MLIRContext &context,
                                                 StringRef bytes,
                                                 StringRef path) {
  Location loc = FileLineColLoc::get(&context, path, 0, 0);
  onnx::TensorProto tensor;
  if (bytes.size() > kMaxOnnxFileBytes ||
      !tensor.ParseFromArray(bytes.data(), int(bytes.size())))
    return emitError(loc) << "cannot parse ONNX TensorProto";
  return onnx_import::convertTensor(&context, tensor, [&]() {
    return emitError(loc) << "tensor '" << tensor.name() << "': ";
  });
}

OwningOpRef<ModuleOp> importOnnxBuffer(MLIRContext &context, StringRef bytes,
                                       StringRef path,
                                       const OnnxImportOptions &options,
                                       bool isText) {
  onnx::ModelProto model;
  if (!onnx_import::parseModel(context, bytes, path, isText, model))
    return nullptr;
  onnx_import::GraphImporter importer(context, path, options, model);
  return importer.run();
}

} // namespace lmc
