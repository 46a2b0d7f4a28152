#include "io/npy.h"

#include "test_util.h"

using namespace lmc::rt;
using namespace lmc::rt::test;

namespace {

std::string dict(const std::string &descr, const std::string &shape,
                 const std::string &fortran = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + fortran +
         ", 'shape': " + shape + ", }";
}

TEST(Npy, ReadsF32Version1) {
  std::vector<float> values = {1, 2, 3, 4, 5, 6};
  NpyArray a = parseNpy(makeNpy(dict("<f4", "(2, 3)"), toBytes(values)));
  EXPECT_EQ(a.dtype, DType::F32);
  EXPECT_EQ(a.shape, (Shape{2, 3}));
  ASSERT_EQ(a.dataSize(), 24u);
  EXPECT_EQ(std::memcmp(a.data(), values.data(), 24), 0);
}

TEST(Npy, ReadsF64I64I32) {
  NpyArray f64 = parseNpy(
      makeNpy(dict("<f8", "(2,)"), toBytes(std::vector<double>{1.5, -2})));
  EXPECT_EQ(f64.dtype, DType::F64);
  EXPECT_EQ(reinterpret_cast<const double *>(f64.data())[1], -2.0);
  NpyArray i64 = parseNpy(
      makeNpy(dict("<i8", "(3,)"), toBytes(std::vector<int64_t>{7, 8, 9})));
  EXPECT_EQ(i64.dtype, DType::I64);
  EXPECT_EQ(reinterpret_cast<const int64_t *>(i64.data())[2], 9);
  NpyArray i32 = parseNpy(
      makeNpy(dict("<i4", "(1, 2)"), toBytes(std::vector<int32_t>{-1, 5})));
  EXPECT_EQ(i32.dtype, DType::I32);
  EXPECT_EQ(i32.shape, (Shape{1, 2}));
}

TEST(Npy, ReadsVersion2And3) {
  std::vector<float> values = {1, 2};
  for (int major : {2, 3}) {
    NpyArray a = parseNpy(makeNpy(dict("<f4", "(2,)"), toBytes(values), major));
    EXPECT_EQ(a.shape, (Shape{2}));
    EXPECT_EQ(reinterpret_cast<const float *>(a.data())[1], 2.0f);
  }
}

TEST(Npy, ReadsScalarAndEmptyAndKeyOrder) {
  NpyArray scalar =
      parseNpy(makeNpy(dict("<f4", "()"), toBytes(std::vector<float>{3})));
  EXPECT_TRUE(scalar.shape.empty());
  NpyArray empty = parseNpy(makeNpy(dict("<f4", "(0, 3)"), {}));
  EXPECT_EQ(empty.shape, (Shape{0, 3}));
  NpyArray reordered = parseNpy(
      makeNpy("{'shape': (1,), 'fortran_order': False, 'descr': '<i8'}",
              toBytes(std::vector<int64_t>{4})));
  EXPECT_EQ(reordered.dtype, DType::I64);
}

TEST(Npy, RejectsBadMagic) {
  std::vector<uint8_t> bytes =
      makeNpy(dict("<f4", "(1,)"), toBytes(std::vector<float>{1}));
  bytes[1] = 'X';
  EXPECT_ERROR_CONTAINS(parseNpy(bytes), "bad magic");
  EXPECT_ERROR_CONTAINS(parseNpy({0x93, 'N'}), "bad magic");
}

TEST(Npy, RejectsUnsupportedVersion) {
  std::vector<uint8_t> bytes =
      makeNpy(dict("<f4", "(1,)"), toBytes(std::vector<float>{1}));
  bytes[6] = 4;
  EXPECT_ERROR_CONTAINS(parseNpy(bytes), "unsupported .npy format version 4.0");
  bytes[6] = 1;
  bytes[7] = 1;
  EXPECT_ERROR_CONTAINS(parseNpy(bytes), "unsupported .npy format version 1.1");
}

TEST(Npy, RejectsHeaderTooLong) {
  std::string big = dict("<f4", "(1,)") + std::string(10001, ' ');
  EXPECT_ERROR_CONTAINS(
      parseNpy(makeNpy(big, toBytes(std::vector<float>{1}), 2)),
      "header too long");
}

TEST(Npy, RejectsHeaderBeyondFile) {
  std::vector<uint8_t> bytes =
      makeNpy(dict("<f4", "(1,)"), toBytes(std::vector<float>{1}));
  bytes.resize(20);
  EXPECT_ERROR_CONTAINS(parseNpy(bytes), "truncated .npy header");
}

TEST(Npy, RejectsFortranOrder) {
  EXPECT_ERROR_CONTAINS(parseNpy(makeNpy(dict("<f4", "(1,)", "True"),
                                         toBytes(std::vector<float>{1}))),
                        "fortran_order");
}

TEST(Npy, RejectsObjectAndOtherDtypes) {
  EXPECT_ERROR_CONTAINS(
      parseNpy(makeNpy(dict("|O", "(1,)"), {0, 0, 0, 0, 0, 0, 0, 0})),
      "object arrays");
  EXPECT_ERROR_CONTAINS(parseNpy(makeNpy(dict(">f4", "(1,)"), {0, 0, 0, 0})),
                        "big-endian");
  EXPECT_ERROR_CONTAINS(parseNpy(makeNpy(dict("<f2", "(1,)"), {0, 0})),
                        "unsupported dtype '<f2'");
  EXPECT_ERROR_CONTAINS(
      parseNpy(makeNpy("{'descr': [('a', '<f4')], 'fortran_order': False, "
                       "'shape': (1,)}",
                       {0, 0, 0, 0})),
      "structured dtypes");
}

TEST(Npy, RejectsDataSizeMismatch) {
  EXPECT_ERROR_CONTAINS(
      parseNpy(makeNpy(dict("<f4", "(3,)"), toBytes(std::vector<float>{1, 2}))),
      "truncated data");
  EXPECT_ERROR_CONTAINS(
      parseNpy(makeNpy(dict("<f4", "(1,)"), toBytes(std::vector<float>{1, 2}))),
      "data size mismatch");
}

TEST(Npy, RejectsMalformedHeaderDict) {
  std::vector<uint8_t> data = toBytes(std::vector<float>{1});
  EXPECT_ERROR_CONTAINS(
      parseNpy(makeNpy("{'descr': '<f4', 'shape': (1,)}", data)), "missing");
  EXPECT_ERROR_CONTAINS(parseNpy(makeNpy(dict("<f4", "(-1,)"), data)),
                        "non-negative integers");
  EXPECT_ERROR_CONTAINS(parseNpy(makeNpy(dict("<f4", "(1,)") + "x", data)),
                        "malformed .npy header");
  EXPECT_ERROR_CONTAINS(parseNpy(makeNpy(dict("<f4", "(1,)", "Maybe"), data)),
                        "True or False");
  EXPECT_ERROR_CONTAINS(
      parseNpy(makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': "
                       "(1,), 'extra': 1}",
                       data)),
      "unexpected key 'extra'");
}

TEST(Npy, ReadFileNamesThePath) {
  EXPECT_ERROR_CONTAINS(readNpyFile("/nonexistent/a.npy"),
                        "cannot open '/nonexistent/a.npy'");
}

} // namespace

namespace {

// Every truncation and single-byte corruption of a valid file either parses
// or throws Error -- never crashes or throws anything else.
TEST(Npy, CorruptionNeverCrashes) {
  std::vector<uint8_t> good =
      makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
              toBytes(std::vector<float>(6, 1.0f)));
  for (size_t n = 0; n < good.size(); ++n)
    EXPECT_THROW(parseNpy(std::vector<uint8_t>(good.begin(), good.begin() + n)),
                 Error);
  for (size_t i = 0; i < good.size(); ++i)
    for (int v : {int(0x00), int(0xFF), int('('), int('\''), int('9')}) {
      std::vector<uint8_t> bad = good;
      bad[i] = uint8_t(v);
      try {
        parseNpy(bad);
      } catch (const Error &) {
      }
    }
}

} // namespace
