#include "model/descriptor.h"

#include "test_util.h"

#include "lmc/runtime/descriptor_lines.h"

using namespace lmc::rt;

namespace {

// A small adamw classifier: W f32[4,3], b f32[3].
const char *kValid = "lmc-model 1\n"
                     "loss cross_entropy\n"
                     "optimizer adamw\n"
                     "hparam lr 0.001\n"
                     "hparam beta1 0.9\n"
                     "hparam beta2 0.999\n"
                     "flops 1234\n"
                     "train arg param W f32 2 4 3\n"
                     "train arg param b f32 1 3\n"
                     "train arg state W.exp_avg f32 2 4 3\n"
                     "train arg state W.exp_avg_sq f32 2 4 3\n"
                     "train arg input x f32 2 8 4\n"
                     "train arg input labels i64 1 8\n"
                     "train arg hyper lr f32 0\n"
                     "train arg hyper adam_step_size f32 0\n"
                     "train arg hyper adam_bc2_sqrt f32 0\n"
                     "train result param W f32 2 4 3\n"
                     "train result param b f32 1 3\n"
                     "train result state W.exp_avg f32 2 4 3\n"
                     "train result state W.exp_avg_sq f32 2 4 3\n"
                     "train result loss loss f32 0\n"
                     "eval arg param W f32 2 4 3\n"
                     "eval arg param b f32 1 3\n"
                     "eval arg input x f32 2 8 4\n"
                     "eval arg input labels i64 1 8\n"
                     "eval result loss loss f32 0\n"
                     "eval result output logits f32 2 8 3\n"
                     "init b 48 12\n"
                     "init W 0 48\n"
                     "end\n";

/// Inserts `line` into `text` before the first occurrence of `at`.
void insertBefore(std::string &text, const std::string &at,
                  const std::string &line) {
  size_t pos = text.find(at);
  EXPECT_NE(pos, std::string::npos) << at;
  if (pos != std::string::npos)
    text.insert(pos, line);
}

/// kValid with the first occurrence of `from` replaced by `to`.
std::string replaceFirst(std::string text, const std::string &from,
                         const std::string &to) {
  size_t pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return pos == std::string::npos ? text : text.replace(pos, from.size(), to);
}

std::string mutate(const std::string &from, const std::string &to) {
  return replaceFirst(kValid, from, to);
}

TEST(Descriptor, ParsesValid) {
  Descriptor d = parseDescriptor(kValid, 60);
  EXPECT_EQ(d.loss, "cross_entropy");
  EXPECT_EQ(d.optimizer, "adamw");
  EXPECT_EQ(d.hparam("beta2"), 0.999);
  EXPECT_FALSE(d.hparam("momentum"));
  EXPECT_EQ(d.flops, 1234u);
  EXPECT_EQ(d.batchSize, 8);
  ASSERT_EQ(d.trainArgs.size(), 9u);
  EXPECT_EQ(d.trainArgs[5].role, Role::Input);
  EXPECT_EQ(d.trainArgs[5].dtype, DType::I64);
  EXPECT_EQ(d.trainArgs[5].shape, (Shape{8}));
  EXPECT_TRUE(d.trainArgs[6].shape.empty());
  ASSERT_EQ(d.params().size(), 2u);
  // inits are reordered to follow params().
  EXPECT_EQ(d.inits[0].name, "W");
  EXPECT_EQ(d.inits[1].offset, 48u);
  EXPECT_EQ(d.evalResults[1].role, Role::Output);
}

TEST(Descriptor, BoundsReachEveryStepThatTakesTheInput) {
  std::string text = kValid;
  insertBefore(text, "init b", "bound labels 3 classes\n");
  Descriptor d = parseDescriptor(text, 60);
  for (const auto *args : {&d.trainArgs, &d.evalArgs})
    for (const TensorSpec &spec : *args) {
      if (spec.name != "labels")
        continue;
      ASSERT_TRUE(spec.bound.has_value());
      EXPECT_EQ(spec.bound->limit, 3);
      EXPECT_EQ(spec.bound->what, "classes");
    }
  EXPECT_FALSE(d.trainArgsWithRole(Role::Input)[0]->bound.has_value());
}

TEST(Descriptor, BoundOfLabelsWithTheIgnoredLabel) {
  std::string text = kValid;
  insertBefore(text, "init b", "bound labels 3 classes -100\n");
  Descriptor d = parseDescriptor(text, 60);
  const TensorSpec *labels = d.trainArgsWithRole(Role::Input)[1];
  ASSERT_EQ(labels->name, "labels");
  ASSERT_TRUE(labels->bound.has_value());
  EXPECT_EQ(labels->bound->limit, 3);
  EXPECT_EQ(labels->bound->ignored, -100);
  std::string bad = kValid;
  insertBefore(bad, "init b", "bound labels 3 classes -1x\n");
  EXPECT_ERROR_CONTAINS(parseDescriptor(bad, 60), "invalid ignored label '-1x'");
}

TEST(Descriptor, PrecisionActivationsAndSchedule) {
  Descriptor plain = parseDescriptor(kValid, 60);
  EXPECT_EQ(plain.precision, "f32");
  EXPECT_EQ(plain.matmulParts, 16);
  EXPECT_EQ(plain.activationBytes, 0u);
  EXPECT_FALSE(plain.schedule);
  Descriptor d = parseDescriptor(
      mutate("flops 1234", "flops 1234\nprecision bf16\nmatmul_parts 4\n"
                           "activations 4096\n"
                           "schedule wsd decay_steps 30 lr_min 1e-05 warmup 7"),
      60);
  EXPECT_EQ(d.precision, "bf16");
  EXPECT_EQ(d.matmulParts, 4);
  EXPECT_EQ(d.activationBytes, 4096u);
  ASSERT_TRUE(d.schedule);
  EXPECT_EQ(d.schedule->kind, ScheduleKind::Wsd);
  EXPECT_EQ(d.schedule->warmup, 7);
  EXPECT_EQ(d.schedule->decaySteps, 30);
  EXPECT_EQ(d.schedule->lrMin, 1e-05);
  EXPECT_FALSE(d.schedule->steps);
  EXPECT_FALSE(d.remat);
}

/// Each (line, message): kValid with `line` after its `flops` line is
/// refused with `message`.
template <size_t N>
void expectErrorsAfterFlops(
    const std::pair<const char *, const char *> (&cases)[N]) {
  for (const auto &[line, message] : cases) {
    SCOPED_TRACE(line);
    EXPECT_ERROR_CONTAINS(
        parseDescriptor(mutate("flops 1234", std::string("flops 1234\n") + line),
                        60),
        message);
  }
}

TEST(Descriptor, Remat) {
  Descriptor d = parseDescriptor(
      mutate("flops 1234", "flops 1234\nactivations 4096\n"
                           "remat per-block cuts 14 recomputed 126"),
      60);
  ASSERT_TRUE(d.remat);
  EXPECT_EQ(d.remat->policy, "per-block");
  EXPECT_EQ(d.remat->cuts, 14u);
  EXPECT_EQ(d.remat->recomputed, 126u);
  // --remat per-block:N (the first N segments whole).
  Descriptor counted = parseDescriptor(
      mutate("flops 1234", "flops 1234\nremat per-block:3 cuts 14 "
                           "recomputed 40"),
      60);
  ASSERT_TRUE(counted.remat);
  EXPECT_EQ(counted.remat->policy, "per-block:3");
  const std::pair<const char *, const char *> cases[] = {
      {"remat per-block", "expected 'remat <policy> cuts <count> "
                          "recomputed <count>'"},
      {"remat per-block cuts 1 kept 2", "expected 'remat <policy>"},
      {"remat everything cuts 1 recomputed 2", "unknown remat policy "
                                               "'everything'"},
      {"remat selective cuts -1 recomputed 2", "invalid cut count '-1'"},
      {"remat per-block: cuts 1 recomputed 2", "unknown remat policy"},
      {"remat per-block:2x cuts 1 recomputed 2", "unknown remat policy"},
      {"remat selective:2 cuts 1 recomputed 2", "unknown remat policy"},
  };
  expectErrorsAfterFlops(cases);
}

TEST(Descriptor, Lora) {
  EXPECT_FALSE(parseDescriptor(kValid, 60).lora);
  Descriptor d = parseDescriptor(
      mutate("flops 1234", "flops 1234\nremat selective cuts 1 recomputed 2\n"
                           "lora 16 32 0.050000000000000003 rslora"),
      60);
  ASSERT_TRUE(d.lora);
  EXPECT_EQ(d.lora->rank, 16);
  EXPECT_EQ(d.lora->alpha, 32.0);
  EXPECT_EQ(d.lora->dropout, 0.05);
  EXPECT_TRUE(d.lora->rslora);
  EXPECT_FALSE(
      parseDescriptor(mutate("flops 1234", "flops 1234\nlora 8 8 0 plain"), 60)
          .lora->rslora);
  const std::pair<const char *, const char *> cases[] = {
      {"lora 8 8 0", "expected 'lora <rank> <alpha> <dropout> rslora|plain'"},
      {"lora 8 8 0 fancy", "expected 'lora <rank>"},
      {"lora 0 8 0 plain", "invalid lora rank '0'"},
      {"lora 8 -1 0 plain", "lora alpha must be positive"},
      {"lora 8 8 1 plain", "lora dropout must be in [0, 1)"},
      {"lora 8 nan 0 plain", "invalid lora alpha 'nan'"},
  };
  expectErrorsAfterFlops(cases);
  // The weights the adapters are added to, checked against the params.
  std::string adapted = kValid;
  insertBefore(adapted, "train arg input x",
               "train arg frozen base f32 2 4 3\n");
  insertBefore(adapted, "train arg state",
               "train arg param l.lora_A.weight f32 2 2 3\n"
               "train arg param l.lora_B.weight f32 2 4 2\n");
  insertBefore(adapted, "train arg state W.exp_avg_sq",
               "train arg state l.lora_A.weight.exp_avg f32 2 2 3\n"
               "train arg state l.lora_B.weight.exp_avg f32 2 4 2\n");
  adapted = replaceFirst(adapted, "flops 1234\n",
                         "flops 1234\nlora 2 4 0 plain\n"
                         "lora_weight base l out_in\n");
  insertBefore(adapted, "train result state",
               "train result param l.lora_A.weight f32 2 2 3\n"
               "train result param l.lora_B.weight f32 2 4 2\n");
  insertBefore(adapted, "train result state W.exp_avg_sq",
               "train result state l.lora_A.weight.exp_avg f32 2 2 3\n"
               "train result state l.lora_B.weight.exp_avg f32 2 4 2\n");
  insertBefore(adapted, "end\n",
               "init base 0 48\ninit l.lora_A.weight 0 24\n"
               "init l.lora_B.weight 0 32\n");
  Descriptor withWeights = parseDescriptor(adapted, 60);
  ASSERT_EQ(withWeights.lora->weights.size(), 1u);
  EXPECT_EQ(withWeights.lora->weights[0].name, "base");
  EXPECT_EQ(withWeights.lora->weights[0].module, "l");
  EXPECT_TRUE(withWeights.lora->weights[0].outIn);
  EXPECT_EQ(withWeights.lora->scaling(), 2.0);
  const std::pair<std::string, const char *> weightCases[] = {
      {replaceFirst(adapted, "lora_weight base l out_in",
                    "lora_weight base l sideways"),
       "expected 'lora_weight <weight> <module> out_in|in_out'"},
      {replaceFirst(adapted, "lora_weight base l out_in",
                    "lora_weight W l out_in"),
       "lora_weight 'W' is not a 2-D f32 or bf16 frozen tensor"},
      // [4, 3] read as [in, out]: A must be [2, 4].
      {replaceFirst(adapted, "lora_weight base l out_in",
                    "lora_weight base l in_out"),
       "lora_weight 'base': expected params 'l.lora_A.weight' f32[2, 4]"},
      {replaceFirst(adapted, "lora_weight base l out_in",
                    "lora_weight base k out_in"),
       "expected params 'k.lora_A.weight'"},
      {replaceFirst(adapted, "lora 2 4 0 plain\n", ""),
       "'lora_weight' without a 'lora' line"},
  };
  for (const auto &[bad, message] : weightCases) {
    SCOPED_TRACE(message);
    EXPECT_ERROR_CONTAINS(parseDescriptor(bad, 60), message);
  }
  // After the schedule it is out of order.
  EXPECT_ERROR_CONTAINS(
      parseDescriptor(mutate("flops 1234", "flops 1234\nschedule constant\n"
                                           "lora 8 8 0 plain"),
                      60),
      "line 'lora' is out of order");
}

TEST(Descriptor, Frozen) {
  // A frozen tensor: a train and eval arg with an init, no result.
  std::string text = kValid;
  insertBefore(text, "train arg input x", "train arg frozen base f32 1 3\n");
  insertBefore(text, "eval arg input x", "eval arg frozen base f32 1 3\n");
  insertBefore(text, "end\n", "init base 0 12\n");
  Descriptor d = parseDescriptor(text, 60);
  ASSERT_EQ(d.frozen().size(), 1u);
  EXPECT_EQ(d.frozen()[0]->name, "base");
  ASSERT_EQ(d.inits.size(), 3u); // params, then frozen
  EXPECT_EQ(d.inits[2].name, "base");
  // bf16 (--base-precision bf16): 2 bytes a value.
  std::string bf16 = replaceFirst(
      replaceFirst(replaceFirst(text, "train arg frozen base f32",
                                "train arg frozen base bf16"),
                   "eval arg frozen base f32", "eval arg frozen base bf16"),
      "init base 0 12", "init base 0 6");
  Descriptor halves = parseDescriptor(bf16, 60);
  EXPECT_EQ(halves.frozen()[0]->dtype, DType::BF16);
  EXPECT_EQ(halves.frozen()[0]->byteSize(), 6u);
  const std::pair<std::string, const char *> cases[] = {
      {replaceFirst(text, "init base 0 12\n", ""), "missing init for frozen "
                                                   "'base'"},
      {replaceFirst(text, "train result loss",
                    "train result frozen base f32 1 3\ntrain result loss"),
       "role 'frozen' is not allowed in 'train result' lines"},
      {replaceFirst(text, "eval arg frozen base", "eval arg frozen other"),
       "eval frozen 'other' is not a train frozen"},
      {replaceFirst(text, "train arg frozen base", "train arg frozen b"),
       "frozen 'b' has the name of a param or buffer"},
      {replaceFirst(text, "train arg frozen base f32 1 3\n", "") +
           "", "eval frozen 'base' is not a train frozen"},
      {replaceFirst(text, "train arg param b f32 1 3", "train arg param b bf16 1 3"),
       "dtype bf16 is only for frozen tensors, not param 'b'"},
  };
  for (const auto &[bad, message] : cases) {
    SCOPED_TRACE(bad);
    EXPECT_ERROR_CONTAINS(parseDescriptor(bad, 60), message);
  }
}

TEST(Descriptor, AcceptsMissingTrailingNewlineAndOutputLoss) {
  std::string text = kValid;
  text.pop_back();
  EXPECT_NO_THROW(parseDescriptor(text, 60));
  EXPECT_EQ(
      parseDescriptor(mutate("loss cross_entropy", "loss output:l"), 60).loss,
      "output:l");
}

struct BadCase {
  const char *from;
  const char *to;
  const char *message;
};

TEST(Descriptor, RejectsMalformed) {
  const BadCase cases[] = {
      {"lmc-model 1", "lmc-model 2", "line 1: unsupported descriptor version"},
      {"lmc-model 1\n", "", "line 1: expected 'lmc-model 1'"},
      {"loss cross_entropy", "loss hinge", "line 2: unknown loss 'hinge'"},
      {"optimizer adamw", "optimizer lion", "unknown optimizer 'lion'"},
      {"hparam lr 0.001", "hparam lr fast", "invalid hparam value 'fast'"},
      {"hparam beta1 0.9", "hparam lr 0.9", "duplicate hparam 'lr'"},
      {"flops 1234", "flops -1", "invalid flops count"},
      {"flops 1234\n", "", "line 7: missing 'flops' line before 'train'"},
      {"optimizer adamw\n", "", "missing 'optimizer' line before 'hparam'"},
      {"hparam lr 0.001\n", "hparam lr 0.001\nflops 1\n",
       "line 'hparam' is out of order or repeated"},
      {"train arg param W f32 2 4 3", "train arg param W f16 2 4 3",
       "unknown dtype 'f16'"},
      {"train arg param W f32 2 4 3", "train arg param W f32 3 4 3",
       "rank 3 needs 3 dimensions, found 2"},
      {"train arg param W f32 2 4 3", "train arg param W  f32 2 4 3",
       "empty field"},
      {"train arg param W f32 2 4 3", "train arg param W f32 2 4 x",
       "invalid dimension 'x'"},
      {"train arg param b f32 1 3", "train arg loss b f32 1 3",
       "role 'loss' is not allowed in 'train arg' lines"},
      {"train arg param b f32 1 3\ntrain arg state W.exp_avg f32 2 4 3",
       "train arg state W.exp_avg f32 2 4 3\ntrain arg param b f32 1 3",
       "role 'param' must come before role 'state'"},
      {"train arg state W.exp_avg f32", "train arg state W.velocity f32",
       "unknown slot 'velocity'"},
      {"train arg hyper lr f32 0", "train arg hyper warmup f32 0",
       "unknown hyper 'warmup'"},
      {"train arg hyper lr f32 0", "train arg hyper lr f64 0",
       "must be an f32 scalar"},
      {"train arg input labels i64 1 8", "train arg input labels i64 1 9",
       "has batch size 9, other inputs have 8"},
      {"train result param b f32 1 3", "train result param b f32 1 4",
       "train result 'b' is f32[4] but the arg is f32[3]"},
      {"train result param b f32 1 3\n", "", "every train param needs"},
      {"train result loss loss f32 0\n", "",
       "expected exactly one 'train result loss loss'"},
      {"eval arg param b f32 1 3", "eval arg param c f32 1 3",
       "eval param 'c' is not a train param"},
      {"init b 48 12", "init b 48 16", "init for 'b' has 16 bytes"},
      {"init b 48 12", "init b 52 12",
       "is outside lmc_model_weights (60 bytes)"},
      {"init b 48 12", "init c 48 12", "init for unknown param, buffer, frozen or state 'c'"},
      {"init b 48 12", "bound labels 3 classes\nbound labels 3 classes\ninit b 48 12",
       "input 'labels' bounded twice"},
      {"init b 48 12", "bound labels 0 classes\ninit b 48 12", "bound"},
      {"init b 48 12", "bound labels 3 rows\ninit b 48 12",
       "expected 'bound <input> <limit> classes [<ignored>]'"},
      {"init b 48 12", "bound x 3 classes\ninit b 48 12",
       "bound on input 'x' of dtype f32 (expected an integer input)"},
      {"init b 48 12", "bound y 3 classes\ninit b 48 12",
       "bound on unknown input 'y'"},
      {"init W 0 48\n", "init W 0 48\nbound labels 3 classes\n",
       "line 'bound' is out of order or repeated"},
      {"init b 48 12\n", "", "missing init for param 'b'"},
      {"init W 0 48", "init b 48 12", "duplicate init for 'b'"},
      {"end\n", "", "missing 'end' line"},
      {"end\n", "end\nflops 3\n", "text after 'end'"},
      {"flops 1234\n", "flops 1234\n\n", "empty line"},
      {"flops 1234", "flips 1234", "unknown line 'flips 1234'"},
      {"flops 1234", "flops 1234\nprecision f8", "expected 'precision f32"},
      {"flops 1234", "flops 1234\nmatmul_parts 3",
       "matmul_parts must be a power of two from 1 to 16, not 3"},
      {"flops 1234", "flops 1234\nmatmul_parts 0",
       "matmul_parts must be a power of two from 1 to 16, not 0"},
      {"flops 1234", "flops 1234\nmatmul_parts 32",
       "matmul_parts must be a power of two from 1 to 16, not 32"},
      {"flops 1234", "flops 1234\nmatmul_parts",
       "expected 'matmul_parts <count>'"},
      {"flops 1234", "flops 1234\nmatmul_parts two",
       "invalid matmul_parts count 'two'"},
      {"flops 1234", "flops 1234\nactivations 8\nmatmul_parts 2",
       "line 'matmul_parts' is out of order or repeated"},
      {"flops 1234", "flops 1234\nactivations many",
       "invalid activation bytes 'many'"},
      {"flops 1234", "flops 1234\nschedule cosine\nprecision bf16",
       "line 'precision' is out of order or repeated"},
      {"flops 1234", "flops 1234\nschedule step", "unknown schedule 'step'"},
      {"flops 1234", "flops 1234\nschedule cosine warmup",
       "expected 'schedule <kind> [<key> <value>]...'"},
      {"flops 1234", "flops 1234\nschedule cosine warmup -3",
       "invalid schedule step count '-3'"},
      {"flops 1234", "flops 1234\nschedule cosine gamma 3",
       "unknown schedule setting 'gamma'"},
      {"flops 1234", "flops 1234\nschedule cosine lr_min 1 lr_min 2",
       "schedule setting 'lr_min' repeated"},
      {"flops 1234", "flops 1234\nschedule cosine lr_min -1",
       "schedule lr_min must not be negative"},
  };
  for (const BadCase &c : cases) {
    SCOPED_TRACE(std::string(c.from) + " -> " + c.to);
    EXPECT_ERROR_CONTAINS(parseDescriptor(mutate(c.from, c.to), 60), c.message);
  }
}

/// kValid with a model buffer `m` f32[3] (initial value at byte 64).
std::string withBuffer() {
  std::string text = kValid;
  insertBefore(text, "train arg input x", "train arg buffer m f32 1 3\n");
  insertBefore(text, "train result loss", "train result buffer m f32 1 3\n");
  insertBefore(text, "eval arg input x", "eval arg buffer m f32 1 3\n");
  insertBefore(text, "end\n", "init m 64 12\n");
  return text;
}

TEST(Descriptor, ParsesBuffers) {
  Descriptor d = parseDescriptor(withBuffer(), 76);
  std::vector<const TensorSpec *> buffers = d.buffers();
  ASSERT_EQ(buffers.size(), 1u);
  EXPECT_EQ(buffers[0]->name, "m");
  // inits are parallel to params() then buffers().
  ASSERT_EQ(d.inits.size(), 3u);
  EXPECT_EQ(d.inits[0].name, "W");
  EXPECT_EQ(d.inits[1].name, "b");
  EXPECT_EQ(d.inits[2].name, "m");
  EXPECT_EQ(d.inits[2].offset, 64u);
}

TEST(Descriptor, RejectsMalformedBuffers) {
  auto mutated = [](const std::string &from, const std::string &to) {
    return replaceFirst(withBuffer(), from, to);
  };
  const BadCase cases[] = {
      {"train result buffer m f32 1 3\n", "",
       "every train buffer needs a train result"},
      {"train result buffer m f32 1 3", "train result buffer m f32 1 4",
       "train result 'm' is f32[4] but the arg is f32[3]"},
      {"eval arg buffer m f32 1 3", "eval arg buffer n f32 1 3",
       "eval buffer 'n' is not a train buffer"},
      {"init m 64 12\n", "", "missing init for buffer 'm'"},
      {"train arg buffer m f32 1 3", "train arg buffer b f32 1 3",
       "buffer 'b' has the name of a param"},
      {"train arg buffer m f32 1 3\ntrain arg input x f32 2 8 4\n",
       "train arg input x f32 2 8 4\ntrain arg buffer m f32 1 3\n",
       "role 'buffer' must come before role 'input'"},
  };
  for (const BadCase &c : cases) {
    SCOPED_TRACE(std::string(c.from) + " -> " + c.to);
    EXPECT_ERROR_CONTAINS(parseDescriptor(mutated(c.from, c.to), 76),
                          c.message);
  }
}

TEST(Descriptor, ErrorsNameTheLine) {
  EXPECT_ERROR_CONTAINS(
      parseDescriptor(mutate("optimizer adamw", "optimizer lion"), 60),
      "model descriptor line 3: ");
}

} // namespace

namespace {

TEST(Descriptor, GradNormAndClipping) {
  Descriptor d = parseDescriptor(
      mutate("train result loss loss f32 0\n",
             "train result loss loss f32 0\n"
             "train result grad_norm grad_norm f32 0\n")
          .replace(std::string(kValid).find("train arg hyper adam_bc2_sqrt"),
                   0, "train arg hyper max_grad_norm f32 0\n"),
      60);
  EXPECT_TRUE(d.hasGradNorm());
  EXPECT_TRUE(d.hasHyper("max_grad_norm"));
  EXPECT_FALSE(parseDescriptor(kValid, 60).hasGradNorm());

  EXPECT_ERROR_CONTAINS(
      parseDescriptor(mutate("train result loss loss f32 0\n",
                             "train result loss loss f32 0\n"
                             "train result grad_norm g f32 0\n"),
                      60),
      "train grad_norm result must be 'grad_norm grad_norm f32 0'");
  EXPECT_ERROR_CONTAINS(
      parseDescriptor(mutate("train result loss loss f32 0\n",
                             "train result loss loss f32 0\n"
                             "train result grad_norm grad_norm f32 0\n"
                             "train result grad_norm grad_norm f32 0\n"),
                      60),
      "duplicate grad_norm 'grad_norm'");
  EXPECT_ERROR_CONTAINS(
      parseDescriptor(mutate("train result loss loss f32 0\n",
                             "train result grad_norm grad_norm f32 0\n"
                             "train result loss loss f32 0\n"),
                      60),
      "role 'loss' must come before role 'grad_norm'");
  EXPECT_ERROR_CONTAINS(parseDescriptor(mutate("train arg hyper lr f32 0",
                                               "train arg hyper clip f32 0"),
                                        60),
                        "unknown hyper 'clip'");
}

} // namespace

namespace {

// kValid's train step cut in two, as lmc-optimizer emits it.
const char *kSplit = "grad arg param W f32 2 4 3\n"
                     "grad arg param b f32 1 3\n"
                     "grad arg input x f32 2 8 4\n"
                     "grad arg input labels i64 1 8\n"
                     "grad result grad W f32 2 4 3\n"
                     "grad result grad b f32 1 3\n"
                     "grad result loss loss f32 0\n"
                     "apply arg param W f32 2 4 3\n"
                     "apply arg param b f32 1 3\n"
                     "apply arg state W.exp_avg f32 2 4 3\n"
                     "apply arg state W.exp_avg_sq f32 2 4 3\n"
                     "apply arg grad W f32 2 4 3\n"
                     "apply arg grad b f32 1 3\n"
                     "apply arg hyper lr f32 0\n"
                     "apply arg hyper adam_step_size f32 0\n"
                     "apply arg hyper adam_bc2_sqrt f32 0\n"
                     "apply result param W f32 2 4 3\n"
                     "apply result param b f32 1 3\n"
                     "apply result state W.exp_avg f32 2 4 3\n"
                     "apply result state W.exp_avg_sq f32 2 4 3\n";

std::string withSplit(const std::string &from = "", const std::string &to = "") {
  std::string split = from.empty() ? kSplit : replaceFirst(kSplit, from, to);
  return mutate("init b 48 12\n", split + "init b 48 12\n");
}

TEST(Descriptor, SplitStep) {
  Descriptor d = parseDescriptor(withSplit(), 60);
  EXPECT_TRUE(d.hasSplitStep());
  ASSERT_EQ(d.gradResults.size(), 3u);
  EXPECT_EQ(d.gradResults[1].role, Role::Grad);
  EXPECT_EQ(d.gradResults[1].name, "b");
  EXPECT_EQ(d.applyArgs.size(), 9u);
  EXPECT_FALSE(parseDescriptor(kValid, 60).hasSplitStep());
}

TEST(Descriptor, SplitStepMustMirrorTheTrainStep) {
  const BadCase cases[] = {
      {"grad result grad b f32 1 3", "grad result grad b f32 1 4",
       "'grad result' line 2 is 'grad b f32[4]', the train section implies "
       "'grad b f32[3]'"},
      {"grad arg input labels i64 1 8\n", "",
       "'grad arg' line 4 is nothing, the train section implies 'input "
       "labels i64[8]'"},
      {"apply arg grad W f32 2 4 3\napply arg grad b f32 1 3",
       "apply arg grad b f32 1 3\napply arg grad W f32 2 4 3",
       "'apply arg' line 5 is 'grad b f32[3]'"},
      {"apply result state W.exp_avg_sq f32 2 4 3\n", "",
       "'apply result' line 4 is nothing"},
      {"grad result loss loss f32 0",
       "grad result loss loss f32 0\ngrad result grad c f32 0",
       "role 'grad' must come before role 'loss'"},
      {"apply arg hyper lr f32 0", "apply arg input lr f32 0",
       "role 'input' is not allowed in 'apply arg' lines"},
  };
  for (const BadCase &c : cases) {
    SCOPED_TRACE(std::string(c.from) + " -> " + c.to);
    EXPECT_ERROR_CONTAINS(parseDescriptor(withSplit(c.from, c.to), 60),
                          c.message);
  }
  // The halves come after eval, grad before apply.
  std::string applyFirst = withSplit();
  size_t applyPos = applyFirst.find("apply arg param W");
  size_t gradPos = applyFirst.find("grad arg param W");
  std::string gradLines = applyFirst.substr(gradPos, applyPos - gradPos);
  applyFirst.erase(gradPos, gradLines.size());
  applyFirst.insert(applyFirst.find("init b"), gradLines);
  EXPECT_ERROR_CONTAINS(parseDescriptor(applyFirst, 60),
                        "line 'grad' is out of order or repeated");
}

} // namespace

namespace {

/// kValid with its split step, the random key of a model with Dropout added
/// as the last train arg and grad arg.
std::string withRngKey() {
  std::string text = withSplit();
  insertBefore(text, "train result param W", "train arg hyper rng_key i64 0\n");
  insertBefore(text, "grad result grad W", "grad arg hyper rng_key i64 0\n");
  return text;
}

TEST(Descriptor, RngKeyIsAGradStepHyper) {
  Descriptor d = parseDescriptor(withRngKey(), 60);
  EXPECT_TRUE(d.hasHyper("rng_key"));
  EXPECT_EQ(d.gradArgs.back().name, "rng_key");
  EXPECT_EQ(d.gradArgs.back().dtype, DType::I64);
}

TEST(Descriptor, RejectsMalformedRngKey) {
  auto mutated = [](const std::string &from, const std::string &to) {
    return replaceFirst(withRngKey(), from, to);
  };
  const BadCase cases[] = {
      {"train arg hyper rng_key i64 0", "train arg hyper rng_key f32 0",
       "hyper 'rng_key' must be an i64 scalar"},
      {"grad arg hyper rng_key i64 0\n", "",
       "'grad arg' line 5 is nothing, the train section implies 'hyper "
       "rng_key i64[]'"},
      {"apply arg hyper adam_bc2_sqrt f32 0\n",
       "apply arg hyper adam_bc2_sqrt f32 0\napply arg hyper rng_key i64 0\n",
       "'apply arg' line 10 is 'hyper rng_key i64[]', the train section "
       "implies nothing"},
  };
  for (const BadCase &c : cases) {
    SCOPED_TRACE(std::string(c.from) + " -> " + c.to);
    EXPECT_ERROR_CONTAINS(parseDescriptor(mutated(c.from, c.to), 60),
                          c.message);
  }
  std::string keyFirst =
      mutated("train arg hyper rng_key i64 0\n", "");
  keyFirst.insert(keyFirst.find("train arg hyper lr"),
                  "train arg hyper rng_key i64 0\n");
  EXPECT_ERROR_CONTAINS(parseDescriptor(keyFirst, 60),
                        "hyper 'rng_key' must be the last train arg");
}

} // namespace

namespace {

/// kValid with its split step and dynamic loss scaling: the scaler's two
/// states (the scale with an initial value at byte 60), the scale also an
/// arg of grad_step.
std::string withLossScaling() {
  std::string text = withSplit();
  auto lines = [&](const std::string &prefix) {
    return prefix + "state loss_scaler.scale f32 0\n" + prefix +
           "state loss_scaler.growth_tracker f32 0\n";
  };
  insertBefore(text, "train arg input x", lines("train arg "));
  insertBefore(text, "train result loss", lines("train result "));
  insertBefore(text, "grad arg input x", "grad arg state loss_scaler.scale f32 0\n");
  insertBefore(text, "apply arg grad W", lines("apply arg "));
  insertBefore(text, "init b", lines("apply result "));
  insertBefore(text, "end\n", "init loss_scaler.scale 60 4\n");
  return text;
}

TEST(Descriptor, LossScalingStates) {
  Descriptor d = parseDescriptor(withLossScaling(), 64);
  EXPECT_TRUE(d.hasLossScaling());
  EXPECT_FALSE(parseDescriptor(kValid, 60).hasLossScaling());
  ASSERT_EQ(d.stateInits.size(), 1u);
  EXPECT_EQ(d.stateInits[0].name, "loss_scaler.scale");
  EXPECT_EQ(d.stateInits[0].offset, 60u);
}

TEST(Descriptor, RejectsMalformedLossScaling) {
  auto mutated = [](const std::string &from, const std::string &to) {
    return replaceFirst(withLossScaling(), from, to);
  };
  EXPECT_ERROR_CONTAINS(
      parseDescriptor(mutated("grad arg state loss_scaler.scale f32 0\n", ""),
                      64),
      "'grad arg' line 3 is 'input x f32[8, 4]', the train section implies "
      "'state loss_scaler.scale f32[]'");
  std::string wide = withLossScaling();
  for (size_t pos; (pos = wide.find("loss_scaler.growth_tracker f32 0")) !=
                   std::string::npos;)
    wide.replace(pos, 32, "loss_scaler.growth_tracker f64 0");
  EXPECT_ERROR_CONTAINS(parseDescriptor(wide, 64),
                        "state 'loss_scaler.growth_tracker' must be an f32 "
                        "scalar");
}

} // namespace

namespace {

// kValid partitioned for model=2 with W split on its rows (its Adam
// moments follow), b whole.
std::string withMesh(const std::string &lines) {
  std::string text = kValid;
  insertBefore(text, "end\n", lines);
  return text;
}

TEST(Descriptor, MeshAndSplits) {
  Descriptor d = parseDescriptor(withMesh("mesh 1 2\nsplit W 0\n"), 60);
  EXPECT_EQ(d.dataParallel, 1);
  EXPECT_EQ(d.modelParallel, 2);
  const TensorSpec &w = d.trainArgs[0], &b = d.trainArgs[1];
  EXPECT_EQ(w.shape, (Shape{2, 3}));
  EXPECT_EQ(w.splitDim, 0);
  EXPECT_EQ(d.globalShape(w), (Shape{4, 3}));
  EXPECT_EQ(d.globalByteSize(w), 48u);
  EXPECT_EQ(b.shape, (Shape{3}));
  EXPECT_EQ(b.splitDim, -1);
  EXPECT_EQ(d.trainArgs[2].shape, (Shape{2, 3})); // W.exp_avg
  EXPECT_EQ(d.trainResults[0].shape, (Shape{2, 3}));
  EXPECT_EQ(d.evalArgs[0].shape, (Shape{2, 3}));
  // Split along the columns instead.
  Descriptor columns =
      parseDescriptor(withMesh("mesh 1 3\nsplit W 1\n"), 60);
  EXPECT_EQ(columns.trainArgs[0].shape, (Shape{4, 1}));
}

TEST(Descriptor, RejectsMalformedSplits) {
  const std::pair<const char *, const char *> cases[] = {
      {"split W 0\n", "'split' without a 'mesh' line"},
      {"mesh 1\n", "expected 'mesh <data> <model>'"},
      {"mesh 1 0\n", "invalid mesh size '0'"},
      {"mesh 1 2\nsplit W\n", "expected 'split <name> <dimension>'"},
      {"mesh 1 2\nsplit W 0\nsplit W 1\n", "tensor 'W' split twice"},
      {"mesh 1 2\nsplit W 2\n", "split dimension 2 of 'W' is out of range"},
      {"mesh 1 2\nsplit b 0\n", "'b' dimension 0 of size 3 does not split "
                                "over 2 processes"},
      {"mesh 1 2\nsplit V 0\n", "split of unknown param 'V'"},
      {"mesh 1 2\nsplit W 0\nmesh 1 2\n",
       "line 'mesh' is out of order or repeated"},
  };
  for (const auto &[lines, message] : cases) {
    SCOPED_TRACE(lines);
    EXPECT_ERROR_CONTAINS(parseDescriptor(withMesh(lines), 60), message);
  }
}

TEST(Descriptor, Arenas) {
  Descriptor d = parseDescriptor(
      withMesh("arena grad_step 4096\narena train_step 8192\n"), 60);
  ASSERT_EQ(d.arenas.size(), 2u);
  EXPECT_EQ(d.arenas[0].first, "grad_step");
  EXPECT_EQ(d.arenas[1].second, 8192u);
  EXPECT_EQ(d.largestArena(), 8192u);
  EXPECT_EQ(parseDescriptor(kValid, 60).largestArena(), 0u);
}

TEST(Descriptor, RejectsMalformedArenas) {
  const std::pair<const char *, const char *> cases[] = {
      {"arena train_step\n", "expected 'arena <function> <bytes>'"},
      {"arena train_step 1 2\n", "expected 'arena <function> <bytes>'"},
      {"arena train_step -4\n", "invalid arena bytes '-4'"},
      {"arena train_step 64\narena train_step 64\n",
       "arena of 'train_step' given twice"},
      {"arena train_step 64\nmesh 1 2\n",
       "line 'mesh' is out of order or repeated"},
  };
  for (const auto &[lines, message] : cases) {
    SCOPED_TRACE(lines);
    EXPECT_ERROR_CONTAINS(parseDescriptor(withMesh(lines), 60), message);
  }
}

TEST(Descriptor, InPlaceUpdates) {
  Descriptor d = parseDescriptor(
      withMesh("arena train_step 64\ninplace W\ninplace W.exp_avg\n"), 60);
  EXPECT_EQ(d.inPlace, (std::set<std::string>{"W", "W.exp_avg"}));
  EXPECT_TRUE(parseDescriptor(kValid, 60).inPlace.empty());
}

TEST(Descriptor, RejectsMalformedInPlaceLines) {
  const std::pair<const char *, const char *> cases[] = {
      {"inplace\n", "expected 'inplace <name>'"},
      {"inplace W b\n", "expected 'inplace <name>'"},
      {"inplace W\ninplace W\n", "'W' updated in place twice"},
      {"inplace x\n", "'x' is updated in place but is no param or state"},
      {"inplace V\n", "'V' is updated in place but is no param or state"},
      {"inplace W\narena train_step 64\n",
       "line 'arena' is out of order or repeated"},
  };
  for (const auto &[lines, message] : cases) {
    SCOPED_TRACE(lines);
    EXPECT_ERROR_CONTAINS(parseDescriptor(withMesh(lines), 60), message);
  }
}

TEST(Descriptor, ProfileRegions) {
  Descriptor d = parseDescriptor(
      withMesh("inplace W\nprofile 0 train_step loop /fc/Add\n"
               "profile 1 train_step matmul_f32 /fc/MatMul(backward)\n"),
      60);
  ASSERT_EQ(d.profileRegions.size(), 2u);
  EXPECT_EQ(d.profileRegions[1].function, "train_step");
  EXPECT_EQ(d.profileRegions[1].kind, "matmul_f32");
  EXPECT_EQ(d.profileRegions[1].label, "/fc/MatMul(backward)");
  EXPECT_TRUE(parseDescriptor(kValid, 60).profileRegions.empty());
}

TEST(Descriptor, RejectsMalformedProfileLines) {
  const std::pair<const char *, const char *> cases[] = {
      {"profile 0 train_step loop\n",
       "expected 'profile <index> <function> <kind> <label>'"},
      {"profile 0 train_step loop a b\n",
       "expected 'profile <index> <function> <kind> <label>'"},
      {"profile 1 train_step loop a\n",
       "profile regions out of order at '1'"},
      {"profile 0 train_step loop a\nprofile 0 train_step loop a\n",
       "profile regions out of order at '0'"},
      {"profile x train_step loop a\n", "invalid profile region 'x'"},
      {"profile 0 train_step loop a\ninplace W\n",
       "line 'inplace' is out of order or repeated"},
  };
  for (const auto &[lines, message] : cases) {
    SCOPED_TRACE(lines);
    EXPECT_ERROR_CONTAINS(parseDescriptor(withMesh(lines), 60), message);
  }
}

/// kValid with a third param `c` f32[3] (initial value at byte 60).
std::string withParamC(const std::string &lines) {
  std::string text = kValid;
  for (const char *prefix : {"train arg ", "train result ", "eval arg "}) {
    std::string b = std::string(prefix) + "param b f32 1 3\n";
    text.insert(text.find(b) + b.size(), std::string(prefix) + "param c f32 1 3\n");
  }
  insertBefore(text, "end\n", "init c 60 12\n" + lines);
  return text;
}

TEST(Descriptor, Joins) {
  Descriptor d = parseDescriptor(withParamC("join bc b c\n"), 72);
  ASSERT_EQ(d.joins.size(), 1u);
  EXPECT_EQ(d.joins[0].name, "bc");
  EXPECT_EQ(d.joins[0].pieces, (std::vector<std::string>{"b", "c"}));
  EXPECT_TRUE(parseDescriptor(kValid, 60).joins.empty());
}

TEST(Descriptor, RejectsMalformedJoins) {
  const std::pair<const char *, const char *> cases[] = {
      {"join bc b\n", "expected 'join <name> <piece> <piece>...'"},
      {"join bc b nope\n", "join 'bc': 'nope' is not a param"},
      {"join W b c\n", "joined tensor 'W' is also a param"},
      {"join bc b c\njoin bc b c\n", "'bc' joined twice"},
      {"join bc b c\njoin cb c b\n", "param 'c' joined twice"},
      {"join Wb W b\n", "join 'Wb': 'b' is f32[3], 'W' is f32[4, 3]"},
      {"join bc b c\nmesh 1 2\ninit c 60 12\n",
       "line 'init' is out of order or repeated"},
  };
  for (const auto &[lines, message] : cases) {
    SCOPED_TRACE(lines);
    EXPECT_ERROR_CONTAINS(parseDescriptor(withParamC(lines), 72), message);
  }
}

} // namespace

namespace {

/// withSplit() with every param's Adam state (b's too, as lmc-optimizer
/// emits it) and the chunk_step of ZeRO-1 over chunks of 32 floats.
std::string withChunk(const std::string &from = "", const std::string &to = "") {
  std::string text = withSplit();
  const std::string bState = "state b.exp_avg f32 1 3\nXstate b.exp_avg_sq f32 1 3\n";
  auto bStates = [&](const std::string &prefix) {
    std::string lines = prefix + bState;
    return lines.replace(lines.find('X'), 1, prefix);
  };
  for (const char *prefix : {"train arg ", "train result ", "apply arg ",
                             "apply result "}) {
    // After W's last state line.
    std::string after = std::string(prefix) + "state W.exp_avg_sq f32 2 4 3\n";
    size_t pos = text.find(after);
    EXPECT_NE(pos, std::string::npos) << after;
    text.insert(pos + after.size(), bStates(prefix));
  }
  std::string chunk = "chunk arg param chunk f32 1 32\n"
                      "chunk arg state chunk.exp_avg f32 1 32\n"
                      "chunk arg state chunk.exp_avg_sq f32 1 32\n"
                      "chunk arg grad chunk f32 1 32\n"
                      "chunk arg hyper lr f32 0\n"
                      "chunk arg hyper adam_step_size f32 0\n"
                      "chunk arg hyper adam_bc2_sqrt f32 0\n"
                      "chunk arg grad_norm grad_norm f32 0\n"
                      "chunk result param chunk f32 1 32\n"
                      "chunk result state chunk.exp_avg f32 1 32\n"
                      "chunk result state chunk.exp_avg_sq f32 1 32\n";
  if (!from.empty())
    chunk = replaceFirst(chunk, from, to);
  insertBefore(text, "init b", chunk);
  return text;
}

TEST(Descriptor, ChunkStep) {
  Descriptor d = parseDescriptor(withChunk(), 60);
  EXPECT_TRUE(d.hasChunkStep());
  EXPECT_EQ(d.chunkElements(), 32);
  ASSERT_EQ(d.chunkArgs.size(), 8u);
  EXPECT_EQ(d.chunkArgs.back().role, Role::GradNorm);
  EXPECT_EQ(d.chunkResults.size(), 3u);
  EXPECT_FALSE(parseDescriptor(withSplit(), 60).hasChunkStep());
}

TEST(Descriptor, RejectsMalformedChunkStep) {
  const BadCase cases[] = {
      {"chunk arg param chunk f32 1 32", "chunk arg param chunk f32 1 24",
       "a chunk of 24 floats is not whole 64-byte lines"},
      {"chunk arg param chunk f32 1 32", "chunk arg param chunk f32 2 4 8",
       "the first 'chunk arg' must be 'param chunk f32 1 <elements>'"},
      {"chunk arg state chunk.exp_avg f32", "chunk arg state exp_avg f32",
       "chunk state 'exp_avg' is not named chunk.<slot>"},
      {"chunk arg state chunk.exp_avg_sq f32 1 32\n", "",
       "the train step has 4 states, the chunk slots imply 2"},
      {"chunk arg state chunk.exp_avg_sq", "chunk arg state chunk.momentum",
       "param 'W' has no state 'W.momentum' for 'chunk.momentum'"},
      {"chunk arg grad chunk f32 1 32", "chunk arg grad chunk f32 1 64",
       "'chunk arg' line 4 is 'grad chunk f32[64]', the apply section "
       "implies 'grad chunk f32[32]'"},
      {"chunk arg grad_norm grad_norm f32 0\n", "",
       "'chunk arg' line 8 is nothing, the apply section implies "
       "'grad_norm grad_norm f32[]'"},
      {"chunk result state chunk.exp_avg f32 1 32\n", "",
       "'chunk result' line 2 is 'state chunk.exp_avg_sq f32[32]', the chunk "
       "arg section implies 'state chunk.exp_avg f32[32]'"},
      {"chunk arg hyper lr f32 0", "chunk arg input lr f32 0",
       "role 'input' is not allowed in 'chunk arg' lines"},
  };
  for (const BadCase &c : cases) {
    SCOPED_TRACE(std::string(c.from) + " -> " + c.to);
    EXPECT_ERROR_CONTAINS(parseDescriptor(withChunk(c.from, c.to), 60),
                          c.message);
  }
  // Chunk lines need the split step.
  std::string noSplit = withChunk();
  noSplit.erase(noSplit.find("grad arg param W"),
                noSplit.find("chunk arg param") - noSplit.find("grad arg param W"));
  EXPECT_ERROR_CONTAINS(parseDescriptor(noSplit, 60),
                        "'chunk' lines need 'grad' and 'apply' lines");
}

// The schema both sides take their keywords from: each keyword names its
// line kind and no other, tensor lines are `<step> arg|result`.
TEST(DescriptorLines, EachKeywordNamesItsKind) {
  using lmc::descriptor::Line;
  for (int i = 0; i <= static_cast<int>(Line::End); ++i) {
    Line line = static_cast<Line>(i);
    std::string words = lmc::descriptor::keyword(line);
    SCOPED_TRACE(words);
    size_t space = words.find(' ');
    std::string first = words.substr(0, space);
    std::string second = space == std::string::npos ? "" : words.substr(space + 1);
    EXPECT_EQ(lmc::descriptor::lineNamed(first, second), line);
    EXPECT_EQ(lmc::descriptor::isTensorLine(line), !second.empty());
    if (!second.empty())
      EXPECT_EQ(lmc::descriptor::tensorLine(first, second == "result"), line);
  }
  EXPECT_EQ(lmc::descriptor::lineNamed("train", "args"), std::nullopt);
  EXPECT_EQ(lmc::descriptor::lineNamed("losses", ""), std::nullopt);
  EXPECT_EQ(lmc::descriptor::tensorLine("optimizer", false), std::nullopt);
}

// The reader knows every kind the schema names: a line of each, without
// its fields, is refused for what it lacks or where it stands, never as an
// unknown line.
TEST(DescriptorLines, TheReaderKnowsEveryKind) {
  using lmc::descriptor::Line;
  for (int i = static_cast<int>(Line::Loss); i < static_cast<int>(Line::End);
       ++i) {
    std::string words = lmc::descriptor::keyword(static_cast<Line>(i));
    SCOPED_TRACE(words);
    std::string text = kValid;
    insertBefore(text, "end\n", words + "\n");
    try {
      parseDescriptor(text, 60);
      ADD_FAILURE() << "a bare '" << words << "' line was accepted";
    } catch (const Error &e) {
      EXPECT_EQ(std::string(e.what()).find("unknown line"), std::string::npos)
          << e.what();
    }
  }
  std::string unknown = kValid;
  insertBefore(unknown, "end\n", "losses\n");
  EXPECT_ERROR_CONTAINS(parseDescriptor(unknown, 60), "unknown line 'losses'");
}

} // namespace
