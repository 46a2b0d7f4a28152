//===- format_bytes.h - Byte counts for people ---------------------------===//
//
// How --info, the memory check and the progress lines print sizes.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_FORMAT_BYTES_H
#define LMC_RUNTIME_FORMAT_BYTES_H

#include <cstdint>
#include <string>

namespace lmc::rt {

/// "512 B", "1.5 MiB", "3.0 GiB".
std::string formatBytes(uint64_t bytes);

} // namespace lmc::rt

#endif // LMC_RUNTIME_FORMAT_BYTES_H
