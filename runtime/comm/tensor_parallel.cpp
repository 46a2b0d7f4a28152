//===- tensor_parallel.cpp - The model group of a tensor-parallel run -----===//

#include "comm/tensor_parallel.h"

#include "base/error.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

namespace lmc::rt {

namespace {
Communicator *activeModelGroup = nullptr;
} // namespace

void setModelGroup(Communicator *group) { activeModelGroup = group; }
Communicator *modelGroup() { return activeModelGroup; }

std::vector<TensorView> wholeTensors(const Descriptor &desc,
                                     const std::vector<TensorView> &views,
                                     Communicator &group,
                                     std::vector<AlignedBuffer> &storage) {
  std::map<std::string, const TensorSpec *> specs;
  for (const TensorSpec &arg : desc.trainArgs)
    specs.emplace(arg.name, &arg);
  std::vector<TensorView> whole;
  for (const TensorView &view : views) {
    auto it = specs.find(view.name);
    if (it == specs.end() || it->second->splitDim < 0) {
      whole.push_back(view);
      continue;
    }
    const TensorSpec &spec = *it->second;
    const size_t sliceBytes = spec.byteSize();
    void *gathered =
        storage.emplace_back(sliceBytes * size_t(group.size())).data();
    group.allGather(view.data, gathered, sliceBytes);
    void *assembled = storage.emplace_back(desc.globalByteSize(spec)).data();
    Shape shape = desc.globalShape(spec);
    assembleSlices(SliceLayout(shape, spec.splitDim, group.size(),
                               dtypeSize(spec.dtype)),
                   gathered, assembled);
    whole.push_back({view.name, view.dtype, shape, assembled});
  }
  return whole;
}

} // namespace lmc::rt

using namespace lmc::rt;

namespace {
/// The compiled step has no unwind tables: an error in a collective it
/// calls ends the job here, with a message, instead of std::terminate.
template <typename Fn> void orAbortJob(const char *what, Fn &&fn) {
  try {
    fn();
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: %s: %s\n", what, e.what());
    std::fflush(stderr);
    if (activeModelGroup)
      activeModelGroup->abort(1);
    std::_Exit(1);
  }
}
} // namespace

extern "C" void lmc_rt_model_all_reduce_f32(float *data, int64_t count) {
  if (activeModelGroup)
    orAbortJob("model all-reduce",
               [&] { activeModelGroup->allReduceSum(data, size_t(count)); });
}

extern "C" void lmc_rt_model_all_reduce_max_f32(float *data, int64_t count) {
  if (activeModelGroup)
    orAbortJob("model all-reduce",
               [&] { activeModelGroup->allReduceMax(data, size_t(count)); });
}

extern "C" void lmc_rt_model_all_gather_f32(const float *in, float *out,
                                            int64_t outer, int64_t chunk) {
  if (!activeModelGroup) {
    std::memcpy(out, in, size_t(outer * chunk) * sizeof(float));
    return;
  }
  orAbortJob("model all-gather", [&] {
    activeModelGroup->allGatherRows(in, out, size_t(outer), size_t(chunk));
  });
}

extern "C" int64_t lmc_rt_model_rank(void) {
  return activeModelGroup ? activeModelGroup->rank() : 0;
}
