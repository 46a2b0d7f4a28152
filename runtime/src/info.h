//===- info.h - --info: describe the compiled model ----------------------===//
#ifndef LMC_RUNTIME_INFO_H
#define LMC_RUNTIME_INFO_H

#include "descriptor.h"

#include <cstdint>
#include <string>

namespace lmc::rt {

/// Human-readable summary: params with shapes and element counts, total
/// parameter count, inputs, batch size, loss, optimizer, hparams, FLOPs,
/// precision, activation memory and the compiled schedule.
std::string formatModelInfo(const Descriptor &desc);

/// "512 B", "1.5 MiB", "3.0 GiB".
std::string formatBytes(uint64_t bytes);

} // namespace lmc::rt

#endif // LMC_RUNTIME_INFO_H
