//===- Train.cpp - the train block of the lmc DSL -------------------------===//
//
// `train { ... }` holds the defaults of the compile: batch, loss, optimizer
// and its hyperparameters, gradient clipping, seed; the schedule is recorded
// on the module for the runtime. Flags given on the command line win
// (lmc::applyDslTrainDefaults, lib/Driver); `mesh` and `shard` become the
// --mesh and --shard of the compile (docs/distributed.md).
//
//===----------------------------------------------------------------------===//

#include "Train.h"

#include "lmc/runtime/optimizers.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>

using namespace mlir;

namespace lmc::dsl {

namespace {

class TrainReader {
public:
  TrainReader(MLIRContext *context, DslTrainSettings &settings)
      : context(context), settings(settings), b(context) {}

  LogicalResult run(const Program &program, DictionaryAttr &schedule);

private:
  InFlightDiagnostic error(SrcLoc at) {
    failedAny = true;
    return emitError(at.get(context));
  }
  /// A compile-time number: literals and arithmetic on them.
  std::optional<double> number(const Expr &e);
  std::optional<double> numberOrError(const Expr &e, StringRef what);
  void readEntry(const TrainEntry &entry);
  void readOptimizer(const Expr &e);
  void readSchedule(const Expr &e);
  void readMesh(const Expr &e);
  void readShard(const std::string &pattern, const Expr &e);

  MLIRContext *context;
  DslTrainSettings &settings;
  OpBuilder b;
  DictionaryAttr schedule;
  bool failedAny = false;
};

std::optional<double> TrainReader::number(const Expr &e) {
  switch (e.kind) {
  case Expr::Int:
    return double(e.intValue);
  case Expr::Float:
    return e.floatValue;
  case Expr::Unary:
    if (auto v = number(*e.args[0]))
      return -*v;
    return std::nullopt;
  case Expr::Binary: {
    auto l = number(*e.args[0]), r = number(*e.args[1]);
    if (!l || !r)
      return std::nullopt;
    if (e.name == "+")
      return *l + *r;
    if (e.name == "-")
      return *l - *r;
    if (e.name == "*")
      return *l * *r;
    if (e.name == "/")
      return *l / *r;
    if (e.name == "**")
      return std::pow(*l, *r);
    return std::nullopt;
  }
  default:
    return std::nullopt;
  }
}

std::optional<double> TrainReader::numberOrError(const Expr &e,
                                                 StringRef what) {
  std::optional<double> v = number(e);
  if (!v || !std::isfinite(*v) || *v < 0) {
    error(e.loc) << "'" << what << "' must be a non-negative number";
    return std::nullopt;
  }
  return v;
}

void TrainReader::readOptimizer(const Expr &e) {
  if (e.kind != Expr::Name && e.kind != Expr::Call) {
    error(e.loc) << "expected an optimizer: " << optimizerChoices()
                 << ", optionally with settings, e.g. adamw(lr = 3e-4)";
    return;
  }
  settings.optimizer = optimizerNamed(e.name);
  if (!settings.optimizer) {
    error(e.loc) << "unknown optimizer '" << e.name << "'; expected "
                 << optimizerChoices();
    return;
  }
  if (!e.args.empty())
    error(e.args.front()->loc)
        << "optimizer settings are named, e.g. " << e.name << "(lr = 0.01)";
  for (auto [i, kw] : llvm::enumerate(e.kwargs)) {
    const std::string &key = kw.first;
    const Expr &value = *kw.second;
    if (key == "betas") {
      if (value.kind != Expr::Tuple || value.args.size() != 2) {
        error(value.loc) << "'betas' must be a pair, e.g. (0.9, 0.999)";
        continue;
      }
      auto b1 = numberOrError(*value.args[0], "betas");
      auto b2 = numberOrError(*value.args[1], "betas");
      if (b1 && b2) {
        settings.beta1 = *b1;
        settings.beta2 = *b2;
      }
      continue;
    }
    std::optional<double> *slot =
        key == "lr"             ? &settings.lr
        : key == "momentum"     ? &settings.momentum
        : key == "beta1"        ? &settings.beta1
        : key == "beta2"        ? &settings.beta2
        : key == "eps"          ? &settings.eps
        : key == "weight_decay" ? &settings.weightDecay
                                : nullptr;
    if (!slot) {
      error(e.kwargLocs[i]) << "unknown optimizer setting '" << key
                            << "'; expected lr, momentum, betas, beta1, "
                               "beta2, eps or weight_decay";
      continue;
    }
    if (auto v = numberOrError(value, key))
      *slot = *v;
  }
}

void TrainReader::readSchedule(const Expr &e) {
  if ((e.kind != Expr::Name && e.kind != Expr::Call) ||
      !llvm::is_contained({"constant", "linear", "cosine", "wsd"}, e.name)) {
    error(e.loc) << "expected a schedule: constant, linear, cosine or wsd, "
                    "e.g. cosine(warmup = 100, min_lr = 3e-5)";
    return;
  }
  if (!e.args.empty())
    error(e.args.front()->loc)
        << "schedule settings are named, e.g. cosine(warmup = 100)";
  SmallVector<NamedAttribute> entries{
      b.getNamedAttr("name", b.getStringAttr(e.name))};
  for (auto [i, kw] : llvm::enumerate(e.kwargs)) {
    // Keys as the runtime's flags spell them (--warmup, --lr-min, ...).
    StringRef key = kw.first;
    bool isInt = key == "warmup" || key == "decay_steps" || key == "steps";
    if (key == "min_lr")
      key = "lr_min";
    if (!isInt && key != "lr_min") {
      error(e.kwargLocs[i]) << "unknown schedule setting '" << kw.first
                            << "'; expected warmup, min_lr, decay_steps or "
                               "steps";
      continue;
    }
    std::optional<double> v = numberOrError(*kw.second, kw.first);
    if (!v)
      continue;
    if (isInt && (*v != std::floor(*v) || *v > 1e15)) {
      error(kw.second->loc) << "'" << kw.first << "' must be an integer";
      continue;
    }
    entries.push_back(b.getNamedAttr(
        key, isInt ? Attribute(b.getI64IntegerAttr(int64_t(*v)))
                   : Attribute(b.getF64FloatAttr(*v))));
  }
  schedule = b.getDictionaryAttr(entries);
}

void TrainReader::readMesh(const Expr &e) {
  std::string mesh;
  for (auto [i, kw] : llvm::enumerate(e.kwargs)) {
    const auto &[axis, size] = kw;
    if (axis != "data" && axis != "model") {
      error(e.kwargLocs[i]) << "unknown mesh axis '" << axis
                            << "'; expected data and/or model";
      continue;
    }
    if (size->kind != Expr::Int || size->intValue < 1) {
      error(size->loc) << "mesh axis '" << axis
                       << "' needs a positive integer size";
      continue;
    }
    mesh += (mesh.empty() ? "" : ",") + axis + "=" +
            std::to_string(size->intValue);
  }
  settings.mesh = mesh;
}

void TrainReader::readShard(const std::string &pattern, const Expr &e) {
  if (e.kind != Expr::List) {
    error(e.loc) << "expected one entry per dimension, e.g. [_, model]";
    return;
  }
  std::string rule = pattern + "=";
  for (auto [i, dim] : llvm::enumerate(e.args)) {
    if (dim->kind != Expr::Name || (dim->name != "_" && dim->name != "model")) {
      error(dim->loc) << "expected '_' (whole) or 'model' (split over the "
                         "model processes)";
      return;
    }
    rule += (i ? "," : "") + dim->name;
  }
  settings.shard.push_back(rule);
}

void TrainReader::readEntry(const TrainEntry &entry) {
  const std::string &key = entry.key;
  const Expr &value = *entry.value;
  if (key == "mesh") {
    readMesh(value);
    return;
  }
  if (key == "shard") {
    readShard(entry.pattern, value);
    return;
  }
  if (key == "batch" || key == "seed") {
    if (value.kind != Expr::Int || (key == "batch" && value.intValue <= 0) ||
        value.intValue < 0) {
      error(value.loc) << "'" << key << "' must be a "
                       << (key == "batch" ? "positive" : "non-negative")
                       << " integer";
      return;
    }
    if (key == "batch")
      settings.batch = value.intValue;
    else
      settings.seed = uint64_t(value.intValue);
  } else if (key == "loss") {
    if (value.kind == Expr::Name)
      settings.loss = value.name == "cross_entropy" || value.name == "mse"
                          ? value.name
                          : "output:" + value.name;
    else
      error(value.loc) << "expected a loss: cross_entropy, mse, or the name "
                          "of a model output";
  } else if (key == "optimizer") {
    readOptimizer(value);
  } else if (key == "clip_grad_norm") {
    if (auto v = numberOrError(value, key))
      settings.clipGradNorm = *v;
  } else if (key == "schedule") {
    readSchedule(value);
  } else if (key == "precision") {
    if (value.kind == Expr::Name)
      settings.precision = symbolizePrecision(value.name);
    if (!settings.precision)
      error(value.loc) << "expected a precision: f32, bf16 or f16";
  } else {
    error(entry.loc) << "unknown train setting '" << key
                     << "'; expected batch, loss, optimizer, clip_grad_norm, "
                        "schedule, seed, precision, mesh or shard";
  }
}

LogicalResult TrainReader::run(const Program &program,
                               DictionaryAttr &scheduleOut) {
  llvm::StringMap<SrcLoc> seen;
  for (const TrainEntry &entry : program.train) {
    if (entry.key != "shard") {
      auto [it, inserted] = seen.try_emplace(entry.key, entry.loc);
      if (!inserted) {
        InFlightDiagnostic diag = error(entry.loc);
        diag << "'" << entry.key << "' is set twice";
        diag.attachNote(it->second.get(context)) << "first set here";
        continue;
      }
    }
    readEntry(entry);
  }
  scheduleOut = schedule;
  return failure(failedAny);
}

} // namespace

LogicalResult readTrainBlock(MLIRContext *context, const Program &program,
                             DslTrainSettings &settings,
                             DictionaryAttr &schedule) {
  return TrainReader(context, settings).run(program, schedule);
}

} // namespace lmc::dsl
