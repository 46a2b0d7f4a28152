#include "train/checkpoint.h"

#include "io/crc32c.h"
#include "io/file_io.h"
#include "model/descriptor.h"
#include "test_util.h"

#include <cstdio>
#include <cstdlib>
#include <unistd.h>

using namespace lmc::rt;

namespace {

const char *kDesc = "lmc-model 1\nloss mse\noptimizer momentum\n"
                    "hparam lr 0.1\nflops 0\n"
                    "train arg param w f32 1 2\n"
                    "train arg state w.momentum_buffer f32 1 2\n"
                    "train arg input x f32 1 2\n"
                    "train result param w f32 1 2\n"
                    "train result state w.momentum_buffer f32 1 2\n"
                    "train result loss loss f32 0\n"
                    "init w 0 8\nend\n";
const unsigned char kWeights[8] = {0, 0, 128, 63, 0, 0, 0, 64}; // 1, 2

std::string tempDir() {
  char tmpl[] = "/tmp/lmc-ckpt-XXXXXX";
  EXPECT_NE(mkdtemp(tmpl), nullptr);
  return tmpl;
}

CheckpointMeta sampleMeta(int64_t step) {
  CheckpointMeta m;
  m.step = step;
  m.dataCursor = step * 1;
  m.numSamples = 10;
  m.seed = 7;
  m.shuffle = true;
  m.schedule = "cosine";
  m.lr = 0.1;
  m.totalSteps = 20;
  return m;
}

TEST(Crc32c, KnownValues) {
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(crc32c("", 0), 0u);
  // Incremental equals one-shot, also across the 8-byte fast path.
  std::string text = "The quick brown fox jumps over the lazy dog";
  EXPECT_EQ(crc32c(text.data() + 5, text.size() - 5, crc32c(text.data(), 5)),
            crc32c(text.data(), text.size()));
  EXPECT_EQ(crc32c(text.data(), text.size()), 0x22620404u);
}

TEST(Checkpoint, FileNames) {
  EXPECT_EQ(checkpointFileName(10), "step_00000010.safetensors");
  EXPECT_EQ(*parseCheckpointFileName("step_00000010.safetensors"), 10);
  EXPECT_EQ(*parseCheckpointFileName("step_123456789.safetensors"), 123456789);
  EXPECT_FALSE(parseCheckpointFileName("step_00000010.safetensors.tmp.123"));
  EXPECT_FALSE(parseCheckpointFileName("step_10.safetensors"));
  EXPECT_FALSE(parseCheckpointFileName("step_0000001x.safetensors"));
  EXPECT_FALSE(parseCheckpointFileName("out.safetensors"));
}

TEST(Checkpoint, MetadataRoundTripAndErrors) {
  auto md = checkpointMetadata(sampleMeta(3), 0xabc, 5);
  CheckpointMeta m = parseCheckpointMetadata(md);
  EXPECT_EQ(m.step, 3);
  EXPECT_EQ(m.seed, 7u);
  EXPECT_TRUE(m.shuffle);
  EXPECT_EQ(m.schedule, "cosine");
  EXPECT_EQ(m.lr, 0.1);
  EXPECT_EQ(m.shuffleOrder, "feistel6-splitmix64");
  // Files of earlier versions have no order key: theirs was Fisher-Yates.
  auto older = md;
  older.erase("lmc.shuffle_order");
  EXPECT_EQ(parseCheckpointMetadata(older).shuffleOrder,
            "fisher-yates-mt19937_64");
  EXPECT_ERROR_CONTAINS(parseCheckpointMetadata({{"format", "pt"}}),
                        "not an lmc checkpoint");
  auto bad = md;
  bad["lmc.step"] = "-1";
  EXPECT_ERROR_CONTAINS(parseCheckpointMetadata(bad),
                        "'lmc.step' is not a valid number");
  bad = md;
  bad.erase("lmc.data_cursor");
  EXPECT_ERROR_CONTAINS(parseCheckpointMetadata(bad),
                        "metadata lacks 'lmc.data_cursor'");
  bad = md;
  bad["lmc.checkpoint"] = "2";
  EXPECT_ERROR_CONTAINS(parseCheckpointMetadata(bad), "unsupported");
}

TEST(Checkpoint, SaveLoadKeepAndRejects) {
  Descriptor desc = parseDescriptor(kDesc, sizeof kWeights);
  const uint64_t fp = modelFingerprint(kDesc, sizeof kWeights);
  EXPECT_NE(fp, modelFingerprint(kDesc, sizeof kWeights + 1));
  std::string dir = tempDir();
  Checkpointer ckpt(dir, /*keep=*/2, fp);
  EXPECT_FALSE(ckpt.newest());

  ModelState state(desc, kWeights);
  state.state(0).as<float>()[1] = 5.0f;
  for (int64_t step : {1, 2, 3})
    ckpt.save(state, sampleMeta(step));
  // --keep 2: step 1 was deleted.
  EXPECT_NE(access((dir + "/step_00000001.safetensors").c_str(), F_OK), 0);
  EXPECT_EQ(*ckpt.newest(), dir + "/step_00000003.safetensors");
  // A leftover temp file (a writer killed mid-write) is ignored.
  writeFileAtomically(dir + "/step_00000009.safetensors.tmp.42.x",
                      {{"junk", 4}});
  std::rename((dir + "/step_00000009.safetensors.tmp.42.x").c_str(),
              (dir + "/step_00000009.safetensors.tmp.42").c_str());
  EXPECT_EQ(*ckpt.newest(), dir + "/step_00000003.safetensors");

  ModelState other(desc, kWeights);
  other.param(0).as<float>()[0] = -1;
  CheckpointMeta m = ckpt.load(*ckpt.newest(), other);
  EXPECT_EQ(m.step, 3);
  EXPECT_EQ(other.param(0).as<float>()[0], 1.0f);
  EXPECT_EQ(other.state(0).as<float>()[1], 5.0f);

  // Another model's checkpoint.
  Checkpointer foreign(dir, 0, fp + 1);
  EXPECT_ERROR_CONTAINS(foreign.load(*ckpt.newest(), other),
                        "written by a different model");

  // Truncated and bit-flipped copies; the state is left untouched.
  std::vector<uint8_t> bytes = readFile(*ckpt.newest());
  std::vector<uint8_t> cut(bytes.begin(), bytes.end() - 3);
  writeFileAtomically(dir + "/cut.safetensors", {{cut.data(), cut.size()}});
  other.param(0).as<float>()[0] = -1;
  EXPECT_ERROR_CONTAINS(ckpt.load(dir + "/cut.safetensors", other),
                        "cannot resume from " + dir + "/cut.safetensors");
  EXPECT_EQ(other.param(0).as<float>()[0], -1.0f);
  bytes[bytes.size() - 1] ^= 0x40;
  writeFileAtomically(dir + "/flip.safetensors",
                      {{bytes.data(), bytes.size()}});
  EXPECT_ERROR_CONTAINS(ckpt.load(dir + "/flip.safetensors", other),
                        "data checksum mismatch");
  EXPECT_EQ(other.param(0).as<float>()[0], -1.0f);
  // A plain --save file is not a checkpoint.
  state.saveParams(dir + "/plain.safetensors");
  EXPECT_ERROR_CONTAINS(ckpt.load(dir + "/plain.safetensors", other),
                        "not an lmc checkpoint");
  std::system(("rm -rf " + dir).c_str());
}

TEST(Checkpoint, DirectoryErrors) {
  EXPECT_ERROR_CONTAINS(Checkpointer("/nonexistent/a/b", 0, 1),
                        "cannot create checkpoint directory '/nonexistent/a/b'");
  EXPECT_ERROR_CONTAINS(Checkpointer("/etc/passwd", 0, 1), "is not a directory");
}

} // namespace
