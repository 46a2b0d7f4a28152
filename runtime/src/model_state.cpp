//===- model_state.cpp - Parameters and optimizer state ------------------===//

#include "model_state.h"

#include "error.h"
#include "safetensors.h"

#include <cstring>

namespace lmc::rt {

ModelState::ModelState(const Descriptor &desc, const unsigned char *weights)
    : params_(desc.params()), states_(desc.trainArgsWithRole(Role::State)) {
  for (auto &buffers : paramBuffers_)
    for (const TensorSpec *spec : params_)
      buffers.emplace_back(spec->byteSize());
  for (auto &buffers : stateBuffers_)
    for (const TensorSpec *spec : states_)
      buffers.emplace_back(spec->byteSize());
  for (size_t i = 0; i < params_.size(); ++i)
    paramIndex_.emplace(params_[i]->name, int(i));
  for (size_t i = 0; i < states_.size(); ++i)
    stateIndex_.emplace(states_[i]->name, int(i));
  // desc.inits is parallel to desc.params() and range-checked.
  for (size_t i = 0; i < params_.size(); ++i)
    std::memcpy(param(i).data(), weights + desc.inits[i].offset,
                desc.inits[i].size);
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
  if (spec.role == Role::State)
    return stateBuffers_[parity][size_t(stateIndex(spec.name))].data();
  return nullptr;
}

namespace {

void checkTensor(const SafetensorsFile &file, const TensorSpec &spec,
                 const std::string &source, const char *what) {
  const SafetensorsTensor *t = file.find(spec.name);
  LMC_CHECK(t, source, ": missing ", what, " '", spec.name, "'");
  LMC_CHECK(t->dtype == safetensorsDTypeName(spec.dtype), source, ": ", what,
            " '", spec.name, "' has dtype ", t->dtype, ", the model expects ",
            safetensorsDTypeName(spec.dtype));
  LMC_CHECK(t->shape == spec.shape, source, ": ", what, " '", spec.name,
            "' has shape ", formatShape(t->shape), ", the model expects ",
            formatShape(spec.shape));
}

} // namespace

void ModelState::restore(const SafetensorsFile &file, const std::string &source,
                         bool withState) {
  for (const TensorSpec *spec : params_)
    checkTensor(file, *spec, source, "parameter");
  if (withState)
    for (const TensorSpec *spec : states_)
      checkTensor(file, *spec, source, "optimizer state");
  // Copy only after everything validated, so a bad file changes nothing.
  for (size_t i = 0; i < params_.size(); ++i) {
    const SafetensorsTensor *t = file.find(params_[i]->name);
    std::memcpy(param(i).data(), file.data(*t), t->end - t->begin);
  }
  if (withState)
    for (size_t i = 0; i < states_.size(); ++i) {
      const SafetensorsTensor *t = file.find(states_[i]->name);
      std::memcpy(state(i).data(), file.data(*t), t->end - t->begin);
    }
}

void ModelState::loadParams(const std::string &path) {
  restore(readSafetensorsFile(path), path, /*withState=*/false);
}

std::vector<TensorView> ModelState::views(bool withState) {
  std::vector<TensorView> tensors;
  for (size_t i = 0; i < params_.size(); ++i)
    tensors.push_back({params_[i]->name, params_[i]->dtype, params_[i]->shape,
                       param(i).data()});
  if (withState)
    for (size_t i = 0; i < states_.size(); ++i)
      tensors.push_back({states_[i]->name, states_[i]->dtype,
                         states_[i]->shape, state(i).data()});
  return tensors;
}

void ModelState::saveParams(const std::string &path) {
  writeSafetensorsFile(path, views(/*withState=*/false), {{"format", "pt"}});
}

} // namespace lmc::rt
