//===- Descriptor.cpp - the runtime descriptor of a compiled model --------===//
//
// Turns the tags of the entry points (`train_step`, `eval_step`,
// `grad_step`, `apply_step` and, when there is one, `chunk_step`) into the
// descriptor text and weight blob of docs/runtime-abi.md.
//
//===----------------------------------------------------------------------===//

#include "lmc/Dialect/Lmc/IR/LmcOps.h"
#include "lmc/Driver/Emit.h"
#include "lmc/Dialect/Lmc/IR/LmcAttributes.h"
#include "lmc/runtime/descriptor_lines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace lmc {
namespace {

using descriptor::Line;

/// Starts a descriptor line of kind `line`: its keyword and a space.
llvm::raw_ostream &startLine(llvm::raw_ostream &os, Line line) {
  return os << descriptor::keyword(line) << ' ';
}

constexpr size_t kWeightAlignment = 64;

FailureOr<StringRef> dtypeName(Location loc, Type type) {
  Type element = cast<RankedTensorType>(type).getElementType();
  if (element.isF32())
    return StringRef("f32");
  if (element.isF64())
    return StringRef("f64");
  if (element.isInteger(64))
    return StringRef("i64");
  if (element.isInteger(32))
    return StringRef("i32");
  if (element.isBF16()) // a frozen base held in bf16 (lmc-lora)
    return StringRef("bf16");
  return emitError(loc, "the runtime cannot exchange tensors of type ") << type;
}

LogicalResult describeSlot(llvm::raw_ostream &os, Location loc,
                           StringRef entry, StringRef kind, Type type,
                           DictionaryAttr attrs) {
  auto role = attrs ? attrs.getAs<StringAttr>(attrs::kRole) : StringAttr();
  auto name = attrs ? attrs.getAs<StringAttr>(attrs::kName) : StringAttr();
  if (!role || !name)
    return emitError(loc, "entry point '")
           << entry << "' has an untagged " << kind;
  FailureOr<StringRef> dtype = dtypeName(loc, type);
  if (failed(dtype))
    return failure();
  auto shape = cast<RankedTensorType>(type).getShape();
  // `train_step` -> `train arg` / `train result`.
  std::optional<Line> line =
      descriptor::tensorLine(entry.drop_back(5), kind == "result");
  if (!line)
    return emitError(loc, "entry point '")
           << entry << "' is not one the descriptor describes";
  startLine(os, *line) << role.getValue() << ' ' << name.getValue() << ' '
                       << *dtype << ' ' << shape.size();
  for (int64_t d : shape)
    os << ' ' << d;
  os << '\n';
  return success();
}

LogicalResult describeEntryPoint(llvm::raw_ostream &os, func::FuncOp func) {
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (failed(describeSlot(os, func.getLoc(), func.getName(), "arg",
                            func.getArgumentTypes()[i],
                            func.getArgAttrDict(i))))
      return failure();
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (failed(describeSlot(os, func.getLoc(), func.getName(), "result",
                            func.getResultTypes()[i],
                            func.getResultAttrDict(i))))
      return failure();
  return success();
}

/// Attention's two products, QK^T and PV (2 FLOPs per multiply-add), over
/// every score whether the mask keeps it or not, as PaLM's and llm.c's
/// 12·L·T·d per token counts them; its gradient, four products.
uint64_t attentionFlops(Value q, Value v, bool gradient) {
  auto qType = cast<RankedTensorType>(q.getType());
  auto vType = cast<RankedTensorType>(v.getType());
  uint64_t scores = uint64_t(qType.getNumElements() / qType.getShape().back()) *
                    uint64_t(vType.getShape()[vType.getRank() - 2]);
  uint64_t d = qType.getShape().back(), dv = vType.getShape().back();
  return (gradient ? 2 : 1) * scores * (2 * d + 2 * dv);
}

/// A convolution's (or one of its gradients') multiply-adds, twice: every
/// element of the forward result (`outputs`: the result or the incoming
/// gradient) takes one per weight of its output channel. `weight` is
/// [C_out, C_in / groups, k...].
uint64_t convFlops(Value outputs, Type weight) {
  auto outType = cast<RankedTensorType>(outputs.getType());
  auto weightType = cast<RankedTensorType>(weight);
  return 2 * uint64_t(outType.getNumElements()) *
         uint64_t(weightType.getNumElements() / weightType.getShape().front());
}

/// Model FLOPs of a step, as MFU counts them in the field (PaLM's 6·N per
/// token plus attention): the products only — matmuls, convolutions and
/// attention's, forward and gradient, 2 FLOPs per multiply-add. Elementwise
/// ops, normalizations and reductions are not counted, nor what
/// lmc-rematerialize recomputes, so the figure (and MFU) does not change
/// with --remat, fusion or masks.
uint64_t countFlops(func::FuncOp func) {
  uint64_t flops = 0;
  func.walk([&](Operation *op) {
    if (!isa<LmcDialect>(op->getDialect()) || op->hasAttr(attrs::kRecomputed))
      return;
    if (auto attention = dyn_cast<AttentionOp>(op))
      flops += attentionFlops(attention.getQ(), attention.getV(), false);
    else if (auto grad = dyn_cast<AttentionGradOp>(op))
      flops += attentionFlops(grad.getQ(), grad.getV(), true);
    else if (auto conv = dyn_cast<ConvOp>(op))
      flops += convFlops(conv.getResult(), conv.getWeight().getType());
    else if (auto inputGrad = dyn_cast<ConvInputGradOp>(op))
      flops += convFlops(inputGrad.getGrad(), inputGrad.getWeight().getType());
    else if (auto weightGrad = dyn_cast<ConvWeightGradOp>(op))
      flops += convFlops(weightGrad.getGrad(), weightGrad.getType());
    else if (auto matmul = dyn_cast<MatmulOp>(op)) {
      auto lhs = matmul.getLhs().getType();
      int64_t k =
          lhs.getDimSize(lhs.getRank() - (matmul.getTransposeLhs() ? 2 : 1));
      flops += 2 * uint64_t(matmul.getType().getNumElements()) * uint64_t(k);
    }
  });
  return flops;
}

uint64_t tensorBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return 0;
  return tensor.getNumElements() *
         llvm::divideCeil(tensor.getElementTypeBitWidth(), 8);
}

/// Peak bytes of the tensors `func` holds at once when its ops run in
/// order and every intermediate lives from its definition to its last use
/// (arguments excluded, results live to the end). For grad_step this is
/// the activation memory: the forward values the backward pass reads, plus
/// the gradients. An estimate before bufferization's reuse.
uint64_t peakLiveBytes(func::FuncOp func) {
  Block &body = func.getBody().front();
  DenseMap<Operation *, unsigned> position;
  for (Operation &op : body)
    position[&op] = position.size();
  const unsigned end = position.size();
  // Frees due after each op: values whose last use is that op.
  std::vector<uint64_t> freedAfter(end + 1, 0);
  uint64_t live = 0, peak = 0;
  for (Operation &op : body) {
    for (Value result : op.getResults()) {
      unsigned lastUse = position[&op];
      for (OpOperand &use : result.getUses()) {
        Operation *user = body.findAncestorOpInBlock(*use.getOwner());
        lastUse = isa<func::ReturnOp>(user) ? end
                                            : std::max(lastUse, position[user]);
      }
      live += tensorBytes(result.getType());
      freedAfter[lastUse] += tensorBytes(result.getType());
    }
    peak = std::max(peak, live);
    live -= freedAfter[position[&op]];
  }
  return peak;
}

/// `schedule <name> [<key> <value>]...` from the module's lmc.schedule.
void describeSchedule(llvm::raw_ostream &os, DictionaryAttr schedule) {
  startLine(os, Line::Schedule) << schedule.getAs<StringAttr>("name").getValue();
  for (NamedAttribute entry : schedule) {
    if (entry.getName() == "name")
      continue;
    os << ' ' << entry.getName().getValue() << ' ';
    if (auto integer = dyn_cast<IntegerAttr>(entry.getValue()))
      os << integer.getInt();
    else
      os << llvm::format("%.17g",
                         cast<FloatAttr>(entry.getValue()).getValueAsDouble());
  }
  os << '\n';
}

/// The name of the parameter `value` reads (through precision casts), or
/// "" for a computed tensor.
StringRef parameterName(Value value) {
  while (auto convert = value.getDefiningOp<ConvertOp>())
    value = convert.getOperand();
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg)
    return "";
  auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  auto name =
      func ? func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), attrs::kName)
           : StringAttr();
  return name ? name.getValue() : "";
}

/// `bound` lines: each integer input that reaches, through ops that only
/// move its elements, the indices of a gather (the rows of an embedding
/// table) or the labels of a cross-entropy (the classes) may hold values
/// in [0, rows or classes) only, or the cross-entropy's ignore_index; the
/// runtime checks every batch.
void describeIndexBounds(llvm::raw_ostream &os, func::FuncOp func) {
  for (BlockArgument arg : func.getArguments()) {
    std::optional<attrs::Role> role =
        attrs::roleIn(func.getArgAttrDict(arg.getArgNumber()));
    auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                  attrs::kName);
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (role != attrs::Role::Input || !name || !type ||
        !type.getElementType().isInteger())
      continue;
    int64_t limit = 0;
    std::string what;
    std::optional<int64_t> ignored; // a cross-entropy's ignore_index
    auto bound = [&](int64_t size, std::string use) {
      if (limit == 0 || size < limit) {
        limit = size;
        what = std::move(use);
      }
    };
    SmallVector<Value> worklist{arg};
    while (!worklist.empty()) {
      Value value = worklist.pop_back_val();
      for (OpOperand &use : value.getUses()) {
        Operation *user = use.getOwner();
        if (isa<ReshapeOp, TransposeOp, BroadcastInDimOp, SliceOp>(user)) {
          worklist.push_back(user->getResult(0));
        } else if (auto gather = dyn_cast<GatherOp>(user)) {
          if (use.get() != gather.getIndices())
            continue;
          StringRef table = parameterName(gather.getOperand());
          bound(gather.getOperand().getType().getDimSize(gather.getAxis()),
                "rows " + (table.empty() ? std::string("-") : table.str()));
        } else if (auto loss = dyn_cast<SoftmaxCrossEntropyOp>(user)) {
          if (use.get() != loss.getLabels())
            continue;
          bound(loss.getLogits().getType().getShape().back(), "classes");
          ignored = loss.getIgnoreIndex();
        }
      }
    }
    if (limit == 0)
      continue;
    startLine(os, Line::Bound) << name.getValue() << ' ' << limit << ' ' << what;
    // Labels may also hold the loss's ignore_index (outside [0, limit) or
    // not), when the classes are what bounds them.
    if (ignored && what == "classes")
      os << ' ' << *ignored;
    os << '\n';
  }
}

} // namespace

FailureOr<ModelDescription>
describeModel(ModuleOp module, std::optional<int64_t> matmulParts) {
  auto train = module.lookupSymbol<func::FuncOp>(attrs::kTrainStep);
  auto eval = module.lookupSymbol<func::FuncOp>(attrs::kEvalStep);
  auto grad = module.lookupSymbol<func::FuncOp>(attrs::kGradStep);
  auto apply = module.lookupSymbol<func::FuncOp>(attrs::kApplyStep);
  auto loss = module->getAttrOfType<StringAttr>(attrs::kLoss);
  auto optimizer = module->getAttrOfType<DictionaryAttr>(attrs::kOptimizer);
  if (!train || !eval || !grad || !apply || !loss || !optimizer)
    return module.emitError("expected a module after the optimizer phase "
                            "(train_step, eval_step, grad_step, apply_step, "
                            "lmc.loss, lmc.optimizer)");

  ModelDescription model;
  llvm::raw_string_ostream os(model.descriptor);
  startLine(os, Line::Header) << descriptor::kVersion << '\n';
  startLine(os, Line::Loss) << loss.getValue() << '\n';
  startLine(os, Line::Optimizer) << optimizer.getAs<StringAttr>("name").getValue() << '\n';
  for (StringRef key :
       {"lr", "beta1", "beta2", "eps", "weight_decay", "momentum",
        "clip_grad_norm"})
    startLine(os, Line::Hparam) << key << ' '
       << llvm::format("%.17g",
                       optimizer.getAs<FloatAttr>(key).getValueAsDouble())
       << '\n';
  startLine(os, Line::Flops) << countFlops(train) << '\n';
  auto precision = module->getAttrOfType<StringAttr>(attrs::kPrecision);
  startLine(os, Line::Precision) << (precision ? precision.getValue() : "f32") << '\n';
  if (matmulParts)
    startLine(os, Line::MatmulParts) << *matmulParts << '\n';
  startLine(os, Line::Activations) << peakLiveBytes(grad) << '\n';
  if (auto remat = module->getAttrOfType<DictionaryAttr>(attrs::kRemat))
    startLine(os, Line::Remat) << remat.getAs<StringAttr>("policy").getValue() << " cuts "
       << remat.getAs<IntegerAttr>("cuts").getInt() << " recomputed "
       << remat.getAs<IntegerAttr>("recomputed").getInt() << '\n';
  if (auto lora = module->getAttrOfType<DictionaryAttr>(attrs::kLora))
    startLine(os, Line::Lora) << lora.getAs<IntegerAttr>("rank").getInt() << ' '
       << llvm::format("%.17g",
                       lora.getAs<FloatAttr>("alpha").getValueAsDouble())
       << ' '
       << llvm::format("%.17g",
                       lora.getAs<FloatAttr>("dropout").getValueAsDouble())
       << (lora.getAs<BoolAttr>("rslora").getValue() ? " rslora" : " plain")
       << '\n';
  if (auto lora = module->getAttrOfType<DictionaryAttr>(attrs::kLora))
    for (auto [target, weight, layout] :
         llvm::zip_equal(lora.getAs<ArrayAttr>("targets"),
                         lora.getAs<ArrayAttr>("weights"),
                         lora.getAs<ArrayAttr>("layouts")))
      startLine(os, Line::LoraWeight) << cast<StringAttr>(weight).getValue() << ' '
         << cast<StringAttr>(target).getValue() << ' '
         << cast<StringAttr>(layout).getValue() << '\n';
  if (auto schedule = module->getAttrOfType<DictionaryAttr>(attrs::kSchedule))
    describeSchedule(os, schedule);
  SmallVector<func::FuncOp> entries{train, eval, grad, apply};
  if (auto chunk = module.lookupSymbol<func::FuncOp>(attrs::kChunkStep))
    entries.push_back(chunk);
  for (func::FuncOp entry : entries)
    if (failed(describeEntryPoint(os, entry)))
      return failure();
  describeIndexBounds(os, train);

  for (unsigned i = 0; i < train.getNumArguments(); ++i) {
    auto init = train.getArgAttrOfType<DenseElementsAttr>(i, attrs::kInit);
    if (!init)
      continue;
    uint64_t offset = model.weights.append(init, kWeightAlignment);
    StringRef name = train.getArgAttrOfType<StringAttr>(i, attrs::kName);
    startLine(os, Line::Init) << name << ' ' << offset << ' '
       << model.weights.size - offset << '\n';
    model.paramNames.push_back(name.str());
  }
  // Files hold a fused parameter (lmc-split-fused-projections) whole; a
  // frozen one (--freeze: its pieces folded into constants) is in none.
  if (auto fused = module->getAttrOfType<DictionaryAttr>(attrs::kPieces))
    for (NamedAttribute whole : fused) {
      auto pieces =
          cast<ArrayAttr>(whole.getValue()).getAsValueRange<StringAttr>();
      if (!llvm::is_contained(model.paramNames, (*pieces.begin()).str()))
        continue;
      startLine(os, Line::Join) << whole.getName().getValue();
      for (StringRef piece : pieces)
        os << ' ' << piece;
      os << '\n';
      model.paramNames.push_back(whole.getName().str());
    }
  os << descriptor::keyword(Line::End) << '\n';
  return model;
}

FailureOr<uint64_t> estimateActivationBytes(ModuleOp module) {
  auto grad = module.lookupSymbol<func::FuncOp>(attrs::kGradStep);
  if (!grad)
    return module.emitError("expected a module after the optimizer phase "
                            "(grad_step)");
  return peakLiveBytes(grad);
}

void describeLowering(ModuleOp module, ModelDescription &model) {
  std::string lines;
  llvm::raw_string_ostream os(lines);
  if (auto mesh = module->getAttrOfType<DictionaryAttr>(attrs::kMesh)) {
    startLine(os, Line::Mesh) << cast<IntegerAttr>(mesh.get("data")).getInt() << ' '
       << cast<IntegerAttr>(mesh.get("model")).getInt() << '\n';
    if (auto splits = module->getAttrOfType<DictionaryAttr>(attrs::kSplits))
      for (NamedAttribute split : splits)
        startLine(os, Line::Split) << split.getName().getValue() << ' '
           << cast<IntegerAttr>(split.getValue()).getInt() << '\n';
  }
  if (auto arenas = module->getAttrOfType<DictionaryAttr>(attrs::kArenas))
    for (NamedAttribute arena : arenas)
      startLine(os, Line::Arena) << arena.getName().getValue() << ' '
         << cast<IntegerAttr>(arena.getValue()).getInt() << '\n';
  if (auto names = module->getAttrOfType<ArrayAttr>(attrs::kInPlace))
    for (StringRef name : names.getAsValueRange<StringAttr>())
      startLine(os, Line::InPlace) << name << '\n';
  if (auto regions = module->getAttrOfType<ArrayAttr>(attrs::kProfileRegions))
    for (auto [index, region] :
         llvm::enumerate(regions.getAsValueRange<StringAttr>()))
      startLine(os, Line::Profile) << index << ' ' << region << '\n';
  if (auto slots = module->getAttrOfType<DictionaryAttr>(attrs::kInPlaceSlots))
    for (NamedAttribute entry : slots) {
      ArrayRef<int64_t> gone =
          cast<DenseI64ArrayAttr>(entry.getValue()).asArrayRef();
      model.inPlaceSlots[entry.getName().str()] = {gone.begin(), gone.end()};
    }
  // The lines come last, before `end` (docs/runtime-abi.md).
  std::string end = std::string(descriptor::keyword(Line::End)) + '\n';
  std::string &text = model.descriptor;
  text.insert(text.size() - end.size(), lines);
}

uint64_t InitialWeights::append(DenseElementsAttr value, uint64_t alignment) {
  uint64_t offset = llvm::alignTo(size, alignment);
  uint64_t bytes = value.getRawData().size();
  if (value.isSplat())
    bytes *= uint64_t(value.getNumElements());
  pieces.push_back({offset, value});
  size = offset + bytes;
  return offset;
}

/// Calls `sink` with the bytes in order: each value (splats expanded) and
/// the zeros before it.
static void forEachChunk(const InitialWeights &weights,
                         llvm::function_ref<void(ArrayRef<char>)> sink) {
  static constexpr char kZeros[64] = {};
  uint64_t at = 0;
  for (const InitialWeights::Piece &piece : weights.pieces) {
    for (; at < piece.offset; at += std::min<uint64_t>(piece.offset - at, 64))
      sink(ArrayRef<char>(kZeros, std::min<uint64_t>(piece.offset - at, 64)));
    ArrayRef<char> raw = piece.value.getRawData();
    if (!piece.value.isSplat()) {
      sink(raw);
      at += raw.size();
      continue;
    }
    // A splat goes out in tiles of up to 4096 copies of its element.
    uint64_t left = uint64_t(piece.value.getNumElements());
    std::vector<char> tile;
    for (uint64_t i = 0, e = std::min<uint64_t>(left, 4096); i < e; ++i)
      tile.insert(tile.end(), raw.begin(), raw.end());
    for (; left > 0; left -= std::min<uint64_t>(left, 4096))
      sink(ArrayRef<char>(tile).take_front(std::min<uint64_t>(left, 4096) *
                                           raw.size()));
    at += raw.size() * uint64_t(piece.value.getNumElements());
  }
}

void InitialWeights::write(llvm::raw_ostream &os) const {
  forEachChunk(*this, [&](ArrayRef<char> chunk) {
    os.write(chunk.data(), chunk.size());
  });
}

std::vector<char> InitialWeights::bytes() const {
  std::vector<char> all;
  all.reserve(size);
  forEachChunk(*this, [&](ArrayRef<char> chunk) {
    all.insert(all.end(), chunk.begin(), chunk.end());
  });
  return all;
}

} // namespace lmc
