//===- config.cpp - Command-line flags of a training executable ----------===//

#include "config.h"

#include "error.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>

namespace lmc::rt {

namespace {

int64_t parseCount(const std::string &flag, const std::string &text,
                   int64_t minimum) {
  errno = 0;
  char *end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || value < minimum ||
      text.find_first_not_of("0123456789") != std::string::npos)
    throw UsageError(
        concat(flag, " expects an integer >= ", minimum, ", got '", text, "'"));
  return value;
}

uint64_t parseSeed(const std::string &text) {
  errno = 0;
  char *end = nullptr;
  unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE ||
      text.find_first_not_of("0123456789") != std::string::npos)
    throw UsageError(
        concat("--seed expects a non-negative integer, got '", text, "'"));
  return value;
}

// A learning rate of 0 is allowed: it runs the step (loss, metrics) and
// leaves the parameters as they are.
double parseNonNegativeReal(const std::string &flag, const std::string &text) {
  errno = 0;
  char *end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE ||
      !std::isfinite(value) || value < 0)
    throw UsageError(
        concat(flag, " expects a non-negative number, got '", text, "'"));
  return value;
}

NamedFile parseNamedFile(const std::string &flag, const std::string &text,
                         std::set<std::string> &seen) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw UsageError(concat(flag, " expects NAME=FILE, got '", text, "'"));
  NamedFile nf{text.substr(0, eq), text.substr(eq + 1)};
  if (!seen.insert(nf.name).second)
    throw UsageError(concat(flag, " given twice for '", nf.name, "'"));
  return nf;
}

} // namespace

Config parseFlags(const std::vector<std::string> &args) {
  Config config;
  std::set<std::string> inputNames, evalInputNames;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::optional<std::string> inlineValue;
    if (size_t eq = flag.find('=');
        flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      inlineValue = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    }
    // Returns the flag's value: "--flag=value" or the next argument.
    auto value = [&]() -> std::string {
      if (inlineValue)
        return *inlineValue;
      if (i + 1 >= args.size())
        throw UsageError(concat(flag, " needs a value"));
      return args[++i];
    };
    auto noValue = [&]() {
      if (inlineValue)
        throw UsageError(concat(flag, " takes no value"));
    };

    if (flag == "--input")
      config.inputs.push_back(parseNamedFile(flag, value(), inputNames));
    else if (flag == "--eval-input")
      config.evalInputs.push_back(
          parseNamedFile(flag, value(), evalInputNames));
    else if (flag == "--steps")
      config.steps = parseCount(flag, value(), 0);
    else if (flag == "--lr")
      config.lr = parseNonNegativeReal(flag, value());
    else if (flag == "--log-every")
      config.logEvery = parseCount(flag, value(), 1);
    else if (flag == "--eval-every")
      config.evalEvery = parseCount(flag, value(), 1);
    else if (flag == "--seed") {
      config.seed = parseSeed(value());
    } else if (flag == "--metrics")
      config.metricsPath = value();
    else if (flag == "--save")
      config.savePath = value();
    else if (flag == "--init")
      config.initPath = value();
    else if (flag == "--shuffle") {
      noValue();
      config.shuffle = true;
    } else if (flag == "--info") {
      noValue();
      config.info = true;
    } else if (flag == "--help" || flag == "-h") {
      noValue();
      config.help = true;
    } else if (flag.rfind("-", 0) == 0)
      throw UsageError(concat("unknown flag '", flag, "'"));
    else
      throw UsageError(concat("unexpected argument '", flag, "'"));
  }
  return config;
}

std::string usageText(const std::string &program) {
  return concat(
      "usage: ", program, " --input NAME=FILE.npy ... [options]\n",
      "\n"
      "Trains the model compiled into this executable.\n"
      "\n"
      "data:\n"
      "  --input NAME=FILE.npy       training data for model input NAME\n"
      "                              (repeatable; first dim = samples)\n"
      "  --eval-input NAME=FILE.npy  evaluation data (repeatable)\n"
      "  --shuffle                   shuffle the samples every epoch\n"
      "  --seed S                    shuffle seed (default 0)\n"
      "training:\n"
      "  --steps N                   optimizer steps (default 100)\n"
      "  --lr F                      learning rate (default: compiled in)\n"
      "  --eval-every N              also evaluate every N steps\n"
      "parameters:\n"
      "  --init FILE.safetensors     start from these parameters\n"
      "  --save FILE.safetensors     write the final parameters\n"
      "output:\n"
      "  --log-every N               progress line every N steps "
      "(default 10)\n"
      "  --metrics FILE.jsonl        also write metrics as JSON lines\n"
      "  --info                      describe the model and exit\n"
      "  --help                      show this help\n");
}

} // namespace lmc::rt
