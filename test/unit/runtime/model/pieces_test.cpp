#include "model/pieces.h"

#include "test_util.h"

#include <cstring>
#include <numeric>
#include <vector>

using namespace lmc::rt;

namespace {

const std::vector<Join> kQkv = {{"qkv", {"qkv#0", "qkv#1", "qkv#2"}}};

/// A file holding `qkv` [6, 2] = 0..11, its `qkv.exp_avg` = 100..111 and an
/// unrelated `qkvx` [3].
SafetensorsFile qkvFile() {
  SafetensorsFile file;
  std::vector<float> values(12 + 12 + 3);
  std::iota(values.begin(), values.begin() + 12, 0.0f);
  std::iota(values.begin() + 12, values.begin() + 24, 100.0f);
  file.bytes.resize(values.size() * sizeof(float));
  std::memcpy(file.bytes.data(), values.data(), file.bytes.size());
  file.tensors = {{"qkv", "F32", {6, 2}, 0, 48},
                  {"qkv.exp_avg", "F32", {6, 2}, 48, 96},
                  {"qkvx", "F32", {3}, 96, 108}};
  return file;
}

const float *floats(const SafetensorsFile &file, const std::string &name) {
  const SafetensorsTensor *t = file.find(name);
  EXPECT_NE(t, nullptr) << name;
  return t ? reinterpret_cast<const float *>(file.data(*t)) : nullptr;
}

// Each piece (and each piece's state) names its rows of the fused tensor:
// piece i is rows [2i, 2i + 2) of the [6, 2] tensor.
TEST(Pieces, FileEntriesNameTheRowsOfEachPiece) {
  SafetensorsFile file = qkvFile();
  addPieceEntries(file, kQkv);
  const SafetensorsTensor *k = file.find("qkv#1");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->shape, (Shape{2, 2}));
  EXPECT_EQ(k->dtype, "F32");
  EXPECT_EQ(floats(file, "qkv#1")[0], 4.0f);
  EXPECT_EQ(floats(file, "qkv#2")[3], 11.0f);
  EXPECT_EQ(floats(file, "qkv#2.exp_avg")[0], 108.0f);
  // A name that merely starts with the fused one is not its state.
  EXPECT_EQ(file.find("qkv#0x"), nullptr);
  EXPECT_EQ(file.find("qkvx#0"), nullptr);
}

// A fused tensor whose rows do not divide into the pieces gets no entries:
// the reader reports the piece missing.
TEST(Pieces, NoEntriesForAnIndivisibleTensor) {
  SafetensorsFile file = qkvFile();
  file.tensors[0].shape = {4, 3};
  addPieceEntries(file, {{"qkv", {"qkv#0", "qkv#1", "qkv#2"}}});
  EXPECT_EQ(file.find("qkv#0"), nullptr);
  EXPECT_NE(file.find("qkv#0.exp_avg"), nullptr);
}

// Writing joins the pieces, in order, where the first piece was; other
// tensors keep their place.
TEST(Pieces, JoinsPiecesForFiles) {
  std::vector<float> q{0, 1, 2, 3}, k{4, 5, 6, 7}, v{8, 9, 10, 11}, other{42};
  std::vector<TensorView> views = {
      {"before", DType::F32, {1}, other.data()},
      {"qkv#1", DType::F32, {2, 2}, k.data()},
      {"qkv#0", DType::F32, {2, 2}, q.data()},
      {"qkv#2", DType::F32, {2, 2}, v.data()},
      {"qkv#0.exp_avg", DType::F32, {2, 2}, v.data()},
      {"qkv#1.exp_avg", DType::F32, {2, 2}, k.data()},
      {"qkv#2.exp_avg", DType::F32, {2, 2}, q.data()}};
  std::vector<AlignedBuffer> storage;
  std::vector<TensorView> joined = joinPieces(views, kQkv, storage);
  ASSERT_EQ(joined.size(), 3u);
  EXPECT_EQ(joined[0].name, "before");
  EXPECT_EQ(joined[1].name, "qkv");
  EXPECT_EQ(joined[1].shape, (Shape{6, 2}));
  const auto *w = static_cast<const float *>(joined[1].data);
  EXPECT_EQ(std::vector<float>(w, w + 12),
            (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(joined[2].name, "qkv.exp_avg");
  const auto *m = static_cast<const float *>(joined[2].data);
  EXPECT_EQ(m[0], 8.0f);
  EXPECT_EQ(m[11], 3.0f);
  // Without joins the views pass through.
  EXPECT_EQ(joinPieces(views, {}, storage).size(), views.size());
}

} // namespace
