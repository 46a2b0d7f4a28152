//===- gradient_buckets.cpp - Gradients all-reduced while backward goes on ===//

#include "comm/gradient_buckets.h"

#include "base/error.h"

#include <cstdint>
#include <utility>

namespace lmc::rt {

namespace {
GradientBuckets *activeBuckets = nullptr;
} // namespace

void setActiveGradientBuckets(GradientBuckets *buckets) {
  activeBuckets = buckets;
}

GradientBuckets::GradientBuckets(const GradientArena &layout,
                                 std::vector<size_t> gradientParams,
                                 size_t bucketFloats, float *arena,
                                 Communicator &comm)
    : arena_(arena), comm_(comm) {
  // From the last param back: param p covers [offsets[p], next offset).
  const size_t params = layout.offsets.size();
  std::vector<size_t> bucketOfParam(params);
  for (size_t p = params; p-- > 0;) {
    if (buckets_.empty() || buckets_.back().count >= bucketFloats) {
      size_t end = buckets_.empty() ? layout.lossSlot : buckets_.back().begin;
      buckets_.emplace_back();
      buckets_.back().begin = end;
    }
    Bucket &bucket = buckets_.back();
    bucket.count += bucket.begin - layout.offsets[p];
    bucket.begin = layout.offsets[p];
    bucketOfParam[p] = buckets_.size() - 1;
  }
  for (size_t param : gradientParams) {
    LMC_CHECK(param < params, "gradient of param ", param, " of ", params);
    bucketOfGradient_.push_back(bucketOfParam[param]);
    ++buckets_[bucketOfParam[param]].gradients;
  }
}

void GradientBuckets::begin() {
  startedEarly_ = 0;
  for (Bucket &bucket : buckets_)
    bucket.waiting = bucket.gradients;
}

void GradientBuckets::ready(size_t gradient) {
  if (error_)
    return;
  LMC_CHECK(gradient < bucketOfGradient_.size(), "gradient ", gradient,
            " is not one of grad_step's ", bucketOfGradient_.size());
  Bucket &bucket = buckets_[bucketOfGradient_[gradient]];
  LMC_CHECK(bucket.waiting > 0, "gradient ", gradient, " was ready twice");
  if (--bucket.waiting == 0) {
    start(bucket);
    ++startedEarly_;
  }
}

void GradientBuckets::finish() {
  if (std::exception_ptr error = std::exchange(error_, nullptr)) {
    for (Bucket &bucket : buckets_)
      bucket.pending.reset();
    std::rethrow_exception(error);
  }
  // In bucket order on every process, as the collectives must be.
  for (Bucket &bucket : buckets_)
    if (!bucket.pending)
      start(bucket);
  for (Bucket &bucket : buckets_) {
    bucket.pending->wait();
    bucket.pending.reset();
  }
}

void GradientBuckets::start(Bucket &bucket) {
  bucket.pending = comm_.startAllReduceSum(arena_ + bucket.begin,
                                           bucket.count);
}

} // namespace lmc::rt

using namespace lmc::rt;

// The compiled grad_step's call (lmc/runtime/kernels.h; the kernels
// library's weak one does nothing). The step has no unwind tables: an
// error waits for finish().
extern "C" void lmc_rt_gradient_ready(int64_t gradient) {
  if (!activeBuckets)
    return;
  try {
    activeBuckets->ready(size_t(gradient));
  } catch (...) {
    activeBuckets->fail(std::current_exception());
  }
}
