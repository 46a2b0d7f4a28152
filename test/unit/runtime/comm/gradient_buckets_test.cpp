#include "comm/gradient_buckets.h"

#include "test_util.h"

#include <utility>
#include <vector>

using namespace lmc::rt;

namespace {

/// Records the all-reduces started and finished, as (first float, count).
class RecordingComm : public Communicator {
public:
  struct Pending : PendingCollective {
    Pending(RecordingComm &comm, std::pair<size_t, size_t> range)
        : comm(comm), range(range) {}
    void wait() override { comm.waited.push_back(range); }
    RecordingComm &comm;
    std::pair<size_t, size_t> range;
  };

  explicit RecordingComm(const float *arena) : arena(arena) {}
  int rank() const override { return 0; }
  int size() const override { return 2; }
  std::unique_ptr<PendingCollective> startAllReduceSum(float *data,
                                                       size_t count) override {
    started.emplace_back(size_t(data - arena), count);
    return std::make_unique<Pending>(*this, started.back());
  }
  void allReduceSum(float *, size_t) override {}
  void allReduceMax(float *, size_t) override {}
  void broadcast(void *, size_t) override {}
  void allGather(const void *, void *, size_t) override {}
  void reduceScatterSum(float *, const std::vector<size_t> &) override {}
  void allGatherParts(float *, const std::vector<size_t> &) override {}
  std::unique_ptr<Communicator> split(int, int) override { return nullptr; }
  [[noreturn]] void abort(int) override { throw Error("abort"); }

  const float *arena;
  std::vector<std::pair<size_t, size_t>> started, waited;
};

std::vector<TensorSpec> specs(const std::vector<int64_t> &elements) {
  std::vector<TensorSpec> out;
  for (int64_t n : elements)
    out.push_back({Role::Param, "p" + std::to_string(out.size()), DType::F32,
                   {n}, -1});
  return out;
}

std::vector<const TensorSpec *> pointers(const std::vector<TensorSpec> &s) {
  std::vector<const TensorSpec *> out;
  for (const TensorSpec &spec : s)
    out.push_back(&spec);
  return out;
}

using Ranges = std::vector<std::pair<size_t, size_t>>;

// Four params of 16, 32, 16 and 48 floats at offsets 0, 16, 48, 64 (line
// aligned). Buckets of at least 40 floats made from the end: {p3} = [64,
// 112), {p2, p1} = [16, 64), {p0} = [0, 16).
TEST(GradientBuckets, BucketsFromTheEndStartWhenComplete) {
  std::vector<TensorSpec> params = specs({16, 32, 16, 48});
  GradientArena layout(pointers(params));
  // grad_step returns the gradients in the order p3, p1, p2, p0.
  std::vector<float> arena(layout.floats);
  RecordingComm comm(arena.data());
  GradientBuckets buckets(layout, {3, 1, 2, 0}, 40, arena.data(), comm);
  ASSERT_EQ(buckets.size(), 3u);
  buckets.begin();
  buckets.ready(0); // p3: its bucket is complete
  EXPECT_EQ(comm.started, (Ranges{{64, 48}}));
  buckets.ready(1); // p1: p2 still missing
  EXPECT_EQ(comm.started.size(), 1u);
  buckets.ready(2); // p2
  EXPECT_EQ(comm.started, (Ranges{{64, 48}, {16, 48}}));
  // p0 never said ready (an older grad_step): finish starts its bucket,
  // then waits for all three, in bucket order.
  buckets.finish();
  EXPECT_EQ(comm.started, (Ranges{{64, 48}, {16, 48}, {0, 16}}));
  EXPECT_EQ(comm.waited, (Ranges{{64, 48}, {16, 48}, {0, 16}}));
  EXPECT_EQ(buckets.startedEarly(), 2u);

  // The next step starts afresh.
  comm.started.clear();
  buckets.begin();
  buckets.ready(3);
  EXPECT_EQ(comm.started, (Ranges{{0, 16}}));
  EXPECT_EQ(buckets.startedEarly(), 1u);
  buckets.finish();
}

// One bucket when it may hold everything: it starts with the last gradient.
TEST(GradientBuckets, OneBigBucket) {
  std::vector<TensorSpec> params = specs({5, 20});
  GradientArena layout(pointers(params));
  std::vector<float> arena(layout.floats);
  RecordingComm comm(arena.data());
  GradientBuckets buckets(layout, {0, 1}, 1000, arena.data(), comm);
  ASSERT_EQ(buckets.size(), 1u);
  buckets.begin();
  buckets.ready(1);
  EXPECT_TRUE(comm.started.empty());
  buckets.ready(0);
  EXPECT_EQ(comm.started, (Ranges{{0, 48}})); // two padded params
  buckets.finish();
}

// An error in ready() (called from the compiled step) is kept: nothing
// more starts, and finish() throws it.
TEST(GradientBuckets, KeepsErrorsForFinish) {
  std::vector<TensorSpec> params = specs({16, 16});
  GradientArena layout(pointers(params));
  std::vector<float> arena(layout.floats);
  RecordingComm comm(arena.data());
  GradientBuckets buckets(layout, {1, 0}, 16, arena.data(), comm);
  buckets.begin();
  buckets.fail(std::make_exception_ptr(Error("peer died")));
  buckets.ready(0);
  buckets.ready(1);
  EXPECT_TRUE(comm.started.empty());
  EXPECT_THROW(buckets.finish(), Error);
}

TEST(GradientBuckets, RejectsUnknownAndRepeatedGradients) {
  std::vector<TensorSpec> params = specs({16});
  GradientArena layout(pointers(params));
  std::vector<float> arena(layout.floats);
  RecordingComm comm(arena.data());
  EXPECT_THROW(GradientBuckets(layout, {1}, 16, arena.data(), comm), Error);
  GradientBuckets buckets(layout, {0}, 16, arena.data(), comm);
  buckets.begin();
  EXPECT_THROW(buckets.ready(1), Error);
  buckets.ready(0);
  EXPECT_THROW(buckets.ready(0), Error);
  buckets.finish();
}

} // namespace
