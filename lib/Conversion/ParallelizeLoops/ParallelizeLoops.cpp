//===- ParallelizeLoops.cpp - Which loop nests run on several threads -----===//
//
// `convert-linalg-to-parallel-loops` makes every parallel dimension of a
// linalg op an `scf.parallel` dimension. Forking threads costs microseconds,
// and a work-sharing loop over every dimension leaves no inner loop to
// vectorize, so this pass keeps only what pays off (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "lmc/Conversion/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"

namespace lmc {
#define GEN_PASS_DEF_LMCPARALLELIZELOOPS
#include "lmc/Conversion/Passes.h.inc"
} // namespace lmc

using namespace mlir;

namespace lmc {
namespace {

/// Leading dimensions stay parallel until there are this many chunks of
/// work to share (the inner dimensions become sequential loops).
constexpr int64_t kParallelChunks = 64;

/// Iterations of a loop with constant bounds (static shapes: always).
std::optional<int64_t> tripCount(Value lb, Value ub, Value step) {
  std::optional<int64_t> l = getConstantIntValue(lb),
                         u = getConstantIntValue(ub),
                         s = getConstantIntValue(step);
  if (!l || !u || !s || *s <= 0)
    return std::nullopt;
  return *u > *l ? (*u - *l + *s - 1) / *s : 0;
}

/// Innermost iterations of the deepest sequential nest in `block` (1 with
/// none); unknown bounds count as large.
int64_t sequentialWork(Block &block) {
  int64_t most = 1;
  for (scf::ForOp loop : block.getOps<scf::ForOp>()) {
    std::optional<int64_t> trips = tripCount(
        loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
    int64_t work = trips ? *trips : std::numeric_limits<int32_t>::max();
    most = std::max(most, work * sequentialWork(*loop.getBody()));
  }
  return most;
}

/// Rebuilds `op` with its first `keep` dimensions parallel and the others
/// as `scf.for` loops inside (all of them sequential when `keep` is 0).
void keepLeadingDims(scf::ParallelOp op, unsigned keep) {
  OpBuilder builder(op);
  Location loc = op.getLoc();
  ValueRange lbs = op.getLowerBound(), ubs = op.getUpperBound(),
             steps = op.getStep();
  Block *body = op.getBody();
  auto buildInner = [&](OpBuilder &b, Location l, ValueRange outerIvs) {
    scf::buildLoopNest(
        b, l, lbs.drop_front(keep), ubs.drop_front(keep),
        steps.drop_front(keep),
        [&](OpBuilder &nb, Location, ValueRange innerIvs) {
          IRMapping mapping;
          mapping.map(body->getArguments().take_front(keep), outerIvs);
          mapping.map(body->getArguments().drop_front(keep), innerIvs);
          for (Operation &inner : body->without_terminator())
            nb.clone(inner, mapping);
        });
  };
  if (keep == 0)
    buildInner(builder, loc, {});
  else
    scf::ParallelOp::create(builder, loc, lbs.take_front(keep),
                            ubs.take_front(keep), steps.take_front(keep),
                            buildInner);
  op.erase();
}

struct ParallelizeLoopsPass
    : public impl::LmcParallelizeLoopsBase<ParallelizeLoopsPass> {
  using LmcParallelizeLoopsBase::LmcParallelizeLoopsBase;

  void runOnOperation() override {
    // A parallel loop inside another (a linalg op whose parallel dimensions
    // are not all outside its reductions: the unit loops sharding adds)
    // would be a nested OpenMP region, forked serialized per iteration of
    // the outer one: its loops run sequentially instead. Innermost first
    // (the walk is post-order), so that a rebuilt loop's body holds no
    // collected op.
    SmallVector<scf::ParallelOp> nested;
    getOperation()->walk([&](scf::ParallelOp op) {
      if (op.getNumResults() == 0 && op->getParentOfType<scf::ParallelOp>())
        nested.push_back(op);
    });
    for (scf::ParallelOp op : nested)
      keepLeadingDims(op, 0);
    SmallVector<scf::ParallelOp> loops;
    getOperation()->walk([&](scf::ParallelOp op) {
      if (op.getNumResults() == 0 && !op->getParentOfType<scf::ParallelOp>())
        loops.push_back(op);
    });
    for (scf::ParallelOp op : loops) {
      int64_t chunks = 1, work = 1;
      unsigned keep = 0, rank = op.getNumLoops();
      for (unsigned d = 0; d < rank; ++d) {
        std::optional<int64_t> trips = tripCount(
            op.getLowerBound()[d], op.getUpperBound()[d], op.getStep()[d]);
        int64_t extent = trips ? *trips : std::numeric_limits<int32_t>::max();
        work *= extent;
        if (chunks < kParallelChunks && (keep == 0 || keep + 1 < rank)) {
          chunks *= extent;
          ++keep;
        }
      }
      work *= sequentialWork(*op.getBody());
      keepLeadingDims(op, work >= minWork && chunks > 1 ? keep : 0);
    }
  }
};

} // namespace
} // namespace lmc
