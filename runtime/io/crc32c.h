//===- crc32c.h - CRC-32C (Castagnoli) -----------------------------------===//
//
// Used by TensorBoard's TFRecord framing (masked CRC) and for the data
// checksum of checkpoints.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_CRC32C_H
#define LMC_RUNTIME_CRC32C_H

#include <cstddef>
#include <cstdint>

namespace lmc::rt {

/// Extends `crc` (0 to start) with `size` bytes. crc32c("123456789") is
/// 0xE3069283.
uint32_t crc32c(const void *data, size_t size, uint32_t crc = 0);

/// TFRecord's masked CRC: ((crc >> 15) | (crc << 17)) + 0xa282ead8.
uint32_t maskedCrc32c(const void *data, size_t size);

} // namespace lmc::rt

#endif // LMC_RUNTIME_CRC32C_H
