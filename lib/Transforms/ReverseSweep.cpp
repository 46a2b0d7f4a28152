//===- ReverseSweep.cpp - reverse-mode differentiation of a list of ops ---===//

#include "lmc/Transforms/ReverseSweep.h"

#include "lmc/Dialect/Lmc/IR/LmcOps.h"

using namespace mlir;

namespace lmc {

bool isFloatTensor(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && isa<FloatType>(type.getElementType());
}

llvm::DenseSet<Value> findActiveValues(ArrayRef<Operation *> ops,
                                       ArrayRef<Value> sources, Value target) {
  llvm::DenseSet<Value> varied;
  for (Value source : sources)
    if (isFloatTensor(source))
      varied.insert(source);
  for (Operation *op : ops)
    if (llvm::any_of(op->getOperands(), [&](Value v) { return varied.count(v); }))
      for (Value result : op->getResults())
        if (isFloatTensor(result))
          varied.insert(result);

  // Only float values carry cotangents: a value that reaches the target
  // only through a comparison or an integer op is not useful.
  llvm::DenseSet<Value> useful;
  useful.insert(target);
  for (Operation *op : llvm::reverse(ops))
    if (llvm::any_of(op->getResults(), [&](Value v) { return useful.count(v); }))
      for (Value operand : op->getOperands())
        if (isFloatTensor(operand))
          useful.insert(operand);

  llvm::DenseSet<Value> active;
  for (Value v : varied)
    if (useful.count(v))
      active.insert(v);
  return active;
}

LogicalResult ReverseSweep::run(ArrayRef<Operation *> ops, Value target,
                                Value seed, OpBuilder &b) {
  cotangents[target] = seed;
  for (Operation *op : llvm::reverse(ops))
    if (failed(visit(*op, b)))
      return failure();
  return success();
}

LogicalResult ReverseSweep::visit(Operation &op, OpBuilder &b) {
  SmallVector<Value> resultCotangents;
  bool any = false;
  for (Value result : op.getResults()) {
    Value ct = active.count(result) ? cotangents.lookup(result) : Value();
    resultCotangents.push_back(ct);
    any |= static_cast<bool>(ct);
  }
  if (!any)
    return success();
  auto differentiable = dyn_cast<DifferentiableOpInterface>(op);
  if (!differentiable)
    return op.emitOpError(
        "is not differentiable but lies on a path from a parameter to the "
        "loss");
  SmallVector<bool> needed;
  for (Value operand : op.getOperands())
    needed.push_back(active.count(operand) > 0);
  SmallVector<Value> operandCotangents;
  if (failed(differentiable.buildVjp(b, resultCotangents, needed,
                                     operandCotangents)))
    return failure();
  for (auto [operand, ct, need] :
       llvm::zip(op.getOperands(), operandCotangents, needed)) {
    if (!need || !ct)
      continue;
    Value &sum = cotangents[operand];
    sum = sum ? AddOp::create(b, op.getLoc(), sum, ct).getResult() : ct;
  }
  return success();
}

} // namespace lmc
