//===- descriptor_round_trip_test.cpp - Writer and reader agree ----------===//
//
// The descriptor is written by the compiler (lib/Driver/Descriptor.cpp,
// from the module's entry points and lmc.* attributes) and read by the
// runtime (runtime/model/descriptor.cpp); both spell its lines through
// lmc/runtime/descriptor_lines.h. Here three compiles of the char GPT
// that together write every kind of line (LoRA + remat; a tensor-parallel
// mesh with fused q/k/v pieces; the DSL's train block) are parsed back by
// the runtime, and each field it reads is compared with what the module
// said before the writer ran.
//
//===----------------------------------------------------------------------===//

#include "lmc/Dialect/Lmc/IR/LmcAttributes.h"
#include "lmc/Driver/Emit.h"
#include "lmc/Driver/Pipelines.h"
#include "lmc/Import/Dsl/Dsl.h"
#include "lmc/Import/Onnx/Onnx.h"
#include "lmc/runtime/descriptor_lines.h"

#include "model/descriptor.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

using namespace mlir;
namespace descriptor = lmc::descriptor;

namespace {

/// examples/gpt-char in the source tree (lit passes LMC_SRC).
std::string example(const char *file) {
  const char *src = std::getenv("LMC_SRC");
  return std::string(src ? src : ".") + "/examples/gpt-char/" + file;
}

/// An entry point's tensor as the module declares it.
struct Declared {
  descriptor::Role role;
  std::string name;
  std::vector<int64_t> shape;
};

std::vector<Declared> declaredArgs(func::FuncOp func) {
  std::vector<Declared> out;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto type = cast<RankedTensorType>(func.getArgument(i).getType());
    out.push_back(
        {*lmc::attrs::roleIn(func.getArgAttrDict(i)),
         func.getArgAttrOfType<StringAttr>(i, lmc::attrs::kName).str(),
         {type.getShape().begin(), type.getShape().end()}});
  }
  return out;
}

std::vector<Declared> declaredResults(func::FuncOp func) {
  std::vector<Declared> out;
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    auto type = cast<RankedTensorType>(func.getResultTypes()[i]);
    out.push_back(
        {*lmc::attrs::roleIn(func.getResultAttrDict(i)),
         func.getResultAttrOfType<StringAttr>(i, lmc::attrs::kName).str(),
         {type.getShape().begin(), type.getShape().end()}});
  }
  return out;
}

/// What the module says, read before the descriptor is written (the
/// writer drops the tags) and after lowering (the lowering's lines).
struct Expected {
  std::string loss, optimizer, precision = "f32";
  std::vector<std::pair<std::string, double>> hparams;
  DictionaryAttr remat, lora, schedule, mesh, splits, arenas, pieces;
  ArrayAttr inPlace, profileRegions;
  std::map<std::string, std::pair<std::vector<Declared>, std::vector<Declared>>>
      entries;
  std::vector<std::string> initNames;
};

struct Compiled {
  std::string text;
  uint64_t weightsSize = 0;
  Expected expected;
};

class DescriptorRoundTrip : public ::testing::Test {
protected:
  void SetUp() override {
    DialectRegistry registry;
    lmc::registerLmcDialects(registry);
    context = std::make_unique<MLIRContext>(registry);
    context->loadAllAvailableDialects();
  }

  OwningOpRef<ModuleOp> importOnnx() {
    lmc::OnnxImportOptions options;
    options.batch = 4;
    options.rebindFixedBatch = true;
    return lmc::importOnnxFile(*context, example("gpt.onnx"), options);
  }

  Compiled compile(OwningOpRef<ModuleOp> module,
                   const lmc::TrainingOptions &training,
                   const lmc::ShardingOptions &sharding = {}) {
    Compiled out;
    EXPECT_TRUE(module);
    if (!module)
      return out;
    PassManager pm(context.get());
    lmc::buildLmcTrainingPipeline(pm, training, lmc::Phase::Precision);
    EXPECT_TRUE(succeeded(pm.run(*module)));
    Expected &e = out.expected;
    Operation *m = module->getOperation();
    e.loss = m->getAttrOfType<StringAttr>(lmc::attrs::kLoss).str();
    auto optimizer = m->getAttrOfType<DictionaryAttr>(lmc::attrs::kOptimizer);
    e.optimizer = optimizer.getAs<StringAttr>("name").str();
    for (const char *key : {"lr", "beta1", "beta2", "eps", "weight_decay",
                            "momentum", "clip_grad_norm"})
      e.hparams.push_back(
          {key, optimizer.getAs<FloatAttr>(key).getValueAsDouble()});
    if (auto precision = m->getAttrOfType<StringAttr>(lmc::attrs::kPrecision))
      e.precision = precision.str();
    e.remat = m->getAttrOfType<DictionaryAttr>(lmc::attrs::kRemat);
    e.lora = m->getAttrOfType<DictionaryAttr>(lmc::attrs::kLora);
    e.schedule = m->getAttrOfType<DictionaryAttr>(lmc::attrs::kSchedule);
    e.pieces = m->getAttrOfType<DictionaryAttr>(lmc::attrs::kPieces);
    for (StringRef name :
         {lmc::attrs::kTrainStep, lmc::attrs::kEvalStep, lmc::attrs::kGradStep,
          lmc::attrs::kApplyStep, lmc::attrs::kChunkStep})
      if (auto func = module->lookupSymbol<func::FuncOp>(name))
        e.entries[name.str()] = {declaredArgs(func), declaredResults(func)};
    auto train = module->lookupSymbol<func::FuncOp>(lmc::attrs::kTrainStep);
    for (unsigned i = 0; i < train.getNumArguments(); ++i)
      if (train.getArgAttr(i, lmc::attrs::kInit))
        e.initNames.push_back(
            train.getArgAttrOfType<StringAttr>(i, lmc::attrs::kName).str());

    FailureOr<lmc::ModelDescription> model =
        lmc::describeModel(*module, /*matmulParts=*/4);
    EXPECT_TRUE(succeeded(model));
    if (failed(model))
      return out;
    PassManager lowering(context.get());
    lmc::buildLmcLoweringPipeline(lowering, sharding, lmc::Phase::LLVM);
    EXPECT_TRUE(succeeded(lowering.run(*module)));
    e.mesh = m->getAttrOfType<DictionaryAttr>(lmc::attrs::kMesh);
    e.splits = m->getAttrOfType<DictionaryAttr>(lmc::attrs::kSplits);
    e.arenas = m->getAttrOfType<DictionaryAttr>(lmc::attrs::kArenas);
    e.inPlace = m->getAttrOfType<ArrayAttr>(lmc::attrs::kInPlace);
    e.profileRegions = m->getAttrOfType<ArrayAttr>(lmc::attrs::kProfileRegions);
    lmc::describeLowering(*module, *model);
    out.text = model->descriptor;
    out.weightsSize = model->weights.size;
    return out;
  }

  std::unique_ptr<MLIRContext> context;
};

void expectTensors(const std::vector<Declared> &declared,
                   const std::vector<lmc::rt::TensorSpec> &read,
                   int64_t modelParallel, const std::string &where) {
  ASSERT_EQ(declared.size(), read.size()) << where;
  for (size_t i = 0; i < read.size(); ++i) {
    EXPECT_EQ(declared[i].role, read[i].role) << where << " " << i;
    EXPECT_EQ(declared[i].name, read[i].name) << where << " " << i;
    lmc::rt::Shape whole = lmc::rt::wholeShape(read[i], modelParallel);
    EXPECT_EQ(declared[i].shape,
              std::vector<int64_t>(whole.begin(), whole.end()))
        << where << " " << read[i].name;
  }
}

/// Every field the runtime reads back equals what the module said.
void expectReadBack(const Compiled &compiled) {
  SCOPED_TRACE(compiled.text.substr(0, 200));
  const Expected &e = compiled.expected;
  lmc::rt::Descriptor d =
      lmc::rt::parseDescriptor(compiled.text, compiled.weightsSize);
  EXPECT_EQ(d.loss, e.loss);
  EXPECT_EQ(d.optimizer, e.optimizer);
  EXPECT_EQ(d.hparams, e.hparams);
  EXPECT_EQ(d.precision, e.precision);
  EXPECT_EQ(d.matmulParts, 4);
  EXPECT_GT(d.flops, 0u);
  EXPECT_GT(d.activationBytes, 0u);

  ASSERT_EQ(d.remat.has_value(), bool(e.remat));
  if (e.remat) {
    EXPECT_EQ(d.remat->policy, e.remat.getAs<StringAttr>("policy").str());
    EXPECT_EQ(int64_t(d.remat->cuts),
              e.remat.getAs<IntegerAttr>("cuts").getInt());
    EXPECT_EQ(int64_t(d.remat->recomputed),
              e.remat.getAs<IntegerAttr>("recomputed").getInt());
  }
  ASSERT_EQ(d.lora.has_value(), bool(e.lora));
  if (e.lora) {
    EXPECT_EQ(d.lora->rank, e.lora.getAs<IntegerAttr>("rank").getInt());
    EXPECT_EQ(d.lora->alpha,
              e.lora.getAs<FloatAttr>("alpha").getValueAsDouble());
    EXPECT_EQ(d.lora->dropout,
              e.lora.getAs<FloatAttr>("dropout").getValueAsDouble());
    EXPECT_EQ(d.lora->rslora, e.lora.getAs<BoolAttr>("rslora").getValue());
    auto weights = e.lora.getAs<ArrayAttr>("weights");
    auto targets = e.lora.getAs<ArrayAttr>("targets");
    auto layouts = e.lora.getAs<ArrayAttr>("layouts");
    ASSERT_EQ(d.lora->weights.size(), weights.size());
    for (size_t i = 0; i < weights.size(); ++i) {
      EXPECT_EQ(d.lora->weights[i].name, cast<StringAttr>(weights[i]).str());
      EXPECT_EQ(d.lora->weights[i].module, cast<StringAttr>(targets[i]).str());
      EXPECT_EQ(d.lora->weights[i].outIn,
                cast<StringAttr>(layouts[i]).getValue() == "out_in");
    }
  }
  ASSERT_EQ(d.schedule.has_value(), bool(e.schedule));
  if (e.schedule) {
    EXPECT_STREQ(lmc::rt::scheduleKindName(d.schedule->kind),
                 e.schedule.getAs<StringAttr>("name").getValue().data());
    if (auto warmup = e.schedule.getAs<IntegerAttr>("warmup"))
      EXPECT_EQ(d.schedule->warmup, warmup.getInt());
    if (auto lrMin = e.schedule.getAs<FloatAttr>("lr_min"))
      EXPECT_EQ(d.schedule->lrMin, lrMin.getValueAsDouble());
  }

  int64_t modelParallel = 1;
  if (e.mesh) {
    EXPECT_EQ(d.dataParallel, e.mesh.getAs<IntegerAttr>("data").getInt());
    modelParallel = e.mesh.getAs<IntegerAttr>("model").getInt();
    EXPECT_EQ(d.modelParallel, modelParallel);
  } else {
    EXPECT_EQ(d.modelParallel, 1);
  }
  const std::pair<const char *,
                  std::pair<const std::vector<lmc::rt::TensorSpec> *,
                            const std::vector<lmc::rt::TensorSpec> *>>
      steps[] = {{"train_step", {&d.trainArgs, &d.trainResults}},
                 {"eval_step", {&d.evalArgs, &d.evalResults}},
                 {"grad_step", {&d.gradArgs, &d.gradResults}},
                 {"apply_step", {&d.applyArgs, &d.applyResults}},
                 {"chunk_step", {&d.chunkArgs, &d.chunkResults}}};
  for (const auto &[name, specs] : steps) {
    auto it = e.entries.find(name);
    if (it == e.entries.end()) {
      EXPECT_TRUE(specs.first->empty()) << name;
      continue;
    }
    expectTensors(it->second.first, *specs.first, modelParallel,
                  std::string(name) + " arg");
    expectTensors(it->second.second, *specs.second, modelParallel,
                  std::string(name) + " result");
  }
  // Each split tensor's dimension, as lmc-shard-annotate recorded it.
  if (e.splits)
    for (NamedAttribute split : e.splits)
      for (const lmc::rt::TensorSpec &spec : d.trainArgs)
        if (spec.name == split.getName().getValue())
          EXPECT_EQ(spec.splitDim, cast<IntegerAttr>(split.getValue()).getInt())
              << spec.name;

  std::vector<std::string> inits;
  for (const lmc::rt::InitSpec &init : d.inits)
    inits.push_back(init.name);
  std::vector<std::string> expectedInits = e.initNames;
  std::sort(inits.begin(), inits.end());
  std::sort(expectedInits.begin(), expectedInits.end());
  EXPECT_EQ(inits, expectedInits);

  // Train args tagged with their inputs' bounds: the token ids index the
  // embedding's rows, the targets are classes (or cross_entropy's
  // ignore_index).
  for (const lmc::rt::TensorSpec *input :
       d.trainArgsWithRole(descriptor::Role::Input)) {
    ASSERT_TRUE(input->bound) << input->name;
    EXPECT_EQ(input->bound->limit, 256) << input->name;
  }

  std::vector<std::pair<std::string, uint64_t>> arenas;
  if (e.arenas)
    for (NamedAttribute arena : e.arenas)
      arenas.push_back(
          {arena.getName().str(),
           uint64_t(cast<IntegerAttr>(arena.getValue()).getInt())});
  EXPECT_EQ(d.arenas, arenas);
  std::set<std::string> inPlace;
  if (e.inPlace)
    for (StringRef name : e.inPlace.getAsValueRange<StringAttr>())
      inPlace.insert(name.str());
  EXPECT_EQ(d.inPlace, inPlace);
  ASSERT_EQ(d.profileRegions.size(),
            e.profileRegions ? e.profileRegions.size() : 0);
  for (size_t i = 0; i < d.profileRegions.size(); ++i) {
    const lmc::rt::ProfileRegion &region = d.profileRegions[i];
    EXPECT_EQ(region.function + " " + region.kind + " " + region.label,
              cast<StringAttr>(e.profileRegions[i]).str());
  }
  size_t joins = 0;
  if (e.pieces)
    for (NamedAttribute whole : e.pieces) {
      auto it = std::find_if(d.joins.begin(), d.joins.end(),
                             [&](const lmc::rt::Join &join) {
                               return join.name == whole.getName().getValue();
                             });
      ASSERT_NE(it, d.joins.end()) << whole.getName().str();
      std::vector<std::string> pieces;
      for (StringRef piece :
           cast<ArrayAttr>(whole.getValue()).getAsValueRange<StringAttr>())
        pieces.push_back(piece.str());
      EXPECT_EQ(it->pieces, pieces);
      ++joins;
    }
  EXPECT_EQ(d.joins.size(), joins);
}

/// The kinds of line `text` holds.
std::set<descriptor::Line> linesIn(const std::string &text) {
  std::set<descriptor::Line> kinds;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string first, second;
    words >> first >> second;
    if (std::optional<descriptor::Line> kind =
            descriptor::lineNamed(first, second))
      kinds.insert(*kind);
  }
  return kinds;
}

TEST_F(DescriptorRoundTrip, EveryKindOfLineReadsBackAsWritten) {
  std::vector<Compiled> compiles;
  {
    // Adapters and activation checkpointing: lora, lora_weight, remat.
    lmc::TrainingOptions training;
    training.lora.targets = "qkv";
    training.lora.rank = 4;
    training.lora.alpha = 16.0;
    training.lora.dropout = 0.125;
    training.remat = "selective";
    compiles.push_back(compile(importOnnx(), training));
  }
  {
    // Tensor parallelism over fused q/k/v: mesh, split, join; bf16.
    lmc::TrainingOptions training;
    training.optimizer.optimizer = lmc::Optimizer::Sgd;
    training.optimizer.lr = 0.25;
    training.precision.precision = lmc::Precision::BF16;
    lmc::ShardingOptions sharding{
        "model=2", "*.qkv.weight=model,_;*.attn.proj.weight=_,model"};
    training.shard = sharding.shard;
    compiles.push_back(compile(importOnnx(), training, sharding));
  }
  {
    // The DSL's train block: schedule, AdamW's betas, clipping.
    lmc::DslImportOptions options;
    options.batch = 4;
    lmc::DslTrainSettings settings;
    OwningOpRef<ModuleOp> module =
        lmc::importDslFile(*context, example("gpt.lmc"), options, &settings);
    lmc::TrainingOptions training;
    lmc::applyDslTrainDefaults(settings, training,
                               [](llvm::StringRef) { return false; });
    compiles.push_back(compile(std::move(module), training));
  }

  std::set<descriptor::Line> written;
  for (const Compiled &compiled : compiles) {
    ASSERT_FALSE(compiled.text.empty());
    expectReadBack(compiled);
    std::set<descriptor::Line> kinds = linesIn(compiled.text);
    written.insert(kinds.begin(), kinds.end());
  }
  // A kind of line no compile here writes is one this test cannot hold the
  // reader to: extend the compiles when adding one.
  for (size_t i = 0; i <= size_t(descriptor::Line::End); ++i)
    EXPECT_TRUE(written.count(descriptor::Line(i)))
        << "no compile wrote a '" << descriptor::keyword(descriptor::Line(i))
        << "' line";
}

} // namespace
