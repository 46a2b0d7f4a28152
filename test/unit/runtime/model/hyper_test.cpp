#include "model/hyper.h"

#include "test_util.h"

#include <cmath>

using namespace lmc::rt;

namespace {

const char *kAdam = "lmc-model 1\nloss mse\noptimizer adam\n"
                    "hparam lr 0.01\nhparam beta1 0.9\nhparam beta2 0.999\n"
                    "flops 0\n"
                    "train arg param w f32 0\n"
                    "train arg input x f32 1 2\n"
                    "train arg hyper lr f32 0\n"
                    "train arg hyper adam_step_size f32 0\n"
                    "train arg hyper adam_bc2_sqrt f32 0\n"
                    "train result param w f32 0\n"
                    "train result loss loss f32 0\n"
                    "init w 0 4\nend\n";

TEST(Hyper, AdamBiasCorrections) {
  Descriptor d = parseDescriptor(kAdam, 4);
  HyperParams hp = resolveHyperParams(d, std::nullopt);
  EXPECT_EQ(hyperValue("lr", 3, hp), 0.01);
  EXPECT_DOUBLE_EQ(hyperValue("adam_step_size", 1, hp), 0.01 / (1 - 0.9));
  EXPECT_DOUBLE_EQ(hyperValue("adam_step_size", 3, hp),
                   0.01 / (1 - 0.9 * 0.9 * 0.9));
  EXPECT_DOUBLE_EQ(hyperValue("adam_bc2_sqrt", 2, hp),
                   std::sqrt(1 - 0.999 * 0.999));
}

TEST(Hyper, LrOverride) {
  Descriptor d = parseDescriptor(kAdam, 4);
  HyperParams hp = resolveHyperParams(d, 0.5);
  EXPECT_EQ(hyperValue("lr", 1, hp), 0.5);
  EXPECT_DOUBLE_EQ(hyperValue("adam_step_size", 1, hp), 0.5 / (1 - 0.9));
}

TEST(Hyper, MissingHparams) {
  std::string noLr = kAdam;
  noLr.erase(noLr.find("hparam lr 0.01\n"), 15);
  Descriptor d = parseDescriptor(noLr, 4);
  EXPECT_ERROR_CONTAINS(resolveHyperParams(d, std::nullopt), "pass --lr");
  EXPECT_NO_THROW(resolveHyperParams(d, 0.1));
  std::string noBeta1 = kAdam;
  noBeta1.erase(noBeta1.find("hparam beta1 0.9\n"), 17);
  EXPECT_ERROR_CONTAINS(
      resolveHyperParams(parseDescriptor(noBeta1, 4), std::nullopt),
      "adam_step_size needs 'hparam beta1'");
}

} // namespace

namespace {

TEST(Hyper, MaxGradNorm) {
  const char *text = "lmc-model 1\nloss mse\noptimizer sgd\n"
                     "hparam lr 0.1\nhparam clip_grad_norm 2.5\nflops 0\n"
                     "train arg param w f32 0\n"
                     "train arg input x f32 1 2\n"
                     "train arg hyper lr f32 0\n"
                     "train arg hyper max_grad_norm f32 0\n"
                     "train result param w f32 0\n"
                     "train result loss loss f32 0\n"
                     "train result grad_norm grad_norm f32 0\n"
                     "init w 0 4\nend\n";
  Descriptor d = parseDescriptor(text, 4);
  EXPECT_EQ(hyperValue("max_grad_norm", 1, resolveHyperParams(d, {})), 2.5);
  EXPECT_EQ(hyperValue("max_grad_norm", 9, resolveHyperParams(d, {}, 1.0)),
            1.0);
  EXPECT_EQ(resolveHyperParams(d, {}, 0.0).maxGradNorm, 0.0);
  // A model without the hyper cannot clip.
  std::string noClip = text;
  noClip.erase(noClip.find("train arg hyper max_grad_norm f32 0\n"), 36);
  Descriptor plain = parseDescriptor(noClip, 4);
  EXPECT_EQ(resolveHyperParams(plain, {}).maxGradNorm, 2.5);
  EXPECT_ERROR_CONTAINS(resolveHyperParams(plain, {}, 1.0),
                        "compiled without gradient clipping");
}

} // namespace
