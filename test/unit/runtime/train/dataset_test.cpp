#include "train/dataset.h"

#include "test_util.h"

using namespace lmc::rt;
using namespace lmc::rt::test;

namespace {

TensorSpec spec(const char *name, DType dtype, Shape shape) {
  TensorSpec s;
  s.role = Role::Input;
  s.name = name;
  s.dtype = dtype;
  s.shape = std::move(shape);
  return s;
}

NpyArray array(DType dtype, Shape shape, std::vector<uint8_t> bytes) {
  NpyArray a;
  a.dtype = dtype;
  a.shape = std::move(shape);
  a.bytes = std::move(bytes);
  return a;
}

TEST(Dataset, WidensInt32LabelsAndFillsBatches) {
  TensorSpec x = spec("x", DType::F32, {2, 2});
  TensorSpec labels = spec("labels", DType::I64, {2});
  std::vector<NpyArray> arrays;
  arrays.push_back(
      array(DType::F32, {3, 2}, toBytes(std::vector<float>{0, 1, 2, 3, 4, 5})));
  arrays.push_back(
      array(DType::I32, {3}, toBytes(std::vector<int32_t>{-7, 8, 9})));
  Dataset d =
      Dataset::fromArrays(std::move(arrays), {&x, &labels}, {"x.npy", "l.npy"});
  EXPECT_EQ(d.numSamples(), 3);
  std::vector<AlignedBuffer> buffers;
  buffers.emplace_back(x.byteSize());
  buffers.emplace_back(labels.byteSize());
  d.fillBatch({2, 0}, buffers);
  EXPECT_EQ(buffers[0].as<float>()[0], 4);
  EXPECT_EQ(buffers[0].as<float>()[3], 1);
  EXPECT_EQ(buffers[1].as<int64_t>()[0], 9);
  EXPECT_EQ(buffers[1].as<int64_t>()[1], -7);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffers[1].data()) % 64, 0u);
}

TEST(Dataset, CountsTokensOfSequenceInputs) {
  // A language model's [batch, T] integer input: T tokens per sample.
  TensorSpec tokens = spec("tokens", DType::I64, {2, 3});
  std::vector<NpyArray> arrays;
  arrays.push_back(array(DType::I64, {2, 3},
                         toBytes(std::vector<int64_t>{1, 2, 3, 4, 5, 6})));
  EXPECT_EQ(Dataset::fromArrays(std::move(arrays), {&tokens}, {"t.npy"})
                .tokensPerSample(),
            3);
  // Features and class labels are not tokens.
  TensorSpec x = spec("x", DType::F32, {2, 2});
  TensorSpec labels = spec("labels", DType::I64, {2});
  std::vector<NpyArray> plain;
  plain.push_back(
      array(DType::F32, {2, 2}, toBytes(std::vector<float>{0, 1, 2, 3})));
  plain.push_back(array(DType::I64, {2}, toBytes(std::vector<int64_t>{0, 1})));
  EXPECT_EQ(Dataset::fromArrays(std::move(plain), {&x, &labels},
                                {"x.npy", "l.npy"})
                .tokensPerSample(),
            0);
}

TEST(Dataset, RejectsMismatches) {
  TensorSpec x = spec("x", DType::F32, {2, 2});
  auto load = [&](NpyArray a) {
    std::vector<NpyArray> arrays;
    arrays.push_back(std::move(a));
    return Dataset::fromArrays(std::move(arrays), {&x}, {"x.npy"});
  };
  EXPECT_ERROR_CONTAINS(
      load(array(DType::F64, {1, 2}, std::vector<uint8_t>(16))),
      "x.npy: dtype f64 does not match model input 'x' (f32)");
  EXPECT_ERROR_CONTAINS(
      load(array(DType::F32, {2, 3}, std::vector<uint8_t>(24))),
      "shape [2, 3] does not match model input 'x': "
      "expected [N, 2]");
  EXPECT_ERROR_CONTAINS(load(array(DType::F32, {}, std::vector<uint8_t>(4))),
                        "got a scalar");
  EXPECT_ERROR_CONTAINS(load(array(DType::F32, {0, 2}, {})), "no samples");

  TensorSpec y = spec("y", DType::F32, {2});
  std::vector<NpyArray> arrays;
  arrays.push_back(array(DType::F32, {3, 2}, std::vector<uint8_t>(24)));
  arrays.push_back(array(DType::F32, {4}, std::vector<uint8_t>(16)));
  EXPECT_ERROR_CONTAINS(
      Dataset::fromArrays(std::move(arrays), {&x, &y}, {"x.npy", "y.npy"}),
      "y.npy has 4 samples but x.npy has 3");
}

TEST(Dataset, LoadReportsMissingAndUnknownInputs) {
  TensorSpec x = spec("x", DType::F32, {2, 2});
  TensorSpec labels = spec("labels", DType::I64, {2});
  EXPECT_ERROR_CONTAINS(Dataset::load({}, {&x, &labels}, "--input"),
                        "missing --input x=FILE.npy");
  EXPECT_ERROR_CONTAINS(
      Dataset::load({{"z", "z.npy"}}, {&x, &labels}, "--eval-input"),
      "--eval-input 'z': the model has no such input (inputs: x, labels)");
}

} // namespace

TEST(Dataset, IndexBoundsStopBadTokenIdsAndLabels) {
  // Token ids index 5 embedding rows; labels are 3 classes. The bad value
  // is reported with its file, sample, position, value and range, before
  // any of the batch reaches the step.
  TensorSpec ids = spec("ids", DType::I64, {2, 2, 2});
  ids.bound = IndexBound{5, "rows of 'wte'"};
  TensorSpec labels = spec("labels", DType::I32, {2});
  labels.bound = IndexBound{3, "classes"};
  auto load = [&](std::vector<int64_t> idValues,
                  std::vector<int32_t> labelValues) {
    std::vector<NpyArray> arrays;
    arrays.push_back(array(DType::I64, {2, 2, 2}, toBytes(idValues)));
    arrays.push_back(array(DType::I32, {2}, toBytes(labelValues)));
    return Dataset::fromArrays(std::move(arrays), {&ids, &labels},
                               {"ids.npy", "labels.npy"});
  };
  std::vector<AlignedBuffer> buffers;
  buffers.emplace_back(ids.byteSize());
  buffers.emplace_back(labels.byteSize());

  load({0, 1, 2, 4, 4, 3, 2, 1}, {0, 2}).fillBatch({1, 0}, buffers);
  EXPECT_EQ(buffers[0].as<int64_t>()[0], 4);

  EXPECT_ERROR_CONTAINS(
      (load({0, 1, 2, 4, 4, 3, 5, 1}, {0, 2}).fillBatch({0, 1}, buffers)),
      "ids.npy: sample 1, position [1, 0]: value 5 of input 'ids' is outside "
      "[0, 5), the rows of 'wte'");
  EXPECT_ERROR_CONTAINS(
      (load({-1, 1, 2, 4, 4, 3, 2, 1}, {0, 2}).fillBatch({0, 1}, buffers)),
      "ids.npy: sample 0, position [0, 0]: value -1 of input 'ids'");
  EXPECT_ERROR_CONTAINS(
      (load({0, 1, 2, 4, 4, 3, 2, 1}, {0, 3}).fillBatch({0, 1}, buffers)),
      "labels.npy: sample 1: value 3 of input 'labels' is outside [0, 3), "
      "the classes of the model's output");
  // The loss's ignore_index passes; any other value outside stops the run.
  labels.bound->ignored = -100;
  load({0, 1, 2, 4, 4, 3, 2, 1}, {-100, 2}).fillBatch({1, 0}, buffers);
  EXPECT_EQ(buffers[1].as<int32_t>()[1], -100);
  EXPECT_ERROR_CONTAINS(
      (load({0, 1, 2, 4, 4, 3, 2, 1}, {0, -1}).fillBatch({0, 1}, buffers)),
      "labels.npy: sample 1: value -1 of input 'labels' is outside [0, 3), "
      "the classes of the model's output, and is not the ignored label -100 "
      "(lmc --ignore-index)");
}
