//===- info.h - --info: describe the compiled model ----------------------===//
#ifndef LMC_RUNTIME_INFO_H
#define LMC_RUNTIME_INFO_H

#include "base/format_bytes.h"
#include "model/descriptor.h"

#include <cstdint>
#include <string>

namespace lmc::rt {

/// Human-readable summary: params with shapes and element counts, total
/// parameter count, inputs, batch size, loss, optimizer, hparams, FLOPs,
/// precision, activation memory and the compiled schedule.
std::string formatModelInfo(const Descriptor &desc);

} // namespace lmc::rt

#endif // LMC_RUNTIME_INFO_H
