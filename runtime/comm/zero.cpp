//===- zero.cpp - ZeRO-1: optimizer state sharded over the processes ------===//

#include "comm/zero.h"

#include "base/error.h"
#include "comm/tensor_parallel.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace lmc::rt {

std::vector<size_t> zeroRangeSizes(size_t floats, int processes) {
  const size_t lines = floats / kFloatsPerLine;
  std::vector<size_t> sizes;
  for (int r = 0; r < processes; ++r)
    sizes.push_back((lines * size_t(r + 1) / size_t(processes) -
                     lines * size_t(r) / size_t(processes)) *
                    kFloatsPerLine);
  return sizes;
}

StateShard zeroShard(const Descriptor &desc, int rank, int processes) {
  GradientArena layout(desc.params());
  std::vector<size_t> sizes = zeroRangeSizes(layout.lossSlot, processes);
  StateShard shard;
  shard.offsets = layout.offsets;
  shard.floats = layout.lossSlot;
  for (int r = 0; r < rank; ++r)
    shard.begin += sizes[size_t(r)];
  shard.end = shard.begin + sizes[size_t(rank)];
  // chunk_step's state args are `chunk.<slot>` (parseDescriptor checked).
  for (const TensorSpec &arg : desc.chunkArgs)
    if (arg.role == Role::State)
      shard.slots.push_back(arg.name.substr(arg.name.find('.') + 1));
  return shard;
}

std::vector<TensorView> wholeShardedStates(ModelState &state,
                                           Communicator &group,
                                           std::vector<AlignedBuffer> &storage) {
  const StateShard &shard = *state.stateShard();
  std::vector<size_t> sizes = zeroRangeSizes(shard.floats, group.size());
  const size_t firstSlot = storage.size();
  for (size_t slot = 0; slot < shard.slots.size(); ++slot) {
    AlignedBuffer &whole = storage.emplace_back(shard.floats * sizeof(float));
    std::memcpy(whole.as<float>() + shard.begin,
                state.stateRange(slot, /*next=*/false).data(),
                (shard.end - shard.begin) * sizeof(float));
    group.allGatherParts(whole.as<float>(), sizes);
  }
  std::vector<TensorView> views;
  for (const TensorSpec *spec : state.states()) {
    const ModelState::StateHome home = state.stateHome(*spec);
    views.push_back({spec->name, spec->dtype, spec->shape,
                     storage[firstSlot + home.slot].as<float>() +
                         shard.offsets[home.param]});
  }
  return views;
}

ShardedOptimizer::ShardedOptimizer(const Descriptor &desc, StepFn chunkStep,
                                   ModelState &state, Communicator &comm)
    : chunkStep_(chunkStep), state_(state), comm_(comm),
      shard_(*state.stateShard()),
      rangeSizes_(zeroRangeSizes(shard_.floats, comm.size())),
      chunk_(size_t(desc.chunkElements())), norm_(sizeof(float)) {
  LMC_CHECK(chunkStep, "--zero 1 needs the model's chunk_step (this "
            "executable has none)");
  const size_t slots = shard_.slots.size();
  for (size_t i = 0; i < slots + 2; ++i)
    windowIn_.emplace_back(chunk_ * sizeof(float));
  for (size_t i = 0; i < slots + 1; ++i)
    windowOut_.emplace_back(chunk_ * sizeof(float));
}

float ShardedOptimizer::step(float *arena, int64_t microBatches,
                             std::vector<AlignedBuffer> &hypers, float *sums,
                             size_t numSums) {
  const size_t own = shard_.end - shard_.begin;
  comm_.reduceScatterSum(arena, rangeSizes_);
  float *grads = arena; // this process's range, summed
  if (microBatches > 1) { // as SplitStep averages: float division
    const float count = float(microBatches);
    for (size_t i = 0; i < own; ++i)
      grads[i] /= count;
  }
  // The squared norm. Tensor parallel, this process's params are its model
  // group slices: a split param's squares are summed over the model group
  // too, a whole one's (the same on every process of the group) are not.
  double split = 0, whole = 0;
  const std::vector<const TensorSpec *> &params = state_.params();
  for (size_t p = 0; p < params.size(); ++p) {
    const size_t first = shard_.offsets[p];
    const size_t lo = std::max(first, shard_.begin);
    const size_t hi =
        std::min(first + size_t(params[p]->numElements()), shard_.end);
    double &squares = params[p]->splitDim >= 0 ? split : whole;
    for (size_t i = lo; i < hi; ++i)
      squares += double(grads[i - shard_.begin]) *
                 double(grads[i - shard_.begin]);
  }
  std::vector<float> reduced{float(split), float(whole)};
  reduced.insert(reduced.end(), sums, sums + numSums);
  comm_.allReduceSum(reduced.data(), reduced.size());
  if (Communicator *group = modelGroup())
    group->allReduceSum(reduced.data(), 1);
  std::copy(reduced.begin() + 2, reduced.end(), sums);
  const float norm = std::sqrt(reduced[0] + reduced[1]);
  *norm_.as<float>() = norm;

  for (size_t first = 0; first < own; first += chunk_)
    updateWindow(first, std::min(chunk_, own - first), grads, hypers);
  comm_.allGatherParts(state_.paramArena(/*next=*/true), rangeSizes_);
  return norm;
}

void ShardedOptimizer::updateWindow(size_t first, size_t count, float *grads,
                                    std::vector<AlignedBuffer> &hypers) {
  const size_t slots = shard_.slots.size();
  const size_t at = shard_.begin + first; // in the params' arena
  // chunk_step's args: param, state slots, grad; its results: param, state
  // slots, written straight into the next ones for a whole window.
  // Member vectors: no allocation per window once the first step ran.
  std::vector<float *> &inputs = windowInPtrs_, &outputs = windowOutPtrs_;
  inputs.assign({state_.paramArena(/*next=*/false) + at});
  outputs.assign({state_.paramArena(/*next=*/true) + at});
  for (size_t s = 0; s < slots; ++s) {
    inputs.push_back(state_.stateRange(s, /*next=*/false).as<float>() + first);
    outputs.push_back(state_.stateRange(s, /*next=*/true).as<float>() + first);
  }
  inputs.push_back(grads + first);
  const bool shortWindow = count < chunk_;
  if (shortWindow)
    for (size_t i = 0; i < inputs.size(); ++i) {
      float *padded = windowIn_[i].as<float>();
      std::memcpy(padded, inputs[i], count * sizeof(float));
      std::memset(padded + count, 0, (chunk_ - count) * sizeof(float));
      inputs[i] = padded;
    }
  std::vector<void *> &buffers = windowBuffers_;
  buffers.assign(inputs.begin(), inputs.end());
  for (AlignedBuffer &hyper : hypers)
    buffers.push_back(hyper.data());
  buffers.push_back(norm_.data());
  for (size_t i = 0; i < outputs.size(); ++i)
    buffers.push_back(shortWindow ? windowOut_[i].data() : outputs[i]);
  chunkStep_(buffers.data());
  if (shortWindow)
    for (size_t i = 0; i < outputs.size(); ++i)
      std::memcpy(outputs[i], windowOut_[i].data(), count * sizeof(float));
}

} // namespace lmc::rt
