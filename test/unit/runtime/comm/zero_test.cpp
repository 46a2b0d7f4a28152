#include "comm/zero.h"

#include "test_util.h"
#include "train/checkpoint.h"

#include <cmath>
#include <cstdlib>
#include <unistd.h>

using namespace lmc::rt;

namespace {

TEST(Zero, RangesAreWholeLinesInRankOrder) {
  // The digits MLP: 301 lines of 16 floats.
  EXPECT_EQ(zeroRangeSizes(4816, 1), (std::vector<size_t>{4816}));
  EXPECT_EQ(zeroRangeSizes(4816, 2), (std::vector<size_t>{2400, 2416}));
  EXPECT_EQ(zeroRangeSizes(4816, 4),
            (std::vector<size_t>{1200, 1200, 1200, 1216}));
  // Fewer lines than processes: some own nothing.
  EXPECT_EQ(zeroRangeSizes(32, 4), (std::vector<size_t>{0, 16, 0, 16}));
}

// Momentum SGD on W f32[50] and b f32[3]: the arena is 64 + 16 floats, so
// chunks of 32 make two whole windows and a short one of 16.
const char *kDesc =
    "lmc-model 1\nloss mse\noptimizer momentum\nhparam lr 0.1\nflops 0\n"
    "train arg param W f32 1 50\n"
    "train arg param b f32 1 3\n"
    "train arg state W.momentum_buffer f32 1 50\n"
    "train arg state b.momentum_buffer f32 1 3\n"
    "train arg input x f32 1 2\n"
    "train arg hyper lr f32 0\n"
    "train arg hyper max_grad_norm f32 0\n"
    "train result param W f32 1 50\n"
    "train result param b f32 1 3\n"
    "train result state W.momentum_buffer f32 1 50\n"
    "train result state b.momentum_buffer f32 1 3\n"
    "train result loss loss f32 0\n"
    "grad arg param W f32 1 50\n"
    "grad arg param b f32 1 3\n"
    "grad arg input x f32 1 2\n"
    "grad result grad W f32 1 50\n"
    "grad result grad b f32 1 3\n"
    "grad result loss loss f32 0\n"
    "apply arg param W f32 1 50\n"
    "apply arg param b f32 1 3\n"
    "apply arg state W.momentum_buffer f32 1 50\n"
    "apply arg state b.momentum_buffer f32 1 3\n"
    "apply arg grad W f32 1 50\n"
    "apply arg grad b f32 1 3\n"
    "apply arg hyper lr f32 0\n"
    "apply arg hyper max_grad_norm f32 0\n"
    "apply result param W f32 1 50\n"
    "apply result param b f32 1 3\n"
    "apply result state W.momentum_buffer f32 1 50\n"
    "apply result state b.momentum_buffer f32 1 3\n"
    "chunk arg param chunk f32 1 32\n"
    "chunk arg state chunk.momentum_buffer f32 1 32\n"
    "chunk arg grad chunk f32 1 32\n"
    "chunk arg hyper lr f32 0\n"
    "chunk arg hyper max_grad_norm f32 0\n"
    "chunk arg grad_norm grad_norm f32 0\n"
    "chunk result param chunk f32 1 32\n"
    "chunk result state chunk.momentum_buffer f32 1 32\n"
    "init W 0 200\ninit b 256 12\nend\n";

std::vector<unsigned char> initialWeights() {
  std::vector<float> values(72, 0.0f);
  for (int i = 0; i < 50; ++i)
    values[size_t(i)] = 1.0f + float(i);
  for (int i = 0; i < 3; ++i)
    values[size_t(64 + i)] = -1.0f - float(i);
  std::vector<unsigned char> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// A stand-in for the compiled chunk_step: state' = state + grad,
// param' = param - lr * grad; records what it was given.
struct ChunkCalls {
  int calls = 0;
  float gradNorm = 0;
  float lastPaddedGrad = -1; // the last float of the last window's grad
} chunkCalls;

void fakeChunkStep(void **buffers) {
  const float *param = static_cast<float *>(buffers[0]);
  const float *state = static_cast<float *>(buffers[1]);
  const float *grad = static_cast<float *>(buffers[2]);
  const float lr = *static_cast<float *>(buffers[3]);
  chunkCalls.gradNorm = *static_cast<float *>(buffers[5]);
  float *newParam = static_cast<float *>(buffers[6]);
  float *newState = static_cast<float *>(buffers[7]);
  for (int i = 0; i < 32; ++i) {
    newState[i] = state[i] + grad[i];
    newParam[i] = param[i] - lr * grad[i];
  }
  chunkCalls.lastPaddedGrad = grad[31];
  ++chunkCalls.calls;
}

TEST(Zero, OneProcessUpdatesEveryWindow) {
  std::vector<unsigned char> weights = initialWeights();
  Descriptor desc = parseDescriptor(kDesc, weights.size());
  ModelState state(desc, weights.data(), 0, zeroShard(desc, 0, 1));
  ASSERT_EQ(state.stateShard()->slots, std::vector<std::string>{"momentum_buffer"});
  std::unique_ptr<Communicator> one = connect(LaunchInfo(), 0);
  ShardedOptimizer optimizer(desc, fakeChunkStep, state, *one);

  GradientArena layout(state.params());
  ASSERT_EQ(layout.lossSlot, 80u);
  std::vector<float> arena(layout.floats, 0.0f);
  double squares = 0;
  for (size_t i = 0; i < 50; ++i)
    arena[i] = 0.5f * float(i);
  for (size_t i = 0; i < 3; ++i)
    arena[64 + i] = 2.0f;
  for (size_t i = 0; i < 80; ++i)
    squares += double(arena[i] / 4) * double(arena[i] / 4);
  std::vector<AlignedBuffer> hypers;
  hypers.emplace_back(sizeof(float));
  hypers.emplace_back(sizeof(float));
  *hypers[0].as<float>() = 0.5f;
  float sums[2] = {3.0f, 0.0f};
  chunkCalls = {};
  // Averaged over 4 micro-batches.
  const float norm = optimizer.step(arena.data(), 4, hypers, sums, 2);

  EXPECT_EQ(chunkCalls.calls, 3);
  EXPECT_NEAR(norm, std::sqrt(squares), 1e-6 * std::sqrt(squares));
  EXPECT_EQ(chunkCalls.gradNorm, norm);
  EXPECT_EQ(chunkCalls.lastPaddedGrad, 0.0f); // the short window's padding
  EXPECT_EQ(sums[0], 3.0f);
  const float *w = state.nextParam(0).as<float>();
  const float *b = state.nextParam(1).as<float>();
  for (size_t i = 0; i < 50; ++i)
    EXPECT_EQ(w[i], 1.0f + float(i) - 0.5f * (0.5f * float(i) / 4)) << i;
  for (size_t i = 0; i < 3; ++i)
    EXPECT_EQ(b[i], -1.0f - float(i) - 0.5f * 0.5f) << i;
  const float *momentum = state.stateRange(0, /*next=*/true).as<float>();
  EXPECT_EQ(momentum[49], 0.5f * 49 / 4);
  EXPECT_EQ(momentum[65], 0.5f);
}

TEST(Zero, CheckpointsHoldWholeStatesAndRestoreRanges) {
  std::vector<unsigned char> weights = initialWeights();
  Descriptor desc = parseDescriptor(kDesc, weights.size());
  ModelState state(desc, weights.data(), 0, zeroShard(desc, 0, 1));
  float *momentum = state.stateRange(0, /*next=*/false).as<float>();
  for (size_t i = 0; i < 80; ++i)
    momentum[i] = float(i);
  std::unique_ptr<Communicator> one = connect(LaunchInfo(), 0);

  std::vector<AlignedBuffer> storage;
  std::vector<TensorView> whole = wholeShardedStates(state, *one, storage);
  ASSERT_EQ(whole.size(), 2u);
  EXPECT_EQ(whole[1].name, "b.momentum_buffer");
  EXPECT_EQ(static_cast<const float *>(whole[1].data)[2], 66.0f);

  char dir[] = "/tmp/lmc-zero-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  Checkpointer checkpoints(dir, 0, 1);
  checkpoints.gatherStatesOver(*one, /*writes=*/true);
  CheckpointMeta meta;
  meta.step = 1;
  meta.schedule = "constant";
  checkpoints.save(state, meta);

  // Process 1 of 3 owns lines 1..3 of 5: floats [16, 48), W's 16..47.
  ModelState middle(desc, weights.data(), 0, zeroShard(desc, 1, 3));
  EXPECT_EQ(middle.stateShard()->begin, 16u);
  EXPECT_EQ(middle.stateShard()->end, 48u);
  checkpoints.load(*checkpoints.newest(), middle);
  const float *range = middle.stateRange(0, /*next=*/false).as<float>();
  for (size_t i = 0; i < 32; ++i)
    EXPECT_EQ(range[i], float(16 + i)) << i;
  EXPECT_EQ(std::system((std::string("rm -rf ") + dir).c_str()), 0);
}

} // namespace
