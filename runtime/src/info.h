//===- info.h - --info: describe the compiled model ----------------------===//
#ifndef LMC_RUNTIME_INFO_H
#define LMC_RUNTIME_INFO_H

#include "descriptor.h"

#include <string>

namespace lmc::rt {

/// Human-readable summary: params with shapes and element counts, total
/// parameter count, inputs, batch size, loss, optimizer, hparams and FLOPs.
std::string formatModelInfo(const Descriptor &desc);

} // namespace lmc::rt

#endif // LMC_RUNTIME_INFO_H
