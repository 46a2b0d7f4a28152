//===- Builtins.cpp - built-in functions of the lmc DSL -------------------===//
//
// Each built-in maps onto lmc ops (docs/dsl.md lists them). Arguments bind
// by position or by name against a small signature, so every built-in gets
// the same arity and keyword diagnostics. Layers with parameters (linear,
// layernorm, attention) are not here: they are DSL code in Stdlib.lmc.
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"

#include "lmc/Dialect/Lmc/IR/LmcBuilders.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <cmath>

using namespace mlir;

namespace lmc::dsl {

namespace {

/// One call of a built-in with its arguments bound to the signature.
struct Call {
  Emitter &e;
  StringRef name;
  SrcLoc at;
  std::vector<std::optional<Val>> args;
  std::vector<SrcLoc> locs;
  std::vector<StringRef> params;

  bool has(unsigned i) const { return args[i].has_value(); }
  SrcLoc locOf(unsigned i) const { return has(i) ? locs[i] : at; }
  InFlightDiagnostic error(unsigned i) { return e.error(locOf(i)); }

  /// Argument `i` as a tensor (a float tensor unless `anyElement`).
  FailureOr<Val> tensor(unsigned i, bool anyElement = false) {
    const Val &v = *args[i];
    if (v.kind != Val::Tensor ||
        (!anyElement && !isa<FloatType>(v.elementType()))) {
      error(i) << name << ": '" << params[i] << "' must be a "
               << (anyElement ? "" : "float ") << "tensor, got "
               << v.describe();
      return failure();
    }
    return v;
  }
  FailureOr<int64_t> integer(unsigned i, int64_t dflt) {
    if (!has(i))
      return dflt;
    if (args[i]->kind != Val::Int) {
      error(i) << name << ": '" << params[i] << "' must be an integer, got "
               << args[i]->describe();
      return failure();
    }
    return args[i]->i;
  }
  FailureOr<double> number(unsigned i, double dflt) {
    if (!has(i))
      return dflt;
    if (!args[i]->isNumber()) {
      error(i) << name << ": '" << params[i] << "' must be a number, got "
               << args[i]->describe();
      return failure();
    }
    return args[i]->number();
  }
  /// An integer or a list of integers.
  FailureOr<SmallVector<int64_t>> integers(unsigned i) {
    const Val &v = *args[i];
    if (v.kind == Val::Int)
      return SmallVector<int64_t>{v.i};
    SmallVector<int64_t> result;
    if (v.kind == Val::List) {
      for (const Val &item : v.items) {
        if (item.kind != Val::Int)
          break;
        result.push_back(item.i);
      }
      if (result.size() == v.items.size())
        return result;
    }
    error(i) << name << ": '" << params[i]
             << "' must be an integer or a list of integers, got "
             << v.describe();
    return failure();
  }
  Location loc() { return e.loc(at); }
};

using BuiltinFn = Val (*)(Call &);

struct Builtin {
  std::vector<StringRef> params;
  unsigned required;
  BuiltinFn fn;
};

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

/// The number a unary built-in computes on a compile-time number, or
/// nullopt outside its domain.
static std::optional<double> foldUnary(StringRef name, double x) {
  if (name == "relu")
    return std::max(x, 0.0);
  if (name == "sigmoid")
    return 1 / (1 + std::exp(-x));
  if (name == "tanh")
    return std::tanh(x);
  if (name == "exp")
    return std::exp(x);
  if (name == "log")
    return x > 0 ? std::optional<double>(std::log(x)) : std::nullopt;
  if (name == "sqrt")
    return x >= 0 ? std::optional<double>(std::sqrt(x)) : std::nullopt;
  if (name == "abs")
    return std::fabs(x);
  if (name == "erf")
    return std::erf(x);
  if (name == "sin")
    return std::sin(x);
  if (name == "cos")
    return std::cos(x);
  if (name == "atan")
    return std::atan(x);
  if (name == "floor")
    return std::floor(x);
  if (name == "ceil")
    return std::ceil(x);
  if (name == "round") // halves to even, as lmc.round
    return std::nearbyint(x);
  if (name == "gelu")
    return 0.5 * x * (1 + std::erf(x * M_SQRT1_2));
  if (name == "gelu_tanh")
    return 0.5 * x *
           (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  return std::nullopt;
}

static Val unary(Call &c) {
  const Val &arg = *c.args[0];
  if (arg.isNumber()) {
    std::optional<double> folded = foldUnary(c.name, arg.number());
    if (!folded) {
      c.error(0) << c.name << " of " << formatNumber(arg.number())
                 << " is not a real number";
      return Val::poison();
    }
    return Val::ofFloat(*folded);
  }
  FailureOr<Val> x = c.tensor(0);
  if (failed(x))
    return Val::poison();
  OpBuilder &b = c.e.b;
  Location loc = c.loc();
  Value v = x->value;
  Type type = v.getType();
  Value result;
  StringRef n = c.name;
  if (n == "relu")
    result = ReluOp::create(b, loc, type, v);
  else if (n == "sigmoid")
    result = SigmoidOp::create(b, loc, type, v);
  else if (n == "tanh")
    result = TanhOp::create(b, loc, type, v);
  else if (n == "exp")
    result = ExpOp::create(b, loc, type, v);
  else if (n == "log")
    result = LogOp::create(b, loc, type, v);
  else if (n == "sqrt")
    result = SqrtOp::create(b, loc, type, v);
  else if (n == "abs")
    result = AbsOp::create(b, loc, type, v);
  else if (n == "erf")
    result = ErfOp::create(b, loc, type, v);
  else if (n == "sin")
    result = SinOp::create(b, loc, type, v);
  else if (n == "cos")
    result = CosOp::create(b, loc, type, v);
  else if (n == "atan")
    result = AtanOp::create(b, loc, type, v);
  else if (n == "floor")
    result = FloorOp::create(b, loc, type, v);
  else if (n == "ceil")
    result = CeilOp::create(b, loc, type, v);
  else if (n == "round")
    result = RoundOp::create(b, loc, type, v);
  else {
    // gelu(x) = x/2 * (1 + erf(x/sqrt 2)), PyTorch's default; gelu_tanh is
    // its tanh approximation (GPT-2).
    auto splat = [&](double value) { return buildSplatLike(b, loc, v, value); };
    Value inner;
    if (n == "gelu") {
      inner = ErfOp::create(b, loc, MulOp::create(b, loc, v, splat(M_SQRT1_2)));
    } else {
      Value cube = MulOp::create(b, loc, v, MulOp::create(b, loc, v, v));
      Value poly =
          AddOp::create(b, loc, v, MulOp::create(b, loc, splat(0.044715), cube));
      inner = TanhOp::create(
          b, loc, MulOp::create(b, loc, splat(std::sqrt(2.0 / M_PI)), poly));
    }
    // Sequenced: argument evaluation order would make the IR
    // compiler-dependent.
    Value half = MulOp::create(b, loc, splat(0.5), v);
    Value onePlus = AddOp::create(b, loc, splat(1.0), inner);
    result = MulOp::create(b, loc, half, onePlus);
  }
  return Val::ofTensor(result, x->shape);
}

static Val power(Call &c) {
  return c.e.binary("**", *c.args[0], *c.args[1], c.at);
}

static Val extremum(Call &c) {
  const Val &l = *c.args[0], &r = *c.args[1];
  if (l.isNumber() && r.isNumber()) {
    double a = l.number(), b = r.number();
    double v = c.name == "maximum" ? std::max(a, b) : std::min(a, b);
    return l.kind == Val::Int && r.kind == Val::Int ? Val::ofInt(int64_t(v))
                                                    : Val::ofFloat(v);
  }
  // Reuse the operator path for broadcasting and its diagnostics, then
  // swap the op: `a + b` has exactly the shape rules maximum needs.
  Val sum = c.e.binary("+", l, r, c.at);
  if (sum.kind != Val::Tensor)
    return sum;
  auto add = sum.value.getDefiningOp<AddOp>();
  Value result =
      c.name == "maximum"
          ? MaxOp::create(c.e.b, c.loc(), add.getType(), add.getLhs(),
                          add.getRhs())
                .getResult()
          : MinOp::create(c.e.b, c.loc(), add.getType(), add.getLhs(),
                          add.getRhs())
                .getResult();
  add->erase();
  return Val::ofTensor(result, sum.shape);
}

static Val matmulBuiltin(Call &c) {
  return c.e.matmul(*c.args[0], *c.args[1], c.at);
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

static Val transpose(Call &c) {
  FailureOr<Val> x = c.tensor(0);
  if (failed(x))
    return Val::poison();
  int64_t rank = x->shape.size();
  SmallVector<int64_t> perm;
  if (c.has(1)) {
    FailureOr<SmallVector<int64_t>> given = c.integers(1);
    if (failed(given))
      return Val::poison();
    SmallVector<bool> seen(rank, false);
    bool ok = int64_t(given->size()) == rank;
    for (int64_t p : *given) {
      if (!ok)
        break;
      if (p < 0)
        p += rank;
      ok = p >= 0 && p < rank && !seen[p];
      if (ok)
        seen[p] = true;
      perm.push_back(p);
    }
    if (!ok) {
      c.error(1) << "transpose: 'perm' must be a permutation of the "
                 << rank << " dimensions of " << x->describe();
      return Val::poison();
    }
  } else {
    if (rank < 2) {
      c.error(0) << "transpose: needs a tensor of rank 2 or more, got "
                 << x->describe();
      return Val::poison();
    }
    perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    std::swap(perm[rank - 1], perm[rank - 2]);
  }
  Shape shape;
  for (int64_t p : perm)
    shape.push_back(x->shape[p]);
  auto type = RankedTensorType::get(sizes(shape), x->elementType());
  Value result = TransposeOp::create(c.e.b, c.loc(), type, x->value, perm);
  return Val::ofTensor(result, shape);
}

static Val reshape(Call &c) {
  FailureOr<Val> x = c.tensor(0, /*anyElement=*/true);
  FailureOr<SmallVector<int64_t>> target = c.integers(1);
  if (failed(x) || failed(target))
    return Val::poison();
  int64_t elements = x->type().getNumElements();
  SmallVector<int64_t> requested = *target;
  int64_t known = 1;
  int inferred = -1;
  bool ok = true;
  for (auto [i, d] : llvm::enumerate(*target)) {
    if (d == -1 && inferred < 0) {
      inferred = i;
      continue;
    }
    std::optional<int64_t> product = llvm::checkedMul(known, d);
    if (d <= 0 || !product || *product > elements)
      ok = false;
    else
      known = *product;
  }
  if (ok && inferred >= 0)
    ok = elements % known == 0;
  if (ok && inferred >= 0)
    (*target)[inferred] = elements / known;
  else if (ok)
    ok = known == elements;
  if (!ok) {
    InFlightDiagnostic diag = c.error(1);
    diag << "reshape: cannot reshape " << x->describe() << " (" << elements
         << " elements) to [";
    llvm::interleaveComma(requested, diag);
    diag << "]";
    return Val::poison();
  }
  Shape shape;
  for (int64_t d : *target)
    shape.push_back(Dim{d, ""});
  // Keep dimension names where the leading sizes are unchanged.
  for (size_t i = 0; i < shape.size() && i < x->shape.size() &&
                     shape[i].size == x->shape[i].size;
       ++i)
    shape[i].name = x->shape[i].name;
  return Val::ofTensor(buildReshape(c.e.b, c.loc(), x->value, *target), shape);
}

static Val slice(Call &c) {
  FailureOr<Val> x = c.tensor(0);
  FailureOr<int64_t> axisArg = c.integer(1, 0);
  if (failed(x) || failed(axisArg))
    return Val::poison();
  int64_t rank = x->shape.size();
  FailureOr<int64_t> axis = c.e.normalizeAxis(*axisArg, rank, c.locOf(1));
  if (failed(axis))
    return Val::poison();
  int64_t size = x->shape[*axis].size;
  FailureOr<int64_t> start = c.integer(2, 0), end = c.integer(3, size),
                     step = c.integer(4, 1);
  if (failed(start) || failed(end) || failed(step))
    return Val::poison();
  if (*step <= 0) {
    c.error(4) << "slice: 'step' must be positive, got " << *step;
    return Val::poison();
  }
  // Python semantics: negative bounds count from the end, then clamp.
  auto clamp = [&](int64_t i) {
    if (i < 0)
      i += size;
    return std::clamp<int64_t>(i, 0, size);
  };
  int64_t lo = clamp(*start), hi = clamp(*end);
  if (hi <= lo) {
    c.e.error(c.at) << "slice: [" << *start << ":" << *end
                    << "] of dimension " << *axis << " (size " << size
                    << ") is empty";
    return Val::poison();
  }
  int64_t count = (hi - lo + *step - 1) / *step;
  SmallVector<int64_t> starts(rank, 0), strides(rank, 1);
  starts[*axis] = lo;
  strides[*axis] = *step;
  Shape shape = x->shape;
  shape[*axis] = Dim{count, count == size ? shape[*axis].name : ""};
  auto type = RankedTensorType::get(sizes(shape), x->elementType());
  Value result =
      SliceOp::create(c.e.b, c.loc(), type, x->value, starts, strides);
  return Val::ofTensor(result, shape);
}

static Val concat(Call &c) {
  const Val &list = *c.args[0];
  if (list.kind != Val::List || list.items.empty()) {
    c.error(0) << "concat: expects a non-empty list of tensors, e.g. "
                  "concat([a, b], axis = 1), got "
               << list.describe();
    return Val::poison();
  }
  FailureOr<int64_t> axisArg = c.integer(1, 0);
  if (failed(axisArg))
    return Val::poison();
  const Val &first = list.items.front();
  for (const Val &item : list.items) {
    if (item.kind != Val::Tensor || !isa<FloatType>(item.elementType())) {
      c.error(0) << "concat: expects float tensors, got " << item.describe();
      return Val::poison();
    }
  }
  int64_t rank = first.shape.size();
  FailureOr<int64_t> axis = c.e.normalizeAxis(*axisArg, rank, c.locOf(1));
  if (failed(axis))
    return Val::poison();
  Shape shape = first.shape;
  shape[*axis].name.clear();
  shape[*axis].size = 0;
  SmallVector<Value> inputs;
  for (const Val &item : list.items) {
    bool ok = int64_t(item.shape.size()) == rank &&
              item.elementType() == first.elementType();
    for (int64_t d = 0; ok && d < rank; ++d)
      ok = d == *axis || item.shape[d].size == first.shape[d].size;
    if (!ok) {
      c.error(0) << "concat: shape mismatch: " << first.describe() << " and "
                 << item.describe() << " along axis " << *axis;
      return Val::poison();
    }
    shape[*axis].size += item.shape[*axis].size;
    inputs.push_back(item.value);
  }
  auto type = RankedTensorType::get(sizes(shape), first.elementType());
  Value result = ConcatOp::create(c.e.b, c.loc(), type, *axis, inputs);
  return Val::ofTensor(result, shape);
}

static Val sizeOf(Call &c) {
  FailureOr<Val> x = c.tensor(0, /*anyElement=*/true);
  FailureOr<int64_t> axisArg = c.integer(1, 0);
  if (failed(x) || failed(axisArg))
    return Val::poison();
  FailureOr<int64_t> axis =
      c.e.normalizeAxis(*axisArg, x->shape.size(), c.locOf(1));
  if (failed(axis))
    return Val::poison();
  return Val::ofInt(x->shape[*axis].size);
}

//===----------------------------------------------------------------------===//
// Reductions and normalization
//===----------------------------------------------------------------------===//

static Val reduce(Call &c) {
  FailureOr<Val> x = c.tensor(0);
  FailureOr<int64_t> keep = c.integer(2, 0);
  if (failed(x) || failed(keep))
    return Val::poison();
  int64_t rank = x->shape.size();
  SmallVector<int64_t> axes;
  if (c.has(1)) {
    FailureOr<SmallVector<int64_t>> given = c.integers(1);
    if (failed(given))
      return Val::poison();
    for (int64_t a : *given) {
      FailureOr<int64_t> axis = c.e.normalizeAxis(a, rank, c.locOf(1));
      if (failed(axis))
        return Val::poison();
      axes.push_back(*axis);
    }
    llvm::sort(axes);
    if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) {
      c.error(1) << c.name << ": 'axis' repeats an axis";
      return Val::poison();
    }
  } else {
    axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  }
  Shape shape;
  int64_t count = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (!llvm::is_contained(axes, d))
      shape.push_back(x->shape[d]);
    else {
      count *= x->shape[d].size;
      if (*keep)
        shape.push_back(Dim{1, ""});
    }
  }
  if (axes.empty())
    return *x;
  auto type = RankedTensorType::get(sizes(shape), x->elementType());
  OpBuilder &b = c.e.b;
  Location loc = c.loc();
  Value result;
  if (c.name == "max")
    result = ReduceMaxOp::create(b, loc, type, x->value, axes, *keep != 0);
  else if (c.name == "min")
    result = ReduceMinOp::create(b, loc, type, x->value, axes, *keep != 0);
  else
    result = ReduceSumOp::create(b, loc, type, x->value, axes, *keep != 0);
  if (c.name == "mean")
    result = MulOp::create(b, loc, result,
                           buildSplat(b, loc, type, 1.0 / double(count)));
  return Val::ofTensor(result, shape);
}

static Val softmax(Call &c) {
  FailureOr<Val> x = c.tensor(0);
  FailureOr<int64_t> axisArg = c.integer(1, -1);
  if (failed(x) || failed(axisArg))
    return Val::poison();
  FailureOr<int64_t> axis =
      c.e.normalizeAxis(*axisArg, x->shape.size(), c.locOf(1));
  if (failed(axis))
    return Val::poison();
  Value result =
      c.name == "softmax"
          ? SoftmaxOp::create(c.e.b, c.loc(), x->type(), x->value, *axis)
                .getResult()
          : LogSoftmaxOp::create(c.e.b, c.loc(), x->type(), x->value, *axis)
                .getResult();
  return Val::ofTensor(result, x->shape);
}

/// Normalizes over the last dimension with the biased variance, as
/// torch.nn.LayerNorm does.
static Val layerNorm(Call &c) {
  FailureOr<Val> x = c.tensor(0);
  FailureOr<double> eps = c.number(3, 1e-5);
  if (failed(x) || failed(eps))
    return Val::poison();
  if (x->shape.empty()) {
    c.error(0) << "layer_norm: needs a tensor of rank 1 or more";
    return Val::poison();
  }
  const Dim &last = x->shape.back();
  for (unsigned i : {1u, 2u}) {
    if (!c.has(i))
      continue;
    FailureOr<Val> affine = c.tensor(i);
    if (failed(affine))
      return Val::poison();
    if (affine->shape.size() != 1 || affine->shape[0].size != last.size) {
      c.error(i) << "layer_norm: '" << c.params[i]
                 << "' must have the shape of the last dimension of "
                 << x->describe() << ", got " << affine->describe();
      return Val::poison();
    }
  }
  OpBuilder &b = c.e.b;
  Location loc = c.loc();
  int64_t rank = x->shape.size();
  SmallVector<int64_t> full = sizes(x->shape), kept = full;
  kept.back() = 1;
  auto keptType = RankedTensorType::get(kept, x->elementType());
  auto meanOf = [&](Value v) -> Value {
    Value sum = ReduceSumOp::create(b, loc, keptType, v,
                                    ArrayRef<int64_t>{rank - 1}, true);
    return MulOp::create(b, loc, sum,
                         buildSplat(b, loc, keptType, 1.0 / double(last.size)));
  };
  auto expand = [&](Value v) { return buildNumpyBroadcast(b, loc, v, full); };
  Value centered = SubOp::create(b, loc, x->value, expand(meanOf(x->value)));
  Value variance = meanOf(MulOp::create(b, loc, centered, centered));
  Value stddev = SqrtOp::create(
      b, loc, AddOp::create(b, loc, variance, buildSplat(b, loc, keptType, *eps)));
  Value y = DivOp::create(b, loc, centered, expand(stddev));
  if (c.has(1))
    y = MulOp::create(b, loc, y, expand(c.args[1]->value));
  if (c.has(2))
    y = AddOp::create(b, loc, y, expand(c.args[2]->value));
  return Val::ofTensor(y, x->shape);
}

/// batch_norm(x, weight, bias, running_mean, running_var, momentum = 0.1,
/// eps = 1e-5) over [N, C, ...], as torch.nn.functional.batch_norm in
/// training mode: batch statistics in a training step, the running ones in
/// an evaluation step, and the running statistics (buffers) updated with
/// `(1 - momentum) * running + momentum * batch`, the variance unbiased.
static Val batchNorm(Call &c) {
  FailureOr<Val> x = c.tensor(0);
  FailureOr<double> momentum = c.number(5, 0.1);
  FailureOr<double> eps = c.number(6, 1e-5);
  if (failed(x) || failed(momentum) || failed(eps))
    return Val::poison();
  if (x->shape.size() < 2) {
    c.error(0) << "batch_norm: needs a tensor [N, C, ...], got "
               << x->describe();
    return Val::poison();
  }
  if (!(*momentum >= 0 && *momentum <= 1)) {
    c.error(5) << "batch_norm: momentum must be in [0, 1], got "
               << formatNumber(*momentum);
    return Val::poison();
  }
  const Dim &channels = x->shape[1];
  SmallVector<Val, 4> perChannel;
  for (unsigned i = 1; i <= 4; ++i) {
    FailureOr<Val> v = c.tensor(i);
    if (failed(v))
      return Val::poison();
    if (v->shape.size() != 1 || v->shape[0].size != channels.size) {
      c.error(i) << "batch_norm: '" << c.params[i]
                 << "' must have one value per channel of " << x->describe()
                 << " (dimension 1), got " << v->describe();
      return Val::poison();
    }
    perChannel.push_back(*v);
  }
  OpBuilder &b = c.e.b;
  Location loc = c.loc();
  BatchNormTraining norm = buildBatchNormTraining(
      b, loc, x->value, perChannel[0].value, perChannel[1].value,
      perChannel[2].value, perChannel[3].value, *eps);
  if (norm.count < 2) {
    c.error(0) << "batch_norm: needs more than one value per channel to "
                  "train, got "
               << x->describe();
    return Val::poison();
  }
  RankedTensorType channelType = perChannel[2].type();
  auto update = [&](const Val &running, Value batch) -> Value {
    Value kept = MulOp::create(b, loc, running.value,
                               buildSplat(b, loc, channelType, 1 - *momentum));
    Value taken = MulOp::create(b, loc, batch,
                                buildSplat(b, loc, channelType, *momentum));
    return AddOp::create(b, loc, kept, taken);
  };
  Value unbiased = MulOp::create(
      b, loc, norm.variance,
      buildSplat(b, loc, channelType,
                 double(norm.count) / double(norm.count - 1)));
  if (failed(c.e.updateBuffer(perChannel[2], update(perChannel[2], norm.mean),
                              c.locOf(3), "batch_norm: 'running_mean'")) ||
      failed(c.e.updateBuffer(perChannel[3], update(perChannel[3], unbiased),
                              c.locOf(4), "batch_norm: 'running_var'")))
    return Val::poison();
  return Val::ofTensor(norm.y, x->shape);
}

//===----------------------------------------------------------------------===//
// Indexing and losses
//===----------------------------------------------------------------------===//

static bool isIndexTensor(const Val &v) {
  return v.kind == Val::Tensor &&
         (v.elementType().isInteger(64) || v.elementType().isInteger(32));
}

static Val embedding(Call &c) {
  FailureOr<Val> table = c.tensor(0);
  if (failed(table))
    return Val::poison();
  const Val &indices = *c.args[1];
  if (!isIndexTensor(indices)) {
    c.error(1) << "embedding: 'indices' must be an i64 or i32 tensor, got "
               << indices.describe();
    return Val::poison();
  }
  if (table->shape.empty()) {
    c.error(0) << "embedding: 'table' must have rank 1 or more";
    return Val::poison();
  }
  Shape shape = indices.shape;
  shape.append(table->shape.begin() + 1, table->shape.end());
  auto type = RankedTensorType::get(sizes(shape), table->elementType());
  Value result = GatherOp::create(c.e.b, c.loc(), type, table->value,
                                  indices.value, 0);
  return Val::ofTensor(result, shape);
}

/// Mean softmax cross-entropy over every position: logits [..., C] against
/// class indices [...], as torch.nn.functional.cross_entropy on the
/// flattened tensors.
static Val crossEntropy(Call &c) {
  FailureOr<Val> logits = c.tensor(0);
  if (failed(logits))
    return Val::poison();
  const Val &labels = *c.args[1];
  if (!isIndexTensor(labels)) {
    c.error(1) << "cross_entropy: 'labels' must be an i64 or i32 tensor, got "
               << labels.describe();
    return Val::poison();
  }
  ArrayRef<Dim> lead = ArrayRef<Dim>(logits->shape).drop_back(
      logits->shape.empty() ? 0 : 1);
  if (logits->shape.empty() || sizes(lead) != sizes(labels.shape)) {
    c.e.error(c.at) << "shape mismatch: cross_entropy(" << logits->describe()
                    << ", " << labels.describe()
                    << "): labels must have the logits' shape without the "
                       "class dimension";
    return Val::poison();
  }
  OpBuilder &b = c.e.b;
  Location loc = c.loc();
  int64_t classes = logits->shape.back().size;
  int64_t rows = logits->type().getNumElements() / classes;
  Value flatLogits = buildReshape(b, loc, logits->value, {rows, classes});
  Value flatLabels = buildReshape(b, loc, labels.value, {rows});
  Value result = SoftmaxCrossEntropyOp::create(
      b, loc, RankedTensorType::get({}, logits->elementType()), flatLogits,
      flatLabels);
  return Val::ofTensor(result, {});
}

static Val mse(Call &c) {
  FailureOr<Val> prediction = c.tensor(0), target = c.tensor(1);
  if (failed(prediction) || failed(target))
    return Val::poison();
  if (sizes(prediction->shape) != sizes(target->shape)) {
    c.e.error(c.at) << "shape mismatch: mse(" << prediction->describe()
                    << ", " << target->describe() << ")";
    return Val::poison();
  }
  OpBuilder &b = c.e.b;
  Location loc = c.loc();
  Value diff = SubOp::create(b, loc, prediction->value, target->value);
  Value squared = MulOp::create(b, loc, diff, diff);
  int64_t rank = prediction->shape.size();
  auto scalar = RankedTensorType::get({}, prediction->elementType());
  Value sum = squared;
  if (rank > 0)
    sum = ReduceSumOp::create(b, loc, scalar, squared,
                              llvm::to_vector(llvm::seq<int64_t>(0, rank)),
                              false);
  Value mean = MulOp::create(
      b, loc, sum,
      buildSplat(b, loc, scalar,
                 1.0 / double(prediction->type().getNumElements())));
  return Val::ofTensor(mean, {});
}

/// dropout(x, p = 0.5): in a training step each element is zeroed with
/// probability p and the others scaled by 1 / (1 - p), with masks from the
/// step's random key (every call its own stream); the identity in an
/// evaluation step.
static Val dropout(Call &c) {
  FailureOr<Val> x = c.tensor(0);
  FailureOr<double> p = c.number(1, 0.5);
  if (failed(x) || failed(p))
    return Val::poison();
  if (!(*p >= 0 && *p < 1)) {
    c.error(1) << "dropout: p must be in [0, 1), got " << formatNumber(*p);
    return Val::poison();
  }
  if (*p == 0)
    return *x;
  OpBuilder &b = c.e.b;
  Location loc = c.loc();
  Value dropped = buildTrainingDropout(b, loc, x->value, *p, c.e.rngKey(c.at),
                                       c.e.nextRandomStream())
                      .first;
  return Val::ofTensor(ModeSelectOp::create(b, loc, dropped, x->value),
                       x->shape);
}

/// An additive attention mask: 0 where key j <= query i, a large negative
/// number elsewhere (exp underflows to exactly 0 in f32).
static Val causalMask(Call &c) {
  FailureOr<int64_t> n = c.integer(0, 0);
  if (failed(n))
    return Val::poison();
  constexpr int64_t kMaxSide = 1 << 13;
  if (*n <= 0 || *n > kMaxSide) {
    c.error(0) << "causal_mask: size must be in [1, " << kMaxSide << "], got "
               << *n;
    return Val::poison();
  }
  SmallVector<float> values(*n * *n, 0.0f);
  for (int64_t i = 0; i < *n; ++i)
    for (int64_t j = i + 1; j < *n; ++j)
      values[i * *n + j] = -1e9f;
  auto type = RankedTensorType::get({*n, *n}, c.e.b.getF32Type());
  Value mask = arith::ConstantOp::create(
      c.e.b, c.loc(), DenseElementsAttr::get(type, ArrayRef<float>(values)));
  return Val::ofTensor(mask, {Dim{*n, ""}, Dim{*n, ""}});
}

/// Argument `i` as one value per spatial dimension (an integer applies to
/// all), each at least `minimum`; `dflt` when absent.
static FailureOr<SmallVector<int64_t>>
perSpatial(Call &c, unsigned i, int64_t spatial,
           std::optional<SmallVector<int64_t>> dflt, int64_t minimum) {
  if (!c.has(i)) {
    if (dflt)
      return *dflt;
    c.e.error(c.at) << c.name << ": missing argument '" << c.params[i] << "'";
    return failure();
  }
  FailureOr<SmallVector<int64_t>> values = c.integers(i);
  if (failed(values))
    return failure();
  if (values->size() == 1)
    values->assign(spatial, values->front());
  if (int64_t(values->size()) != spatial ||
      llvm::any_of(*values, [&](int64_t v) { return v < minimum; })) {
    c.error(i) << c.name << ": '" << c.params[i] << "' needs " << spatial
               << " values (one per spatial dimension) of at least "
               << minimum;
    return failure();
  }
  return values;
}

/// The input of conv / max_pool: [N, C, spatial...] with 1 to 3 spatial
/// dimensions.
static FailureOr<Val> spatialTensor(Call &c) {
  FailureOr<Val> x = c.tensor(0);
  if (failed(x))
    return failure();
  if (x->shape.size() < 3 || x->shape.size() > 5) {
    c.error(0) << c.name << ": 'x' must be [N, C, spatial...] with 1 to 3 "
                  "spatial dimensions, got "
               << x->describe();
    return failure();
  }
  return x;
}

/// Output sizes of windows over `x`'s spatial dimensions, or failure when
/// one would be empty.
static FailureOr<Shape> windowShape(Call &c, const Val &x, int64_t channels,
                                    ArrayRef<int64_t> kernel,
                                    ArrayRef<int64_t> stride,
                                    ArrayRef<int64_t> padding,
                                    ArrayRef<int64_t> dilation) {
  Shape shape = {x.shape[0], Dim{channels, ""}};
  for (size_t i = 0; i < kernel.size(); ++i) {
    int64_t extent = dilation[i] * (kernel[i] - 1) + 1;
    int64_t padded = x.shape[2 + i].size + 2 * padding[i];
    if (padded < extent) {
      c.e.error(c.at) << c.name << ": a window of extent " << extent
                      << " does not fit spatial dimension " << i << " of "
                      << x.describe() << " with padding " << padding[i];
      return failure();
    }
    shape.push_back(Dim{(padded - extent) / stride[i] + 1, ""});
  }
  return shape;
}

/// torch.nn.functional.conv1d/2d/3d: weight [F, C / groups, kernel...],
/// symmetric zero padding.
static Val convBuiltin(Call &c) {
  FailureOr<Val> x = spatialTensor(c);
  FailureOr<Val> w = c.tensor(1);
  FailureOr<int64_t> groups = c.integer(5, 1);
  if (failed(x) || failed(w) || failed(groups))
    return Val::poison();
  int64_t spatial = x->shape.size() - 2;
  int64_t channels = x->shape[1].size;
  int64_t filters = w->shape.size() == x->shape.size() ? w->shape[0].size : 0;
  if (filters == 0 || *groups < 1 || channels % *groups != 0 ||
      filters % *groups != 0 || w->shape[1].size * *groups != channels) {
    c.error(1) << "conv: the weight must be [F, C / groups, kernel...] for "
               << x->describe() << " and groups = " << *groups << ", got "
               << w->describe();
    return Val::poison();
  }
  SmallVector<int64_t> kernel = sizes(w->shape);
  kernel.erase(kernel.begin(), kernel.begin() + 2);
  SmallVector<int64_t> ones(spatial, 1), zeros(spatial, 0);
  FailureOr<SmallVector<int64_t>> stride = perSpatial(c, 2, spatial, ones, 1);
  FailureOr<SmallVector<int64_t>> padding = perSpatial(c, 3, spatial, zeros, 0);
  FailureOr<SmallVector<int64_t>> dilation = perSpatial(c, 4, spatial, ones, 1);
  if (failed(stride) || failed(padding) || failed(dilation))
    return Val::poison();
  FailureOr<Shape> shape =
      windowShape(c, *x, filters, kernel, *stride, *padding, *dilation);
  if (failed(shape))
    return Val::poison();
  auto type = RankedTensorType::get(sizes(*shape), x->elementType());
  Value y = ConvOp::create(c.e.b, c.loc(), type, x->value, w->value, *stride,
                           *dilation, *padding, *padding, *groups);
  return Val::ofTensor(y, *shape);
}

/// torch.nn.functional.max_pool1d/2d/3d (stride defaults to the kernel,
/// padding with -inf at most half the kernel).
static Val maxPool(Call &c) {
  FailureOr<Val> x = spatialTensor(c);
  if (failed(x))
    return Val::poison();
  int64_t spatial = x->shape.size() - 2;
  FailureOr<SmallVector<int64_t>> kernel =
      perSpatial(c, 1, spatial, std::nullopt, 1);
  if (failed(kernel))
    return Val::poison();
  SmallVector<int64_t> ones(spatial, 1), zeros(spatial, 0);
  FailureOr<SmallVector<int64_t>> stride = perSpatial(c, 2, spatial, *kernel, 1);
  FailureOr<SmallVector<int64_t>> padding = perSpatial(c, 3, spatial, zeros, 0);
  if (failed(stride) || failed(padding))
    return Val::poison();
  for (int64_t i = 0; i < spatial; ++i)
    if (2 * (*padding)[i] > (*kernel)[i]) {
      c.error(3) << "max_pool: padding must be at most half the kernel";
      return Val::poison();
    }
  FailureOr<Shape> shape = windowShape(c, *x, x->shape[1].size, *kernel,
                                       *stride, *padding, ones);
  if (failed(shape))
    return Val::poison();
  (*shape)[1] = x->shape[1];
  auto type = RankedTensorType::get(sizes(*shape), x->elementType());
  Value y = MaxPoolOp::create(c.e.b, c.loc(), type, x->value, *kernel, *stride,
                              ones, *padding, *padding);
  return Val::ofTensor(y, *shape);
}

const llvm::StringMap<Builtin> &builtins() {
  static const llvm::StringMap<Builtin> table = [] {
    llvm::StringMap<Builtin> t;
    for (StringRef name : {"relu", "sigmoid", "tanh", "exp", "log", "sqrt",
                           "abs", "erf", "sin", "cos", "atan", "floor",
                           "ceil", "round", "gelu", "gelu_tanh"})
      t[name] = Builtin{{"x"}, 1, unary};
    t["pow"] = Builtin{{"x", "y"}, 2, power};
    t["maximum"] = Builtin{{"x", "y"}, 2, extremum};
    t["minimum"] = Builtin{{"x", "y"}, 2, extremum};
    t["matmul"] = Builtin{{"a", "b"}, 2, matmulBuiltin};
    t["transpose"] = Builtin{{"x", "perm"}, 1, transpose};
    t["reshape"] = Builtin{{"x", "shape"}, 2, reshape};
    t["slice"] = Builtin{{"x", "axis", "start", "end", "step"}, 2, slice};
    t["concat"] = Builtin{{"xs", "axis"}, 1, concat};
    t["size"] = Builtin{{"x", "axis"}, 2, sizeOf};
    for (StringRef name : {"sum", "mean", "max", "min"})
      t[name] = Builtin{{"x", "axis", "keepdims"}, 1, reduce};
    t["softmax"] = Builtin{{"x", "axis"}, 1, softmax};
    t["log_softmax"] = Builtin{{"x", "axis"}, 1, softmax};
    t["layer_norm"] = Builtin{{"x", "weight", "bias", "eps"}, 1, layerNorm};
    t["batch_norm"] = Builtin{{"x", "weight", "bias", "running_mean",
                               "running_var", "momentum", "eps"},
                              5, batchNorm};
    t["embedding"] = Builtin{{"table", "indices"}, 2, embedding};
    t["cross_entropy"] = Builtin{{"logits", "labels"}, 2, crossEntropy};
    t["mse"] = Builtin{{"prediction", "target"}, 2, mse};
    t["causal_mask"] = Builtin{{"size"}, 1, causalMask};
    t["dropout"] = Builtin{{"x", "p"}, 1, dropout};
    t["conv"] = Builtin{
        {"x", "weight", "stride", "padding", "dilation", "groups"}, 2,
        convBuiltin};
    t["max_pool"] = Builtin{{"x", "kernel", "stride", "padding"}, 2, maxPool};
    return t;
  }();
  return table;
}

} // namespace

bool Emitter::isBuiltin(StringRef name) const {
  return builtins().count(name);
}

Val Emitter::callBuiltin(StringRef name, CallArgs &args, SrcLoc at) {
  const Builtin &builtin = builtins().find(name)->second;
  Call call{*this, name, at, {}, {}, builtin.params};
  size_t arity = builtin.params.size();
  call.args.resize(arity);
  call.locs.assign(arity, at);
  if (args.positional.size() > arity) {
    error(at) << name << " takes at most " << arity << " argument"
              << (arity == 1 ? "" : "s") << ", got " << args.positional.size();
    return Val::poison();
  }
  for (size_t i = 0; i < args.positional.size(); ++i) {
    call.args[i] = args.positional[i];
    call.locs[i] = args.positionalLocs[i];
  }
  bool ok = true;
  for (auto [i, kw] : llvm::enumerate(args.keyword)) {
    auto it = llvm::find(builtin.params, kw.first);
    if (it == builtin.params.end()) {
      InFlightDiagnostic diag = error(args.keywordLocs[i]);
      diag << name << " has no parameter named '" << kw.first
           << "'; its parameters are ";
      llvm::interleaveComma(builtin.params, diag);
      ok = false;
      continue;
    }
    size_t index = it - builtin.params.begin();
    if (call.args[index]) {
      error(args.keywordLocs[i])
          << "argument '" << kw.first << "' is given twice";
      ok = false;
      continue;
    }
    call.args[index] = kw.second;
    call.locs[index] = args.keywordLocs[i];
  }
  for (unsigned i = 0; ok && i < builtin.required; ++i) {
    if (!call.args[i]) {
      error(at) << name << ": missing argument '" << builtin.params[i] << "'";
      ok = false;
    }
  }
  if (!ok)
    return Val::poison();
  return builtin.fn(call);
}

} // namespace lmc::dsl
