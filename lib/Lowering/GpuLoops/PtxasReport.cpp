//===- PtxasReport.cpp - What ptxas -v says about kernels -----------------===//

#include "PtxasReport.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Regex.h"

namespace lmc {

namespace {

constexpr int64_t kMaxThreadsPerBlock = 1024;
/// Beyond 48 KiB a kernel must opt in (cudaFuncSetAttribute), which the
/// runtime does not.
constexpr int64_t kSharedBytesPerBlock = 48 * 1024;
/// Registers are allocated per warp, in units of 256 (8 per thread).
constexpr int64_t kWarp = 32;
constexpr int64_t kRegisterUnit = 256;

int64_t number(llvm::StringRef text) {
  int64_t value = 0;
  text.getAsInteger(10, value);
  return value;
}

} // namespace

KernelReport parsePtxasReport(llvm::StringRef report) {
  static const llvm::Regex entry("Compiling entry function '([^']+)'");
  static const llvm::Regex frame("([0-9]+) bytes stack frame, ([0-9]+) bytes "
                                 "spill stores, ([0-9]+) bytes spill loads");
  static const llvm::Regex used("Used ([0-9]+) registers");
  static const llvm::Regex shared("([0-9]+) bytes smem");
  KernelReport kernels;
  KernelResources *current = nullptr;
  llvm::SmallVector<llvm::StringRef> lines;
  report.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    llvm::SmallVector<llvm::StringRef, 4> m;
    if (entry.match(line, &m)) {
      current = &kernels[m[1].str()];
    } else if (!current) {
      continue;
    } else if (frame.match(line, &m)) {
      current->stackBytes = number(m[1]);
      current->spillStores = number(m[2]);
      current->spillLoads = number(m[3]);
    } else if (used.match(line, &m)) {
      current->registers = number(m[1]);
      if (shared.match(line, &m))
        current->sharedBytes = number(m[1]);
    }
  }
  return kernels;
}

llvm::StringMap<int64_t> maxThreadsPerEntry(llvm::StringRef ptx) {
  // `.entry name(` params `)` then performance directives, then `{`.
  static const llvm::Regex entry("\\.entry[ \t]+([A-Za-z0-9_$.]+)");
  static const llvm::Regex maxntid(
      "\\.maxntid[ \t]+([0-9]+)(,[ \t]*([0-9]+))?(,[ \t]*([0-9]+))?");
  llvm::StringMap<int64_t> result;
  llvm::StringRef rest = ptx;
  llvm::SmallVector<llvm::StringRef, 6> m;
  while (entry.match(rest, &m)) {
    std::string name = m[1].str();
    rest = rest.drop_front(m[0].data() + m[0].size() - rest.data());
    llvm::StringRef header = rest.take_until([](char c) { return c == '{'; });
    if (maxntid.match(header, &m)) {
      int64_t threads = number(m[1]);
      if (!m[3].empty())
        threads *= number(m[3]);
      if (!m[5].empty())
        threads *= number(m[5]);
      result[name] = threads;
    }
    rest = rest.drop_front(header.size());
  }
  return result;
}

unsigned registersPerBlock(llvm::StringRef chip) {
  return chip == "sm_53" || chip == "sm_62" ? 32 * 1024 : 64 * 1024;
}

std::string whyCannotLaunch(const KernelResources &resources, int64_t threads,
                            int64_t dynamicShared, const LaunchLimits &limits) {
  if (threads > kMaxThreadsPerBlock)
    return llvm::formatv("blocks of {0} threads, more than {1}", threads,
                         kMaxThreadsPerBlock);
  if (limits.maxThreads && threads > limits.maxThreads)
    return llvm::formatv("blocks of {0} threads, more than its .maxntid {1}",
                         threads, limits.maxThreads);
  int64_t warps = llvm::divideCeil(threads, kWarp);
  int64_t perWarp =
      llvm::alignTo(resources.registers * kWarp, uint64_t(kRegisterUnit));
  if (warps * perWarp > int64_t(limits.registersPerBlock))
    return llvm::formatv(
        "{0} registers per thread, allocated {1} per warp, make {2} for a "
        "block of {3} threads, more than the {4} a block may use",
        resources.registers, perWarp, warps * perWarp, threads,
        limits.registersPerBlock);
  int64_t shared = resources.sharedBytes + dynamicShared;
  if (shared > kSharedBytesPerBlock)
    return llvm::formatv("{0} bytes of shared memory per block ({1} static, "
                         "{2} dynamic), more than {3}",
                         shared, resources.sharedBytes, dynamicShared,
                         kSharedBytesPerBlock);
  return "";
}

} // namespace lmc
