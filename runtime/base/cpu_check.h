//===- cpu_check.h - Does this CPU run the compiled code? ----------------===//
//
// An executable compiled with `lmc --cpu NAME` may use the extensions of
// that CPU (lmc/runtime/cpu_features.h); before the first step the runtime
// checks them against CPUID and refuses to start on a CPU that lacks one,
// naming what is missing and which `--cpu` would run here.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_BASE_CPU_CHECK_H
#define LMC_RUNTIME_BASE_CPU_CHECK_H

#include <string>
#include <vector>

namespace lmc::rt {

/// Whether this CPU (and the OS, for the vector registers' state) supports
/// `feature`, a name of kCpuFeatures; false for names not in the table.
bool cpuSupports(const std::string &feature);

/// This CPU's brand string ("AMD EPYC 9R14 96-Core Processor"), or
/// "unknown CPU".
std::string cpuBrand();

/// The highest x86-64 level (kCpuLevels) this CPU runs, or "x86-64".
std::string cpuLevel();

/// The comma-separated `features` this CPU lacks.
std::vector<std::string> missingCpuFeatures(const std::string &features);

/// "" when this CPU runs code compiled for `cpu` with `features`
/// (lmc_target_cpu, lmc_target_cpu_features), else the message that says
/// what is missing and how to recompile.
std::string checkTargetCpu(const std::string &cpu, const std::string &features);

} // namespace lmc::rt

#endif // LMC_RUNTIME_BASE_CPU_CHECK_H
