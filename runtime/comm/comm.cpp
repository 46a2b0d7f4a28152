//===- comm.cpp - Launcher detection and the single-process communicator --===//

#include "comm/comm.h"

#include "base/error.h"
#include "model/slices.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace lmc::rt {

namespace {

int parseRankVar(const char *name, const char *value, int minimum) {
  char *end = nullptr;
  errno = 0;
  long parsed = std::strtol(value, &end, 10);
  LMC_CHECK(*value && *end == '\0' && errno == 0 && parsed >= minimum &&
                parsed <= (1 << 24),
            "environment variable ", name, "='", value,
            "' is not a valid process count or rank");
  return int(parsed);
}

class SingleProcess final : public Communicator {
public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void allReduceSum(float *, size_t) override {}
  void allReduceMax(float *, size_t) override {}
  void broadcast(void *, size_t) override {}
  void allGather(const void *in, void *out, size_t bytes) override {
    if (bytes)
      std::memmove(out, in, bytes);
  }
  void reduceScatterSum(float *, const std::vector<size_t> &) override {}
  void allGatherParts(float *, const std::vector<size_t> &) override {}
  std::unique_ptr<Communicator> split(int, int) override {
    return std::make_unique<SingleProcess>();
  }
  [[noreturn]] void abort(int exitCode) override { std::exit(exitCode); }
};

} // namespace

LaunchInfo detectLaunch(
    const std::function<const char *(const char *)> &getenv) {
  // torchrun's workers (also under srun, whose variables they inherit).
  if (const char *worldSize = getenv("WORLD_SIZE")) {
    LaunchInfo info;
    info.size = parseRankVar("WORLD_SIZE", worldSize, 1);
    if (info.size > 1) {
      const char *rank = getenv("RANK"), *addr = getenv("MASTER_ADDR"),
                 *port = getenv("MASTER_PORT");
      LMC_CHECK(rank && addr && *addr && port, "WORLD_SIZE=", info.size,
                " (a torchrun-style launch) needs RANK, MASTER_ADDR and "
                "MASTER_PORT too");
      info.launcher = "torchrun";
      info.rank = parseRankVar("RANK", rank, 0);
      LMC_CHECK(info.rank < info.size, "RANK=", info.rank,
                " is not below WORLD_SIZE=", info.size);
      info.masterAddr = addr;
      info.masterPort = parseRankVar("MASTER_PORT", port, 1);
      LMC_CHECK(info.masterPort <= 65535, "MASTER_PORT=", port,
                " is not a TCP port");
      if (const char *local = getenv("LOCAL_WORLD_SIZE"))
        info.localSize = parseRankVar("LOCAL_WORLD_SIZE", local, 1);
      // PyTorch's own test: the value is Python's str(True).
      const char *agentStore = getenv("TORCHELASTIC_USE_AGENT_STORE");
      info.agentStore = agentStore && std::strcmp(agentStore, "True") == 0;
      if (const char *restarts = getenv("TORCHELASTIC_RESTART_COUNT"))
        info.restartCount =
            parseRankVar("TORCHELASTIC_RESTART_COUNT", restarts, 0);
      return info;
    }
  }
  static const struct {
    const char *launcher, *rankVar, *sizeVar, *localSizeVar;
  } launchers[] = {
      {"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
       "OMPI_COMM_WORLD_LOCAL_SIZE"},
      {"PMI", "PMI_RANK", "PMI_SIZE", "MPI_LOCALNRANKS"},
      {"Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_NTASKS_PER_NODE"},
  };
  for (const auto &l : launchers) {
    const char *rank = getenv(l.rankVar), *size = getenv(l.sizeVar);
    if (!rank || !size)
      continue;
    LaunchInfo info;
    info.launcher = l.launcher;
    info.size = parseRankVar(l.sizeVar, size, 1);
    info.rank = parseRankVar(l.rankVar, rank, 0);
    LMC_CHECK(info.rank < info.size, l.rankVar, "=", info.rank,
              " is not below ", l.sizeVar, "=", info.size);
    // Slurm writes e.g. "2(x3)" for uneven nodes: then it stays 1.
    const char *local = getenv(l.localSizeVar);
    if (local && std::strspn(local, "0123456789") == std::strlen(local))
      info.localSize = parseRankVar(l.localSizeVar, local, 1);
    if (const char *restarts = getenv("SLURM_RESTART_COUNT"))
      info.restartCount = parseRankVar("SLURM_RESTART_COUNT", restarts, 0);
    return info;
  }
  return LaunchInfo{};
}

namespace {
struct Done : PendingCollective {
  void wait() override {}
};
} // namespace

std::unique_ptr<PendingCollective>
Communicator::startAllReduceSum(float *data, size_t count) {
  allReduceSum(data, count);
  return std::make_unique<Done>();
}

void Communicator::allGatherRows(const float *in, float *out, size_t outer,
                                 size_t chunk) {
  const size_t sliceBytes = outer * chunk * sizeof(float);
  // Along the first dimension the slices already lie in order; otherwise
  // they are staged (in a buffer kept across steps) and interleaved.
  if (outer == 1)
    return allGather(in, out, sliceBytes);
  thread_local std::vector<float> staging;
  staging.resize(outer * chunk * size_t(size()));
  allGather(in, staging.data(), sliceBytes);
  assembleSlices(SliceLayout({int64_t(outer), int64_t(chunk) * size()}, 1,
                             size(), sizeof(float)),
                 staging.data(), out);
}

std::unique_ptr<Communicator> connect(const LaunchInfo &launch,
                                      double timeoutSeconds) {
  if (launch.size == 1)
    return std::make_unique<SingleProcess>();
  std::unique_ptr<Communicator> host = launch.launcher == "torchrun"
                                           ? connectGloo(launch, timeoutSeconds)
                                           : connectMpi(launch, timeoutSeconds);
  if (connectDevice)
    return connectDevice(std::move(host), timeoutSeconds);
  return host;
}

} // namespace lmc::rt
