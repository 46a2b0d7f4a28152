#include "io/safetensors.h"

#include "test_util.h"

#include <cstdio>
#include <unistd.h>

using namespace lmc::rt;
using namespace lmc::rt::test;

namespace {

/// A safetensors file with the given JSON header and data bytes.
std::vector<uint8_t> makeFile(const std::string &header,
                              const std::vector<uint8_t> &data,
                              uint64_t length = UINT64_MAX) {
  if (length == UINT64_MAX)
    length = header.size();
  std::vector<uint8_t> out;
  for (int i = 0; i < 8; ++i)
    out.push_back(uint8_t((length >> (8 * i)) & 0xFF));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

std::vector<uint8_t> data16() { return std::vector<uint8_t>(16, 1); }

TEST(Safetensors, WriteReadRoundTrip) {
  std::vector<float> w = {1, 2, 3, 4, 5, 6};
  std::vector<double> b = {-1.5};
  std::vector<int64_t> steps = {42};
  std::vector<int32_t> empty;
  char dirTemplate[] = "/tmp/lmc-st-XXXXXX";
  ASSERT_NE(mkdtemp(dirTemplate), nullptr);
  std::string path = std::string(dirTemplate) + "/p.safetensors";
  writeSafetensorsFile(path,
                       {{"layer.w", DType::F32, {2, 3}, w.data()},
                        {"b", DType::F64, {1}, b.data()},
                        {"step", DType::I64, {}, steps.data()},
                        {"none", DType::I32, {0, 4}, empty.data()}},
                       {{"format", "pt"}});
  SafetensorsFile f = readSafetensorsFile(path);
  EXPECT_EQ(f.dataStart % 8, 0u);
  EXPECT_EQ(f.metadata.at("format"), "pt");
  ASSERT_EQ(f.tensors.size(), 4u);
  const SafetensorsTensor *tw = f.find("layer.w");
  ASSERT_TRUE(tw);
  EXPECT_EQ(tw->dtype, "F32");
  EXPECT_EQ(tw->shape, (Shape{2, 3}));
  EXPECT_EQ(std::memcmp(f.data(*tw), w.data(), 24), 0);
  const SafetensorsTensor *tb = f.find("b");
  EXPECT_EQ(tb->dtype, "F64");
  EXPECT_EQ(*reinterpret_cast<const double *>(f.data(*tb)), -1.5);
  EXPECT_TRUE(f.find("step")->shape.empty());
  EXPECT_EQ(f.find("none")->begin, f.find("none")->end);
  // Read mapped; released pages read back the same.
  EXPECT_GT(f.mapping.size(), 0u);
  EXPECT_TRUE(f.bytes.empty());
  f.release(f.data(*tw), 24);
  f.release(f.fileData(), f.fileSize());
  EXPECT_EQ(std::memcmp(f.data(*tw), w.data(), 24), 0);
  // The temp file was renamed away.
  EXPECT_NE(access((path + ".tmp." + std::to_string(getpid())).c_str(), F_OK),
            0);
  std::remove(path.c_str());
  rmdir(dirTemplate);
}

TEST(Safetensors, AcceptsUnusedDtypesAndEmptyHeader) {
  SafetensorsFile f = parseSafetensors(
      makeFile(R"({"h":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}})",
               {0, 0, 0, 0}));
  EXPECT_EQ(f.tensors[0].dtype, "BF16");
  EXPECT_TRUE(parseSafetensors(makeFile("{}  ", {})).tensors.empty());
}

TEST(Safetensors, RejectsShortOrEmptyMappedFile) {
  char dirTemplate[] = "/tmp/lmc-st-XXXXXX";
  ASSERT_NE(mkdtemp(dirTemplate), nullptr);
  const std::string path = std::string(dirTemplate) + "/short.safetensors";
  for (const char *content : {"", "abc"}) {
    FILE *f = std::fopen(path.c_str(), "wb");
    ASSERT_TRUE(f);
    std::fputs(content, f);
    std::fclose(f);
    EXPECT_ERROR_CONTAINS(readSafetensorsFile(path),
                          path + ": not a safetensors file (shorter than 8 "
                                 "bytes)");
  }
  std::remove(path.c_str());
  rmdir(dirTemplate);
}

TEST(Safetensors, RejectsShortFile) {
  EXPECT_ERROR_CONTAINS(parseSafetensors({1, 2, 3}), "shorter than 8 bytes");
}

TEST(Safetensors, RejectsHeaderLengthBeyondFile) {
  EXPECT_ERROR_CONTAINS(parseSafetensors(makeFile("{}", {}, 100)),
                        "beyond the end of the file");
}

TEST(Safetensors, RejectsHugeHeader) {
  EXPECT_ERROR_CONTAINS(parseSafetensors(makeFile("{}", {}, 100'000'001)),
                        "exceeds the 100000000-byte limit");
}

TEST(Safetensors, RejectsInvalidJson) {
  EXPECT_ERROR_CONTAINS(parseSafetensors(makeFile("{\"a\":", {})),
                        "invalid JSON");
  EXPECT_ERROR_CONTAINS(parseSafetensors(makeFile("[]", {})),
                        "not a JSON object");
  EXPECT_ERROR_CONTAINS(
      parseSafetensors(makeFile(R"({"a":{"dtype":"F32","shape":[1.0],)"
                                R"("data_offsets":[0,4]}})",
                                {0, 0, 0, 0})),
      "invalid JSON");
}

TEST(Safetensors, RejectsDuplicateKeys) {
  EXPECT_ERROR_CONTAINS(
      parseSafetensors(
          makeFile(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                   R"("a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
                   data16())),
      "duplicate key \"a\"");
}

TEST(Safetensors, RejectsOffsetsOutOfRange) {
  EXPECT_ERROR_CONTAINS(
      parseSafetensors(
          makeFile(R"({"a":{"dtype":"F32","shape":[8],"data_offsets":[0,32]}})",
                   data16())),
      "out of range");
  EXPECT_ERROR_CONTAINS(
      parseSafetensors(
          makeFile(R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[8,4]}})",
                   data16())),
      "invalid data_offsets");
}

TEST(Safetensors, RejectsOverlapAndGaps) {
  EXPECT_ERROR_CONTAINS(
      parseSafetensors(
          makeFile(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,12]},)"
                   R"("b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
                   data16())),
      "overlap");
  EXPECT_ERROR_CONTAINS(
      parseSafetensors(
          makeFile(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                   R"("b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
                   data16())),
      "not contiguous: gap of 4 bytes");
  EXPECT_ERROR_CONTAINS(
      parseSafetensors(
          makeFile(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                   data16())),
      "8 unused bytes");
}

TEST(Safetensors, RejectsDtypeShapeSizeMismatch) {
  EXPECT_ERROR_CONTAINS(
      parseSafetensors(
          makeFile(R"({"a":{"dtype":"F64","shape":[4],"data_offsets":[0,16]}})",
                   data16())),
      "F64 [4] needs 32 bytes but data_offsets span 16");
  EXPECT_ERROR_CONTAINS(
      parseSafetensors(
          makeFile(R"({"a":{"dtype":"Q7","shape":[4],"data_offsets":[0,16]}})",
                   data16())),
      "unknown dtype 'Q7'");
}

TEST(Safetensors, RejectsMalformedEntries) {
  EXPECT_ERROR_CONTAINS(parseSafetensors(makeFile(
                            R"({"a":{"dtype":"F32","shape":[4]}})", data16())),
                        "has no \"data_offsets\"");
  EXPECT_ERROR_CONTAINS(
      parseSafetensors(makeFile(
          R"({"a":{"dtype":"F32","shape":[-4],"data_offsets":[0,16]}})",
          data16())),
      "non-negative");
  EXPECT_ERROR_CONTAINS(
      parseSafetensors(makeFile(
          R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16],"x":1}})",
          data16())),
      "unexpected key \"x\"");
  EXPECT_ERROR_CONTAINS(
      parseSafetensors(makeFile(R"({"__metadata__":{"a":1}})", {})),
      "is not a string");
}

TEST(Safetensors, WriterRejectsDuplicateNames) {
  float x = 0;
  EXPECT_ERROR_CONTAINS(
      serializeSafetensorsHeader(
          {{"a", DType::F32, {}, &x}, {"a", DType::F32, {}, &x}}, {}),
      "duplicate tensor name");
}

} // namespace

namespace {

TEST(Safetensors, CorruptionNeverCrashes) {
  std::string header = serializeSafetensorsHeader(
      {{"a", DType::F32, {2}, nullptr}, {"b", DType::I64, {1}, nullptr}}, {});
  std::vector<uint8_t> good(header.begin(), header.end());
  good.resize(good.size() + 16, 7);
  EXPECT_NO_THROW(parseSafetensors(good));
  for (size_t n = 0; n < good.size(); ++n)
    EXPECT_THROW(
        parseSafetensors(std::vector<uint8_t>(good.begin(), good.begin() + n)),
        Error);
  for (size_t i = 0; i < good.size(); ++i)
    for (int v :
         {int(0x00), int(0xFF), int('"'), int('['), int('9'), int('{')}) {
      std::vector<uint8_t> bad = good;
      bad[i] = uint8_t(v);
      try {
        parseSafetensors(bad);
      } catch (const Error &) {
      }
    }
}

} // namespace
