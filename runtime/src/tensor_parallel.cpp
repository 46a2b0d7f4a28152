//===- tensor_parallel.cpp - The model group of a tensor-parallel run -----===//

#include "tensor_parallel.h"

#include "error.h"

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

SliceLayout::SliceLayout(const Shape &shape, int dim, int64_t parts,
                         size_t elementSize)
    : parts(parts) {
  size_t inner = elementSize;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (int(d) < dim)
      outer *= size_t(shape[d]);
    else if (int(d) > dim)
      inner *= size_t(shape[d]);
  }
  chunkBytes = size_t(shape[size_t(dim)] / parts) * inner;
}

void copySlice(const SliceLayout &layout, const void *whole, void *slice,
               int64_t part) {
  auto *from = static_cast<const unsigned char *>(whole);
  auto *to = static_cast<unsigned char *>(slice);
  for (size_t o = 0; o < layout.outer; ++o)
    std::memcpy(to + o * layout.chunkBytes,
                from + (o * size_t(layout.parts) + size_t(part)) *
                           layout.chunkBytes,
                layout.chunkBytes);
}

void copyOwnPart(const TensorSpec &spec, int64_t modelParallel,
                 int64_t modelRank, const void *whole, void *local) {
  if (spec.splitDim < 0)
    std::memcpy(local, whole, spec.byteSize());
  else
    copySlice(SliceLayout(wholeShape(spec, modelParallel), spec.splitDim,
                          modelParallel, dtypeSize(spec.dtype)),
              whole, local, modelRank);
}

void assembleSlices(const SliceLayout &layout, const void *gathered,
                    void *whole) {
  auto *from = static_cast<const unsigned char *>(gathered);
  auto *to = static_cast<unsigned char *>(whole);
  const size_t sliceBytes = layout.outer * layout.chunkBytes;
  for (int64_t part = 0; part < layout.parts; ++part)
    for (size_t o = 0; o < layout.outer; ++o)
      std::memcpy(to + (o * size_t(layout.parts) + size_t(part)) *
                           layout.chunkBytes,
                  from + size_t(part) * sliceBytes + o * layout.chunkBytes,
                  layout.chunkBytes);
}

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
