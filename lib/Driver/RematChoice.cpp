//===- RematChoice.cpp - the remat policy an activation budget allows -----===//

#include "lmc/Driver/RematChoice.h"
#include "lmc/Dialect/Lmc/IR/LmcAttributes.h"
#include "lmc/Driver/Emit.h"
#include "lmc/Support/Bytes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

namespace lmc {
namespace {

/// A policy's estimated step activations and the cuts of the residual
/// stream it found (0 without remat).
struct Trial {
  uint64_t bytes = 0;
  int64_t cuts = 0;
};

FailureOr<Trial> tryPolicy(ModuleOp module, TrainingOptions training,
                           const std::string &policy) {
  training.remat = policy;
  OwningOpRef<ModuleOp> copy = module.clone();
  PassManager pm(module.getContext());
  buildLmcTrainingPipeline(pm, training, Phase::Optimizer);
  if (failed(pm.run(*copy)))
    return failure();
  FailureOr<uint64_t> bytes = estimateActivationBytes(*copy);
  if (failed(bytes))
    return failure();
  Trial result{*bytes, 0};
  if (auto remat = (*copy)->getAttrOfType<DictionaryAttr>(attrs::kRemat))
    result.cuts = remat.getAs<IntegerAttr>("cuts").getInt();
  return result;
}

} // namespace

FailureOr<RematChoice> chooseRematPolicy(ModuleOp module,
                                         TrainingOptions training,
                                         uint64_t budget, bool meshed,
                                         std::string &tooLarge) {
  tooLarge.clear();
  SmallVector<std::string> policies{"none"};
  if (!meshed)
    policies.append({"selective", "per-block"});
  std::string tried;
  FailureOr<Trial> whole;
  for (const std::string &policy : policies) {
    FailureOr<Trial> trial = tryPolicy(module, training, policy);
    if (failed(trial))
      return failure();
    if (policy == "per-block")
      whole = trial;
    else if (trial->bytes <= budget)
      return RematChoice{policy, trial->bytes};
    if (trial->bytes > budget)
      tried += (tried.empty() ? "" : ", ") + policy + " " +
               describeBytes(trial->bytes);
  }
  if (failed(whole) || whole->bytes > budget) {
    tooLarge = tried;
    return failure();
  }
  // Segments 0 .. cuts: per-block:0 is selective (too big), all of them
  // per-block whole (fits).
  const int64_t segments = whole->cuts + 1;
  int64_t tooFew = 0, enough = segments;
  uint64_t bytes = whole->bytes;
  while (enough - tooFew > 1) {
    int64_t middle = (tooFew + enough) / 2;
    FailureOr<Trial> trial =
        tryPolicy(module, training, "per-block:" + std::to_string(middle));
    if (failed(trial))
      return failure();
    if (trial->bytes <= budget) {
      enough = middle;
      bytes = trial->bytes;
    } else {
      tooFew = middle;
    }
  }
  return RematChoice{enough == segments ? std::string("per-block")
                                        : "per-block:" + std::to_string(enough),
                     bytes};
}

} // namespace lmc
