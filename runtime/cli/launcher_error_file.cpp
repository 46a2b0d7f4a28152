//===- launcher_error_file.cpp - The failure as torchrun reads it --------===//

#include "cli/launcher_error_file.h"

#include "base/error.h"
#include "io/file_io.h"
#include "io/json.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace lmc::rt {

std::string launcherErrorJson(const std::string &message,
                              int64_t unixSeconds) {
  std::string json = "{\"message\": {\"message\": ";
  appendJsonString(json, message);
  json += ", \"extraInfo\": {\"timestamp\": ";
  appendJsonString(json, std::to_string(unixSeconds));
  json += "}}}\n";
  return json;
}

void writeLauncherErrorFile(const std::string &message) {
  const char *path = std::getenv("TORCHELASTIC_ERROR_FILE");
  if (!path || !*path)
    return;
  try {
    const std::string json = launcherErrorJson(message, std::time(nullptr));
    writeFileAtomically(path, {{json.data(), json.size()}});
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: cannot write TORCHELASTIC_ERROR_FILE: %s\n",
                 e.what());
  }
}

} // namespace lmc::rt
