#include "io/hf_checkpoint.h"

#include "io/file_io.h"
#include "io/peft_adapter.h"

#include "test_util.h"

#include <filesystem>
#include <unistd.h>

using namespace lmc::rt;
using namespace lmc::rt::test;

namespace fs = std::filesystem;

namespace {

std::string tempDir() {
  char dirTemplate[] = "/tmp/lmc-hf-XXXXXX";
  if (!mkdtemp(dirTemplate))
    throw Error("mkdtemp failed");
  return dirTemplate;
}

void writeText(const fs::path &path, const std::string &text) {
  writeFileAtomically(path.string(), {{text.data(), text.size()}});
}

std::string readText(const fs::path &path) {
  std::vector<uint8_t> bytes = readFile(path.string());
  return std::string(bytes.begin(), bytes.end());
}

std::vector<float> a = {1, 2, 3, 4}, b = {5, 6}, c = {7};

std::vector<TensorView> threeTensors() {
  return {{"model.a", DType::F32, {2, 2}, a.data()},
          {"model.b", DType::F32, {2}, b.data()},
          {"lm_head.c", DType::F32, {1}, c.data()}};
}

/// A sharded checkpoint: shard 1 holds model.a, shard 2 the others.
std::string shardedCheckpoint(const std::string &index) {
  std::string dir = tempDir();
  std::vector<TensorView> t = threeTensors();
  writeSafetensorsFile(dir + "/s1.safetensors", {t[0]}, {});
  writeSafetensorsFile(dir + "/s2.safetensors", {t[1], t[2]}, {});
  writeText(fs::path(dir) / kHfIndexName, index);
  return dir;
}

const char *kGoodIndex =
    R"({"metadata": {"total_size": 28}, "weight_map": {"model.a": )"
    R"("s1.safetensors", "model.b": "s2.safetensors", "lm_head.c": )"
    R"("s2.safetensors"}})";

} // namespace

TEST(HfCheckpoint, ReadsADirectoryWithShards) {
  std::string dir = shardedCheckpoint(kGoodIndex);
  HfCheckpoint checkpoint = readHfCheckpoint(dir);
  EXPECT_EQ(checkpoint.directory, dir);
  ASSERT_EQ(checkpoint.shards.size(), 2u);
  EXPECT_EQ(checkpoint.shards[0].tensors.size(), 1u);
  EXPECT_EQ(checkpoint.shards[1].tensors.size(), 2u);
  // The index itself, too.
  EXPECT_EQ(readHfCheckpoint(dir + "/" + kHfIndexName).shards.size(), 2u);
}

TEST(HfCheckpoint, ReadsOneFileAndItsDirectory) {
  std::string dir = tempDir();
  writeSafetensorsFile(dir + "/" + kHfWeightsName, threeTensors(), {});
  HfCheckpoint fromDir = readHfCheckpoint(dir);
  ASSERT_EQ(fromDir.shards.size(), 1u);
  EXPECT_EQ(fromDir.shards[0].tensors.size(), 3u);
  HfCheckpoint fromFile = readHfCheckpoint(dir + "/" + kHfWeightsName);
  EXPECT_EQ(fromFile.directory, dir);
  EXPECT_FALSE(hasHfConfig(dir));
  writeText(fs::path(dir) / "config.json", "{}");
  EXPECT_TRUE(hasHfConfig(dir));
}

TEST(HfCheckpoint, ReadsAPeftAdapterDirectory) {
  std::string dir = tempDir();
  writeSafetensorsFile(dir + "/" + kPeftWeightsName, threeTensors(), {});
  HfCheckpoint adapters = readHfCheckpoint(dir);
  ASSERT_EQ(adapters.shards.size(), 1u);
  EXPECT_EQ(adapters.shards[0].tensors.size(), 3u);
  // A model's weights come first where both are.
  writeSafetensorsFile(dir + "/" + kHfWeightsName, {threeTensors()[0]}, {});
  EXPECT_EQ(readHfCheckpoint(dir).shards[0].tensors.size(), 1u);
}

TEST(PeftAdapter, ConfigRoundTripAndMalformed) {
  std::string dir = tempDir();
  EXPECT_FALSE(readPeftLoraConfig(dir)); // no adapter_config.json
  std::vector<float> a(8, 0.5f), b(8, 0.25f);
  writePeftAdapter(dir,
                   {{"m.l.q_proj.lora_A.weight", DType::F32, {2, 4}, a.data()},
                    {"m.l.q_proj.lora_B.weight", DType::F32, {4, 2}, b.data()}},
                   {2, 4.0, 0.05, true, true}, "m.");
  std::optional<PeftLoraConfig> config = readPeftLoraConfig(dir);
  ASSERT_TRUE(config);
  EXPECT_EQ(config->rank, 2);
  EXPECT_EQ(config->alpha, 4.0);
  EXPECT_EQ(config->dropout, 0.05);
  EXPECT_TRUE(config->rslora);
  EXPECT_TRUE(config->fanInFanOut);
  HfCheckpoint adapters = readHfCheckpoint(dir);
  EXPECT_TRUE(adapters.shards[0].find("base_model.model.l.q_proj.lora_A.weight"));
  const std::pair<const char *, const char *> bad[] = {
      {"{\"peft_type\": \"LORA\", \"r\": 2", "invalid JSON"},
      {"{\"peft_type\": \"IA3\", \"r\": 2, \"lora_alpha\": 4}",
       "not a LoRA adapter's config"},
      {"{\"peft_type\": \"LORA\", \"lora_alpha\": 4}",
       "not a LoRA adapter's config"},
      {"{\"peft_type\": \"LORA\", \"r\": 2.5, \"lora_alpha\": 4}",
       "not a LoRA adapter's config"},
      {"[1]", "not a LoRA adapter's config"},
  };
  for (const auto &[text, message] : bad) {
    SCOPED_TRACE(text);
    writeText(fs::path(dir) / "adapter_config.json", text);
    EXPECT_ERROR_CONTAINS(readPeftLoraConfig(dir), message);
  }
  // An adapter of another module than its pair, or a trained tensor that
  // is no adapter, cannot be written.
  EXPECT_ERROR_CONTAINS(
      writePeftAdapter(dir, {{"m.l.q_proj.weight", DType::F32, {2, 4},
                              a.data()}},
                       {2, 4.0, 0, false, false}, "m."),
      "trains beside the adapters");
  EXPECT_ERROR_CONTAINS(
      writePeftAdapter(dir, {{"m.l.q_proj.lora_A.weight", DType::F32, {2, 4},
                              a.data()}},
                       {2, 4.0, 0, false, false}, "m."),
      "module 'l.q_proj' has only one of lora_A and lora_B");
}

TEST(HfCheckpoint, RejectsMalformedIndexes) {
  EXPECT_ERROR_CONTAINS(readHfCheckpoint(tempDir()),
                        "a directory without model.safetensors, "
                        "model.safetensors.index.json or "
                        "adapter_model.safetensors");
  EXPECT_ERROR_CONTAINS(readHfCheckpoint(shardedCheckpoint("[1, 2]")),
                        "expected an object with a \"weight_map\" object");
  EXPECT_ERROR_CONTAINS(readHfCheckpoint(shardedCheckpoint("{\"weight_map\"")),
                        "invalid JSON");
  EXPECT_ERROR_CONTAINS(
      readHfCheckpoint(shardedCheckpoint(R"({"weight_map": {"model.a": 3}})")),
      "weight_map['model.a'] must be a shard file name");
  EXPECT_ERROR_CONTAINS(
      readHfCheckpoint(shardedCheckpoint(R"({"weight_map": {}})")),
      "the weight_map lists no tensors");
  EXPECT_ERROR_CONTAINS(
      readHfCheckpoint(shardedCheckpoint(
          R"({"weight_map": {"model.a": "../s1.safetensors"}})")),
      "must be a file name in the index's directory");
  // The index puts model.b in the shard that lacks it.
  EXPECT_ERROR_CONTAINS(
      readHfCheckpoint(shardedCheckpoint(
          R"({"weight_map": {"model.a": "s1.safetensors", "model.b": )"
          R"("s1.safetensors", "lm_head.c": "s2.safetensors"}})")),
      "the index puts 'model.b' in 's1.safetensors', which lacks it");
  EXPECT_ERROR_CONTAINS(
      readHfCheckpoint(shardedCheckpoint(
          R"({"weight_map": {"model.a": "missing.safetensors"}})")),
      "missing.safetensors");
  // A name in two shards.
  std::string dir = shardedCheckpoint(
      R"({"weight_map": {"model.a": "s1.safetensors", "model.b": "s3.safetensors"}})");
  std::vector<TensorView> t = threeTensors();
  writeSafetensorsFile(dir + "/s3.safetensors", {t[0], t[1]}, {});
  EXPECT_ERROR_CONTAINS(readHfCheckpoint(dir),
                        "tensor 'model.a' is in both 's1.safetensors' and "
                        "'s3.safetensors'");
}

TEST(HfCheckpoint, WritesShardsAnIndexAndTheConfig) {
  std::string source = tempDir(), out = tempDir();
  writeText(fs::path(source) / "config.json",
            "{\"architectures\": [\"Qwen2ForCausalLM\"], \"tie_word_embeddings\""
            ": true, \"rms_norm_eps\": 1e-06, \"torch_dtype\": \"bfloat16\", "
            "\"text_config\": {\"dtype\":\"float16\"}}");
  writeText(fs::path(source) / "tokenizer.json", "{\"version\": \"1.0\"}");
  // A stale single file of an earlier save, and a file that is not ours.
  writeText(fs::path(out) / kHfWeightsName, "stale");
  writeText(fs::path(out) / "notes.txt", "kept");

  // 16 + 8 + 4 bytes with at most 16 per shard: [a], [b, c].
  writeHfCheckpoint(out, threeTensors(), 16, source);
  EXPECT_FALSE(fs::exists(fs::path(out) / kHfWeightsName));
  EXPECT_TRUE(fs::exists(fs::path(out) / "notes.txt"));
  EXPECT_EQ(readText(fs::path(out) / "tokenizer.json"), "{\"version\": \"1.0\"}");
  EXPECT_EQ(readText(fs::path(out) / "config.json"),
            "{\"architectures\": [\"Qwen2ForCausalLM\"], \"tie_word_embeddings\""
            ": true, \"rms_norm_eps\": 1e-06, \"torch_dtype\": \"float32\", "
            "\"text_config\": {\"dtype\":\"float32\"}}");
  EXPECT_EQ(readText(fs::path(out) / kHfIndexName),
            "{\n  \"metadata\": {\n    \"total_size\": 28\n  },\n"
            "  \"weight_map\": {\n"
            "    \"lm_head.c\": \"model-00002-of-00002.safetensors\",\n"
            "    \"model.a\": \"model-00001-of-00002.safetensors\",\n"
            "    \"model.b\": \"model-00002-of-00002.safetensors\"\n  }\n}\n");
  // The index lists shard 2 first (its names sort first).
  HfCheckpoint back = readHfCheckpoint(out);
  ASSERT_EQ(back.shards.size(), 2u);
  EXPECT_EQ(fs::path(back.shardPaths[0]).filename(),
            "model-00002-of-00002.safetensors");
  const SafetensorsTensor *tb = back.shards[0].find("model.b");
  ASSERT_TRUE(tb);
  EXPECT_EQ(back.shards[0].metadata.at("format"), "pt");
  const float *values =
      reinterpret_cast<const float *>(back.shards[0].data(*tb));
  EXPECT_EQ(values[0], 5.0f);
  EXPECT_EQ(values[1], 6.0f);

  // Saved again under the default size: one file, the shards removed.
  writeHfCheckpoint(out, threeTensors(), kHfDefaultShardBytes, source);
  EXPECT_TRUE(fs::exists(fs::path(out) / kHfWeightsName));
  EXPECT_FALSE(fs::exists(fs::path(out) / kHfIndexName));
  EXPECT_FALSE(fs::exists(fs::path(out) / "model-00001-of-00002.safetensors"));
  EXPECT_EQ(readHfCheckpoint(out).shards[0].tensors.size(), 3u);
}
