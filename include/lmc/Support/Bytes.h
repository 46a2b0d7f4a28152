//===- Bytes.h - Byte counts in the compiler's messages --------*- C++ -*-===//
//
// One spelling for sizes in every diagnostic the compiler prints (the
// parameter budget, the activation budget): the exact count a user can
// pass back to a flag, then a rounded binary unit to read.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_SUPPORT_BYTES_H
#define LMC_SUPPORT_BYTES_H

#include <cstdint>
#include <cstdio>
#include <string>

namespace lmc {

/// "123 bytes" or "9663676416 bytes (9.0 GiB)".
inline std::string describeBytes(uint64_t bytes) {
  std::string text = std::to_string(bytes) + " bytes";
  const char *units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = double(bytes);
  int unit = -1;
  while (value >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  if (unit >= 0) {
    char scaled[32];
    std::snprintf(scaled, sizeof(scaled), " (%.1f %s)", value, units[unit]);
    text += scaled;
  }
  return text;
}

} // namespace lmc

#endif // LMC_SUPPORT_BYTES_H
