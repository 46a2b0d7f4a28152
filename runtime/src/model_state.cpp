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
  // desc.inits is parallel to desc.params() and range-checked.
  for (size_t i = 0; i < params_.size(); ++i)
    std::memcpy(param(i).data(), weights + desc.inits[i].offset,
                desc.inits[i].size);
}

int ModelState::paramIndex(const std::string &name) const {
  for (size_t i = 0; i < params_.size(); ++i)
    if (params_[i]->name == name)
      return int(i);
  return -1;
}

int ModelState::stateIndex(const std::string &name) const {
  for (size_t i = 0; i < states_.size(); ++i)
    if (states_[i]->name == name)
      return int(i);
  return -1;
}

void ModelState::loadParams(const std::string &path) {
  SafetensorsFile file = readSafetensorsFile(path);
  for (size_t i = 0; i < params_.size(); ++i) {
    const TensorSpec &spec = *params_[i];
    const SafetensorsTensor *t = file.find(spec.name);
    LMC_CHECK(t, path, ": missing parameter '", spec.name, "'");
    LMC_CHECK(t->dtype == safetensorsDTypeName(spec.dtype), path,
              ": parameter '", spec.name, "' has dtype ", t->dtype,
              ", the model expects ", safetensorsDTypeName(spec.dtype));
    LMC_CHECK(t->shape == spec.shape, path, ": parameter '", spec.name,
              "' has shape ", formatShape(t->shape), ", the model expects ",
              formatShape(spec.shape));
  }
  // Copy only after everything validated, so a bad file changes nothing.
  for (size_t i = 0; i < params_.size(); ++i) {
    const SafetensorsTensor *t = file.find(params_[i]->name);
    std::memcpy(param(i).data(), file.data(*t), t->end - t->begin);
  }
}

void ModelState::saveParams(const std::string &path) {
  std::vector<TensorView> tensors;
  for (size_t i = 0; i < params_.size(); ++i)
    tensors.push_back({params_[i]->name, params_[i]->dtype, params_[i]->shape,
                       param(i).data()});
  writeSafetensorsFile(path, tensors, {{"format", "pt"}});
}

} // namespace lmc::rt
