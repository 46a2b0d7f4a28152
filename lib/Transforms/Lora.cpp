//===- Lora.cpp - low-rank adapters on the model's matmul weights ---------===//
//
// LoRA (Hu et al. 2021) as Hugging Face PEFT applies it to nn.Linear:
// y = x W^T + scaling * dropout(x) A^T B^T with W frozen, A [r, in] and
// B [out, r] the only trained tensors. Here the linear layers are what the
// importer made of them: a 2-D parameter read by lmc.matmul as its rhs,
// directly or through a [1, 0] transpose.
//
//===----------------------------------------------------------------------===//

#include "lmc/Dialect/Lmc/IR/LmcBuilders.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"
#include "lmc/Dialect/Lmc/IR/LmcAttributes.h"
#include "lmc/Support/SplitMix64.h"
#include "lmc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/GlobPattern.h"
#include "llvm/Support/Regex.h"

#include <cmath>
#include <cstring>

namespace lmc {
#define GEN_PASS_DEF_LMCLORA
#include "lmc/Transforms/Passes.h.inc"
} // namespace lmc

using namespace mlir;
using namespace lmc;

namespace {

/// The stream numbers of the adapters' dropout (lmc.random_uniform), far
/// from the importer's (an ONNX seed or a hash of a node name).
constexpr int64_t kDropoutStreamBase = int64_t(0x4C6F5241) << 24; // "LoRA"

/// One product that reads a weight: `matmul` with the weight as its rhs,
/// where `transposed` says whether the rhs the product uses is W^T (W is
/// [out, in], nn.Linear's layout) rather than W itself ([in, out]).
struct WeightUse {
  MatmulOp matmul;
  bool transposed;
};

/// The products that read `weight` ([in/out] 2-D), or failure with the
/// reason when anything else reads it (an embedding's gather, a
/// normalization, a transpose read by something other than a product).
FailureOr<SmallVector<WeightUse>> matmulUses(Value weight,
                                             std::string &why) {
  auto type = dyn_cast<RankedTensorType>(weight.getType());
  if (!type || type.getRank() != 2 ||
      !isa<FloatType>(type.getElementType())) {
    llvm::raw_string_ostream os(why);
    os << weight.getType() << ", not a 2-D float matrix";
    return failure();
  }
  SmallVector<WeightUse> uses;
  // (value, whether it is W^T): W itself, and its [1, 0] transposes.
  SmallVector<std::pair<Value, bool>> worklist{{weight, false}};
  while (!worklist.empty()) {
    auto [value, transposed] = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (auto matmul = dyn_cast<MatmulOp>(user);
          matmul && use.getOperandNumber() == 1 &&
          cast<RankedTensorType>(matmul.getType()).getRank() == 2) {
        uses.push_back({matmul, transposed != matmul.getTransposeRhs()});
        continue;
      }
      if (auto transpose = dyn_cast<TransposeOp>(user)) {
        worklist.push_back({transpose.getResult(), !transposed});
        continue;
      }
      why = ("read by " + user->getName().getStringRef() +
             (isa<MatmulOp>(user) ? " as its left operand or batched" : ""))
                .str();
      return failure();
    }
  }
  if (uses.empty()) {
    why = "read by no matmul";
    return failure();
  }
  return uses;
}

/// The matmuls another matmul depends on, transitively (the output layer is
/// the weight whose products none depends on).
llvm::DenseSet<Operation *> matmulsFeedingMatmuls(func::FuncOp func) {
  llvm::DenseSet<Operation *> feeding;
  llvm::DenseSet<Operation *> reachesMatmul; // an op some matmul depends on
  Block &body = func.getBody().front();
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    bool reaches = llvm::any_of(op.getUsers(), [&](Operation *user) {
      return isa<MatmulOp>(user) || reachesMatmul.contains(user);
    });
    if (!reaches)
      continue;
    reachesMatmul.insert(&op);
    if (isa<MatmulOp>(op))
      feeding.insert(&op);
  }
  return feeding;
}

/// The module name PEFT would use for parameter `name`: without `.weight`.
StringRef moduleName(StringRef name) {
  name.consume_back(".weight");
  return name;
}

/// One entry of the `targets` list.
struct Target {
  std::string text;
  std::optional<llvm::GlobPattern> glob; // with wildcards
  bool allLinear = false;
  bool matched = false;

  bool matches(StringRef module) const {
    if (glob)
      return glob->match(module);
    return module == text || module.ends_with("." + text);
  }
};

/// f32 bits to bf16, rounded to nearest even (a NaN: the quiet NaN with its
/// sign), as lmc-expand-arith converts and torch's .to(torch.bfloat16).
uint16_t bf16Bits(uint32_t bits) {
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return uint16_t(((bits >> 16) & 0x8000u) | 0x7fc0u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return uint16_t(bits >> 16);
}

/// `init` (f32) rounded to bf16 as `type`; from the raw bytes, which a
/// base of a billion values makes worth it.
DenseElementsAttr toBf16(DenseElementsAttr init, RankedTensorType type) {
  ArrayRef<char> raw = init.getRawData();
  const size_t stored = raw.size() / sizeof(uint32_t); // 1 for a splat
  SmallVector<uint16_t> bits(stored);
  for (size_t i = 0; i < stored; ++i) {
    uint32_t value;
    std::memcpy(&value, raw.data() + i * sizeof(uint32_t), sizeof value);
    bits[i] = bf16Bits(value);
  }
  ArrayRef<char> bytes(reinterpret_cast<const char *>(bits.data()),
                       bits.size() * sizeof(uint16_t));
  if (init.isSplat())
    return DenseElementsAttr::get(
        type, APFloat(APFloat::BFloat(), APInt(16, bits.front())));
  return DenseElementsAttr::getFromRawBuffer(type, bytes);
}

/// Holds frozen argument `index` of `func` in bf16: its type and initial
/// value, and an lmc.convert back to f32 before each reader (after a
/// gather: of the rows it took).
void holdInBf16(func::FuncOp func, unsigned index) {
  BlockArgument arg = func.getArgument(index);
  auto f32Type = cast<RankedTensorType>(arg.getType());
  auto bf16Type = f32Type.clone(BFloat16Type::get(func.getContext()));
  auto init = func.getArgAttrOfType<DenseElementsAttr>(index, attrs::kInit);
  if (init)
    func.setArgAttr(index, attrs::kInit, toBf16(init, bf16Type));
  SmallVector<OpOperand *> uses = llvm::map_to_vector(
      arg.getUses(), [](OpOperand &use) { return &use; });
  arg.setType(bf16Type);
  for (OpOperand *use : uses) {
    Operation *user = use->getOwner();
    OpBuilder b(user);
    if (auto gather = dyn_cast<GatherOp>(user);
        gather && use->getOperandNumber() == 0) {
      auto rowsType = cast<RankedTensorType>(gather.getType());
      gather.getResult().setType(rowsType.clone(bf16Type.getElementType()));
      b.setInsertionPointAfter(gather);
      Value rows = ConvertOp::create(b, gather.getLoc(), rowsType,
                                     gather.getResult());
      gather.getResult().replaceAllUsesExcept(rows, rows.getDefiningOp());
      continue;
    }
    use->set(ConvertOp::create(b, user->getLoc(), f32Type, arg));
  }
  func.setType(FunctionType::get(func.getContext(),
                                 func.getBody().front().getArgumentTypes(),
                                 func.getResultTypes()));
}

/// One run of the pass: the parsed options and the adapters' counters.
struct LoraRewrite {
  int64_t rank;
  double alpha, dropout;
  bool rslora;
  uint64_t seed;
  bool bf16Base = false;
  SmallVector<Target> parsedTargets;
  std::optional<llvm::Regex> trainRegex;
  std::string train; // --train, for messages
  int64_t streams = 0;

  LogicalResult parseOptions(ModuleOp module, StringRef targets,
                             StringRef train) {
    if (rank < 1)
      return module.emitError("--lora-rank must be at least 1, not ") << rank;
    if (!(alpha > 0) || !std::isfinite(alpha))
      return module.emitError("--lora-alpha must be positive, not ") << alpha;
    if (!(dropout >= 0 && dropout < 1))
      return module.emitError("--lora-dropout must be in [0, 1), not ")
             << dropout;
    if (!train.empty()) {
      this->train = train.str();
      trainRegex = llvm::Regex(("^(" + train + ")$").str());
      std::string error;
      if (!trainRegex->isValid(error))
        return module.emitError("invalid --train regex '")
               << train << "': " << error;
    }
    for (StringRef text : llvm::split(targets, ',')) {
      text = text.trim();
      if (text.empty())
        continue;
      Target target{text.str()};
      if (text == "all-linear") {
        target.allLinear = true;
      } else if (text.find_first_of("*?[") != StringRef::npos) {
        auto glob = llvm::GlobPattern::create(text);
        if (!glob)
          return module.emitError("invalid --lora glob '")
                 << text << "': " << llvm::toString(glob.takeError());
        target.glob = std::move(*glob);
      }
      parsedTargets.push_back(std::move(target));
    }
    if (parsedTargets.empty())
      return module.emitError(
          "--lora needs target modules, e.g. --lora q_proj,v_proj or "
          "--lora all-linear");
    return success();
  }

  /// The matmul weights of `func` (each with its products), and the reason
  /// each other parameter is not one.
  struct Candidates {
    SmallVector<std::pair<unsigned, SmallVector<WeightUse>>> weights;
    llvm::DenseMap<unsigned, std::string> notWeights;
  };

  Candidates findCandidates(func::FuncOp func) {
    Candidates found;
    for (BlockArgument arg : func.getArguments()) {
      if (!func.getArgAttr(arg.getArgNumber(), attrs::kParam))
        continue;
      std::string why;
      FailureOr<SmallVector<WeightUse>> uses = matmulUses(arg, why);
      if (succeeded(uses))
        found.weights.push_back({arg.getArgNumber(), std::move(*uses)});
      else
        found.notWeights[arg.getArgNumber()] = why;
    }
    return found;
  }

  StringRef paramName(func::FuncOp func, unsigned index) {
    return func.getArgAttrOfType<StringAttr>(index, attrs::kParam).getValue();
  }

  LogicalResult addAdapters(ModuleOp module, func::FuncOp func) {
    Candidates candidates = findCandidates(func);
    llvm::DenseSet<Operation *> feeding = matmulsFeedingMatmuls(func);

    // The weights the targets select, in argument order.
    SmallVector<std::pair<unsigned, SmallVector<WeightUse>>> selected;
    for (auto &[index, uses] : candidates.weights) {
      StringRef module = moduleName(paramName(func, index));
      bool outputLayer = llvm::none_of(uses, [&](const WeightUse &use) {
        return feeding.contains(use.matmul);
      });
      bool chosen = false;
      for (Target &target : parsedTargets) {
        bool hit = target.allLinear ? !outputLayer : target.matches(module);
        target.matched |= hit;
        chosen |= hit;
      }
      if (chosen)
        selected.push_back({index, uses});
    }
    for (BlockArgument arg : func.getArguments()) {
      auto notWeight = candidates.notWeights.find(arg.getArgNumber());
      if (notWeight == candidates.notWeights.end())
        continue;
      StringRef name = paramName(func, arg.getArgNumber());
      for (Target &target : parsedTargets)
        if (!target.allLinear && target.matches(moduleName(name)))
          return func.emitError("--lora target '")
                 << target.text << "' matches parameter '" << name
                 << "', which is not a matmul weight (" << notWeight->second
                 << "); LoRA adapts the weights of linear layers";
    }
    for (const Target &target : parsedTargets)
      if (!target.matched)
        return func.emitError("--lora target '")
               << target.text << "' matches no matmul weight; the model's: "
               << weightList(func, candidates);

    // Every other parameter stays constant, unless --train keeps it.
    llvm::DenseSet<unsigned> adapted;
    for (auto &entry : selected)
      adapted.insert(entry.first);
    Builder b(func.getContext());
    bool trainMatched = false;
    for (BlockArgument arg : func.getArguments()) {
      unsigned i = arg.getArgNumber();
      if (!func.getArgAttr(i, attrs::kParam))
        continue;
      bool trained = trainRegex && trainRegex->match(paramName(func, i));
      if (trained && adapted.contains(i))
        return func.emitError("--train matches '")
               << paramName(func, i)
               << "', which --lora adapts: its adapters train, the weight "
                  "stays frozen; leave it out of --train";
      trainMatched |= trained;
      if (!trained)
        func.setArgAttr(i, attrs::kFrozen, b.getUnitAttr());
    }
    if (trainRegex && !trainMatched)
      return func.emitError("--train '")
             << train << "' matches no parameter (whole names, e.g. '"
             << paramName(func, candidates.weights.front().first) << "')";

    double scaling = rslora ? alpha / std::sqrt(double(rank)) : alpha / rank;
    SplitMix64 random{seed};
    // Insert from the last weight back, so the earlier indices hold.
    SmallVector<Attribute> names, weights, layouts;
    for (auto &[index, uses] : llvm::reverse(selected)) {
      std::string weight = paramName(func, index).str();
      FailureOr<bool> nnLinear =
          adaptWeight(func, index, uses, scaling, random);
      if (failed(nnLinear))
        return failure();
      names.push_back(b.getStringAttr(moduleName(weight)));
      weights.push_back(b.getStringAttr(weight));
      layouts.push_back(b.getStringAttr(*nnLinear ? "out_in" : "in_out"));
    }
    for (auto *list : {&names, &weights, &layouts})
      std::reverse(list->begin(), list->end());
    if (bf16Base)
      for (BlockArgument arg : func.getArguments()) {
        auto type = dyn_cast<RankedTensorType>(arg.getType());
        if (func.getArgAttr(arg.getArgNumber(), attrs::kFrozen) && type &&
            type.getElementType().isF32() && type.getRank() >= 2)
          holdInBf16(func, arg.getArgNumber());
      }
    module->setAttr(
        attrs::kLora,
        b.getDictionaryAttr(
            {b.getNamedAttr("rank", b.getI64IntegerAttr(rank)),
             b.getNamedAttr("alpha", b.getF64FloatAttr(alpha)),
             b.getNamedAttr("scaling", b.getF64FloatAttr(scaling)),
             b.getNamedAttr("rslora", b.getBoolAttr(rslora)),
             b.getNamedAttr("dropout", b.getF64FloatAttr(dropout)),
             b.getNamedAttr("targets", b.getArrayAttr(names)),
             b.getNamedAttr("weights", b.getArrayAttr(weights)),
             b.getNamedAttr("layouts", b.getArrayAttr(layouts))}));
    return success();
  }

  /// "'a.weight', 'b.weight' and 3 more" (the first 8).
  std::string weightList(func::FuncOp func, const Candidates &candidates) {
    if (candidates.weights.empty())
      return "none";
    std::string list;
    size_t shown = std::min<size_t>(candidates.weights.size(), 8);
    for (size_t i = 0; i < shown; ++i)
      list += (i ? ", '" : "'") +
              moduleName(paramName(func, candidates.weights[i].first)).str() +
              "'";
    if (candidates.weights.size() > shown)
      list += " and " + std::to_string(candidates.weights.size() - shown) +
              " more";
    return list;
  }

  /// Adds A and B after argument `index` and the low-rank path to each of
  /// the weight's products. Whether the weight is [out, in] (nn.Linear's
  /// layout, read as x W^T) rather than [in, out].
  FailureOr<bool> adaptWeight(func::FuncOp func, unsigned index,
                              ArrayRef<WeightUse> uses, double scaling,
                              SplitMix64 &random) {
    auto weightType = cast<RankedTensorType>(func.getArgument(index).getType());
    // Every use agrees on the layout: nn.Linear's W is [out, in].
    bool transposed = uses.front().transposed;
    if (llvm::any_of(uses, [&](const WeightUse &use) {
          return use.transposed != transposed;
        }))
      return func.emitError("--lora: parameter '")
             << paramName(func, index)
             << "' is read both as x W and as x W^T; cannot tell its "
                "input dimension";
    int64_t in = weightType.getDimSize(transposed ? 1 : 0);
    int64_t out = weightType.getDimSize(transposed ? 0 : 1);
    Type elementType = weightType.getElementType();
    if (!elementType.isF32())
      return func.emitError("--lora: parameter '")
             << paramName(func, index) << "' is " << elementType
             << "; adapters are f32";

    std::string module = moduleName(paramName(func, index)).str();
    Builder b(func.getContext());
    auto aType = RankedTensorType::get({rank, in}, elementType);
    auto bType = RankedTensorType::get({out, rank}, elementType);
    // PEFT: kaiming_uniform_(A, a=sqrt(5)): bound = 1 / sqrt(in).
    float bound = 1.0f / std::sqrt(float(in));
    SmallVector<float> aValues(rank * in);
    for (float &v : aValues)
      v = float((2.0 * random.uniform() - 1.0) * double(bound));
    SmallVector<float> bValues(out * rank, 0.0f);
    auto paramAttrs = [&](StringRef suffix, DenseElementsAttr init) {
      return b.getDictionaryAttr(
          {b.getNamedAttr(attrs::kParam, b.getStringAttr(module + suffix)),
           b.getNamedAttr(attrs::kInit, init)});
    };
    for (StringRef suffix : {".lora_A.weight", ".lora_B.weight"})
      if (hasParamNamed(func, module + suffix.str()))
        return func.emitError("--lora: the model already has a parameter '")
               << module << suffix << "'";
    Location loc = func.getArgument(index).getLoc();
    if (failed(func.insertArgument(
            index + 1, aType,
            paramAttrs(".lora_A.weight",
                       DenseElementsAttr::get(aType, ArrayRef(aValues))),
            loc)) ||
        failed(func.insertArgument(
            index + 2, bType,
            paramAttrs(".lora_B.weight",
                       DenseElementsAttr::get(bType, ArrayRef(bValues))),
            loc)))
      return failure();
    Value a = func.getArgument(index + 1), bMatrix = func.getArgument(index + 2);

    for (const WeightUse &use : uses) {
      MatmulOp matmul = use.matmul;
      OpBuilder builder(matmul->getContext());
      builder.setInsertionPointAfter(matmul);
      Location at = matmul.getLoc();
      Value x = matmul.getLhs();
      if (dropout > 0) {
        Value key = rngKey(func);
        Value dropped =
            buildTrainingDropout(builder, at, x, dropout, key,
                                 kDropoutStreamBase + streams++)
                .first;
        x = ModeSelectOp::create(builder, at, dropped, x);
      }
      auto resultType = cast<RankedTensorType>(matmul.getType());
      auto lowType = RankedTensorType::get(
          {resultType.getDimSize(0), rank}, elementType);
      // x A^T: A is [r, in], read transposed, as the products read W.
      Value low = MatmulOp::create(builder, at, lowType, x, a,
                                   matmul.getTransposeLhs(),
                                   /*transpose_rhs=*/true);
      Value delta = MatmulOp::create(builder, at, resultType, low, bMatrix,
                                     /*transpose_lhs=*/false,
                                     /*transpose_rhs=*/true);
      delta = MulOp::create(builder, at, delta,
                            buildSplat(builder, at, resultType, scaling));
      Value sum = AddOp::create(builder, at, matmul.getResult(), delta);
      matmul.getResult().replaceAllUsesExcept(sum, sum.getDefiningOp());
    }
    return transposed;
  }

  static bool hasParamNamed(func::FuncOp func, StringRef name) {
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (auto n = func.getArgAttrOfType<StringAttr>(i, attrs::kParam))
        if (n.getValue() == name)
          return true;
    return false;
  }

  /// The step's random key: the model's (its dropout's), else a new
  /// argument tagged lmc.rng_key.
  Value rngKey(func::FuncOp func) {
    for (BlockArgument arg : func.getArguments())
      if (func.getArgAttr(arg.getArgNumber(), attrs::kRngKey))
        return arg;
    unsigned index = func.getNumArguments();
    OpBuilder b(func.getContext());
    (void)func.insertArgument(
        index, RankedTensorType::get({}, b.getI64Type()),
        b.getDictionaryAttr(b.getNamedAttr(attrs::kRngKey, b.getUnitAttr())),
        func.getLoc());
    return func.getArgument(index);
  }

};

struct LoraPass : public lmc::impl::LmcLoraBase<LoraPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>(attrs::kForward);
    if (!func || !func.getBody().hasOneBlock()) {
      module.emitError("lmc-lora: expected a single-block function @")
          << attrs::kForward;
      return signalPassFailure();
    }
    if (basePrecision == Precision::F16) {
      module.emitError("--base-precision must be f32 or bf16, not '")
          << stringifyPrecision(basePrecision) << "'";
      return signalPassFailure();
    }
    LoraRewrite rewrite{rank,   alpha, dropout,
                        rslora, seed,  basePrecision == Precision::BF16};
    if (failed(rewrite.parseOptions(module, targets, train)) ||
        failed(rewrite.addAdapters(module, func)))
      return signalPassFailure();
  }
};

} // namespace
