#include "io/weights_payload.h"

#include "test_util.h"

#include <cstdio>
#include <cstdlib>
#include <unistd.h>

using namespace lmc::rt;
using namespace lmc::rt::test;

namespace {

constexpr uint64_t kFingerprint = 0x1122334455667788ull;

void putU64(std::vector<uint8_t> &out, uint64_t value) {
  for (int i = 0; i < 8; ++i)
    out.push_back(uint8_t(value >> (8 * i)));
}

/// An "executable" of `programBytes` bytes followed by `weights` at the
/// next 4096-byte boundary and the trailer lmc writes (lib/Driver/Emit.cpp),
/// with the trailer's fields as given.
std::vector<uint8_t> withPayload(size_t programBytes,
                                 const std::vector<uint8_t> &weights,
                                 uint64_t fingerprint = kFingerprint,
                                 int64_t sizeSkew = 0) {
  std::vector<uint8_t> file(programBytes, 0x7f);
  const size_t offset = (programBytes + 4095) / 4096 * 4096;
  file.resize(offset, 0);
  file.insert(file.end(), weights.begin(), weights.end());
  putU64(file, offset);
  putU64(file, uint64_t(int64_t(weights.size()) + sizeSkew));
  putU64(file, fingerprint);
  for (char c : std::string("LMCWGHT1"))
    file.push_back(uint8_t(c));
  return file;
}

class WeightsPayloadTest : public ::testing::Test {
protected:
  void SetUp() override {
    char dir[] = "/tmp/lmc-payload-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    path_ = dir_ + "/train";
  }
  void TearDown() override {
    std::remove(path_.c_str());
    rmdir(dir_.c_str());
  }
  void write(const std::vector<uint8_t> &bytes) {
    FILE *f = std::fopen(path_.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
    std::fclose(f);
  }
  std::string dir_, path_;
};

std::vector<uint8_t> someWeights(size_t n) {
  std::vector<uint8_t> w(n);
  for (size_t i = 0; i < n; ++i)
    w[i] = uint8_t(i * 31 + 7);
  return w;
}

TEST_F(WeightsPayloadTest, MapsTheBytesAfterTheProgram) {
  for (size_t program : {size_t(1), size_t(4096), size_t(10000)}) {
    std::vector<uint8_t> weights = someWeights(12345);
    write(withPayload(program, weights));
    WeightsPayload payload =
        WeightsPayload::map(path_, weights.size(), kFingerprint);
    ASSERT_EQ(payload.size(), weights.size());
    EXPECT_EQ(std::memcmp(payload.data(), weights.data(), weights.size()), 0)
        << "program of " << program << " bytes";
  }
}

TEST_F(WeightsPayloadTest, EmptyWeights) {
  write(withPayload(100, {}));
  EXPECT_EQ(WeightsPayload::map(path_, 0, kFingerprint).size(), 0u);
}

TEST_F(WeightsPayloadTest, TruncatedOrStripped) {
  std::vector<uint8_t> file = withPayload(5000, someWeights(300));
  file.pop_back(); // the trailer's magic is cut
  write(file);
  EXPECT_ERROR_CONTAINS(WeightsPayload::map(path_, 300, kFingerprint),
                        "has no weights payload at its end (the file was "
                        "truncated or stripped)");
  write(std::vector<uint8_t>(10, 0)); // shorter than a trailer
  EXPECT_ERROR_CONTAINS(WeightsPayload::map(path_, 300, kFingerprint),
                        "has no weights payload");
}

TEST_F(WeightsPayloadTest, TrailerThatDoesNotFitTheFile) {
  write(withPayload(5000, someWeights(300), kFingerprint, /*sizeSkew=*/1));
  EXPECT_ERROR_CONTAINS(WeightsPayload::map(path_, 301, kFingerprint),
                        "does not fit the file's");
  // Bytes lost from the middle: the offset points past what is left.
  std::vector<uint8_t> file = withPayload(5000, someWeights(300));
  file.erase(file.begin(), file.begin() + 4000);
  write(file);
  EXPECT_ERROR_CONTAINS(WeightsPayload::map(path_, 300, kFingerprint),
                        "does not fit the file's");
}

TEST_F(WeightsPayloadTest, PayloadOfAnotherModel) {
  write(withPayload(5000, someWeights(300), kFingerprint + 1));
  EXPECT_ERROR_CONTAINS(WeightsPayload::map(path_, 300, kFingerprint),
                        "belongs to another model");
  write(withPayload(5000, someWeights(300)));
  EXPECT_ERROR_CONTAINS(WeightsPayload::map(path_, 299, kFingerprint),
                        "belongs to another model");
}

TEST_F(WeightsPayloadTest, MissingFile) {
  EXPECT_ERROR_CONTAINS(
      WeightsPayload::map(dir_ + "/absent", 1, kFingerprint),
      "cannot open '" + dir_ + "/absent' to read the model's weights");
}

} // namespace
