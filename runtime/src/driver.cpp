//===- driver.cpp - main() of a training executable ----------------------===//

#include "driver.h"

#include "config.h"
#include "dataset.h"
#include "descriptor.h"
#include "error.h"
#include "eval.h"
#include "hyper.h"
#include "info.h"
#include "metrics.h"
#include "model_state.h"
#include "trainer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>

namespace lmc::rt {

namespace {

std::string programName(int argc, char **argv) {
  if (argc < 1 || !argv[0])
    return "train";
  const char *slash = std::strrchr(argv[0], '/');
  return slash ? slash + 1 : argv[0];
}

void train(const Config &config, const CompiledModel &model) {
  Descriptor desc = parseDescriptor(model.descriptor, model.weightsSize);
  if (config.info) {
    std::fputs(formatModelInfo(desc).c_str(), stdout);
    return;
  }
  std::vector<const TensorSpec *> inputs = desc.trainArgsWithRole(Role::Input);
  LMC_CHECK(!inputs.empty(), "the model takes no inputs; nothing to train on");

  ModelState state(desc, model.weights);
  if (!config.initPath.empty())
    state.loadParams(config.initPath);
  HyperParams hyper = resolveHyperParams(desc, config.lr);
  Dataset data = Dataset::load(config.inputs, inputs, "--input");

  std::unique_ptr<Evaluator> evaluator;
  if (!config.evalInputs.empty()) {
    std::vector<const TensorSpec *> evalInputs;
    for (const TensorSpec &arg : desc.evalArgs)
      if (arg.role == Role::Input)
        evalInputs.push_back(&arg);
    evaluator = std::make_unique<Evaluator>(
        desc, Dataset::load(config.evalInputs, evalInputs, "--eval-input"),
        model.evalStep);
  }
  LMC_CHECK(config.evalEvery == 0 || evaluator,
            "--eval-every needs --eval-input data");

  MetricsFile metrics(config.metricsPath);
  Trainer(desc, config, model.trainStep, state, data, hyper, evaluator.get(),
          metrics)
      .run();
  metrics.close();
  if (!config.savePath.empty()) {
    state.saveParams(config.savePath);
    std::printf("saved parameters to %s\n", config.savePath.c_str());
  }
}

} // namespace

int runTrainingMain(int argc, char **argv, const CompiledModel &model) {
  const std::string program = programName(argc, argv);
  try {
    std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
    Config config;
    try {
      config = parseFlags(args);
    } catch (const UsageError &e) {
      std::fprintf(stderr, "error: %s\nrun '%s --help' for usage\n", e.what(),
                   program.c_str());
      return 2;
    }
    if (config.help) {
      std::fputs(usageText(program).c_str(), stdout);
    } else {
      train(config, model);
    }
    // Output piped to a full disk must not look like success.
    LMC_CHECK_SYS(std::fflush(stdout) == 0, "cannot write to stdout");
    return 0;
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "error: out of memory\n");
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "error: unknown internal error\n");
  }
  std::fflush(stdout);
  return 1;
}

} // namespace lmc::rt
