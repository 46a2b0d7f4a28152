//===- tensor_parallel.h - The model group of a tensor-parallel run -------===//
//
// A model compiled for `--mesh data=D,model=M` runs as D x M processes:
// each group of M consecutive ranks splits the parameters (every split
// tensor in M equal slices along one dimension), and the D groups are
// data parallel. The compiled steps call the lmc_rt_model_* functions for
// their collectives within the group (docs/runtime-abi.md); the runtime
// slices whole tensors at start and gathers them for files.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_TENSOR_PARALLEL_H
#define LMC_RUNTIME_TENSOR_PARALLEL_H

#include "buffer.h"
#include "comm.h"
#include "descriptor.h"
#include "dtype.h"
#include "safetensors.h"

#include <cstddef>
#include <cstdint>
#include <vector>

extern "C" {
/// In place: the sum over the model group (f32).
void lmc_rt_model_all_reduce_f32(float *data, int64_t count);
/// In place: the maximum over the model group (f32).
void lmc_rt_model_all_reduce_max_f32(float *data, int64_t count);
/// `out` = [outer][group size][chunk] from every process's [outer][chunk]
/// `in`: the whole tensor of slices split along one dimension.
void lmc_rt_model_all_gather_f32(const float *in, float *out, int64_t outer,
                                 int64_t chunk);
/// This process's index in its model group.
int64_t lmc_rt_model_rank(void);
}

namespace lmc::rt {

/// The group the compiled collectives use (null: a single process).
void setModelGroup(Communicator *group);
Communicator *modelGroup();

/// How a whole row-major tensor of `shape` splits along `dim` into `parts`:
/// `outer` blocks of `parts` consecutive chunks of `chunkBytes`.
struct SliceLayout {
  SliceLayout(const Shape &shape, int dim, int64_t parts, size_t elementSize);
  size_t outer = 1, chunkBytes = 0;
  int64_t parts = 1;
};

/// Copies slice `part` of `whole` into `slice`.
void copySlice(const SliceLayout &layout, const void *whole, void *slice,
               int64_t part);
/// Copies this process's part of the whole tensor `spec` names (all of it
/// when it is not split; slice `modelRank` of `modelParallel` when it is).
void copyOwnPart(const TensorSpec &spec, int64_t modelParallel,
                 int64_t modelRank, const void *whole, void *local);
/// `gathered` holds the slices one after another ([part][outer][chunk]);
/// writes the whole tensor ([outer][part][chunk]).
void assembleSlices(const SliceLayout &layout, const void *gathered,
                    void *whole);

/// Whole tensors for a file from this process's `views` of params, buffers
/// and state: each one split over the model group is gathered (every
/// process of the group must call this). `storage` holds the gathered
/// bytes.
std::vector<TensorView> wholeTensors(const Descriptor &desc,
                                     const std::vector<TensorView> &views,
                                     Communicator &group,
                                     std::vector<AlignedBuffer> &storage);

} // namespace lmc::rt

#endif // LMC_RUNTIME_TENSOR_PARALLEL_H
