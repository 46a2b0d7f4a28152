//===- Contractions.cpp - Gemm, MatMul and Einsum -------------------------===//

#include "Importer.h"

#include "lmc/Dialect/Lmc/IR/LmcBuilders.h"
#include "lmc/Dialect/Lmc/IR/LmcOps.h"

using namespace mlir;

namespace lmc::onnx_import {
namespace {

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

/// Y = alpha * op(A) @ op(B) + beta * C, with C broadcast to [M, N].
LogicalResult importGemm(NodeImporter &n) {
  if (failed(n.checkArity(2, 3)) ||
      failed(n.checkAttributes({"alpha", "beta", "transA", "transB"})))
    return failure();
  FailureOr<float> alpha = n.floatAttr("alpha", 1.0f);
  FailureOr<float> beta = n.floatAttr("beta", 1.0f);
  FailureOr<int64_t> transA = n.intAttr("transA", 0);
  FailureOr<int64_t> transB = n.intAttr("transB", 0);
  if (failed(alpha) || failed(beta) || failed(transA) || failed(transB))
    return failure();
  FailureOr<Value> a = n.floatInput(0), b = n.floatInput(1);
  if (failed(a) || failed(b))
    return failure();
  RankedTensorType aType = typeOf(*a), bType = typeOf(*b);
  if (aType.getRank() != 2 || bType.getRank() != 2)
    return n.error() << "A and B must be 2-D, got " << aType << " and "
                     << bType;
  if (aType.getElementType() != bType.getElementType())
    return n.error() << "operand element types differ: " << aType << " and "
                     << bType;
  int64_t m = aType.getDimSize(*transA ? 1 : 0);
  int64_t k = aType.getDimSize(*transA ? 0 : 1);
  int64_t kb = bType.getDimSize(*transB ? 1 : 0);
  int64_t nn = bType.getDimSize(*transB ? 0 : 1);
  if (k != kb)
    return n.error() << "inner dimensions differ: " << aType
                     << (*transA ? " (transposed)" : "") << " and " << bType
                     << (*transB ? " (transposed)" : "");
  auto resultType = RankedTensorType::get({m, nn}, aType.getElementType());
  Value y = MatmulOp::create(n.b, n.loc, resultType, *a, *b,
                             /*transpose_lhs=*/*transA != 0,
                             /*transpose_rhs=*/*transB != 0);
  if (*alpha != 1.0f)
    y = MulOp::create(n.b, n.loc, resultType, y,
                      buildSplat(n.b, n.loc, resultType, *alpha));

  if (n.hasInput(2) && *beta != 0.0f) {
    FailureOr<Value> c = n.floatInput(2);
    if (failed(c))
      return failure();
    RankedTensorType cType = typeOf(*c);
    FailureOr<SmallVector<int64_t>> shape =
        broadcastShapes(cType.getShape(), resultType.getShape());
    if (cType.getElementType() != resultType.getElementType() ||
        failed(shape) || ArrayRef<int64_t>(*shape) != resultType.getShape())
      return n.error() << "C " << cType
                       << " is not unidirectionally broadcastable to "
                       << resultType;
    Value cv = *c;
    if (*beta != 1.0f)
      cv = MulOp::create(n.b, n.loc, cType, cv,
                         buildSplat(n.b, n.loc, cType, *beta));
    cv = buildNumpyBroadcast(n.b, n.loc, cv, resultType.getShape());
    y = AddOp::create(n.b, n.loc, resultType, y, cv);
  }
  return n.setResult(y);
}

/// numpy.matmul: 1-D operands are promoted to matrices (and the extra
/// dimension dropped afterwards), batch dimensions broadcast.
LogicalResult importMatMul(NodeImporter &n) {
  if (failed(n.checkArity(2, 2)) || failed(n.checkAttributes({})))
    return failure();
  FailureOr<Value> lhsOr = n.floatInput(0), rhsOr = n.floatInput(1);
  if (failed(lhsOr) || failed(rhsOr))
    return failure();
  Value lhs = *lhsOr, rhs = *rhsOr;
  RankedTensorType lhsType = typeOf(lhs), rhsType = typeOf(rhs);
  if (lhsType.getRank() == 0 || rhsType.getRank() == 0)
    return n.error() << "operands must have rank >= 1, got " << lhsType
                     << " and " << rhsType;
  if (lhsType.getElementType() != rhsType.getElementType())
    return n.error() << "operand element types differ: " << lhsType << " and "
                     << rhsType;
  Type elementType = lhsType.getElementType();

  bool lhsVector = lhsType.getRank() == 1, rhsVector = rhsType.getRank() == 1;
  if (lhsVector)
    lhs = buildReshape(n.b, n.loc, lhs, {1, lhsType.getDimSize(0)});
  if (rhsVector)
    rhs = buildReshape(n.b, n.loc, rhs, {rhsType.getDimSize(0), 1});
  ArrayRef<int64_t> lShape = typeOf(lhs).getShape();
  ArrayRef<int64_t> rShape = typeOf(rhs).getShape();
  int64_t m = lShape[lShape.size() - 2], k = lShape.back();
  int64_t kr = rShape[rShape.size() - 2], nn = rShape.back();
  if (k != kr)
    return n.error() << "inner dimensions differ: " << lhsType << " and "
                     << rhsType;
  FailureOr<SmallVector<int64_t>> batch =
      broadcastShapes(lShape.drop_back(2), rShape.drop_back(2));
  if (failed(batch))
    return n.error() << "batch dimensions of " << lhsType << " and "
                     << rhsType << " are not broadcastable";

  SmallVector<int64_t> resultShape(*batch);
  resultShape.append({m, nn});
  Value result;
  if (rShape.size() == 2 && lShape.size() > 2) {
    // [..., M, K] x [K, N]: one 2-D product over the flattened rows, which
    // avoids materializing the broadcast weight.
    int64_t rows = m;
    for (int64_t dim : lShape.drop_back(2))
      rows *= dim;
    Value flat = buildReshape(n.b, n.loc, lhs, {rows, k});
    result = MatmulOp::create(
        n.b, n.loc, RankedTensorType::get({rows, nn}, elementType), flat, rhs,
        false, false);
    result = buildReshape(n.b, n.loc, result, resultShape);
  } else {
    SmallVector<int64_t> lFull(*batch), rFull(*batch);
    lFull.append({m, k});
    rFull.append({k, nn});
    lhs = buildNumpyBroadcast(n.b, n.loc, lhs, lFull);
    rhs = buildNumpyBroadcast(n.b, n.loc, rhs, rFull);
    result = MatmulOp::create(n.b, n.loc,
                              RankedTensorType::get(resultShape, elementType),
                              lhs, rhs, false, false);
  }

  // Drop the dimensions that promotion added.
  SmallVector<int64_t> finalShape(*batch);
  if (!lhsVector)
    finalShape.push_back(m);
  if (!rhsVector)
    finalShape.push_back(nn);
  return n.setResult(buildReshape(n.b, n.loc, result, finalShape));
}

/// Replaces each term's "..." by letters no term uses, aligned from the
/// right across the terms as numpy aligns broadcast dimensions ("...ij" of
/// rank 4 -> "ABij"); the output's "..." (or, for an implicit output, the
/// front of it) gets all of them. `terms` and `output` are rewritten;
/// `ellipsis` receives the letters.
LogicalResult expandEllipsis(NodeImporter &n, SmallVectorImpl<std::string> &terms,
                             std::string &output, bool explicitOutput,
                             std::string &ellipsis) {
  std::string unused;
  for (char c = 'A'; c <= 'z'; ++c)
    if (llvm::isAlpha(c) && llvm::none_of(terms, [&](const std::string &t) {
          return t.find(c) != std::string::npos;
        }) && output.find(c) == std::string::npos)
      unused.push_back(c);
  SmallVector<int64_t> ellipsisRanks;
  int64_t longest = 0;
  for (auto [i, term] : llvm::enumerate(terms)) {
    size_t at = term.find("...");
    if (at == std::string::npos) {
      ellipsisRanks.push_back(0);
      continue;
    }
    FailureOr<RankedTensorType> type = n.inputType(i);
    if (failed(type))
      return failure();
    int64_t letters = int64_t(term.size()) - 3;
    if (term.find('.', at + 3) != std::string::npos ||
        type->getRank() < letters)
      return n.error() << "term '" << term << "' does not match input " << i
                       << " of rank " << type->getRank();
    ellipsisRanks.push_back(type->getRank() - letters);
    longest = std::max(longest, ellipsisRanks.back());
  }
  if (longest > int64_t(unused.size()))
    return n.error() << "too many dimensions under '...'";
  ellipsis = unused.substr(0, size_t(longest));
  for (auto [term, rank] : llvm::zip(terms, ellipsisRanks)) {
    size_t at = term.find("...");
    if (at != std::string::npos)
      term.replace(at, 3, ellipsis.substr(ellipsis.size() - size_t(rank)));
  }
  size_t at = output.find("...");
  if (at != std::string::npos) {
    if (output.find('.', at + 3) != std::string::npos)
      return n.error() << "output '" << output << "' has a malformed '...'";
    output.replace(at, 3, ellipsis);
  } else if (!explicitOutput) {
    output = ellipsis + output;
  }
  return success();
}

/// Einsum with one or two operands and explicit or implicit output, an
/// optional ellipsis (expandEllipsis) and no letter repeated within one
/// term: letters only in one input are summed first, then the inputs are
/// transposed to [batch, free, contracted] / [batch, contracted, free],
/// flattened, and multiplied with lmc.matmul ("bij,bjk->bik",
/// "bhqd,bhkd->bhqk", "...ij,...jk->...ik", ...).
LogicalResult importEinsum(NodeImporter &n) {
  if (failed(n.checkArity(1, 2)) || failed(n.checkAttributes({"equation"})))
    return failure();
  const onnx::AttributeProto *attr = n.attr("equation");
  if (!attr || attr->type() != onnx::AttributeProto::STRING)
    return n.error() << "missing string attribute 'equation'";
  std::string equation;
  for (char c : attr->s())
    if (c != ' ')
      equation.push_back(c);
  StringRef eq(equation);
  auto [inputsPart, outputPart] = eq.split("->");
  bool explicitOutput = eq.contains("->");
  SmallVector<StringRef> termRefs;
  inputsPart.split(termRefs, ',');
  unsigned count = n.node.input_size();
  if (termRefs.size() != count)
    return n.error() << "equation '" << attr->s() << "' has "
                     << termRefs.size() << " input terms for " << count
                     << " inputs";
  SmallVector<std::string> terms;
  for (StringRef t : termRefs)
    terms.push_back(t.str());
  std::string output;
  if (explicitOutput) {
    output = outputPart.str();
  } else {
    // The letters used once, in alphabetical order.
    for (char c = 'A'; c <= 'z'; ++c) {
      int uses = 0;
      for (StringRef t : terms)
        uses += llvm::count(t, c);
      if (llvm::isAlpha(c) && uses == 1)
        output.push_back(c);
    }
  }
  std::string ellipsis;
  if (eq.contains('.') &&
      failed(expandEllipsis(n, terms, output, explicitOutput, ellipsis)))
    return failure();
  SmallVector<Value> values;
  llvm::DenseMap<char, int64_t> sizes;
  for (unsigned i = 0; i < count; ++i) {
    FailureOr<Value> v = n.floatInput(i);
    if (failed(v))
      return failure();
    RankedTensorType type = typeOf(*v);
    // Messages quote the term as written (before expandEllipsis).
    StringRef term = terms[i], written = termRefs[i];
    if (static_cast<int64_t>(term.size()) != type.getRank())
      return n.error() << "term '" << written << "' does not match input "
                       << i << " of rank " << type.getRank();
    for (auto [d, c] : llvm::enumerate(term)) {
      if (!llvm::isAlpha(c) || llvm::count(term, c) != 1)
        return n.error() << "term '" << written
                         << "' must have distinct letters";
      auto [it, inserted] = sizes.try_emplace(c, type.getDimSize(d));
      if (!inserted && it->second != type.getDimSize(d)) {
        if (ellipsis.find(c) != std::string::npos)
          return n.error() << "the dimensions under '...' have sizes "
                           << it->second << " and " << type.getDimSize(d)
                           << " (broadcasting them is not supported)";
        return n.error() << "letter '" << c << "' has sizes " << it->second
                         << " and " << type.getDimSize(d);
      }
    }
    values.push_back(*v);
  }
  // isAlpha first: DenseMap<char> reserves '\xff' and '\xfe' as its
  // empty and tombstone keys, which must never reach a lookup.
  for (char c : output)
    if (!llvm::isAlpha(c) || !sizes.count(c) || llvm::count(output, c) != 1)
      return n.error() << "output letter '" << c
                       << "' is repeated or not in an input";

  OpBuilder &b = n.b;
  Location loc = n.loc;
  Type elementType = typeOf(values[0]).getElementType();
  auto shapeOf = [&](StringRef letters) {
    SmallVector<int64_t> shape;
    for (char c : letters)
      shape.push_back(sizes[c]);
    return shape;
  };
  // Sums the letters of `term` that are in neither `keep1` nor `keep2`.
  auto sumUnused = [&](Value v, std::string &term, StringRef keep1,
                       StringRef keep2) -> Value {
    SmallVector<int64_t> axes;
    std::string kept;
    for (auto [d, c] : llvm::enumerate(term)) {
      if (keep1.contains(c) || keep2.contains(c))
        kept.push_back(c);
      else
        axes.push_back(d);
    }
    if (axes.empty())
      return v;
    term = kept;
    return ReduceSumOp::create(
        b, loc, RankedTensorType::get(shapeOf(kept), elementType), v, axes,
        /*keep_dims=*/false);
  };
  /// Permutes `v` (letters `from`) to the letters `to`.
  auto permute = [&](Value v, StringRef from, StringRef to) -> Value {
    SmallVector<int64_t> perm;
    for (char c : to)
      perm.push_back(from.find(c));
    return buildPermute(b, loc, v, perm);
  };

  std::string lhsTerm = terms[0];
  Value lhs = values[0];
  if (count == 1) {
    lhs = sumUnused(lhs, lhsTerm, output, "");
    return n.setResult(permute(lhs, lhsTerm, output));
  }
  std::string rhsTerm = terms[1];
  Value rhs = values[1];
  lhs = sumUnused(lhs, lhsTerm, output, rhsTerm);
  rhs = sumUnused(rhs, rhsTerm, output, lhsTerm);
  std::string batch, free1, free2, contracted;
  for (char c : lhsTerm) {
    bool inRhs = StringRef(rhsTerm).contains(c);
    bool inOut = StringRef(output).contains(c);
    if (inRhs && inOut)
      batch.push_back(c);
    else if (inRhs)
      contracted.push_back(c);
    else
      free1.push_back(c);
  }
  for (char c : rhsTerm)
    if (!StringRef(lhsTerm).contains(c))
      free2.push_back(c);
  auto product = [&](StringRef letters) {
    int64_t p = 1;
    for (char c : letters)
      p *= sizes[c];
    return p;
  };
  SmallVector<int64_t> flatBatch;
  if (!batch.empty())
    flatBatch.push_back(product(batch));
  auto flat = [&](int64_t rows, int64_t cols) {
    SmallVector<int64_t> shape(flatBatch);
    shape.append({rows, cols});
    return shape;
  };
  int64_t m = product(free1), k = product(contracted), nn = product(free2);
  lhs = buildReshape(b, loc, permute(lhs, lhsTerm, batch + free1 + contracted),
                     flat(m, k));
  rhs = buildReshape(b, loc, permute(rhs, rhsTerm, batch + contracted + free2),
                     flat(k, nn));
  Value prod = MatmulOp::create(
      b, loc, RankedTensorType::get(flat(m, nn), elementType), lhs, rhs,
      /*transpose_lhs=*/false, /*transpose_rhs=*/false);
  std::string resultTerm = batch + free1 + free2;
  Value result = buildReshape(b, loc, prod, shapeOf(resultTerm));
  return n.setResult(permute(result, resultTerm, output));
}

} // namespace

void registerContractionOps(OpTable &table) {
  table["Gemm"] = importGemm;
  table["MatMul"] = importMatMul;
  table["Einsum"] = importEinsum;
}

} // namespace lmc::onnx_import
