#include "model/init_matching.h"

#include "test_util.h"

#include <cmath>
#include <cstring>

using namespace lmc::rt;

namespace {

TensorSpec param(const char *name, Shape shape) {
  TensorSpec s;
  s.role = Role::Param;
  s.name = name;
  s.shape = std::move(shape);
  return s;
}

/// A parsed file of `(name, dtype, raw little-endian values)` tensors.
SafetensorsFile fileOf(
    const std::vector<std::tuple<std::string, std::string, Shape,
                                 std::vector<uint16_t>>> &tensors) {
  SafetensorsFile file;
  for (const auto &[name, dtype, shape, halves] : tensors) {
    SafetensorsTensor t;
    t.name = name;
    t.dtype = dtype;
    t.shape = shape;
    t.begin = file.bytes.size();
    for (uint16_t h : halves) {
      file.bytes.push_back(uint8_t(h));
      file.bytes.push_back(uint8_t(h >> 8));
    }
    t.end = file.bytes.size();
    file.tensors.push_back(t);
  }
  return file;
}

std::vector<float> floatsOf(const MatchedInit &m, size_t i) {
  const SafetensorsTensor &t = m.file.tensors[i];
  std::vector<float> out((t.end - t.begin) / sizeof(float));
  std::memcpy(out.data(), m.file.data(t), t.end - t.begin);
  return out;
}

TEST(InitMatching, HuggingFaceNamesAndBf16) {
  // save_pretrained's names carry `transformer.`, the tied head is there
  // too; the export's names lack the prefix.
  SafetensorsFile file = fileOf({
      {"transformer.h.0.ln_1.weight", "BF16", {2}, {0x3f80, 0xc000}},
      {"transformer.wte.weight", "BF16", {2}, {0x4040, 0x0000}},
      {"lm_head.weight", "BF16", {2}, {0x4040, 0x0000}},
  });
  TensorSpec ln = param("h.0.ln_1.weight", {2}), wte = param("wte.weight", {2});
  MatchedInit m = matchInitTensors(file, {&ln, &wte}, "model.safetensors");
  ASSERT_EQ(m.file.tensors.size(), 2u);
  EXPECT_EQ(m.file.tensors[0].name, "h.0.ln_1.weight");
  EXPECT_EQ(m.file.tensors[0].dtype, "F32");
  EXPECT_EQ(floatsOf(m, 0), (std::vector<float>{1.0f, -2.0f}));
  EXPECT_EQ(floatsOf(m, 1), (std::vector<float>{3.0f, 0.0f}));
  EXPECT_EQ(m.summary,
            "--init model.safetensors: 2 tensors matched (0 by exact name, 2 "
            "by a name suffix, e.g. 'h.0.ln_1.weight' = "
            "'transformer.h.0.ln_1.weight'), 2 widened from BF16 to F32; 1 "
            "tensor of the file unused: 'lm_head.weight'");
}

TEST(InitMatching, PeftAdaptersAndABf16Base) {
  // PEFT saves adapters as base_model.model.<module>...: an export of a
  // wrapper (`m.`) matches them without that prefix.
  SafetensorsFile adapters = fileOf({
      {"base_model.model.model.q_proj.lora_A.weight", "BF16", {1}, {0x3f80}},
  });
  TensorSpec a = param("m.model.q_proj.lora_A.weight", {1});
  MatchedInit m = matchInitTensors(adapters, {&a}, "adapter");
  ASSERT_EQ(m.file.tensors.size(), 1u);
  EXPECT_EQ(m.file.tensors[0].name, "m.model.q_proj.lora_A.weight");
  EXPECT_EQ(floatsOf(m, 0), (std::vector<float>{1.0f}));
  EXPECT_EQ(countMatchable({&adapters}, {&a}), 1u);
  // A bf16 tensor (--base-precision bf16) from F16 values is rounded to
  // nearest even: f16 0x3c01 = 1 + 2^-10 is 1 in bf16; -2 stays.
  SafetensorsFile base = fileOf({{"q.weight", "F16", {2}, {0x3c01, 0xc000}}});
  TensorSpec w = param("q.weight", {2});
  w.dtype = DType::BF16;
  MatchedInit rounded = matchInitTensors(base, {&w}, "base");
  EXPECT_EQ(rounded.file.tensors[0].dtype, "BF16");
  uint16_t bits[2];
  std::memcpy(bits, rounded.file.data(rounded.file.tensors[0]), sizeof bits);
  EXPECT_EQ(bits[0], 0x3f80);
  EXPECT_EQ(bits[1], 0xc000);
  EXPECT_NE(rounded.summary.find("1 rounded from F16 to BF16"),
            std::string::npos)
      << rounded.summary;
  // Nothing of the base's in the adapter file.
  EXPECT_EQ(countMatchable({&adapters}, {&w}), 0u);
}

TEST(InitMatching, WrapperPrefixExactFirstAndF16) {
  // The export of a wrapper module: `m.` before HF's own names. An exact
  // name wins over a suffix match.
  SafetensorsFile file = fileOf({
      {"transformer.h.0.bias", "F16", {3}, {0x3c00, 0x0001, 0xfc00}},
      {"head.w", "F16", {1}, {0x4000}},
      {"x.head.w", "F16", {1}, {0x4200}},
  });
  TensorSpec bias = param("m.transformer.h.0.bias", {3}),
             head = param("head.w", {1});
  MatchedInit m = matchInitTensors(file, {&bias, &head}, "f.st");
  std::vector<float> b = floatsOf(m, 0);
  EXPECT_EQ(b[0], 1.0f);
  EXPECT_EQ(b[1], 5.9604644775390625e-08f); // the smallest subnormal
  EXPECT_TRUE(std::isinf(b[2]) && b[2] < 0);
  EXPECT_EQ(floatsOf(m, 1), (std::vector<float>{2.0f}));
  EXPECT_NE(m.summary.find("1 by exact name, 1 by a name suffix"),
            std::string::npos);
  EXPECT_NE(m.summary.find("unused: 'x.head.w'"), std::string::npos);
}

TEST(InitMatching, TiedHeadReadsTheEmbedding) {
  // torch.export kept the tied weight as `m.lm_head.weight`; the file has
  // only the embedding.
  SafetensorsFile file = fileOf({{"transformer.wte.weight", "F32", {1}, {0, 0x4000}}});
  TensorSpec head = param("m.lm_head.weight", {1});
  MatchedInit m = matchInitTensors(file, {&head}, "f.st");
  EXPECT_EQ(floatsOf(m, 0), (std::vector<float>{2.0f}));
  EXPECT_NE(m.summary.find("1 tied ('m.lm_head.weight' = "
                           "'transformer.wte.weight')"),
            std::string::npos)
      << m.summary;
  EXPECT_EQ(m.summary.find("unused"), std::string::npos);
}

TEST(InitMatching, EveryUnmatchedAndAmbiguousTensorNamed) {
  SafetensorsFile file = fileOf({
      {"a.weight", "BF16", {1}, {0}},
      {"b.weight", "BF16", {1}, {0}},
      {"wweight", "BF16", {1}, {0}}, // no '.' boundary: not a match
  });
  TensorSpec w = param("weight", {1}), x = param("x", {1}),
             y = param("h.y", {1});
  EXPECT_ERROR_CONTAINS(
      matchInitTensors(file, {&w, &x, &y}, "f.st"),
      "f.st: no tensor for 2 of the model's 3 ('x', 'h.y'); ambiguous: "
      "'weight' ('a.weight', 'b.weight'); names match exactly or as a "
      "suffix at a '.'");
}

TEST(InitMatching, OneFileTensorServesOneParameter) {
  SafetensorsFile file = fileOf({{"t.ln.bias", "F32", {1}, {0, 0}}});
  // 'ln.bias' and 'bias' are both suffixes at a '.' of its one tensor.
  TensorSpec a = param("ln.bias", {1}), b = param("bias", {1});
  EXPECT_ERROR_CONTAINS(matchInitTensors(file, {&a, &b}, "f.st"),
                        "'t.ln.bias' matches several parameters ('ln.bias', "
                        "'bias')");
}

} // namespace

TEST(InitMatching, ShardsAndTheNamesToSaveUnder) {
  // A sharded checkpoint: the embedding in one shard, a norm in the other;
  // the tied head beside its own embedding saves back as lm_head.weight,
  // the others under the file's names.
  SafetensorsFile first = fileOf({{"model.embed_tokens.weight", "F32", {1}, {0, 0x4000}}});
  SafetensorsFile second = fileOf({{"model.norm.weight", "F32", {1}, {0, 0x3f80}}});
  TensorSpec head = param("lm_head.weight", {1}),
             norm = param("m.model.norm.weight", {1}),
             embedding = param("m.model.embed_tokens.weight", {1});
  MatchedInit m = matchInitTensors(
      std::vector<const SafetensorsFile *>{&first, &second},
      {&head, &norm, &embedding}, "dir");
  EXPECT_EQ(floatsOf(m, 0), (std::vector<float>{2.0f}));
  EXPECT_EQ(floatsOf(m, 1), (std::vector<float>{1.0f}));
  EXPECT_EQ(m.sourceNames,
            (std::vector<std::string>{"lm_head.weight", "model.norm.weight",
                                      "model.embed_tokens.weight"}));
  // An export that shares one tensor (named for the head) saves it as
  // save_pretrained does: under the embedding's name.
  MatchedInit shared = matchInitTensors(
      std::vector<const SafetensorsFile *>{&first, &second}, {&head, &norm},
      "dir");
  EXPECT_EQ(shared.sourceNames,
            (std::vector<std::string>{"model.embed_tokens.weight",
                                      "model.norm.weight"}));
}
