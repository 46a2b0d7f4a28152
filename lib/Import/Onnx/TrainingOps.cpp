//===- TrainingOps.cpp - ai.onnx.preview.training optimizers --------------===//
//
// Adagrad, Momentum (standard and Nesterov) and Adam of the
// `ai.onnx.preview.training` domain (version 1): one update of any number of
// tensors, in lmc ops, as the ONNX reference implementation computes it.
// The step count T must be a compile-time constant (it selects the bias
// correction and the decayed learning rate); the learning rate R may be a
// runtime scalar. Gradient builds its derivatives with lmc's own reverse
// sweep (lmc/Transforms/ReverseSweep.h) over the graph imported so far.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "lmc/Dialect/Lmc/IR/LmcBuilders.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"
#include "lmc/Transforms/ReverseSweep.h"

#include <cmath>

using namespace mlir;

namespace lmc::onnx_import {
namespace {

/// Builds elementwise lmc ops on tensors of one type.
struct Elementwise {
  OpBuilder &b;
  Location loc;

  Value add(Value x, Value y) { return AddOp::create(b, loc, x.getType(), x, y); }
  Value sub(Value x, Value y) { return SubOp::create(b, loc, x.getType(), x, y); }
  Value mul(Value x, Value y) { return MulOp::create(b, loc, x.getType(), x, y); }
  Value div(Value x, Value y) { return DivOp::create(b, loc, x.getType(), x, y); }
  Value sqrt(Value x) { return SqrtOp::create(b, loc, x.getType(), x); }
  /// `value` as a constant shaped like `like`.
  Value splat(Value like, double value) {
    return buildSplatLike(b, loc, like, value);
  }
  /// c * x for a compile-time c.
  Value scale(double c, Value x) { return c == 1.0 ? x : mul(splat(x, c), x); }
  /// The gradient with the L2 term: norm * x + g.
  Value regularized(double norm, Value x, Value g) {
    return norm == 0.0 ? g : add(scale(norm, x), g);
  }
};

/// The inputs R, T and `groups` runs of n tensors (X..., G..., V..., ...).
struct OptimizerInputs {
  Value rate;      // R, a float scalar
  int64_t step;    // T
  SmallVector<SmallVector<Value>> groups;
};

FailureOr<OptimizerInputs> readOptimizerInputs(NodeImporter &n,
                                               unsigned groups) {
  unsigned inputs = n.node.input_size();
  if (inputs < 2 + groups || (inputs - 2) % groups != 0)
    return n.error() << "expected R, T and " << groups
                     << " equally long lists of tensors, got " << inputs
                     << " inputs";
  unsigned count = (inputs - 2) / groups;
  if (failed(n.checkArity(inputs, inputs, count * (groups - 1))))
    return failure();
  OptimizerInputs result;
  FailureOr<Value> rate = n.floatInput(0);
  if (failed(rate))
    return failure();
  if (cast<RankedTensorType>(rate->getType()).getRank() != 0)
    return n.error() << "R (input 0) must be a scalar";
  result.rate = *rate;
  DenseElementsAttr step = n.constantInput(1);
  if (!step || !step.getElementType().isInteger(64) ||
      step.getNumElements() != 1)
    return n.error() << "T (input 1, '" << n.node.input(1)
                     << "') must be a compile-time constant integer tensor "
                        "with one element (int64)";
  result.step = (*step.getValues<APInt>().begin()).getSExtValue();
  for (unsigned g = 0; g < groups; ++g) {
    result.groups.emplace_back();
    for (unsigned i = 0; i < count; ++i) {
      unsigned index = 2 + g * count + i;
      FailureOr<Value> value = n.floatInput(index);
      if (failed(value))
        return failure();
      if (g > 0 && value->getType() != result.groups[0][i].getType())
        return n.error() << "input " << index << " is " << value->getType()
                         << " but the tensor it updates is "
                         << result.groups[0][i].getType();
      result.groups.back().push_back(*value);
    }
  }
  return result;
}

/// Binds outputs: `lists[k][i]` becomes output k * n + i.
LogicalResult setOutputs(NodeImporter &n, ArrayRef<SmallVector<Value>> lists) {
  unsigned index = 0;
  for (const SmallVector<Value> &list : lists)
    for (Value value : list)
      if (failed(n.setResult(value, index++)))
        return failure();
  return success();
}

LogicalResult importAdagrad(NodeImporter &n) {
  if (failed(n.checkAttributes({"decay_factor", "epsilon", "norm_coefficient"})))
    return failure();
  FailureOr<float> decay = n.floatAttr("decay_factor", 0.0f);
  FailureOr<float> epsilon = n.floatAttr("epsilon", 1e-6f); // the schema default
  FailureOr<float> norm = n.floatAttr("norm_coefficient", 0.0f);
  FailureOr<OptimizerInputs> in = readOptimizerInputs(n, 3);
  if (failed(decay) || failed(epsilon) || failed(norm) || failed(in))
    return failure();
  Elementwise e{n.b, n.loc};
  SmallVector<Value> xs, hs;
  for (auto [x, g, h] : llvm::zip(in->groups[0], in->groups[1], in->groups[2])) {
    Value rate = e.scale(1.0 / (1.0 + double(in->step) * *decay),
                         buildBroadcastScalar(n.b, n.loc, in->rate, x));
    Value gReg = e.regularized(*norm, x, g);
    Value hNew = e.add(h, e.mul(gReg, gReg));
    Value hSqrt = e.add(e.sqrt(hNew), e.splat(hNew, *epsilon));
    xs.push_back(e.sub(x, e.div(e.mul(rate, gReg), hSqrt)));
    hs.push_back(hNew);
  }
  return setOutputs(n, {xs, hs});
}

LogicalResult importMomentum(NodeImporter &n) {
  if (failed(n.checkAttributes({"alpha", "beta", "mode", "norm_coefficient"})))
    return failure();
  for (StringRef required : {"alpha", "beta", "mode", "norm_coefficient"})
    if (!n.attr(required))
      return n.error() << "attribute '" << required << "' is required";
  FailureOr<float> alpha = n.floatAttr("alpha", 0.0f);
  FailureOr<float> beta = n.floatAttr("beta", 0.0f);
  FailureOr<float> norm = n.floatAttr("norm_coefficient", 0.0f);
  const onnx::AttributeProto *mode = n.attr("mode");
  if (mode->type() != onnx::AttributeProto::STRING ||
      (mode->s() != "standard" && mode->s() != "nesterov"))
    return n.error() << "attribute 'mode' must be \"standard\" or "
                        "\"nesterov\"";
  FailureOr<OptimizerInputs> in = readOptimizerInputs(n, 3);
  if (failed(alpha) || failed(beta) || failed(norm) || failed(in))
    return failure();
  const bool nesterov = mode->s() == "nesterov";
  const double betaAdjusted = in->step > 0 ? *beta : 1.0;
  Elementwise e{n.b, n.loc};
  SmallVector<Value> xs, vs;
  for (auto [x, g, v] : llvm::zip(in->groups[0], in->groups[1], in->groups[2])) {
    Value rate = buildBroadcastScalar(n.b, n.loc, in->rate, x);
    Value gReg = e.regularized(*norm, x, g);
    Value vNew = e.add(e.scale(*alpha, v), e.scale(betaAdjusted, gReg));
    Value direction = nesterov ? e.add(gReg, e.scale(*alpha, vNew)) : vNew;
    xs.push_back(e.sub(x, e.mul(rate, direction)));
    vs.push_back(vNew);
  }
  return setOutputs(n, {xs, vs});
}

LogicalResult importAdam(NodeImporter &n) {
  if (failed(n.checkAttributes({"alpha", "beta", "epsilon", "norm_coefficient",
                                "norm_coefficient_post"})))
    return failure();
  FailureOr<float> alpha = n.floatAttr("alpha", 0.9f);
  FailureOr<float> beta = n.floatAttr("beta", 0.999f);
  FailureOr<float> epsilon = n.floatAttr("epsilon", 1e-6f); // the schema default
  FailureOr<float> norm = n.floatAttr("norm_coefficient", 0.0f);
  FailureOr<float> normPost = n.floatAttr("norm_coefficient_post", 0.0f);
  FailureOr<OptimizerInputs> in = readOptimizerInputs(n, 4);
  if (failed(alpha) || failed(beta) || failed(epsilon) || failed(norm) ||
      failed(normPost) || failed(in))
    return failure();
  // Bias correction of both moments, folded into the learning rate.
  const double t = double(in->step);
  const double correction =
      in->step > 0 ? std::sqrt(1.0 - std::pow(double(*beta), t)) /
                         (1.0 - std::pow(double(*alpha), t))
                   : 1.0;
  Elementwise e{n.b, n.loc};
  SmallVector<Value> xs, vs, hs;
  for (auto [x, g, v, h] : llvm::zip(in->groups[0], in->groups[1],
                                     in->groups[2], in->groups[3])) {
    Value rate =
        e.scale(correction, buildBroadcastScalar(n.b, n.loc, in->rate, x));
    Value gReg = e.regularized(*norm, x, g);
    Value vNew = e.add(e.scale(*alpha, v), e.scale(1.0 - *alpha, gReg));
    Value hNew = e.add(e.scale(*beta, h), e.scale(1.0 - *beta, e.mul(gReg, gReg)));
    Value hSqrt = e.add(e.sqrt(hNew), e.splat(hNew, *epsilon));
    Value xNew = e.sub(x, e.mul(rate, e.div(vNew, hSqrt)));
    xs.push_back(e.scale(1.0 - *normPost, xNew));
    vs.push_back(vNew);
    hs.push_back(hNew);
  }
  return setOutputs(n, {xs, vs, hs});
}

/// Gradient: output k is the gradient of `y` with respect to the value
/// `xs[k]` names, for the values the graph computes at this point (the
/// node's inputs feed xs and zs in the reference; lmc reads the values
/// themselves, and its activity analysis tells constants apart, so `zs` only
/// has to name existing values). A non-scalar `y` is differentiated as the
/// sum of its elements (a cotangent of ones). The derivatives are built by
/// lmc's reverse sweep from the ops' VJPs.
LogicalResult importGradient(NodeImporter &n) {
  if (failed(n.checkAttributes({"xs", "y", "zs"})))
    return failure();
  const onnx::AttributeProto *xsAttr = n.attr("xs");
  const onnx::AttributeProto *yAttr = n.attr("y");
  if (!xsAttr || xsAttr->strings_size() == 0)
    return n.error() << "missing attribute 'xs' (the tensors to "
                        "differentiate with respect to)";
  if (!yAttr || yAttr->s().empty())
    return n.error() << "missing attribute 'y' (the tensor to differentiate)";
  unsigned count = xsAttr->strings_size();
  if (n.node.output_size() != int(count))
    return n.error() << "expected one output per entry of 'xs' (" << count
                     << "), got " << n.node.output_size();
  if (const onnx::AttributeProto *zs = n.attr("zs"))
    for (const std::string &z : zs->strings())
      if (failed(n.valueNamed(z, "zs entry")))
        return failure();
  SmallVector<Value> xs;
  for (const std::string &name : xsAttr->strings()) {
    FailureOr<Value> x = n.valueNamed(name, "xs entry");
    if (failed(x))
      return failure();
    auto type = cast<RankedTensorType>(x->getType());
    if (!isa<FloatType>(type.getElementType()))
      return n.error() << "xs entry '" << name
                       << "' must be a float tensor, got " << type;
    xs.push_back(*x);
  }
  FailureOr<Value> y = n.valueNamed(yAttr->s(), "y");
  if (failed(y))
    return failure();
  if (!isa<FloatType>(cast<RankedTensorType>(y->getType()).getElementType()))
    return n.error() << "y '" << yAttr->s() << "' must be a float tensor";

  SmallVector<Operation *> ops = llvm::map_to_vector(
      *n.b.getInsertionBlock(), [](Operation &op) { return &op; });
  llvm::DenseSet<Value> active = findActiveValues(ops, xs, *y);
  ReverseSweep sweep(active);
  if (failed(sweep.run(ops, *y, buildSplatLike(n.b, n.loc, *y, 1.0), n.b)))
    return n.error() << "cannot differentiate '" << yAttr->s() << "'";
  for (auto [k, x] : llvm::enumerate(xs)) {
    Value gradient = sweep.cotangentOf(x);
    if (!gradient) // y does not depend on x
      gradient = buildSplatLike(n.b, n.loc, x, 0.0);
    if (failed(n.setResult(gradient, k)))
      return failure();
  }
  return success();
}

} // namespace

void registerTrainingOps(OpTable &table) {
  table["Adagrad"] = importAdagrad;
  table["Momentum"] = importMomentum;
  table["Adam"] = importAdam;
  table["Gradient"] = importGradient;
}

} // namespace lmc::onnx_import
