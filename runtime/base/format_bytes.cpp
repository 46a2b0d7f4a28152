//===- format_bytes.cpp - Byte counts for people -------------------------===//

#include "base/format_bytes.h"

#include <cstdio>

namespace lmc::rt {

std::string formatBytes(uint64_t bytes) {
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = double(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, unit == 0 ? "%.0f %s" : "%.1f %s", value,
                units[unit]);
  return buf;
}

} // namespace lmc::rt
