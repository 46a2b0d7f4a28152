//===- comm.h - The processes of one run and the collectives between them -===//
//
// A single-process run needs no launcher and never touches MPI. Under
// `mpirun` or `srun` (detected from the launcher's environment variables)
// every process joins one MPI job; under torchrun they meet at a TCP
// rendezvous and use Gloo. The trainer averages gradients with
// allReduceSum and rank 0 alone prints and writes files.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_COMM_H
#define LMC_RUNTIME_COMM_H

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lmc::rt {

/// Where this process sits in the job, as the launcher announced it.
struct LaunchInfo {
  int rank = 0;
  int size = 1;
  /// Processes on this machine (they share its cores), when announced.
  int localSize = 1;
  std::string launcher; // "" (none), "Open MPI", "PMI", "Slurm", "torchrun"
  /// torchrun: where the rendezvous store is (MASTER_ADDR/PORT).
  std::string masterAddr;
  int masterPort = 0;
  /// torchrun 2.x: its agent serves the store there, for every attempt of
  /// the job (TORCHELASTIC_USE_AGENT_STORE=True); else rank 0 serves one.
  bool agentStore = false;
  /// How often the launcher restarted the job before this attempt
  /// (TORCHELASTIC_RESTART_COUNT, SLURM_RESTART_COUNT), when it says.
  int restartCount = 0;
};

/// Reads the launcher's variables through `getenv`: torchrun's RANK,
/// WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT,
/// TORCHELASTIC_USE_AGENT_STORE and TORCHELASTIC_RESTART_COUNT (first: its
/// workers may run under srun), Open MPI's OMPI_COMM_WORLD_*,
/// PMI_RANK/PMI_SIZE, Slurm's SLURM_PROCID/SLURM_NTASKS. Throws Error for
/// malformed or missing values.
LaunchInfo detectLaunch(
    const std::function<const char *(const char *)> &getenv);

/// A collective started and not yet waited for.
class PendingCollective {
public:
  virtual ~PendingCollective() = default;
  /// Returns once the collective is done: its buffer holds the result.
  virtual void wait() = 0;
};

class Communicator {
public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// In place: every process ends with the elementwise sum over all.
  virtual void allReduceSum(float *data, size_t count) = 0;
  /// Starts what allReduceSum does; `data` must be left alone until the
  /// handle's wait() returns, and every process starts its collectives in
  /// the same order. Here: done before it returns.
  virtual std::unique_ptr<PendingCollective>
  startAllReduceSum(float *data, size_t count);
  /// Whether startAllReduceSum returns before the collective is done (it
  /// can then go on while the caller computes).
  virtual bool startsCollectives() const { return false; }
  /// In place: every process ends with the elementwise maximum over all.
  virtual void allReduceMax(float *data, size_t count) = 0;
  /// Every process ends with rank 0's bytes.
  virtual void broadcast(void *data, size_t bytes) = 0;
  /// `out` (size() x `bytes`) receives every process's `in` in rank order.
  virtual void allGather(const void *in, void *out, size_t bytes) = 0;
  /// `out` (`outer` rows of size() x `chunk` floats) receives every
  /// process's `in` (`outer` rows of `chunk` floats) as its block of
  /// columns, in rank order: a tensor split along its last dimension made
  /// whole. Here: allGather, then the rows interleaved (tensor_parallel.h).
  virtual void allGatherRows(const float *in, float *out, size_t outer,
                             size_t chunk);
  /// In place: `data` is size() parts laid end to end, part r of
  /// `counts[r]` floats; afterwards its first counts[rank()] floats hold the
  /// elementwise sum over all processes of their part rank() (the rest is
  /// unspecified).
  virtual void reduceScatterSum(float *data,
                                const std::vector<size_t> &counts) = 0;
  /// In place: `data` is size() parts laid end to end as above; every
  /// process ends with every process's own part in its place.
  virtual void allGatherParts(float *data,
                              const std::vector<size_t> &counts) = 0;
  /// The processes of this one that pass the same `color`, ranked by `key`
  /// (every process must call it).
  virtual std::unique_ptr<Communicator> split(int color, int key) = 0;
  /// Stops every process of the job (after an error on this one).
  [[noreturn]] virtual void abort(int exitCode) = 0;
};

/// The single-process communicator, or an MPI one when `launch` says the
/// job has several processes. A collective of the latter that waits more
/// than `timeoutSeconds` for the other processes (one died or hangs) ends
/// this process with an error, which makes the launcher end the job
/// (0: wait forever).
std::unique_ptr<Communicator> connect(const LaunchInfo &launch,
                                      double timeoutSeconds);

/// Defined in comm_mpi.cpp: MPI_Init and the MPI_COMM_WORLD collectives.
std::unique_ptr<Communicator> connectMpi(const LaunchInfo &launch,
                                         double timeoutSeconds);
/// Defined in comm_gloo.cpp: a torchrun-style launch, Gloo's collectives
/// over TCP after a rendezvous at MASTER_ADDR:MASTER_PORT.
std::unique_ptr<Communicator> connectGloo(const LaunchInfo &launch,
                                          double timeoutSeconds);

/// Defined only in `--target cuda` executables (runtime/cuda/comm_nccl.cpp):
/// wraps the launcher's communicator so that collectives over buffers on
/// the GPU run on NCCL; the launcher's one bootstraps NCCL and keeps the
/// collectives over host memory.
__attribute__((weak)) std::unique_ptr<Communicator>
connectDevice(std::unique_ptr<Communicator> host, double timeoutSeconds);

} // namespace lmc::rt

#endif // LMC_RUNTIME_COMM_H
