//===- descriptor.cpp - The compiled model's descriptor text -------------===//

#include "model/descriptor.h"

#include "base/error.h"
#include "lmc/runtime/descriptor_lines.h"
#include "lmc/runtime/optimizers.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

namespace lmc::rt {

Shape wholeShape(const TensorSpec &spec, int64_t modelParallel) {
  Shape shape = spec.shape;
  if (spec.splitDim >= 0)
    shape[size_t(spec.splitDim)] *= modelParallel;
  return shape;
}

Shape Descriptor::globalShape(const TensorSpec &spec) const {
  return wholeShape(spec, modelParallel);
}

size_t Descriptor::globalByteSize(const TensorSpec &spec) const {
  return size_t(lmc::rt::numElements(globalShape(spec))) *
         dtypeSize(spec.dtype);
}

std::optional<double> Descriptor::hparam(std::string_view name) const {
  for (const auto &[key, value] : hparams)
    if (key == name)
      return value;
  return std::nullopt;
}

std::vector<const TensorSpec *> Descriptor::trainArgsWithRole(Role role) const {
  std::vector<const TensorSpec *> out;
  for (const TensorSpec &spec : trainArgs)
    if (spec.role == role)
      out.push_back(&spec);
  return out;
}

bool Descriptor::hasHyper(std::string_view name) const {
  for (const TensorSpec &spec : trainArgs)
    if (spec.role == Role::Hyper && spec.name == name)
      return true;
  return false;
}

bool Descriptor::hasLossScaling() const {
  for (const TensorSpec &spec : trainArgs)
    if (spec.role == Role::State && spec.name == kLossScaleState)
      return true;
  return false;
}

bool Descriptor::hasGradNorm() const {
  for (const TensorSpec &spec : trainResults)
    if (spec.role == Role::GradNorm)
      return true;
  return false;
}

namespace {

/// Line kinds in the order the ABI requires them (descriptor_lines.h).
using LineKind = descriptor::Line;
using descriptor::isTensorLine;

/// "per-block:N" (the first N segments recomputed whole, lmc's --remat).
bool isCountedPerBlock(std::string_view policy) {
  std::string_view prefix = "per-block:";
  if (policy.substr(0, prefix.size()) != prefix ||
      policy.size() == prefix.size())
    return false;
  for (char c : policy.substr(prefix.size()))
    if (c < '0' || c > '9')
      return false;
  return true;
}

bool isRepeatable(LineKind kind) {
  return kind == LineKind::Hparam || isTensorLine(kind) ||
         kind == LineKind::Bound || kind == LineKind::Init ||
         kind == LineKind::Join ||
         kind == LineKind::Split || kind == LineKind::Arena ||
         kind == LineKind::InPlace || kind == LineKind::Profile ||
         kind == LineKind::LoraWeight;
}

std::vector<std::string> splitFields(std::string_view line) {
  std::vector<std::string> fields;
  size_t start = 0;
  while (true) {
    size_t space = line.find(' ', start);
    fields.emplace_back(line.substr(start, space - start));
    if (fields.back().empty())
      throw Error("empty field (fields are separated by single spaces)");
    if (space == std::string_view::npos)
      return fields;
    start = space + 1;
  }
}

uint64_t parseUnsigned(const std::string &text, const char *what) {
  LMC_CHECK(!text.empty() && text.size() <= 19 &&
                text.find_first_not_of("0123456789") == std::string::npos,
            "invalid ", what, " '", text, "'");
  return std::stoull(text);
}

/// An optionally negative integer of at most 18 digits.
int64_t parseSigned(const std::string &text, const char *what) {
  const bool negative = !text.empty() && text[0] == '-';
  const std::string digits = negative ? text.substr(1) : text;
  LMC_CHECK(!digits.empty() && digits.size() <= 18 &&
                digits.find_first_not_of("0123456789") == std::string::npos,
            "invalid ", what, " '", text, "'");
  return negative ? -std::stoll(digits) : std::stoll(digits);
}

int64_t parsePositive(const std::string &text, const char *what) {
  uint64_t value = parseUnsigned(text, what);
  LMC_CHECK(value >= 1 && value <= (1 << 24), "invalid ", what, " '", text,
            "'");
  return int64_t(value);
}

double parseFiniteDouble(const std::string &text, const char *what) {
  errno = 0;
  char *end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  LMC_CHECK(!text.empty() && end == text.c_str() + text.size() &&
                errno != ERANGE && std::isfinite(value),
            "invalid ", what, " '", text, "'");
  return value;
}

/// Lines with one kind's allowed roles, in the order they must appear.
std::vector<Role> allowedRoles(LineKind kind) {
  switch (kind) {
  case LineKind::TrainArg:
    return {Role::Param, Role::State, Role::Buffer, Role::Frozen, Role::Input,
            Role::Hyper};
  case LineKind::TrainResult:
    return {Role::Param, Role::State, Role::Buffer, Role::Loss,
            Role::GradNorm};
  case LineKind::EvalArg:
    return {Role::Param, Role::Buffer, Role::Frozen, Role::Input};
  case LineKind::EvalResult:
    return {Role::Loss, Role::Output};
  case LineKind::GradArg:
    return {Role::Param, Role::State, Role::Buffer, Role::Frozen, Role::Input,
            Role::Hyper};
  case LineKind::GradResult:
    return {Role::Grad, Role::Buffer, Role::Loss};
  case LineKind::ApplyArg:
    return {Role::Param, Role::State, Role::Grad, Role::Hyper};
  case LineKind::ApplyResult:
    return {Role::Param, Role::State, Role::GradNorm};
  case LineKind::ChunkArg:
    return {Role::Param, Role::State, Role::Grad, Role::Hyper, Role::GradNorm};
  case LineKind::ChunkResult:
    return {Role::Param, Role::State};
  default:
    return {};
  }
}

TensorSpec parseTensorLine(const std::vector<std::string> &fields,
                           LineKind kind) {
  // <train|eval> <arg|result> <role> <name> <dtype> <rank> <dims...>
  LMC_CHECK(fields.size() >= 6, "expected '", fields[0], " ", fields[1],
            " <role> <name> <dtype> <rank> <dims...>'");
  TensorSpec spec;
  std::vector<Role> roles = allowedRoles(kind);
  bool found = false;
  for (Role role : roles)
    if (fields[2] == roleName(role)) {
      spec.role = role;
      found = true;
    }
  LMC_CHECK(found, "role '", fields[2], "' is not allowed in '", fields[0], " ",
            fields[1], "' lines");
  spec.name = fields[3];
  std::optional<DType> dtype = parseDTypeName(fields[4]);
  LMC_CHECK(dtype, "unknown dtype '", fields[4], "'");
  LMC_CHECK(*dtype != DType::BF16 || spec.role == Role::Frozen,
            "dtype bf16 is only for frozen tensors, not ", fields[2], " '",
            fields[3], "'");
  spec.dtype = *dtype;
  uint64_t rank = parseUnsigned(fields[5], "rank");
  LMC_CHECK(fields.size() == 6 + rank, "rank ", rank, " needs ", rank,
            " dimensions, found ", fields.size() - 6);
  for (size_t i = 6; i < fields.size(); ++i) {
    uint64_t dim = parseUnsigned(fields[i], "dimension");
    LMC_CHECK(dim <= uint64_t(INT64_MAX), "dimension too large");
    spec.shape.push_back(int64_t(dim));
  }
  spec.numElements(); // rejects shapes whose element count overflows
  return spec;
}

bool sameType(const TensorSpec &a, const TensorSpec &b) {
  return a.dtype == b.dtype && a.shape == b.shape;
}

std::string describe(const TensorSpec &spec) {
  return concat(dtypeName(spec.dtype), formatShape(spec.shape));
}

/// Parses the line sequence; cross-line consistency is checked afterwards.
class DescriptorParser {
public:
  Descriptor parse(std::string_view text, uint64_t weightsSize) {
    size_t pos = 0;
    while (pos < text.size()) {
      size_t newline = text.find('\n', pos);
      std::string_view line = text.substr(pos, newline - pos);
      ++lineNumber_;
      try {
        parseLine(line);
      } catch (const Error &e) {
        throw Error(
            concat("model descriptor line ", lineNumber_, ": ", e.what()));
      }
      pos = newline == std::string_view::npos ? text.size() : newline + 1;
      if (sawEnd_)
        break;
    }
    try {
      LMC_CHECK(sawEnd_, "missing 'end' line");
      LMC_CHECK(text.substr(pos).find_first_not_of(" \n") ==
                    std::string_view::npos,
                "text after 'end'");
      validate(weightsSize);
    } catch (const Error &e) {
      throw Error(concat("model descriptor: ", e.what()));
    }
    return std::move(desc_);
  }

private:
  void parseLine(std::string_view line) {
    LMC_CHECK(!line.empty(), "empty line");
    std::vector<std::string> f = splitFields(line);
    LineKind kind = classify(f);
    if (lineNumber_ == 1)
      LMC_CHECK(kind == LineKind::Header, "expected '",
                descriptor::keyword(LineKind::Header), " ", descriptor::kVersion,
                "'");
    LMC_CHECK(!last_ || kind > *last_ || (kind == *last_ && isRepeatable(kind)),
              "line '", f[0], "' is out of order or repeated");
    // Mandatory single lines may not be skipped.
    for (LineKind required : {LineKind::Header, LineKind::Loss,
                              LineKind::Optimizer, LineKind::Flops})
      LMC_CHECK(kind <= required || seen_.count(required), "missing '",
                descriptor::keyword(required), "' line before '", f[0], "'");
    seen_.insert(kind);
    if (last_ && kind != *last_)
      lastRole_.reset();
    last_ = kind;

    switch (kind) {
    case LineKind::Header:
      LMC_CHECK(f.size() == 2 && f[1] == std::to_string(descriptor::kVersion),
                "unsupported descriptor version (expected '",
                descriptor::keyword(LineKind::Header), " ",
                descriptor::kVersion, "')");
      break;
    case LineKind::Loss:
      LMC_CHECK(f.size() == 2, "expected 'loss <kind>'");
      LMC_CHECK(f[1] == "cross_entropy" || f[1] == "mse" ||
                    (f[1].rfind("output:", 0) == 0 && f[1].size() > 7),
                "unknown loss '", f[1], "'");
      desc_.loss = f[1];
      break;
    case LineKind::Optimizer:
      LMC_CHECK(f.size() == 2, "expected 'optimizer <kind>'");
      LMC_CHECK(optimizerNamed(f[1]), "unknown optimizer '", f[1],
                "'; expected ", optimizerChoices());
      desc_.optimizer = f[1];
      break;
    case LineKind::Hparam:
      LMC_CHECK(f.size() == 3, "expected 'hparam <name> <value>'");
      LMC_CHECK(!desc_.hparam(f[1]), "duplicate hparam '", f[1], "'");
      desc_.hparams.emplace_back(f[1], parseFiniteDouble(f[2], "hparam value"));
      break;
    case LineKind::Flops:
      LMC_CHECK(f.size() == 2, "expected 'flops <count>'");
      desc_.flops = parseUnsigned(f[1], "flops count");
      break;
    case LineKind::Precision:
      LMC_CHECK(f.size() == 2 && (f[1] == "f32" || f[1] == "bf16" ||
                                  f[1] == "f16"),
                "expected 'precision f32|bf16|f16'");
      desc_.precision = f[1];
      break;
    case LineKind::MatmulParts: {
      LMC_CHECK(f.size() == 2, "expected 'matmul_parts <count>'");
      uint64_t parts = parseUnsigned(f[1], "matmul_parts count");
      LMC_CHECK(parts >= 1 && parts <= 16 && (parts & (parts - 1)) == 0,
                "matmul_parts must be a power of two from 1 to 16, not ",
                f[1]);
      desc_.matmulParts = int64_t(parts);
      break;
    }
    case LineKind::Activations:
      LMC_CHECK(f.size() == 2, "expected 'activations <bytes>'");
      desc_.activationBytes = parseUnsigned(f[1], "activation bytes");
      break;
    case LineKind::Remat: {
      LMC_CHECK(f.size() == 6 && f[2] == "cuts" && f[4] == "recomputed",
                "expected 'remat <policy> cuts <count> recomputed <count>'");
      LMC_CHECK(f[1] == "per-block" || f[1] == "selective" ||
                    isCountedPerBlock(f[1]),
                "unknown remat policy '", f[1], "'");
      desc_.remat = Remat{f[1], parseUnsigned(f[3], "cut count"),
                          parseUnsigned(f[5], "recomputed op count")};
      break;
    }
    case LineKind::Lora: {
      LMC_CHECK(f.size() == 5 && (f[4] == "rslora" || f[4] == "plain"),
                "expected 'lora <rank> <alpha> <dropout> rslora|plain'");
      LoraSpec lora;
      lora.rank = parsePositive(f[1], "lora rank");
      lora.alpha = parseFiniteDouble(f[2], "lora alpha");
      lora.dropout = parseFiniteDouble(f[3], "lora dropout");
      LMC_CHECK(lora.alpha > 0, "lora alpha must be positive");
      LMC_CHECK(lora.dropout >= 0 && lora.dropout < 1,
                "lora dropout must be in [0, 1)");
      lora.rslora = f[4] == "rslora";
      desc_.lora = lora;
      break;
    }
    case LineKind::LoraWeight:
      LMC_CHECK(desc_.lora, "'lora_weight' without a 'lora' line");
      LMC_CHECK(f.size() == 4 && (f[3] == "out_in" || f[3] == "in_out"),
                "expected 'lora_weight <weight> <module> out_in|in_out'");
      desc_.lora->weights.push_back({f[1], f[2], f[3] == "out_in"});
      break;
    case LineKind::Schedule:
      desc_.schedule = parseSchedule(f);
      break;
    case LineKind::TrainArg:
    case LineKind::TrainResult:
    case LineKind::EvalArg:
    case LineKind::EvalResult:
    case LineKind::GradArg:
    case LineKind::GradResult:
    case LineKind::ApplyArg:
    case LineKind::ApplyResult:
    case LineKind::ChunkArg:
    case LineKind::ChunkResult:
      addTensor(kind, parseTensorLine(f, kind));
      break;
    case LineKind::Bound: {
      LMC_CHECK(((f.size() == 4 || f.size() == 5) && f[3] == "classes") ||
                    (f.size() == 5 && f[3] == "rows"),
                "expected 'bound <input> <limit> classes [<ignored>]' or "
                "'bound <input> <limit> rows <param>'");
      // `rows -`: the rows of a tensor the model computes.
      std::string what = f[3] == "classes" ? "classes"
                         : f[4] == "-"     ? "rows of the gathered tensor"
                                           : "rows of '" + f[4] + "'";
      IndexBound bound{parsePositive(f[2], "bound"), what, std::nullopt};
      if (f[3] == "classes" && f.size() == 5)
        bound.ignored = parseSigned(f[4], "ignored label");
      LMC_CHECK(bounds_.emplace(f[1], bound).second, "input '", f[1],
                "' bounded twice");
      break;
    }
    case LineKind::Init: {
      LMC_CHECK(f.size() == 4, "expected 'init <name> <offset> <size>'");
      InitSpec init{f[1], parseUnsigned(f[2], "init offset"),
                    parseUnsigned(f[3], "init size")};
      desc_.inits.push_back(init);
      break;
    }
    case LineKind::Mesh:
      LMC_CHECK(f.size() == 3, "expected 'mesh <data> <model>'");
      desc_.dataParallel = parsePositive(f[1], "mesh size");
      desc_.modelParallel = parsePositive(f[2], "mesh size");
      break;
    case LineKind::Split: {
      LMC_CHECK(seen_.count(LineKind::Mesh), "'split' without a 'mesh' line");
      LMC_CHECK(f.size() == 3, "expected 'split <name> <dimension>'");
      uint64_t dim = parseUnsigned(f[2], "split dimension");
      LMC_CHECK(splits_.emplace(f[1], int(std::min<uint64_t>(dim, 64))).second,
                "tensor '", f[1], "' split twice");
      break;
    }
    case LineKind::Join: {
      LMC_CHECK(f.size() >= 4, "expected 'join <name> <piece> <piece>...'");
      for (const Join &join : desc_.joins)
        LMC_CHECK(join.name != f[1], "'", f[1], "' joined twice");
      desc_.joins.push_back({f[1], {f.begin() + 2, f.end()}});
      break;
    }
    case LineKind::Arena: {
      LMC_CHECK(f.size() == 3, "expected 'arena <function> <bytes>'");
      LMC_CHECK(std::none_of(desc_.arenas.begin(), desc_.arenas.end(),
                             [&](const auto &arena) {
                               return arena.first == f[1];
                             }),
                "arena of '", f[1], "' given twice");
      desc_.arenas.emplace_back(f[1], parseUnsigned(f[2], "arena bytes"));
      break;
    }
    case LineKind::InPlace:
      LMC_CHECK(f.size() == 2, "expected 'inplace <name>'");
      LMC_CHECK(desc_.inPlace.insert(f[1]).second, "'", f[1],
                "' updated in place twice");
      break;
    case LineKind::Profile:
      LMC_CHECK(f.size() == 5,
                "expected 'profile <index> <function> <kind> <label>'");
      LMC_CHECK(parseUnsigned(f[1], "profile region") ==
                    desc_.profileRegions.size(),
                "profile regions out of order at '", f[1], "'");
      desc_.profileRegions.push_back(ProfileRegion{f[2], f[3], f[4]});
      break;
    case LineKind::End:
      LMC_CHECK(f.size() == 1, "expected 'end'");
      sawEnd_ = true;
      break;
    }
  }

  /// `schedule <kind> [<key> <value>]...`, keys as docs/runtime-abi.md.
  static ScheduleDefaults parseSchedule(const std::vector<std::string> &f) {
    LMC_CHECK(f.size() >= 2 && f.size() % 2 == 0,
              "expected 'schedule <kind> [<key> <value>]...'");
    std::optional<ScheduleKind> kind = parseScheduleKind(f[1]);
    LMC_CHECK(kind, "unknown schedule '", f[1], "'");
    ScheduleDefaults schedule;
    schedule.kind = *kind;
    for (size_t i = 2; i < f.size(); i += 2) {
      const std::string &key = f[i];
      std::optional<int64_t> *count = key == "warmup"        ? &schedule.warmup
                                      : key == "decay_steps" ? &schedule.decaySteps
                                      : key == "steps"       ? &schedule.steps
                                                             : nullptr;
      LMC_CHECK(count || key == "lr_min", "unknown schedule setting '", key,
                "'");
      LMC_CHECK(!(count ? count->has_value() : schedule.lrMin.has_value()),
                "schedule setting '", key, "' repeated");
      if (count)
        *count = int64_t(std::min<uint64_t>(
            parseUnsigned(f[i + 1], "schedule step count"), INT64_MAX));
      else
        schedule.lrMin = parseFiniteDouble(f[i + 1], "schedule lr_min");
    }
    LMC_CHECK(!schedule.lrMin || *schedule.lrMin >= 0,
              "schedule lr_min must not be negative");
    return schedule;
  }

  LineKind classify(const std::vector<std::string> &f) {
    std::optional<LineKind> kind =
        descriptor::lineNamed(f[0], f.size() >= 2 ? f[1] : "");
    if (!kind)
      throw Error(
          concat("unknown line '", f[0], f.size() >= 2 ? " " + f[1] : "", "'"));
    return *kind;
  }

  void addTensor(LineKind kind, TensorSpec spec) {
    // Roles must appear grouped in the documented order.
    std::vector<Role> roles = allowedRoles(kind);
    auto rank = [&](Role r) {
      return std::find(roles.begin(), roles.end(), r) - roles.begin();
    };
    LMC_CHECK(!lastRole_ || rank(spec.role) >= rank(*lastRole_), "role '",
              roleName(spec.role), "' must come before role '",
              roleName(*lastRole_), "'");
    lastRole_ = spec.role;
    std::vector<TensorSpec> &list = listFor(kind);
    for (const TensorSpec &other : list)
      LMC_CHECK(other.name != spec.name || other.role != spec.role,
                "duplicate ", roleName(spec.role), " '", spec.name, "'");
    list.push_back(std::move(spec));
  }

  std::vector<TensorSpec> &listFor(LineKind kind) {
    switch (kind) {
    case LineKind::TrainArg:
      return desc_.trainArgs;
    case LineKind::TrainResult:
      return desc_.trainResults;
    case LineKind::EvalArg:
      return desc_.evalArgs;
    case LineKind::EvalResult:
      return desc_.evalResults;
    case LineKind::GradArg:
      return desc_.gradArgs;
    case LineKind::GradResult:
      return desc_.gradResults;
    case LineKind::ApplyArg:
      return desc_.applyArgs;
    case LineKind::ApplyResult:
      return desc_.applyResults;
    case LineKind::ChunkArg:
      return desc_.chunkArgs;
    default:
      return desc_.chunkResults;
    }
  }

  void validate(uint64_t weightsSize) {
    LMC_CHECK(!desc_.loss.empty(), "missing 'loss' line");
    LMC_CHECK(!desc_.optimizer.empty(), "missing 'optimizer' line");
    LMC_CHECK(last_ && *last_ == LineKind::End, "missing 'end' line");

    std::map<std::string, const TensorSpec *> params, states, buffers, frozen;
    for (const TensorSpec &arg : desc_.trainArgs) {
      switch (arg.role) {
      case Role::Param:
        params[arg.name] = &arg;
        break;
      case Role::Buffer:
        LMC_CHECK(!params.count(arg.name), "buffer '", arg.name,
                  "' has the name of a param");
        buffers[arg.name] = &arg;
        break;
      case Role::Frozen:
        LMC_CHECK(!params.count(arg.name) && !buffers.count(arg.name),
                  "frozen '", arg.name, "' has the name of a param or buffer");
        frozen[arg.name] = &arg;
        break;
      case Role::State:
        states[arg.name] = &arg;
        validateStateName(arg, params);
        break;
      case Role::Input:
        LMC_CHECK(!arg.shape.empty(), "input '", arg.name,
                  "' must have a batch dimension");
        if (desc_.batchSize == 0)
          desc_.batchSize = arg.shape[0];
        LMC_CHECK(arg.shape[0] == desc_.batchSize, "input '", arg.name,
                  "' has batch size ", arg.shape[0], ", other inputs have ",
                  desc_.batchSize);
        break;
      case Role::Hyper:
        if (arg.name == kRngKeyHyper) {
          LMC_CHECK(arg.dtype == DType::I64 && arg.shape.empty(),
                    "hyper 'rng_key' must be an i64 scalar");
          LMC_CHECK(&arg == &desc_.trainArgs.back(),
                    "hyper 'rng_key' must be the last train arg");
          break;
        }
        LMC_CHECK(arg.name == "lr" || arg.name == "adam_step_size" ||
                      arg.name == "adam_bc2_sqrt" ||
                      arg.name == "max_grad_norm",
                  "unknown hyper '", arg.name, "'");
        LMC_CHECK(arg.dtype == DType::F32 && arg.shape.empty(), "hyper '",
                  arg.name, "' must be an f32 scalar");
        break;
      default:
        break;
      }
    }
    LMC_CHECK(desc_.batchSize > 0 ||
                  desc_.trainArgsWithRole(Role::Input).empty(),
              "batch size must be positive");

    // Every param, state and buffer has exactly one updated result of the
    // same type.
    std::map<Role, std::set<std::string>> updated;
    int losses = 0, gradNorms = 0;
    for (const TensorSpec &res : desc_.trainResults) {
      if (res.role == Role::Loss) {
        validateLoss(res, "train");
        ++losses;
        continue;
      }
      if (res.role == Role::GradNorm) {
        LMC_CHECK(res.name == "grad_norm" && res.dtype == DType::F32 &&
                      res.shape.empty(),
                  "train grad_norm result must be 'grad_norm grad_norm f32 0'");
        LMC_CHECK(++gradNorms == 1,
                  "expected at most one 'train result grad_norm grad_norm'");
        continue;
      }
      auto &source = res.role == Role::Param   ? params
                     : res.role == Role::State ? states
                                               : buffers;
      auto it = source.find(res.name);
      LMC_CHECK(it != source.end(), "train result ", roleName(res.role), " '",
                res.name, "' has no matching train arg");
      LMC_CHECK(sameType(*it->second, res), "train result '", res.name, "' is ",
                describe(res), " but the arg is ", describe(*it->second));
      updated[res.role].insert(res.name);
    }
    LMC_CHECK(losses == 1, "expected exactly one 'train result loss loss'");
    LMC_CHECK(updated[Role::Param].size() == params.size(),
              "every train param needs a train result");
    LMC_CHECK(updated[Role::State].size() == states.size(),
              "every train state needs a train result");
    LMC_CHECK(updated[Role::Buffer].size() == buffers.size(),
              "every train buffer needs a train result");

    for (const TensorSpec &arg : desc_.evalArgs) {
      if (arg.role == Role::Param || arg.role == Role::Buffer ||
          arg.role == Role::Frozen) {
        const auto &source = arg.role == Role::Param    ? params
                             : arg.role == Role::Buffer ? buffers
                                                        : frozen;
        auto it = source.find(arg.name);
        LMC_CHECK(it != source.end(), "eval ", roleName(arg.role), " '",
                  arg.name, "' is not a train ", roleName(arg.role));
        LMC_CHECK(sameType(*it->second, arg), "eval ", roleName(arg.role),
                  " '", arg.name, "' is ", describe(arg), " but the train ",
                  roleName(arg.role), " is ", describe(*it->second));
      } else {
        LMC_CHECK(!arg.shape.empty() && arg.shape[0] > 0, "eval input '",
                  arg.name, "' must have a positive batch dimension");
      }
    }
    losses = 0;
    for (const TensorSpec &res : desc_.evalResults)
      if (res.role == Role::Loss) {
        validateLoss(res, "eval");
        ++losses;
      }
    LMC_CHECK(desc_.evalArgs.empty() || losses == 1,
              "expected exactly one 'eval result loss loss'");

    validateSplitStep();
    validateLora();
    validateChunkStep();
    validateInits(weightsSize);
    applySplits();
    applyBounds();
    validateJoins(params);
    for (const std::string &name : desc_.inPlace)
      LMC_CHECK(params.count(name) || states.count(name), "'", name,
                "' is updated in place but is no param or state");
  }

  /// Each piece is a param joined once, not itself a file name; the pieces
  /// of one join have one dtype and shape (files hold them in equal runs).
  void validateJoins(const std::map<std::string, const TensorSpec *> &params) {
    std::set<std::string> joined;
    for (const Join &join : desc_.joins) {
      LMC_CHECK(!params.count(join.name), "joined tensor '", join.name,
                "' is also a param");
      const TensorSpec *first = nullptr;
      for (const std::string &piece : join.pieces) {
        auto it = params.find(piece);
        LMC_CHECK(it != params.end(), "join '", join.name, "': '", piece,
                  "' is not a param");
        LMC_CHECK(joined.insert(piece).second, "param '", piece,
                  "' joined twice");
        const TensorSpec &spec = *it->second;
        LMC_CHECK(!spec.shape.empty(), "join '", join.name, "': '", piece,
                  "' is a scalar");
        if (!first) {
          first = &spec;
          continue;
        }
        LMC_CHECK(spec.dtype == first->dtype && spec.shape == first->shape &&
                      spec.splitDim == first->splitDim,
                  "join '", join.name, "': '", piece, "' is ", describe(spec),
                  ", '", first->name, "' is ", describe(*first));
      }
    }
  }

  /// Every tensor a `split` line names (a param, its gradient and its
  /// optimizer state each have one) takes this process's slice as its
  /// shape: what the partitioned steps read and write.
  void applySplits() {
    std::set<std::string> applied;
    for (auto *list : {&desc_.trainArgs, &desc_.trainResults, &desc_.evalArgs,
                       &desc_.evalResults, &desc_.gradArgs, &desc_.gradResults,
                       &desc_.applyArgs, &desc_.applyResults})
      for (TensorSpec &spec : *list) {
        if (spec.role != Role::Param && spec.role != Role::State &&
            spec.role != Role::Grad)
          continue;
        // Optimizer state `<param>.<slot>` is split like its param.
        std::string param = spec.role == Role::State
                                ? spec.name.substr(0, spec.name.rfind('.'))
                                : spec.name;
        auto it = splits_.find(param);
        if (it == splits_.end() || spec.shape.empty())
          continue;
        int dim = it->second;
        LMC_CHECK(dim < int(spec.shape.size()), "split dimension ", dim,
                  " of '", spec.name, "' is out of range for ",
                  describe(spec));
        LMC_CHECK(spec.shape[dim] % desc_.modelParallel == 0, "'", spec.name,
                  "' dimension ", dim, " of size ", spec.shape[dim],
                  " does not split over ", desc_.modelParallel, " processes");
        spec.shape[dim] /= desc_.modelParallel;
        spec.splitDim = dim;
        applied.insert(param);
      }
    for (const auto &[name, dim] : splits_)
      LMC_CHECK(applied.count(name), "split of unknown param '", name, "'");
  }

  /// Every input a `bound` line names, in each step that takes it, gets
  /// its range; the name must be an integer input of the train step.
  void applyBounds() {
    for (const auto &[name, bound] : bounds_) {
      bool found = false;
      for (auto *list : {&desc_.trainArgs, &desc_.evalArgs, &desc_.gradArgs})
        for (TensorSpec &spec : *list)
          if (spec.role == Role::Input && spec.name == name) {
            LMC_CHECK(spec.dtype == DType::I64 || spec.dtype == DType::I32,
                      "bound on input '", name, "' of dtype ",
                      dtypeName(spec.dtype), " (expected an integer input)");
            spec.bound = bound;
            found |= list == &desc_.trainArgs;
          }
      LMC_CHECK(found, "bound on unknown input '", name, "'");
    }
  }

  /// grad_step and apply_step are the train step cut in two: their
  /// signatures follow from the train section, so they must match it
  /// exactly (docs/runtime-abi.md).
  void validateSplitStep() {
    if (desc_.gradArgs.empty() && desc_.gradResults.empty() &&
        desc_.applyArgs.empty() && desc_.applyResults.empty())
      return;
    auto train = [&](Role role) {
      std::vector<TensorSpec> out;
      for (const TensorSpec *spec : desc_.trainArgsWithRole(role))
        out.push_back(*spec);
      return out;
    };
    auto join = [](std::vector<std::vector<TensorSpec>> parts) {
      std::vector<TensorSpec> out;
      for (auto &part : parts)
        out.insert(out.end(), part.begin(), part.end());
      return out;
    };
    std::vector<TensorSpec> grads = train(Role::Param);
    for (TensorSpec &g : grads)
      g.role = Role::Grad;
    TensorSpec loss{Role::Loss, "loss", DType::F32, {}};
    TensorSpec gradNorm{Role::GradNorm, "grad_norm", DType::F32, {}};
    // The random key goes to grad_step (the forward), the other hypers to
    // apply_step (the update).
    std::vector<TensorSpec> updateHypers, rngKey, lossScale;
    for (const TensorSpec &hyper : train(Role::Hyper))
      (hyper.name == kRngKeyHyper ? rngKey : updateHypers).push_back(hyper);
    // grad_step scales the loss's gradient by the loss scale.
    for (const TensorSpec &state : train(Role::State))
      if (state.name == kLossScaleState)
        lossScale.push_back(state);
    expectSection("grad arg", desc_.gradArgs,
                  join({train(Role::Param), lossScale, train(Role::Buffer),
                        train(Role::Frozen), train(Role::Input), rngKey}));
    expectSection("grad result", desc_.gradResults,
                  join({grads, train(Role::Buffer), {loss}}));
    expectSection("apply arg", desc_.applyArgs,
                  join({train(Role::Param), train(Role::State), grads,
                        updateHypers}));
    std::vector<TensorSpec> applyResults =
        join({train(Role::Param), train(Role::State)});
    if (desc_.hasGradNorm())
      applyResults.push_back(gradNorm);
    expectSection("apply result", desc_.applyResults, applyResults);
  }

  /// Each `lora_weight` names a 2-D frozen tensor and the params of its
  /// adapters, A [rank, in] and B [out, rank], in and out as its layout
  /// says.
  void validateLora() {
    if (!desc_.lora)
      return;
    auto find = [&](const std::string &name, Role role) -> const TensorSpec * {
      for (const TensorSpec &arg : desc_.trainArgs)
        if (arg.name == name && arg.role == role)
          return &arg;
      return nullptr;
    };
    const int64_t rank = desc_.lora->rank;
    for (const LoraSpec::Weight &w : desc_.lora->weights) {
      const TensorSpec *weight = find(w.name, Role::Frozen);
      LMC_CHECK(weight && weight->shape.size() == 2 &&
                    (weight->dtype == DType::F32 ||
                     weight->dtype == DType::BF16),
                "lora_weight '", w.name,
                "' is not a 2-D f32 or bf16 frozen tensor");
      const int64_t out = weight->shape[w.outIn ? 0 : 1],
                    in = weight->shape[w.outIn ? 1 : 0];
      const TensorSpec *a = find(w.module + ".lora_A.weight", Role::Param);
      const TensorSpec *b = find(w.module + ".lora_B.weight", Role::Param);
      const Shape aShape{rank, in}, bShape{out, rank};
      LMC_CHECK(a && b && a->shape == aShape && b->shape == bShape,
                "lora_weight '", w.name, "': expected params '", w.module,
                ".lora_A.weight' f32[", rank, ", ", in, "] and '", w.module,
                ".lora_B.weight' f32[", out, ", ", rank, "]");
    }
  }

  /// chunk_step is apply_step's update of one chunk of the flattened
  /// parameters: one param, grad and state slot of the chunk's shape each,
  /// apply_step's hypers and the gradient norm. Its slots must be every
  /// param's optimizer state, `<param>.<slot>` for each `chunk.<slot>`.
  void validateChunkStep() {
    if (desc_.chunkArgs.empty() && desc_.chunkResults.empty())
      return;
    LMC_CHECK(desc_.hasSplitStep(), "'chunk' lines need 'grad' and 'apply' "
              "lines");
    LMC_CHECK(!desc_.hasLossScaling(),
              "'chunk' lines with dynamic loss scaling");
    const TensorSpec &first = desc_.chunkArgs.front();
    LMC_CHECK(first.role == Role::Param && first.name == "chunk" &&
                  first.dtype == DType::F32 && first.shape.size() == 1 &&
                  first.shape[0] > 0,
              "the first 'chunk arg' must be 'param chunk f32 1 <elements>'");
    LMC_CHECK(first.shape[0] % 16 == 0, "a chunk of ", first.shape[0],
              " floats is not whole 64-byte lines");
    TensorSpec param = first;
    TensorSpec grad = param;
    grad.role = Role::Grad;
    std::vector<TensorSpec> slots;
    for (const TensorSpec &arg : desc_.chunkArgs)
      if (arg.role == Role::State) {
        LMC_CHECK(arg.name.rfind("chunk.", 0) == 0 && arg.name.size() > 6,
                  "chunk state '", arg.name, "' is not named chunk.<slot>");
        TensorSpec slot = param;
        slot.role = Role::State;
        slot.name = arg.name;
        slots.push_back(slot);
      }
    std::vector<const TensorSpec *> params = desc_.params();
    std::set<std::string> states;
    for (const TensorSpec *state : desc_.trainArgsWithRole(Role::State))
      states.insert(state->name);
    LMC_CHECK(states.size() == params.size() * slots.size(),
              "the train step has ", states.size(), " states, the chunk "
              "slots imply ", params.size() * slots.size());
    for (const TensorSpec *p : params)
      for (const TensorSpec &slot : slots)
        LMC_CHECK(states.count(p->name + slot.name.substr(5)),
                  "param '", p->name, "' has no state '",
                  p->name + slot.name.substr(5), "' for '", slot.name, "'");

    std::vector<TensorSpec> args{param};
    args.insert(args.end(), slots.begin(), slots.end());
    args.push_back(grad);
    for (const TensorSpec &hyper : desc_.applyArgs)
      if (hyper.role == Role::Hyper)
        args.push_back(hyper);
    args.push_back({Role::GradNorm, "grad_norm", DType::F32, {}});
    expectSection("chunk arg", desc_.chunkArgs, args, "the apply section");
    std::vector<TensorSpec> results{param};
    results.insert(results.end(), slots.begin(), slots.end());
    expectSection("chunk result", desc_.chunkResults, results,
                  "the chunk arg section");
  }

  /// `source`: where the expected lines follow from, for the message.
  static void expectSection(const char *section,
                            const std::vector<TensorSpec> &actual,
                            const std::vector<TensorSpec> &expected,
                            const char *source = "the train section") {
    for (size_t i = 0; i < std::max(actual.size(), expected.size()); ++i) {
      auto line = [&](const std::vector<TensorSpec> &list) {
        return i < list.size()
                   ? concat("'", roleName(list[i].role), " ", list[i].name,
                            " ", describe(list[i]), "'")
                   : std::string("nothing");
      };
      LMC_CHECK(i < actual.size() && i < expected.size() &&
                    actual[i].role == expected[i].role &&
                    actual[i].name == expected[i].name &&
                    sameType(actual[i], expected[i]),
                "'", section, "' line ", i + 1, " is ", line(actual), ", ",
                source, " implies ", line(expected));
    }
  }

  static void validateLoss(const TensorSpec &res, const char *step) {
    LMC_CHECK(res.name == "loss" && res.dtype == DType::F32 &&
                  res.shape.empty(),
              step, " loss result must be 'loss loss f32 0'");
  }

  static void
  validateStateName(const TensorSpec &state,
                    const std::map<std::string, const TensorSpec *> &params) {
    if (state.name == kLossScaleState || state.name == kGrowthTrackerState) {
      LMC_CHECK(state.dtype == DType::F32 && state.shape.empty(), "state '",
                state.name, "' must be an f32 scalar");
      return;
    }
    size_t dot = state.name.rfind('.');
    LMC_CHECK(dot != std::string::npos, "state '", state.name,
              "' is not named <param>.<slot>");
    std::string slot = state.name.substr(dot + 1);
    LMC_CHECK(slot == "momentum_buffer" || slot == "exp_avg" ||
                  slot == "exp_avg_sq",
              "state '", state.name, "' has unknown slot '", slot, "'");
    LMC_CHECK(params.count(state.name.substr(0, dot)), "state '", state.name,
              "' names no param");
  }

  /// Every param, buffer and frozen tensor has one init (names are unique
  /// across them).
  void validateInits(uint64_t weightsSize) {
    std::vector<const TensorSpec *> ordered = desc_.params();
    for (const TensorSpec *buffer : desc_.buffers())
      ordered.push_back(buffer);
    for (const TensorSpec *frozen : desc_.frozen())
      ordered.push_back(frozen);
    std::map<std::string, const TensorSpec *> initialized;
    for (const TensorSpec *spec : ordered)
      initialized[spec->name] = spec;
    std::vector<const TensorSpec *> states = desc_.trainArgsWithRole(Role::State);
    for (const TensorSpec *state : states)
      initialized[state->name] = state;
    std::map<std::string, InitSpec> byName;
    for (const InitSpec &init : desc_.inits) {
      auto it = initialized.find(init.name);
      LMC_CHECK(it != initialized.end(),
                "init for unknown param, buffer, frozen or state '", init.name,
                "'");
      LMC_CHECK(byName.emplace(init.name, init).second, "duplicate init for '",
                init.name, "'");
      LMC_CHECK(init.size == it->second->byteSize(), "init for '", init.name,
                "' has ", init.size, " bytes, ", describe(*it->second),
                " needs ", it->second->byteSize());
      LMC_CHECK(init.offset <= weightsSize &&
                    init.size <= weightsSize - init.offset,
                "init for '", init.name, "' (offset ", init.offset, ", size ",
                init.size, ") is outside lmc_model_weights (", weightsSize,
                " bytes)");
    }
    // Reorder so inits[i] belongs to ordered[i]; states' are optional.
    desc_.inits.clear();
    for (const TensorSpec *state : states)
      if (auto it = byName.find(state->name); it != byName.end())
        desc_.stateInits.push_back(it->second);
    for (const TensorSpec *spec : ordered) {
      auto it = byName.find(spec->name);
      LMC_CHECK(it != byName.end(), "missing init for ", roleName(spec->role),
                " '", spec->name, "'");
      desc_.inits.push_back(it->second);
    }
  }

  Descriptor desc_;
  std::set<LineKind> seen_;
  size_t lineNumber_ = 0;
  bool sawEnd_ = false;
  std::optional<LineKind> last_;
  std::optional<Role> lastRole_;
  std::map<std::string, int> splits_; // `split` lines: name -> dimension
  std::map<std::string, IndexBound> bounds_; // `bound` lines: input -> range
};

} // namespace

Descriptor parseDescriptor(std::string_view text, uint64_t weightsSize) {
  return DescriptorParser().parse(text, weightsSize);
}

} // namespace lmc::rt
