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

#include "base/dtype.h"
#include "comm/comm.h"
#include "io/safetensors.h"
#include "memory/buffer.h"
#include "model/descriptor.h"
#include "model/slices.h"

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
