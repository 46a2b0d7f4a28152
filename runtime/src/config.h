//===- config.h - Command-line flags of a training executable ------------===//
//
// All run-time options live in one Config struct, filled from argv by
// parseFlags. docs/training-executable.md documents every flag.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_CONFIG_H
#define LMC_RUNTIME_CONFIG_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lmc::rt {

/// `--input NAME=FILE`.
struct NamedFile {
  std::string name;
  std::string path;
};

struct Config {
  std::vector<NamedFile> inputs;     // --input, repeatable
  std::vector<NamedFile> evalInputs; // --eval-input, repeatable
  int64_t steps = 100;               // --steps
  std::optional<double> lr;          // --lr (else the compiled default)
  int64_t logEvery = 10;             // --log-every
  int64_t evalEvery = 0;             // --eval-every (0: only after training)
  bool shuffle = false;              // --shuffle
  uint64_t seed = 0;                 // --seed
  std::string metricsPath;           // --metrics FILE.jsonl
  std::string savePath;              // --save FILE.safetensors
  std::string initPath;              // --init FILE.safetensors
  bool info = false;                 // --info
  bool help = false;                 // --help
};

/// Parses the arguments after argv[0]. Throws UsageError on any problem.
Config parseFlags(const std::vector<std::string> &args);

/// The --help text.
std::string usageText(const std::string &program);

} // namespace lmc::rt

#endif // LMC_RUNTIME_CONFIG_H
