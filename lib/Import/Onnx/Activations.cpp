//===- Activations.cpp - activations composed of lmc ops ------------------===//
//
// LeakyRelu, PRelu, Elu, Celu, Selu, HardSigmoid, HardSwish,
// ThresholdedRelu, Shrink, Softplus, Softsign, Sign, Tan, Asin, Acos and
// the hyperbolic functions, each written with lmc's elementwise ops (cmp/select, exp, log,
// sqrt, ...), so that their VJPs come from those ops' and lowering needs
// nothing new. Formulas as in the ONNX operator specifications.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "lmc/Dialect/Lmc/IR/LmcBuilders.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"

#include <cmath>

using namespace mlir;

namespace lmc::onnx_import {
namespace {

/// Builds the formulas of one node on its float operand `x`.
struct Formula {
  OpBuilder &b;
  Location loc;
  Value x;

  Value constant(double v) { return buildSplatLike(b, loc, x, v); }
  Value add(Value l, Value r) { return AddOp::create(b, loc, l, r); }
  Value sub(Value l, Value r) { return SubOp::create(b, loc, l, r); }
  Value mul(Value l, Value r) { return MulOp::create(b, loc, l, r); }
  Value div(Value l, Value r) { return DivOp::create(b, loc, l, r); }
  Value exp(Value v) { return ExpOp::create(b, loc, v); }
  Value log(Value v) { return LogOp::create(b, loc, v); }
  Value sqrt(Value v) { return SqrtOp::create(b, loc, v); }
  Value abs(Value v) { return AbsOp::create(b, loc, v); }
  Value max(Value l, Value r) { return MaxOp::create(b, loc, l.getType(), l, r); }
  Value min(Value l, Value r) { return MinOp::create(b, loc, l.getType(), l, r); }
  /// `onTrue` where `l predicate r`, else `onFalse`.
  Value where(CmpPredicate predicate, Value l, Value r, Value onTrue,
              Value onFalse) {
    return buildSelect(b, loc, buildCompare(b, loc, predicate, l, r), onTrue,
                       onFalse);
  }
  /// max(0, min(1, alpha x + beta)).
  Value hardSigmoid(double alpha, double beta) {
    Value linear = add(mul(constant(alpha), x), constant(beta));
    return max(constant(0.0), min(constant(1.0), linear));
  }
  Value sign(Value v) {
    Value zero = constant(0.0);
    return where(CmpPredicate::gt, v, zero, constant(1.0),
                 where(CmpPredicate::lt, v, zero, constant(-1.0), zero));
  }
};

/// Imports a one-input node whose float attributes (name, default) are
/// `attrs`: `build` gets the formula builder and the attribute values.
template <typename Build>
LogicalResult importUnaryFormula(
    NodeImporter &n, ArrayRef<std::pair<StringRef, float>> attrs, Build build) {
  SmallVector<StringRef> names;
  for (const auto &[name, dflt] : attrs)
    names.push_back(name);
  if (failed(n.checkArity(1, 1)) || failed(n.checkAttributes(names)))
    return failure();
  SmallVector<double> values;
  for (const auto &[name, dflt] : attrs) {
    FailureOr<float> value = n.floatAttr(name, dflt);
    if (failed(value))
      return failure();
    values.push_back(*value);
  }
  FailureOr<Value> x = n.floatInput(0);
  if (failed(x))
    return failure();
  Formula f{n.b, n.loc, *x};
  return n.setResult(build(f, ArrayRef<double>(values)));
}

LogicalResult importLeakyRelu(NodeImporter &n) {
  return importUnaryFormula(n, {{"alpha", 0.01f}}, [](Formula &f, auto a) {
    return f.where(CmpPredicate::lt, f.x, f.constant(0.0), f.mul(f.constant(a[0]), f.x),
                   f.x);
  });
}

LogicalResult importElu(NodeImporter &n) {
  return importUnaryFormula(n, {{"alpha", 1.0f}}, [](Formula &f, auto a) {
    Value negative = f.mul(f.constant(a[0]), f.sub(f.exp(f.x), f.constant(1.0)));
    return f.where(CmpPredicate::lt, f.x, f.constant(0.0), negative, f.x);
  });
}

LogicalResult importCelu(NodeImporter &n) {
  return importUnaryFormula(n, {{"alpha", 1.0f}}, [&](Formula &f, auto a) {
    // max(0, x) + min(0, alpha (exp(x / alpha) - 1))
    Value scaled = f.div(f.x, f.constant(a[0]));
    Value negative = f.mul(f.constant(a[0]), f.sub(f.exp(scaled), f.constant(1.0)));
    return f.add(f.max(f.constant(0.0), f.x), f.min(f.constant(0.0), negative));
  });
}

LogicalResult importSelu(NodeImporter &n) {
  return importUnaryFormula(
      n, {{"alpha", 1.67326319217681884765625f}, {"gamma", 1.05070102214813232421875f}},
      [](Formula &f, auto a) {
        Value negative =
            f.sub(f.mul(f.constant(a[0]), f.exp(f.x)), f.constant(a[0]));
        return f.mul(f.constant(a[1]),
                     f.where(CmpPredicate::le, f.x, f.constant(0.0), negative, f.x));
      });
}

LogicalResult importHardSigmoid(NodeImporter &n) {
  return importUnaryFormula(n, {{"alpha", 0.2f}, {"beta", 0.5f}},
                            [](Formula &f, auto a) {
                              return f.hardSigmoid(a[0], a[1]);
                            });
}

LogicalResult importHardSwish(NodeImporter &n) {
  return importUnaryFormula(n, {}, [](Formula &f, auto) {
    return f.mul(f.x, f.hardSigmoid(1.0 / 6.0, 0.5));
  });
}

LogicalResult importThresholdedRelu(NodeImporter &n) {
  return importUnaryFormula(n, {{"alpha", 1.0f}}, [](Formula &f, auto a) {
    return f.where(CmpPredicate::gt, f.x, f.constant(a[0]), f.x, f.constant(0.0));
  });
}

LogicalResult importShrink(NodeImporter &n) {
  return importUnaryFormula(n, {{"lambd", 0.5f}, {"bias", 0.0f}},
                            [](Formula &f, auto a) {
    Value below = f.add(f.x, f.constant(a[1]));
    Value above = f.sub(f.x, f.constant(a[1]));
    return f.where(CmpPredicate::lt, f.x, f.constant(-a[0]), below,
                   f.where(CmpPredicate::gt, f.x, f.constant(a[0]), above,
                           f.constant(0.0)));
  });
}

LogicalResult importSoftplus(NodeImporter &n) {
  return importUnaryFormula(n, {}, [](Formula &f, auto) {
    // log(1 + exp(x)) = max(x, 0) + log(1 + exp(-|x|)): no overflow.
    Value tail = f.log(f.add(f.constant(1.0), f.exp(f.sub(f.constant(0.0), f.abs(f.x)))));
    return f.add(f.max(f.x, f.constant(0.0)), tail);
  });
}

LogicalResult importSoftsign(NodeImporter &n) {
  return importUnaryFormula(n, {}, [](Formula &f, auto) {
    return f.div(f.x, f.add(f.constant(1.0), f.abs(f.x)));
  });
}

LogicalResult importSign(NodeImporter &n) {
  return importUnaryFormula(n, {}, [](Formula &f, auto) { return f.sign(f.x); });
}

LogicalResult importSinh(NodeImporter &n) {
  return importUnaryFormula(n, {}, [](Formula &f, auto) {
    Value negated = f.sub(f.constant(0.0), f.x);
    return f.mul(f.constant(0.5), f.sub(f.exp(f.x), f.exp(negated)));
  });
}

LogicalResult importCosh(NodeImporter &n) {
  return importUnaryFormula(n, {}, [](Formula &f, auto) {
    Value negated = f.sub(f.constant(0.0), f.x);
    return f.mul(f.constant(0.5), f.add(f.exp(f.x), f.exp(negated)));
  });
}

LogicalResult importAsinh(NodeImporter &n) {
  return importUnaryFormula(n, {}, [](Formula &f, auto) {
    // sign(x) log(|x| + sqrt(x^2 + 1)): no cancellation for negative x.
    Value root = f.sqrt(f.add(f.mul(f.x, f.x), f.constant(1.0)));
    return f.mul(f.sign(f.x), f.log(f.add(f.abs(f.x), root)));
  });
}

LogicalResult importAcosh(NodeImporter &n) {
  return importUnaryFormula(n, {}, [](Formula &f, auto) {
    Value root = f.sqrt(f.sub(f.mul(f.x, f.x), f.constant(1.0)));
    return f.log(f.add(f.x, root));
  });
}

LogicalResult importTan(NodeImporter &n) {
  return importUnaryFormula(n, {}, [](Formula &f, auto) {
    return f.div(SinOp::create(f.b, f.loc, f.x), CosOp::create(f.b, f.loc, f.x));
  });
}

/// asin(x) = atan(x / sqrt(1 - x^2)), for |x| < 1.
Value buildAsin(Formula &f) {
  Value root = f.sqrt(f.sub(f.constant(1.0), f.mul(f.x, f.x)));
  return AtanOp::create(f.b, f.loc, f.div(f.x, root));
}

LogicalResult importAsin(NodeImporter &n) {
  return importUnaryFormula(n, {}, [](Formula &f, auto) { return buildAsin(f); });
}

LogicalResult importAcos(NodeImporter &n) {
  return importUnaryFormula(n, {}, [](Formula &f, auto) {
    return f.sub(f.constant(M_PI_2), buildAsin(f));
  });
}

LogicalResult importAtanh(NodeImporter &n) {
  return importUnaryFormula(n, {}, [](Formula &f, auto) {
    Value ratio = f.div(f.add(f.constant(1.0), f.x), f.sub(f.constant(1.0), f.x));
    return f.mul(f.constant(0.5), f.log(ratio));
  });
}

/// PRelu: x where x >= 0, slope * x elsewhere; the slope (often a trained
/// per-channel parameter) broadcasts to x's shape.
LogicalResult importPRelu(NodeImporter &n) {
  if (failed(n.checkArity(2, 2)) || failed(n.checkAttributes({})))
    return failure();
  FailureOr<Value> x = n.floatInput(0), slope = n.floatInput(1);
  if (failed(x) || failed(slope))
    return failure();
  auto xType = cast<RankedTensorType>(x->getType());
  auto slopeType = cast<RankedTensorType>(slope->getType());
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(xType.getShape(), slopeType.getShape());
  if (failed(shape) || *shape != SmallVector<int64_t>(xType.getShape()))
    return n.error() << "slope " << slopeType << " does not broadcast to X "
                     << xType;
  Formula f{n.b, n.loc, *x};
  Value scaled = f.mul(buildNumpyBroadcast(n.b, n.loc, *slope, *shape), f.x);
  return n.setResult(f.where(CmpPredicate::lt, f.x, f.constant(0.0), scaled, f.x));
}

} // namespace

void registerActivationOps(OpTable &table) {
  table["LeakyRelu"] = importLeakyRelu;
  table["PRelu"] = importPRelu;
  table["Elu"] = importElu;
  table["Celu"] = importCelu;
  table["Selu"] = importSelu;
  table["HardSigmoid"] = importHardSigmoid;
  table["HardSwish"] = importHardSwish;
  table["ThresholdedRelu"] = importThresholdedRelu;
  table["Shrink"] = importShrink;
  table["Softplus"] = importSoftplus;
  table["Softsign"] = importSoftsign;
  table["Sign"] = importSign;
  table["Sinh"] = importSinh;
  table["Cosh"] = importCosh;
  table["Asinh"] = importAsinh;
  table["Acosh"] = importAcosh;
  table["Atanh"] = importAtanh;
  table["Tan"] = importTan;
  table["Asin"] = importAsin;
  table["Acos"] = importAcos;
}

} // namespace lmc::onnx_import
