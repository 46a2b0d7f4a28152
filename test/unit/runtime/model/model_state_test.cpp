// ModelState's storage: two blocks per tensor, one for a tensor the steps
// update in place (the descriptor's `inplace` lines) and for a frozen one.
#include "model/model_state.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

using namespace lmc::rt;

namespace {

const char *kDesc = "lmc-model 1\nloss mse\noptimizer momentum\n"
                    "hparam lr 0.1\nflops 0\n"
                    "train arg param w f32 1 2\n"
                    "train arg param v f32 1 2\n"
                    "train arg state w.momentum_buffer f32 1 2\n"
                    "train arg state v.momentum_buffer f32 1 2\n"
                    "train arg input x f32 1 2\n"
                    "train result param w f32 1 2\n"
                    "train result param v f32 1 2\n"
                    "train result state w.momentum_buffer f32 1 2\n"
                    "train result state v.momentum_buffer f32 1 2\n"
                    "train result loss loss f32 0\n"
                    "init w 0 8\ninit v 0 8\n"
                    "inplace w\ninplace w.momentum_buffer\nend\n";
const unsigned char kWeights[8] = {0, 0, 128, 63, 0, 0, 0, 64}; // 1, 2

TEST(ModelState, InPlaceTensorsHaveOneBlock) {
  Descriptor desc = parseDescriptor(kDesc, sizeof kWeights);
  ModelState state(desc, kWeights);
  const TensorSpec &w = *desc.params()[0], &v = *desc.params()[1];
  const std::vector<const TensorSpec *> states =
      desc.trainArgsWithRole(Role::State);
  // In place: what a step reads is where it writes, across swaps.
  EXPECT_EQ(state.buffer(w, /*next=*/false), state.buffer(w, /*next=*/true));
  EXPECT_EQ(state.buffer(*states[0], false), state.buffer(*states[0], true));
  // Double-buffered: two blocks that trade places.
  void *current = state.buffer(v, false), *next = state.buffer(v, true);
  EXPECT_NE(current, next);
  state.swap();
  EXPECT_EQ(state.buffer(v, false), next);
  EXPECT_EQ(state.buffer(v, true), current);
  EXPECT_NE(state.buffer(*states[1], false), state.buffer(*states[1], true));
  // Both start from their init bytes; an in-place one keeps them after a
  // swap.
  EXPECT_EQ(state.param(0).as<float>()[1], 2.0f);
  EXPECT_EQ(state.buffer(w, false), state.param(0).data());
}

/// A param `a` f32[1] at offset 0 and a frozen `base` f32[2] at
/// `baseOffset` of the weights.
std::string frozenModel(int baseOffset) {
  return "lmc-model 1\nloss mse\noptimizer sgd\nhparam lr 0.1\nflops 0\n"
         "train arg param a f32 1 1\n"
         "train arg frozen base f32 1 2\n"
         "train arg input x f32 1 2\n"
         "train result param a f32 1 1\n"
         "train result loss loss f32 0\n"
         "init a 0 4\ninit base " +
         std::to_string(baseOffset) + " 8\nend\n";
}

TEST(ModelState, FrozenTensorsHaveOneBlockAndNoFile) {
  const std::string desc = frozenModel(4);
  const unsigned char weights[12] = {0, 0, 128, 63,  // a = 1
                                     0, 0, 0,   64,  // base = 2,
                                     0, 0, 64,  64}; //        3
  Descriptor parsed = parseDescriptor(desc, sizeof weights);
  ModelState state(parsed, weights);
  ASSERT_EQ(state.frozen().size(), 1u);
  const TensorSpec &base = *state.frozen()[0];
  void *block = state.buffer(base, /*next=*/false);
  EXPECT_EQ(block, state.buffer(base, /*next=*/true));
  state.swap();
  EXPECT_EQ(state.buffer(base, false), block);
  EXPECT_EQ(static_cast<float *>(block)[0], 2.0f);
  EXPECT_EQ(static_cast<float *>(block)[1], 3.0f);
  // Files (--save, checkpoints, --init) hold the trained tensors only.
  std::vector<TensorView> views = state.views(/*withState=*/true);
  ASSERT_EQ(views.size(), 1u);
  EXPECT_EQ(views[0].name, "a");
}

TEST(ModelState, FrozenTensorsAreReadWhereTheyLie) {
  const std::string desc = frozenModel(64);
  alignas(64) static unsigned char weights[72] = {0, 0, 128, 63}; // a = 1
  const float baseValues[2] = {2.0f, 3.0f};
  std::memcpy(weights + 64, baseValues, sizeof baseValues);
  Descriptor parsed = parseDescriptor(desc, sizeof weights);
  ModelState state(parsed, weights, 0, {}, /*weightsOutlive=*/true);
  const TensorSpec &base = *state.frozen()[0];
  // No copy: the step reads the weights themselves.
  EXPECT_EQ(state.buffer(base, false), weights + 64);
  EXPECT_EQ(state.buffer(base, true), weights + 64);
  EXPECT_EQ(static_cast<const float *>(state.buffer(base, false))[1], 3.0f);
  // The param is copied (a step writes it).
  EXPECT_NE(state.buffer(*parsed.params()[0], false), weights);
}

} // namespace
