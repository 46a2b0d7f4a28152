//===- ParallelizeLoops.cpp - Which loop nests run on several threads -----===//
//
// `convert-linalg-to-parallel-loops` makes every parallel dimension of a
// linalg op an `scf.parallel` dimension. Forking threads costs microseconds,
// and a work-sharing loop over every dimension leaves no inner loop to
// vectorize, so this pass keeps only what pays off (see Passes.td), and
// moves the parallel loop of a sum over rows per column out of its
// reduction loops.
//
//===----------------------------------------------------------------------===//

#include "lmc/Lowering/Passes.h"

#include "../Common/RuntimeCalls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"

namespace lmc {
#define GEN_PASS_DEF_LMCPARALLELIZELOOPS
#include "lmc/Lowering/Passes.h.inc"
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
    std::optional<int64_t> trips =
        tripCount(loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
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

/// A column sum's parallel loop moved out of its reduction loops gives
/// each thread one run of columns, streamed row after row: a run of a
/// row within one page is what the hardware prefetchers follow (they stop
/// at page boundaries). Fixed chunks of 128 columns read the 4-layer
/// GPT's 1024-column bias gradient as 8 strips, every row of each a page
/// of its own: 0.21 ms per call against 0.08 as one run (one thread, AMD
/// EPYC, 2026-12-06). The runs are at least this many columns (fewer
/// threads share narrower sums) and start on a 64-byte line.
constexpr int64_t kMinColumnsPerRun = 128, kColumnsPerLine = 16;

/// The perfect nest of scf.for loops around `inner` (no results, nothing
/// in their bodies but the next loop and constants), outermost first.
SmallVector<scf::ForOp> enclosingForNest(scf::ParallelOp inner) {
  SmallVector<scf::ForOp> loops;
  Operation *current = inner;
  while (auto loop = dyn_cast<scf::ForOp>(current->getParentOp())) {
    if (loop.getNumResults() != 0 ||
        !llvm::all_of(loop.getBody()->without_terminator(), [&](Operation &op) {
          return &op == current || op.hasTrait<OpTrait::ConstantLike>();
        }))
      break;
    loops.push_back(loop);
    current = loop;
  }
  std::reverse(loops.begin(), loops.end());
  return loops;
}

/// A linalg op whose reductions come before its parallel dimensions (a
/// bias or layer-norm weight gradient: a sum over rows per column) lowers
/// to `for r.. { parallel p0, p.. { body } }`, whose parallel loop is too
/// small to fork for. It becomes `parallel c { for r.. { for p0 in run c
/// { for p.. { body } } } }`, one run of columns per thread (the count
/// read at run time, lmc_rt_thread_count): each output element still
/// accumulates in the order of the r loops, so the bits do not change
/// with the thread count. Returns the new parallel loop, or null where it
/// does not apply.
scf::ParallelOp hoistOverReductions(scf::ParallelOp inner, int64_t minWork) {
  if (inner.getNumResults() != 0 || inner->getParentOfType<scf::ParallelOp>())
    return {};
  SmallVector<scf::ForOp> loops = enclosingForNest(inner);
  auto module = inner->getParentOfType<ModuleOp>();
  if (loops.empty() || !module)
    return {};
  SmallVector<int64_t> lbs, ubs, steps;
  int64_t work = sequentialWork(*inner.getBody());
  auto addLoop = [&](Value lb, Value ub, Value step) {
    std::optional<int64_t> l = getConstantIntValue(lb),
                           u = getConstantIntValue(ub),
                           s = getConstantIntValue(step);
    std::optional<int64_t> trips = tripCount(lb, ub, step);
    if (!l || !u || !s || !trips)
      return false;
    lbs.push_back(*l);
    ubs.push_back(*u);
    steps.push_back(*s);
    work *= *trips;
    return true;
  };
  for (scf::ForOp loop : loops)
    if (!addLoop(loop.getLowerBound(), loop.getUpperBound(), loop.getStep()))
      return {};
  unsigned firstParallel = lbs.size();
  for (unsigned d = 0; d < inner.getNumLoops(); ++d)
    if (!addLoop(inner.getLowerBound()[d], inner.getUpperBound()[d],
                 inner.getStep()[d]))
      return {};
  int64_t columns = *tripCount(inner.getLowerBound()[0],
                               inner.getUpperBound()[0], inner.getStep()[0]);
  int64_t maxRuns = std::min(kParallelChunks, columns / kMinColumnsPerRun);
  if (work < minWork || maxRuns < 2)
    return {};

  OpBuilder b(loops.front());
  Location loc = inner.getLoc();
  auto constant = [&](OpBuilder &at, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(at, loc, v);
  };
  // runs = clamp(threads, 1, maxRuns), each ceil(columns / runs) columns
  // rounded up to whole lines (the last one may be short, or empty).
  func::FuncOp threadCount =
      declareRuntimeFunction(module, b, "lmc_rt_thread_count",
                             b.getFunctionType({}, {b.getI64Type()}));
  Value threads = arith::IndexCastOp::create(
      b, loc, b.getIndexType(),
      func::CallOp::create(b, loc, threadCount, ValueRange{}).getResult(0));
  Value runCount = arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, threads, constant(b, 1)),
      constant(b, maxRuns));
  Value lines = arith::CeilDivSIOp::create(
      b, loc, constant(b, llvm::divideCeil(columns, kColumnsPerLine)),
      runCount);
  Value runWidth = arith::MulIOp::create(
      b, loc, lines, constant(b, kColumnsPerLine * steps[firstParallel]));
  auto runs = scf::ParallelOp::create(
      b, loc, constant(b, 0), runCount, constant(b, 1),
      [&](OpBuilder &pb, Location l, ValueRange run) {
        SmallVector<Value> lo, hi, step;
        for (unsigned d = 0; d < lbs.size(); ++d) {
          lo.push_back(constant(pb, lbs[d]));
          hi.push_back(constant(pb, ubs[d]));
          step.push_back(constant(pb, steps[d]));
        }
        Value first = arith::AddIOp::create(
            pb, l, lo[firstParallel],
            arith::MulIOp::create(pb, l, run[0], runWidth));
        hi[firstParallel] = arith::MinSIOp::create(
            pb, l, arith::AddIOp::create(pb, l, first, runWidth),
            hi[firstParallel]);
        lo[firstParallel] = first;
        scf::buildLoopNest(
            pb, l, lo, hi, step, [&](OpBuilder &nb, Location, ValueRange ivs) {
              IRMapping mapping;
              for (auto [loop, iv] : llvm::zip(loops, ivs)) {
                mapping.map(loop.getInductionVar(), iv);
                for (Operation &op : loop.getBody()->without_terminator())
                  if (op.hasTrait<OpTrait::ConstantLike>())
                    nb.clone(op, mapping);
              }
              mapping.map(inner.getInductionVars(),
                          ivs.drop_front(firstParallel));
              for (Operation &op : inner.getBody()->without_terminator())
                nb.clone(op, mapping);
            });
      });
  loops.front().erase();
  return runs;
}

struct ParallelizeLoopsPass
    : public impl::LmcParallelizeLoopsBase<ParallelizeLoopsPass> {
  using LmcParallelizeLoopsBase::LmcParallelizeLoopsBase;

  void runOnOperation() override {
    // Column sums first: their parallel loops move out of the reductions.
    SmallVector<scf::ParallelOp> columnSums;
    getOperation()->walk([&](scf::ParallelOp op) {
      if (isa<scf::ForOp>(op->getParentOp()))
        columnSums.push_back(op);
    });
    // Their runs are already one per thread: left as they are below.
    llvm::DenseSet<Operation *> runsPerThread;
    for (scf::ParallelOp op : columnSums)
      if (scf::ParallelOp runs = hoistOverReductions(op, minWork))
        runsPerThread.insert(runs);
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
      if (op.getNumResults() == 0 && !op->getParentOfType<scf::ParallelOp>() &&
          !runsPerThread.count(op))
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
