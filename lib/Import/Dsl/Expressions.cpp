//===- Expressions.cpp - operators and calls of the lmc DSL ---------------===//
//
// Numbers are folded at compile time (they size dimensions and configure
// layers); tensor operators broadcast numpy-style and check shapes, naming
// the dimensions in their diagnostics.
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"

#include "lmc/Dialect/Lmc/IR/LmcBuilders.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"

#include "llvm/Support/CheckedArithmetic.h"

#include <cmath>

using namespace mlir;

namespace lmc::dsl {

/// Numpy broadcasting of named shapes: a size-1 dimension stretches; a
/// named dimension keeps its name.
static std::optional<Shape> broadcastShape(ArrayRef<Dim> lhs,
                                           ArrayRef<Dim> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  Shape result(rank);
  for (size_t i = 0; i < rank; ++i) {
    Dim l = i < lhs.size() ? lhs[lhs.size() - 1 - i] : Dim{1, ""};
    Dim r = i < rhs.size() ? rhs[rhs.size() - 1 - i] : Dim{1, ""};
    Dim &out = result[rank - 1 - i];
    if (l.size == r.size)
      out = l.name.empty() ? r : l;
    else if (l.size == 1)
      out = r;
    else if (r.size == 1)
      out = l;
    else
      return std::nullopt;
  }
  return result;
}

FailureOr<int64_t> Emitter::normalizeAxis(int64_t axis, int64_t rank,
                                          SrcLoc at) {
  if (axis < -rank || axis >= rank) {
    error(at) << "axis " << axis << " is out of range for rank " << rank;
    return failure();
  }
  return axis < 0 ? axis + rank : axis;
}

Value Emitter::splat(Type elementType, ArrayRef<Dim> shape, double value,
                     SrcLoc at) {
  return buildSplat(b, loc(at), RankedTensorType::get(sizes(shape), elementType),
                    value);
}

FailureOr<Val> Emitter::broadcastTo(const Val &value, ArrayRef<Dim> shape,
                                    Type elementType, SrcLoc at) {
  if (value.isNumber())
    return Val::ofTensor(splat(elementType, shape, value.number(), at),
                         Shape(shape));
  Value v = buildNumpyBroadcast(b, loc(at), value.value, sizes(shape));
  return Val::ofTensor(v, Shape(shape));
}

/// Compile-time arithmetic on numbers; integers stay integers except for
/// `/` (true division) and negative powers.
static std::optional<Val> foldNumbers(Emitter &emitter, StringRef op,
                                      const Val &lhs, const Val &rhs,
                                      SrcLoc at) {
  if (lhs.kind == Val::Int && rhs.kind == Val::Int && op != "/") {
    int64_t a = lhs.i, c = rhs.i;
    std::optional<int64_t> r;
    if (op == "+")
      r = llvm::checkedAdd(a, c);
    else if (op == "-")
      r = llvm::checkedSub(a, c);
    else if (op == "*")
      r = llvm::checkedMul(a, c);
    else if (op == "//" || op == "%") {
      if (c == 0) {
        emitter.error(at) << "integer division by zero";
        return Val::poison();
      }
      if (a == INT64_MIN && c == -1) {
        r = std::nullopt;
      } else {
        int64_t q = a / c, m = a % c;
        if (m != 0 && ((m < 0) != (c < 0))) { // floor, as Python does
          --q;
          m += c;
        }
        r = op == "//" ? q : m;
      }
    } else if (op == "**") {
      if (c < 0)
        return Val::ofFloat(std::pow(double(a), double(c)));
      int64_t p = 1;
      r = p;
      for (int64_t k = 0; k < c && r; ++k)
        r = llvm::checkedMul(*r, a);
    }
    if (!r) {
      emitter.error(at) << "integer overflow in " << a << " " << op << " "
                        << c;
      return Val::poison();
    }
    return Val::ofInt(*r);
  }
  double a = lhs.number(), c = rhs.number();
  if ((op == "/" || op == "//" || op == "%") && c == 0) {
    emitter.error(at) << "division by zero";
    return Val::poison();
  }
  if (op == "+")
    return Val::ofFloat(a + c);
  if (op == "-")
    return Val::ofFloat(a - c);
  if (op == "*")
    return Val::ofFloat(a * c);
  if (op == "/")
    return Val::ofFloat(a / c);
  if (op == "//")
    return Val::ofFloat(std::floor(a / c));
  if (op == "%")
    return Val::ofFloat(a - c * std::floor(a / c));
  return Val::ofFloat(std::pow(a, c));
}

Val Emitter::binary(StringRef op, const Val &lhs, const Val &rhs, SrcLoc at) {
  if (lhs.kind == Val::Poison || rhs.kind == Val::Poison)
    return Val::poison();
  if (op == "@")
    return matmul(lhs, rhs, at);
  if (lhs.isNumber() && rhs.isNumber()) {
    std::optional<Val> folded = foldNumbers(*this, op, lhs, rhs, at);
    return folded ? *folded : Val::poison();
  }
  auto operandOk = [](const Val &v) {
    return v.isNumber() || v.kind == Val::Tensor;
  };
  if (!operandOk(lhs) || !operandOk(rhs)) {
    error(at) << "operator '" << op << "' cannot be applied to "
              << lhs.describe() << " and " << rhs.describe();
    return Val::poison();
  }
  if (op == "//" || op == "%") {
    error(at) << "operator '" << op << "' is only defined on numbers, got "
              << lhs.describe() << " " << op << " " << rhs.describe();
    return Val::poison();
  }
  const Val &tensor = lhs.kind == Val::Tensor ? lhs : rhs;
  Type elementType = tensor.elementType();
  for (const Val *v : {&lhs, &rhs}) {
    if (v->kind == Val::Tensor && !isa<FloatType>(v->elementType())) {
      error(at) << "operator '" << op << "' needs float tensors, got "
                << v->describe();
      return Val::poison();
    }
  }
  Shape shape = tensor.shape;
  if (lhs.kind == Val::Tensor && rhs.kind == Val::Tensor) {
    std::optional<Shape> common = broadcastShape(lhs.shape, rhs.shape);
    if (!common) {
      InFlightDiagnostic diag = error(at);
      diag << "shape mismatch: " << lhs.describe() << " " << op << " "
           << rhs.describe();
      noteDeclared(diag, lhs, "left operand");
      noteDeclared(diag, rhs, "right operand");
      return Val::poison();
    }
    shape = *common;
  }
  Val l = *broadcastTo(lhs, shape, elementType, at);
  Val r = *broadcastTo(rhs, shape, elementType, at);
  auto type = RankedTensorType::get(sizes(shape), elementType);
  Location location = loc(at);
  Value result;
  if (op == "+")
    result = AddOp::create(b, location, type, l.value, r.value);
  else if (op == "-")
    result = SubOp::create(b, location, type, l.value, r.value);
  else if (op == "*")
    result = MulOp::create(b, location, type, l.value, r.value);
  else if (op == "/")
    result = DivOp::create(b, location, type, l.value, r.value);
  else
    result = PowOp::create(b, location, type, l.value, r.value);
  return Val::ofTensor(result, shape);
}

Val Emitter::negate(const Val &operand, SrcLoc at) {
  switch (operand.kind) {
  case Val::Poison:
    return operand;
  case Val::Int:
    if (operand.i == INT64_MIN) {
      error(at) << "integer overflow in -" << operand.i;
      return Val::poison();
    }
    return Val::ofInt(-operand.i);
  case Val::Float:
    return Val::ofFloat(-operand.f);
  case Val::Tensor:
    if (isa<FloatType>(operand.elementType()))
      return Val::ofTensor(
          NegOp::create(b, loc(at), operand.type(), operand.value),
          operand.shape);
    [[fallthrough]];
  default:
    error(at) << "unary '-' cannot be applied to " << operand.describe();
    return Val::poison();
  }
}

/// When `v` is a transpose of its last two dimensions, the transposed
/// operand (so that matmul can read it transposed, as BLAS does).
static TransposeOp swappedLastTwo(Value v) {
  auto transpose = v.getDefiningOp<TransposeOp>();
  if (!transpose)
    return nullptr;
  ArrayRef<int64_t> perm = transpose.getPerm();
  int64_t rank = perm.size();
  for (int64_t i = 0; i < rank - 2; ++i)
    if (perm[i] != i)
      return nullptr;
  return rank >= 2 && perm[rank - 2] == rank - 1 && perm[rank - 1] == rank - 2
             ? transpose
             : nullptr;
}

Val Emitter::matmul(const Val &lhs, const Val &rhs, SrcLoc at) {
  if (lhs.kind == Val::Poison || rhs.kind == Val::Poison)
    return Val::poison();
  if (lhs.kind != Val::Tensor || rhs.kind != Val::Tensor ||
      !isa<FloatType>(lhs.elementType()) ||
      lhs.elementType() != rhs.elementType()) {
    error(at) << "'@' needs two float tensors of one element type, got "
              << lhs.describe() << " @ " << rhs.describe();
    return Val::poison();
  }
  if (lhs.shape.size() < 2 || rhs.shape.size() < 2) {
    error(at) << "'@' needs operands of rank 2 or more, got "
              << lhs.describe() << " @ " << rhs.describe();
    return Val::poison();
  }
  const Dim &kl = lhs.shape.back();
  const Dim &kr = rhs.shape[rhs.shape.size() - 2];
  ArrayRef<Dim> lBatch = ArrayRef<Dim>(lhs.shape).drop_back(2);
  ArrayRef<Dim> rBatch = ArrayRef<Dim>(rhs.shape).drop_back(2);
  std::optional<Shape> batch = broadcastShape(lBatch, rBatch);
  if (kl.size != kr.size || !batch) {
    InFlightDiagnostic diag = error(at);
    diag << "shape mismatch: " << lhs.describe() << " @ " << rhs.describe();
    if (kl.size != kr.size)
      diag << " (contracting " << kl.size << " with " << kr.size << ")";
    else
      diag << " (batch dimensions do not broadcast)";
    noteDeclared(diag, lhs, "left operand");
    noteDeclared(diag, rhs, "right operand");
    return Val::poison();
  }
  Location location = loc(at);
  Type elementType = lhs.elementType();
  Dim m = lhs.shape[lhs.shape.size() - 2], n = rhs.shape.back();
  Shape resultShape = *batch;
  resultShape.push_back(m);
  resultShape.push_back(n);
  auto resultType = RankedTensorType::get(sizes(resultShape), elementType);

  Value l = lhs.value, r = rhs.value;
  bool transposeLhs = false, transposeRhs = false;
  TransposeOp lt = swappedLastTwo(l), rt = swappedLastTwo(r);
  Value result;
  if (rhs.shape.size() == 2) {
    // A weight applied to every row: flatten the leading dimensions instead
    // of materializing a broadcast copy of the weight.
    if (rt) {
      r = rt.getOperand();
      transposeRhs = true;
    }
    int64_t rows = 1;
    for (const Dim &d : ArrayRef<Dim>(lhs.shape).drop_back())
      rows *= d.size;
    Value flat = buildReshape(b, location, l, {rows, kl.size});
    result = MatmulOp::create(
        b, location, RankedTensorType::get({rows, n.size}, elementType), flat,
        r, false, transposeRhs);
    result = buildReshape(b, location, result, sizes(resultShape));
  } else {
    if (lt && lBatch.size() == batch->size() &&
        sizes(lBatch) == sizes(*batch)) {
      l = lt.getOperand();
      transposeLhs = true;
    }
    if (rt && rBatch.size() == batch->size() &&
        sizes(rBatch) == sizes(*batch)) {
      r = rt.getOperand();
      transposeRhs = true;
    }
    auto full = [&](Value v, bool transposed, const Dim &rows,
                    const Dim &cols) {
      SmallVector<int64_t> shape = sizes(*batch);
      shape.push_back(transposed ? cols.size : rows.size);
      shape.push_back(transposed ? rows.size : cols.size);
      return buildNumpyBroadcast(b, location, v, shape);
    };
    l = full(l, transposeLhs, m, kl);
    r = full(r, transposeRhs, kr, n);
    result = MatmulOp::create(b, location, resultType, l, r, transposeLhs,
                              transposeRhs);
  }
  // A transpose folded into the matmul is left for canonicalization to
  // remove: a DSL variable may still name it.
  return Val::ofTensor(result, resultShape);
}

Val Emitter::eval(const Expr &expr, const std::shared_ptr<Env> &env) {
  switch (expr.kind) {
  case Expr::Int:
    return Val::ofInt(expr.intValue);
  case Expr::Float:
    return Val::ofFloat(expr.floatValue);
  case Expr::String: {
    Val v;
    v.kind = Val::Str;
    v.s = expr.name;
    return v;
  }
  case Expr::Name: {
    if (Val *v = env->lookup(expr.name))
      return *v;
    if (expr.name == "true" || expr.name == "false")
      return Val::ofInt(expr.name == "true");
    if (isBuiltin(expr.name))
      error(expr.loc) << "built-in function '" << expr.name
                      << "' must be called: " << expr.name << "(...)";
    else
      error(expr.loc) << "unknown name '" << expr.name << "'";
    return Val::poison();
  }
  case Expr::Unary:
    return negate(eval(*expr.args[0], env), expr.loc);
  case Expr::Binary: {
    Val lhs = eval(*expr.args[0], env);
    Val rhs = eval(*expr.args[1], env);
    return binary(expr.name, lhs, rhs, expr.loc);
  }
  case Expr::List:
  case Expr::Tuple: {
    Val list;
    list.kind = Val::List;
    for (const ExprPtr &item : expr.args) {
      list.items.push_back(eval(*item, env));
      if (list.items.back().kind == Val::Poison)
        return Val::poison();
    }
    return list;
  }
  case Expr::Call:
    break;
  }

  CallArgs args;
  bool poisoned = false;
  for (const ExprPtr &arg : expr.args) {
    args.positional.push_back(eval(*arg, env));
    args.positionalLocs.push_back(arg->loc);
    poisoned |= args.positional.back().kind == Val::Poison;
  }
  for (auto [i, kw] : llvm::enumerate(expr.kwargs)) {
    args.keyword.emplace_back(kw.first, eval(*kw.second, env));
    args.keywordLocs.push_back(expr.kwargLocs[i]);
    poisoned |= args.keyword.back().second.kind == Val::Poison;
  }
  if (poisoned)
    return Val::poison();
  if (Val *callee = env->lookup(expr.name)) {
    if (callee->kind == Val::Def)
      return callDef(callee->def, args, expr.loc, prefix);
    if (callee->kind == Val::Layer) {
      // Keep the instance alive: the call may rebind the name.
      std::shared_ptr<Instance> layer = callee->layer;
      return callLayer(*layer, args, expr.loc);
    }
    if (callee->kind == Val::Poison)
      return Val::poison();
    error(expr.loc) << "'" << expr.name << "' is " << callee->describe()
                    << ", not a function";
    return Val::poison();
  }
  if (isBuiltin(expr.name))
    return callBuiltin(expr.name, args, expr.loc);
  error(expr.loc) << "unknown function '" << expr.name << "'";
  return Val::poison();
}

} // namespace lmc::dsl
