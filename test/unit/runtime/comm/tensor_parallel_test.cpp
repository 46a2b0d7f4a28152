#include "comm/tensor_parallel.h"

#include "test_util.h"

#include <numeric>
#include <vector>

using namespace lmc::rt;

namespace {

// A 2x6 tensor 0..11 split along its columns in 3 parts: part k holds
// columns 2k and 2k+1 of both rows.
TEST(TensorParallel, SlicesAlongColumns) {
  std::vector<int> whole(12);
  std::iota(whole.begin(), whole.end(), 0);
  SliceLayout layout({2, 6}, 1, 3, sizeof(int));
  EXPECT_EQ(layout.outer, 2u);
  EXPECT_EQ(layout.chunkBytes, 2 * sizeof(int));
  std::vector<int> slice(4);
  copySlice(layout, whole.data(), slice.data(), 1);
  EXPECT_EQ(slice, (std::vector<int>{2, 3, 8, 9}));
  // The slices one after another reassemble the whole.
  std::vector<int> gathered;
  for (int part = 0; part < 3; ++part) {
    copySlice(layout, whole.data(), slice.data(), part);
    gathered.insert(gathered.end(), slice.begin(), slice.end());
  }
  std::vector<int> back(12);
  assembleSlices(layout, gathered.data(), back.data());
  EXPECT_EQ(back, whole);
}

// Along the rows the slices are contiguous.
TEST(TensorParallel, SlicesAlongRows) {
  std::vector<float> whole = {0, 1, 2, 3, 4, 5, 6, 7};
  SliceLayout layout({4, 2}, 0, 2, sizeof(float));
  std::vector<float> slice(4);
  copySlice(layout, whole.data(), slice.data(), 1);
  EXPECT_EQ(slice, (std::vector<float>{4, 5, 6, 7}));
}

// One process: the compiled collectives are identities, rank 0.
TEST(TensorParallel, SingleProcessCollectives) {
  setModelGroup(nullptr);
  float data[3] = {1, 2, 3};
  lmc_rt_model_all_reduce_f32(data, 3);
  lmc_rt_model_all_reduce_max_f32(data, 3);
  EXPECT_EQ(data[2], 3.0f);
  float out[3] = {};
  lmc_rt_model_all_gather_f32(data, out, 1, 3);
  EXPECT_EQ(out[1], 2.0f);
  EXPECT_EQ(lmc_rt_model_rank(), 0);
}

} // namespace
