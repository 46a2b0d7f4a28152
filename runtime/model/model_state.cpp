//===- model_state.cpp - Parameters, optimizer state and model buffers ---===//

#include "model/model_state.h"

#include "model/init_matching.h"

#include "model/pieces.h"

#include "base/error.h"
#include "io/safetensors.h"
#include "model/slices.h"

#include <algorithm>
#include <cstring>

namespace lmc::rt {

namespace {

/// Two blocks per tensor, or one seen twice for a tensor the steps update
/// in place (`inPlace`).
void allocate(std::array<std::vector<AlignedBuffer>, 2> &storage,
              const std::vector<const TensorSpec *> &specs,
              std::unordered_map<std::string, int> &index,
              const std::set<std::string> &inPlace = {}) {
  for (const TensorSpec *spec : specs) {
    storage[0].emplace_back(spec->byteSize());
    storage[1].push_back(
        inPlace.count(spec->name)
            ? AlignedBuffer::view(storage[0].back().data(), spec->byteSize())
            : AlignedBuffer(spec->byteSize()));
  }
  for (size_t i = 0; i < specs.size(); ++i)
    index.emplace(specs[i]->name, int(i));
}

} // namespace

ModelState::ModelState(const Descriptor &desc, const unsigned char *weights,
                       int64_t modelRank, std::optional<StateShard> shard,
                       bool weightsOutlive)
    : params_(desc.params()), states_(desc.trainArgsWithRole(Role::State)),
      buffers_(desc.buffers()), frozen_(desc.frozen()),
      modelParallel_(desc.modelParallel),
      modelRank_(modelRank), joins_(desc.joins), shard_(std::move(shard)) {
  allocate(bufferValues_, buffers_, bufferIndex_);
  if (shard_) {
    allocateShardedStorage();
  } else {
    allocate(paramBuffers_, params_, paramIndex_, desc.inPlace);
    allocate(stateBuffers_, states_, stateIndex_, desc.inPlace);
  }
  frozenBorrowed_ = weightsOutlive;
  for (size_t i = 0; i < frozen_.size(); ++i)
    frozenIndex_.emplace(frozen_[i]->name, int(i));
  // desc.inits is parallel to params(), buffers() then frozen(), and
  // range-checked.
  for (size_t i = 0; i < params_.size(); ++i)
    copyOwnPart(*params_[i], modelParallel_, modelRank_,
                weights + desc.inits[i].offset, param(i).data());
  for (size_t i = 0; i < buffers_.size(); ++i) {
    const InitSpec &init = desc.inits[params_.size() + i];
    std::memcpy(bufferValue(i).data(), weights + init.offset, init.size);
  }
  // One block seen twice: no step writes a frozen tensor (a view of the
  // read-only mapping faults if one did).
  for (size_t i = 0; i < frozen_.size(); ++i) {
    const InitSpec &init = desc.inits[params_.size() + buffers_.size() + i];
    if (frozenBorrowed_) {
      frozenValues_[0].push_back(AlignedBuffer::view(
          const_cast<unsigned char *>(weights + init.offset), init.size));
    } else {
      frozenValues_[0].emplace_back(init.size);
      std::memcpy(frozenValues_[0][i].data(), weights + init.offset,
                  init.size);
    }
    frozenValues_[1].push_back(
        AlignedBuffer::view(frozenValues_[0][i].data(), init.size));
  }
  LMC_CHECK(!shard_ || desc.stateInits.empty(),
            "internal error: a sharded state with initial values");
  for (const InitSpec &init : desc.stateInits)
    std::memcpy(state(size_t(stateIndex(init.name))).data(),
                weights + init.offset, init.size);
}

void ModelState::ownFrozen() {
  if (!frozenBorrowed_)
    return;
  for (size_t i = 0; i < frozen_.size(); ++i) {
    AlignedBuffer own(frozen_[i]->byteSize());
    std::memcpy(own.data(), frozenValues_[0][i].data(),
                frozen_[i]->byteSize());
    frozenValues_[0][i] = std::move(own);
    frozenValues_[1][i] =
        AlignedBuffer::view(frozenValues_[0][i].data(), frozen_[i]->byteSize());
  }
  frozenBorrowed_ = false;
}

void ModelState::allocateShardedStorage() {
  const StateShard &shard = *shard_;
  LMC_CHECK(shard.offsets.size() == params_.size() &&
                shard.begin <= shard.end && shard.end <= shard.floats,
            "internal error: a state shard for another model");
  for (int parity : {0, 1}) {
    paramArenas_[parity] = AlignedBuffer(shard.floats * sizeof(float));
    for (size_t i = 0; i < params_.size(); ++i)
      paramBuffers_[parity].push_back(AlignedBuffer::view(
          paramArenas_[parity].as<float>() + shard.offsets[i],
          params_[i]->byteSize()));
    for (size_t slot = 0; slot < shard.slots.size(); ++slot)
      stateBuffers_[parity].emplace_back((shard.end - shard.begin) *
                                         sizeof(float));
  }
  for (size_t i = 0; i < params_.size(); ++i)
    paramIndex_.emplace(params_[i]->name, int(i));
}

void ModelState::commitBuffers() {
  for (size_t i = 0; i < buffers_.size(); ++i)
    std::memcpy(bufferValue(i).data(), bufferValues_[1 - current_][i].data(),
                buffers_[i]->byteSize());
}

int ModelState::paramIndex(const std::string &name) const {
  auto it = paramIndex_.find(name);
  return it == paramIndex_.end() ? -1 : it->second;
}

int ModelState::stateIndex(const std::string &name) const {
  auto it = stateIndex_.find(name);
  return it == stateIndex_.end() ? -1 : it->second;
}

void *ModelState::buffer(const TensorSpec &spec, bool next) {
  const int parity = next ? 1 - current_ : current_;
  if (spec.role == Role::Param)
    return paramBuffers_[parity][size_t(paramIndex(spec.name))].data();
  if (spec.role == Role::State) {
    LMC_CHECK(!shard_, "internal error: whole state '", spec.name,
              "' asked of a sharded state");
    return stateBuffers_[parity][size_t(stateIndex(spec.name))].data();
  }
  if (spec.role == Role::Buffer) {
    auto it = bufferIndex_.find(spec.name);
    return it == bufferIndex_.end()
               ? nullptr
               : bufferValues_[parity][size_t(it->second)].data();
  }
  if (spec.role == Role::Frozen) {
    auto it = frozenIndex_.find(spec.name);
    return it == frozenIndex_.end()
               ? nullptr
               : frozenValues_[parity][size_t(it->second)].data();
  }
  return nullptr;
}

namespace {

void checkTensor(const SafetensorsFile &file, const TensorSpec &spec,
                 const Shape &shape, const std::string &source,
                 const char *what) {
  const SafetensorsTensor *t = file.find(spec.name);
  LMC_CHECK(t, source, ": missing ", what, " '", spec.name, "'");
  LMC_CHECK(t->dtype == safetensorsDTypeName(spec.dtype), source, ": ", what,
            " '", spec.name, "' has dtype ", t->dtype, ", the model expects ",
            safetensorsDTypeName(spec.dtype));
  LMC_CHECK(t->shape == shape, source, ": ", what, " '", spec.name,
            "' has shape ", formatShape(t->shape), ", the model expects ",
            formatShape(shape));
}

} // namespace

std::vector<ModelState::Group> ModelState::groups(bool withState,
                                                  bool withFrozen) {
  std::vector<Group> all = {{&params_, &paramBuffers_, "parameter"},
                            {&buffers_, &bufferValues_, "buffer"}};
  if (withState && !shard_)
    all.push_back({&states_, &stateBuffers_, "optimizer state"});
  if (withFrozen)
    all.push_back({&frozen_, &frozenValues_, "frozen tensor"});
  return all;
}

ModelState::StateHome ModelState::stateHome(const TensorSpec &state) const {
  // `<param>.<slot>`: parseDescriptor checked that every state is one, for
  // a slot of chunk_step's.
  const size_t dot = state.name.rfind('.');
  const int param = paramIndex(state.name.substr(0, dot));
  const std::vector<std::string> &slots = shard_->slots;
  const auto slot =
      std::find(slots.begin(), slots.end(), state.name.substr(dot + 1));
  LMC_CHECK(param >= 0 && slot != slots.end(), "internal error: state '",
            state.name, "' has no place in the shard");
  return {size_t(param), size_t(slot - slots.begin())};
}

void ModelState::restoreStateRanges(const SafetensorsFile &file) {
  const StateShard &shard = *shard_;
  AlignedBuffer slice; // a split state's model slice
  for (const TensorSpec *state : states_) {
    const StateHome home = stateHome(*state);
    // The part of the tensor inside this process's range of the arena.
    const size_t first = shard.offsets[home.param];
    const size_t lo = std::max(first, shard.begin);
    const size_t hi =
        std::min(first + size_t(state->numElements()), shard.end);
    if (lo >= hi)
      continue;
    const uint8_t *whole = file.data(*file.find(state->name));
    if (state->splitDim >= 0) { // the arena holds this process's slice
      slice = AlignedBuffer(state->byteSize());
      copyOwnPart(*state, modelParallel_, modelRank_, whole, slice.data());
      whole = static_cast<const uint8_t *>(slice.data());
    }
    float *range = stateRange(home.slot, /*next=*/false).as<float>();
    std::memcpy(range + (lo - shard.begin), whole + (lo - first) * sizeof(float),
                (hi - lo) * sizeof(float));
  }
}

void ModelState::restore(const SafetensorsFile &file, const std::string &source,
                         bool withState) {
  // A checkpoint holds the frozen tensors when a file had replaced them.
  const bool withFrozen =
      withState && !frozen_.empty() && file.find(frozen_.front()->name);
  if (withFrozen)
    ownFrozen();
  restoreGroups(file, source, groups(withState, withFrozen),
                withState && shard_);
  frozenFromFile_ = frozenFromFile_ || withFrozen;
}

void ModelState::restoreGroups(const SafetensorsFile &file,
                               const std::string &source,
                               const std::vector<Group> &restored,
                               bool shardedState) {
  // Files hold whole tensors: a split one has the shape of all slices.
  for (const Group &group : restored)
    for (const TensorSpec *spec : *group.specs)
      checkTensor(file, *spec, wholeShape(*spec, modelParallel_), source,
                  group.what);
  if (shardedState)
    for (const TensorSpec *spec : states_)
      checkTensor(file, *spec, wholeShape(*spec, modelParallel_), source,
                  "optimizer state");
  // Copy only after everything validated, so a bad file changes nothing.
  for (const Group &group : restored)
    for (size_t i = 0; i < group.specs->size(); ++i) {
      const TensorSpec &spec = *(*group.specs)[i];
      const SafetensorsTensor &tensor = *file.find(spec.name);
      copyOwnPart(spec, modelParallel_, modelRank_, file.data(tensor),
                  (*group.storage)[current_][i].data());
      file.release(file.data(tensor), tensor.end - tensor.begin);
    }
  if (shardedState)
    restoreStateRanges(file);
}

LoadedInit ModelState::loadParams(HfCheckpoint &checkpoint,
                                  const std::string &source) {
  std::vector<const SafetensorsFile *> shards;
  for (SafetensorsFile &shard : checkpoint.shards) {
    addPieceEntries(shard, joins_);
    shards.push_back(&shard);
  }
  std::vector<const TensorSpec *> trained = params_;
  trained.insert(trained.end(), buffers_.begin(), buffers_.end());
  // With frozen tensors, the groups the file means to hold (some tensor of
  // the group has a candidate), each then whole; neither: the trained
  // ones, whose absence the error names.
  const bool withFrozen =
      !frozen_.empty() && countMatchable(shards, frozen_) > 0;
  const bool withTrained =
      !withFrozen || countMatchable(shards, trained) > 0;
  std::vector<const TensorSpec *> expected;
  std::vector<Group> restored;
  if (withTrained) {
    expected = trained;
    restored = groups(/*withState=*/false);
  }
  if (withFrozen) {
    expected.insert(expected.end(), frozen_.begin(), frozen_.end());
    restored.push_back({&frozen_, &frozenValues_, "frozen tensor"});
  }
  MatchedInit matched = matchInitTensors(shards, expected, source);
  if (withFrozen)
    ownFrozen();
  restoreGroups(matched.file, source, restored, /*shardedState=*/false);
  frozenFromFile_ = frozenFromFile_ || withFrozen;
  if (withFrozen && !withTrained)
    matched.summary += concat("; the ", trained.size(),
                              " trained tensors keep their initial values");
  LoadedInit loaded{matched.summary, {}};
  for (size_t e = 0; e < expected.size(); ++e)
    loaded.sourceNames[expected[e]->name] = matched.sourceNames[e];
  return loaded;
}

std::vector<TensorView> ModelState::views(bool withState) {
  std::vector<TensorView> tensors;
  for (const Group &group : groups(withState, withState && frozenFromFile_))
    for (size_t i = 0; i < group.specs->size(); ++i) {
      const TensorSpec &spec = *(*group.specs)[i];
      tensors.push_back({spec.name, spec.dtype, spec.shape,
                         (*group.storage)[current_][i].data()});
    }
  return tensors;
}

void ModelState::saveParams(const std::string &path) {
  std::vector<AlignedBuffer> joined;
  writeSafetensorsFile(
      path, joinPieces(views(/*withState=*/false), joins_, joined),
      {{"format", "pt"}});
}

} // namespace lmc::rt
