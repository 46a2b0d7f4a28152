//===- error.cpp - Runtime errors ----------------------------------------===//

#include "base/error.h"

#include <cstring>

namespace lmc::rt {

std::string sourceLocation(const char *file, int line) {
  std::string path = file;
  size_t pos = path.rfind("runtime/");
  if (pos != std::string::npos)
    path = path.substr(pos);
  return concat(path, ":", line);
}

std::string systemErrorMessage(const std::string &what, int errnum,
                               const char *file, int line) {
  return concat(what, ": ", std::strerror(errnum), " [",
                sourceLocation(file, line), "]");
}

} // namespace lmc::rt
