#include "train/tokens.h"

#include "io/file_io.h"
#include "memory/buffer.h"
#include "model/descriptor.h"
#include "test_util.h"

#include <cstdio>
#include <cstdlib>
#include <unistd.h>

using namespace lmc::rt;
using lmc::rt::test::toBytes;

namespace {

std::vector<uint8_t> llmcFile(int32_t magic, int32_t count,
                              const std::vector<uint8_t> &tokens) {
  std::vector<int32_t> header(256, 0);
  header[0] = magic;
  header[1] = magic == kLlmcMagicU16 ? 1 : 7;
  header[2] = count;
  std::vector<uint8_t> out = toBytes(header);
  out.insert(out.end(), tokens.begin(), tokens.end());
  return out;
}

std::vector<uint8_t> u16(const std::vector<uint16_t> &v) { return toBytes(v); }

TEST(Tokens, Formats) {
  TokenShard a = parseTokenShard(llmcFile(kLlmcMagicU16, 3, u16({5, 6, 65535})));
  EXPECT_EQ(a.numTokens, 3);
  EXPECT_EQ(a.token(2), 65535u);
  TokenShard b = parseTokenShard(
      llmcFile(kLlmcMagicU32, 2, toBytes(std::vector<uint32_t>{70000, 1})));
  EXPECT_EQ(b.width, 4);
  EXPECT_EQ(b.token(0), 70000u);
  TokenShard raw = parseTokenShard(u16({1, 2, 3, 4}));
  EXPECT_EQ(raw.numTokens, 4);
  EXPECT_EQ(raw.dataOffset, 0u);
  EXPECT_EQ(raw.token(3), 4u);
}

TEST(Tokens, Malformed) {
  EXPECT_ERROR_CONTAINS(parseTokenShard(llmcFile(kLlmcMagicU16, 4, u16({1}))),
                        "llm.c header says 4 tokens of 2 bytes (file size "
                        "1032) but the file has 1026 bytes");
  std::vector<uint8_t> shortHeader = llmcFile(kLlmcMagicU16, 0, {});
  shortHeader.resize(100);
  EXPECT_ERROR_CONTAINS(parseTokenShard(shortHeader), "is truncated");
  EXPECT_ERROR_CONTAINS(parseTokenShard(llmcFile(kLlmcMagicU16, -1, {})),
                        "negative token count");
  EXPECT_ERROR_CONTAINS(parseTokenShard({1, 2, 3}), "size 3 is odd");
  EXPECT_ERROR_CONTAINS(readTokenShard("/nonexistent.bin"),
                        "cannot open '/nonexistent.bin'");
  EXPECT_ERROR_CONTAINS(expandGlob("/nonexistent/*.bin", "--tokens"),
                        "--tokens '/nonexistent/*.bin': no such file");
}

TEST(Tokens, WindowsFillInputsAndTargets) {
  // Model: idx i64[2, 3], targets i32[2, 3] (the target may be either
  // column).
  const char *text = "lmc-model 1\nloss cross_entropy\noptimizer sgd\n"
                     "flops 0\n"
                     "train arg input targets i32 2 2 3\n"
                     "train arg input idx i64 2 2 3\n"
                     "train result loss loss f32 0\nend\n";
  Descriptor desc = parseDescriptor(text, 0);
  auto specs = desc.trainArgsWithRole(Role::Input);
  std::vector<TokenShard> shards;
  shards.push_back(parseTokenShard(u16({0, 1, 2, 3, 4, 5, 6, 7}))); // 2 windows
  shards.push_back(parseTokenShard(llmcFile(kLlmcMagicU16, 3, u16({9, 9, 9}))));
  shards.push_back(parseTokenShard(llmcFile(kLlmcMagicU16, 4, u16({10, 11, 12, 13}))));
  TokenDataset data = TokenDataset::fromShards(std::move(shards), specs, "--tokens");
  EXPECT_EQ(data.numSamples(), 3); // [0..3], [3..6], [10..13]
  EXPECT_EQ(data.tokensPerSample(), 3);
  std::vector<AlignedBuffer> buffers;
  buffers.emplace_back(specs[0]->byteSize());
  buffers.emplace_back(specs[1]->byteSize());
  data.fillBatch({1, 2}, buffers);
  const int32_t *targets = buffers[0].as<int32_t>();
  const int64_t *idx = buffers[1].as<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(idx, idx + 6),
            (std::vector<int64_t>{3, 4, 5, 10, 11, 12}));
  EXPECT_EQ(std::vector<int32_t>(targets, targets + 6),
            (std::vector<int32_t>{4, 5, 6, 11, 12, 13}));

  std::vector<TokenShard> tiny;
  tiny.push_back(parseTokenShard(u16({1, 2, 3})));
  EXPECT_ERROR_CONTAINS(TokenDataset::fromShards(std::move(tiny), specs, "--tokens"),
                        "no shard holds one window of T+1 = 4 tokens");
}

TEST(Tokens, ShardsAreMappedFromTheirFiles) {
  char dir[] = "/tmp/lmc-tokens-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/a.bin";
  std::vector<uint8_t> file = llmcFile(kLlmcMagicU16, 3, u16({7, 8, 9}));
  writeFileAtomically(path, {{file.data(), file.size()}});
  TokenShard shard = readTokenShard(path);
  EXPECT_NE(shard.mapped.data(), nullptr);
  EXPECT_TRUE(shard.owned.empty());
  EXPECT_EQ(shard.numTokens, 3);
  EXPECT_EQ(shard.token(2), 9u);
  TokenShard moved = std::move(shard); // the mapping moves with it
  EXPECT_EQ(moved.token(0), 7u);
  // Errors name the file; a directory is refused, not mapped.
  file.pop_back();
  writeFileAtomically(path, {{file.data(), file.size()}});
  EXPECT_ERROR_CONTAINS(readTokenShard(path), path + ": llm.c header says 3");
  EXPECT_ERROR_CONTAINS(readTokenShard(dir), "is not a regular file");
  EXPECT_ERROR_CONTAINS(readTokenShard(std::string(dir) + "/missing.bin"),
                        "cannot open");
  std::remove(path.c_str());
  rmdir(dir);
}

TEST(Tokens, WindowsSkipShardsTooShortForOne) {
  const char *text = "lmc-model 1\nloss cross_entropy\noptimizer sgd\n"
                     "flops 0\n"
                     "train arg input idx i64 2 1 2\n"
                     "train arg input labels i64 2 1 2\n"
                     "train result loss loss f32 0\nend\n";
  Descriptor desc = parseDescriptor(text, 0);
  auto specs = desc.trainArgsWithRole(Role::Input);
  std::vector<TokenShard> shards;
  shards.push_back(parseTokenShard(u16({0, 1, 2, 3, 4}))); // 2 windows
  shards.push_back(parseTokenShard(u16({50, 51})));        // none
  shards.push_back(parseTokenShard(u16({20, 21, 22})));    // 1
  TokenDataset data =
      TokenDataset::fromShards(std::move(shards), specs, "--tokens");
  EXPECT_EQ(data.numSamples(), 3);
  std::vector<AlignedBuffer> buffers;
  buffers.emplace_back(specs[0]->byteSize());
  buffers.emplace_back(specs[1]->byteSize());
  for (int64_t sample : {0, 1, 2}) {
    data.fillBatch({sample}, buffers);
    const int64_t first[] = {0, 2, 20};
    EXPECT_EQ(buffers[0].as<int64_t>()[0], first[sample]);
    EXPECT_EQ(buffers[1].as<int64_t>()[1], first[sample] + 2);
  }
}

TEST(Tokens, ModelMustTakeTokens) {
  const char *text = "lmc-model 1\nloss mse\noptimizer sgd\nflops 0\n"
                     "train arg input x f32 2 2 3\n"
                     "train arg input targets f32 2 2 3\n"
                     "train result loss loss f32 0\nend\n";
  Descriptor desc = parseDescriptor(text, 0);
  std::vector<TokenShard> shards;
  shards.push_back(parseTokenShard(u16({1, 2, 3, 4})));
  EXPECT_ERROR_CONTAINS(
      TokenDataset::fromShards(std::move(shards),
                               desc.trainArgsWithRole(Role::Input), "--tokens"),
      "--tokens: model input 'x' must be i64 or i32 [B, T], it is f32[2, 3]");
}

} // namespace

TEST(Tokens, IndexBoundsNameTheShardAndToken) {
  // A vocabulary of 8: token 9 at offset 4 of the second shard is refused
  // as a target of window 1 and as an input id of window 2.
  const char *text = "lmc-model 1\nloss cross_entropy\noptimizer sgd\n"
                     "flops 0\n"
                     "train arg input idx i64 2 1 2\n"
                     "train arg input targets i64 2 1 2\n"
                     "train result loss loss f32 0\n"
                     "bound idx 8 rows wte\n"
                     "bound targets 8 classes\nend\n";
  Descriptor desc = parseDescriptor(text, 0);
  auto specs = desc.trainArgsWithRole(Role::Input);
  std::vector<TokenShard> shards;
  shards.push_back(parseTokenShard(u16({0, 1, 2})));
  shards.push_back(parseTokenShard(u16({3, 4, 5, 6, 9, 7, 1})));
  TokenDataset data =
      TokenDataset::fromShards(std::move(shards), specs, "--tokens");
  ASSERT_EQ(data.numSamples(), 4);
  std::vector<AlignedBuffer> buffers;
  buffers.emplace_back(specs[0]->byteSize());
  buffers.emplace_back(specs[1]->byteSize());
  data.fillBatch({0}, buffers); // [0 1] -> [1 2]
  data.fillBatch({1}, buffers); // [3 4] -> [4 5]
  EXPECT_ERROR_CONTAINS(data.fillBatch({2}, buffers),
                        "token shard: token 4 (window 1): value 9 of input "
                        "'targets' is outside [0, 8), the classes");
  EXPECT_ERROR_CONTAINS(data.fillBatch({3}, buffers),
                        "token shard: token 4 (window 2): value 9 of input "
                        "'idx' is outside [0, 8), the rows of 'wte'");
}
