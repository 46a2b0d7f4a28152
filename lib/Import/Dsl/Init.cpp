//===- Init.cpp - deterministic parameter initializers --------------------===//
//
// `param w: f32[out, in] = kaiming_uniform(a = 2.2360679)` fills lmc.init
// at compile time. Every parameter draws from its own stream, seeded by the
// global seed and a hash of its full name, so adding a parameter never
// changes the others, and the generator (splitmix64, lmc/Support, and
// Box-Muller) is written out so that the values do not depend on the C++
// library.
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"

#include "lmc/Support/SplitMix64.h"

#include <cmath>

using namespace mlir;

namespace lmc::dsl {

namespace {

class Stream {
public:
  Stream(uint64_t seed, StringRef name) {
    uint64_t hash = 0xcbf29ce484222325ull; // FNV-1a
    for (char c : name) {
      hash ^= uint8_t(c);
      hash *= 0x100000001b3ull;
    }
    mix.state = seed ^ hash;
  }
  /// Uniform in [0, 1).
  double uniform() { return mix.uniform(); }
  double normal() {
    if (spare) {
      double z = *spare;
      spare.reset();
      return z;
    }
    double u1 = 1.0 - uniform(); // (0, 1]: log is finite
    double u2 = uniform();
    double r = std::sqrt(-2.0 * std::log(u1));
    spare = r * std::sin(2 * M_PI * u2);
    return r * std::cos(2 * M_PI * u2);
  }

private:
  SplitMix64 mix;
  std::optional<double> spare;
};

struct InitSpec {
  std::vector<StringRef> params;
  std::vector<double> defaults;
};

const llvm::StringMap<InitSpec> &initializers() {
  static const llvm::StringMap<InitSpec> table = {
      {"zeros", {{}, {}}},
      {"ones", {{}, {}}},
      {"constant", {{"value"}, {NAN}}},
      {"normal", {{"std", "mean"}, {1.0, 0.0}}},
      {"uniform", {{"low", "high"}, {0.0, 1.0}}},
      {"xavier_uniform", {{"gain"}, {1.0}}},
      {"xavier_normal", {{"gain"}, {1.0}}},
      {"kaiming_uniform", {{"a"}, {0.0}}},
      {"kaiming_normal", {{"a"}, {0.0}}},
  };
  return table;
}

} // namespace

FailureOr<DenseElementsAttr>
Emitter::initializer(const Expr &init, const std::shared_ptr<Env> &env,
                     RankedTensorType type, StringRef paramName) {
  auto expected = [&]() {
    InFlightDiagnostic diag = error(init.loc);
    diag << "expected an initializer for parameter '" << paramName
         << "': a number, ";
    SmallVector<StringRef> names;
    for (const auto &entry : initializers())
      names.push_back(entry.first());
    llvm::sort(names);
    llvm::interleaveComma(names, diag);
    return failure();
  };
  std::string name;
  if (init.kind == Expr::Name || init.kind == Expr::Call)
    name = init.name;
  if (init.kind == Expr::Name && env->lookup(name))
    name.clear(); // a variable: evaluated below as a constant fill
  SmallVector<double> args;
  if (!name.empty()) {
    auto it = initializers().find(name);
    if (it == initializers().end())
      return expected();
    const InitSpec &spec = it->second;
    args.assign(spec.defaults.begin(), spec.defaults.end());
    if (init.args.size() > spec.params.size()) {
      error(init.loc) << name << " takes at most " << spec.params.size()
                      << " argument" << (spec.params.size() == 1 ? "" : "s")
                      << ", got " << init.args.size();
      return failure();
    }
    SmallVector<bool> given(spec.params.size(), false);
    auto bind = [&](size_t index, const Expr &expr) -> LogicalResult {
      Val v = eval(expr, env);
      if (v.kind == Val::Poison)
        return failure();
      if (!v.isNumber()) {
        error(expr.loc) << name << ": '" << spec.params[index]
                        << "' must be a number, got " << v.describe();
        return failure();
      }
      if (given[index]) {
        error(expr.loc) << "argument '" << spec.params[index]
                        << "' is given twice";
        return failure();
      }
      given[index] = true;
      args[index] = v.number();
      return success();
    };
    for (auto [i, arg] : llvm::enumerate(init.args))
      if (failed(bind(i, *arg)))
        return failure();
    for (auto [i, kw] : llvm::enumerate(init.kwargs)) {
      auto p = llvm::find(spec.params, kw.first);
      if (p == spec.params.end()) {
        error(init.kwargLocs[i]) << name << " has no parameter named '"
                                 << kw.first << "'";
        return failure();
      }
      if (failed(bind(p - spec.params.begin(), *kw.second)))
        return failure();
    }
    for (auto [i, v] : llvm::enumerate(args))
      if (std::isnan(v)) {
        error(init.loc) << name << ": missing argument '" << spec.params[i]
                        << "'";
        return failure();
      }
  } else {
    Val v = eval(init, env);
    if (v.kind == Val::Poison)
      return failure();
    if (!v.isNumber())
      return expected();
    name = "constant";
    args.push_back(v.number());
  }

  Type elementType = type.getElementType();
  auto splat = [&](double value) {
    return DenseElementsAttr::get(type, FloatAttr::get(elementType, value));
  };
  if (name == "zeros")
    return splat(0.0);
  if (name == "ones")
    return splat(1.0);
  if (name == "constant")
    return splat(args[0]);

  // Fans as torch.nn.init computes them: dimension 0 is fan_out, 1 fan_in,
  // the rest is the receptive field.
  ArrayRef<int64_t> shape = type.getShape();
  double fanIn = 1, fanOut = 1;
  bool fanBased = StringRef(name).starts_with("xavier") ||
                  StringRef(name).starts_with("kaiming");
  if (fanBased) {
    if (shape.size() < 2) {
      error(init.loc) << name << " needs a parameter of rank 2 or more "
                      << "(it derives fan_in and fan_out from the shape), got "
                      << "rank " << shape.size();
      return failure();
    }
    double receptive = 1;
    for (int64_t d : shape.drop_front(2))
      receptive *= double(d);
    fanIn = double(shape[1]) * receptive;
    fanOut = double(shape[0]) * receptive;
  }
  bool isNormal = name == "normal" || StringRef(name).ends_with("_normal");
  double low = 0, high = 0, mean = 0, std = 0;
  if (name == "normal") {
    std = args[0];
    mean = args[1];
    if (std < 0) {
      error(init.loc) << "normal: 'std' must not be negative, got "
                      << formatNumber(std);
      return failure();
    }
  } else if (name == "uniform") {
    low = args[0];
    high = args[1];
    if (!(low <= high)) {
      error(init.loc) << "uniform: 'low' (" << formatNumber(low)
                      << ") must not exceed 'high' (" << formatNumber(high)
                      << ")";
      return failure();
    }
  } else if (name == "xavier_uniform") {
    high = args[0] * std::sqrt(6.0 / (fanIn + fanOut));
    low = -high;
  } else if (name == "xavier_normal") {
    std = args[0] * std::sqrt(2.0 / (fanIn + fanOut));
  } else {
    // kaiming_*: leaky_relu gain with negative slope `a` (a = 0: relu).
    double gain = std::sqrt(2.0 / (1 + args[0] * args[0]));
    if (name == "kaiming_uniform") {
      high = gain * std::sqrt(3.0 / fanIn);
      low = -high;
    } else {
      std = gain / std::sqrt(fanIn);
    }
  }

  Stream stream(seed, paramName);
  SmallVector<float> values(type.getNumElements());
  for (float &v : values)
    v = float(isNormal ? mean + std * stream.normal()
                       : low + (high - low) * stream.uniform());
  return DenseElementsAttr::get(type, ArrayRef<float>(values));
}

} // namespace lmc::dsl
