//===- comm_nccl.cpp - NCCL collectives of --target cuda executables ------===//
//
// connectDevice (runtime/comm/comm.h): the launcher's communicator (MPI or
// Gloo) bootstraps an NCCL communicator — rank 0's ncclUniqueId goes out
// with its broadcast — and keeps the collectives over host memory (small
// control values, often on the stack); collectives over float buffers the
// GPU reaches (the gradient arena, ZeRO's shards: managed memory; a
// tensor-parallel step's activations: device memory) run on NCCL, on the
// stream of the kernels.
//
// NCCL is loaded with dlopen when a job has several processes, so a
// single-GPU run needs no libnccl. A collective that does not finish
// within the collective timeout (a peer died or hangs) aborts the NCCL
// communicator and ends the process with an error, as the MPI and Gloo
// communicators do.
//
//===----------------------------------------------------------------------===//

#include "base/error.h"
#include "comm/comm.h"
#include "cuda_support.h"

#include <nccl.h>

#include <chrono>
#include <cstdlib>
#include <dlfcn.h>
#include <thread>

namespace lmc::rt {
namespace {

/// The NCCL functions used, resolved from libnccl.so.2 at first use.
struct Nccl {
  decltype(&ncclGetUniqueId) getUniqueId;
  decltype(&ncclCommInitRank) commInitRank;
  decltype(&ncclCommAbort) commAbort;
  decltype(&ncclCommGetAsyncError) commGetAsyncError;
  decltype(&ncclGetErrorString) getErrorString;
  decltype(&ncclAllReduce) allReduce;
  decltype(&ncclAllGather) allGather;
  decltype(&ncclReduce) reduce;
  decltype(&ncclBroadcast) broadcast;
  decltype(&ncclGroupStart) groupStart;
  decltype(&ncclGroupEnd) groupEnd;
};

template <typename F> void resolve(void *library, const char *name, F &fn) {
  fn = reinterpret_cast<F>(dlsym(library, name));
  LMC_CHECK(fn, "NCCL: libnccl.so.2 has no ", name);
}

const Nccl &nccl() {
  static const Nccl loaded = [] {
    void *library = dlopen("libnccl.so.2", RTLD_NOW | RTLD_GLOBAL);
    LMC_CHECK(library, "a --target cuda job of several processes needs NCCL "
                       "(libnccl.so.2 on the library path): ",
              dlerror());
    Nccl n;
    resolve(library, "ncclGetUniqueId", n.getUniqueId);
    resolve(library, "ncclCommInitRank", n.commInitRank);
    resolve(library, "ncclCommAbort", n.commAbort);
    resolve(library, "ncclCommGetAsyncError", n.commGetAsyncError);
    resolve(library, "ncclGetErrorString", n.getErrorString);
    resolve(library, "ncclAllReduce", n.allReduce);
    resolve(library, "ncclAllGather", n.allGather);
    resolve(library, "ncclReduce", n.reduce);
    resolve(library, "ncclBroadcast", n.broadcast);
    resolve(library, "ncclGroupStart", n.groupStart);
    resolve(library, "ncclGroupEnd", n.groupEnd);
    return n;
  }();
  return loaded;
}

void check(ncclResult_t result, const char *what) {
  LMC_CHECK(result == ncclSuccess, "NCCL: ", what, " failed: ",
            nccl().getErrorString(result));
}

/// Whether the GPU reaches `p` (device or managed memory).
bool onDevice(const void *p) {
  cudaPointerAttributes attributes;
  if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
    cudaGetLastError(); // a plain host pointer on older runtimes
    return false;
  }
  return attributes.type == cudaMemoryTypeDevice ||
         attributes.type == cudaMemoryTypeManaged;
}

class NcclCommunicator : public Communicator {
public:
  NcclCommunicator(std::unique_ptr<Communicator> host, double timeoutSeconds)
      : host(std::move(host)), timeoutSeconds(timeoutSeconds) {
    ncclUniqueId id;
    if (this->host->rank() == 0)
      check(nccl().getUniqueId(&id), "ncclGetUniqueId");
    this->host->broadcast(&id, sizeof(id));
    check(nccl().commInitRank(&comm, this->host->size(), id,
                              this->host->rank()),
          "ncclCommInitRank");
  }

  int rank() const override { return host->rank(); }
  int size() const override { return host->size(); }

  void allReduceSum(float *data, size_t count) override {
    allReduce(data, count, ncclSum, [&] { host->allReduceSum(data, count); });
  }
  void allReduceMax(float *data, size_t count) override {
    allReduce(data, count, ncclMax, [&] { host->allReduceMax(data, count); });
  }

  bool startsCollectives() const override { return true; }

  // On a stream of its own, after the kernels queued so far (those that
  // wrote `data`): the backward pass goes on while NCCL reduces.
  std::unique_ptr<PendingCollective> startAllReduceSum(float *data,
                                                       size_t count) override {
    if (!onDevice(data))
      return Communicator::startAllReduceSum(data, count);
    cudaEvent_t written = nullptr, reduced = nullptr;
    cuda::check(cudaEventCreateWithFlags(&written, cudaEventDisableTiming),
                "cudaEventCreate");
    cuda::check(cudaEventCreateWithFlags(&reduced, cudaEventDisableTiming),
                "cudaEventCreate");
    cuda::check(cudaEventRecord(written, cuda::stream()), "cudaEventRecord");
    cuda::check(cudaStreamWaitEvent(sideStream(), written, 0),
                "cudaStreamWaitEvent");
    check(nccl().allReduce(data, data, count, ncclFloat, ncclSum, comm,
                           sideStream()),
          "ncclAllReduce");
    cuda::check(cudaEventRecord(reduced, sideStream()), "cudaEventRecord");
    cuda::check(cudaEventDestroy(written), "cudaEventDestroy");
    return std::make_unique<Pending>(*this, reduced);
  }
  void broadcast(void *data, size_t bytes) override {
    host->broadcast(data, bytes);
  }
  void allGather(const void *in, void *out, size_t bytes) override {
    host->allGather(in, out, bytes);
  }

  // A tensor-parallel step's all-gather (its buffers are device memory):
  // ncclAllGather, then along any dimension but the first the slices are
  // interleaved into the rows by strided copies, all on the kernels'
  // stream.
  void allGatherRows(const float *in, float *out, size_t outer,
                     size_t chunk) override {
    if (!onDevice(in) || !onDevice(out))
      return Communicator::allGatherRows(in, out, outer, chunk);
    const size_t slice = outer * chunk;
    float *gathered = outer == 1 ? out : staging(slice * size_t(size()));
    check(nccl().allGather(in, gathered, slice, ncclFloat, comm,
                           cuda::stream()),
          "ncclAllGather");
    const size_t row = chunk * sizeof(float);
    if (outer != 1)
      for (int r = 0; r < size(); ++r)
        cuda::check(cudaMemcpy2DAsync(out + size_t(r) * chunk,
                                      row * size_t(size()),
                                      gathered + size_t(r) * slice, row, row,
                                      outer, cudaMemcpyDefault,
                                      cuda::stream()),
                    "cudaMemcpy2DAsync");
    wait("all-gather");
  }

  // Parts may differ in size, which ncclReduceScatter does not allow: one
  // in-place ncclReduce per part to its owner, then the owner's part moves
  // to the front.
  void reduceScatterSum(float *data,
                        const std::vector<size_t> &counts) override {
    if (!onDevice(data))
      return host->reduceScatterSum(data, counts);
    check(nccl().groupStart(), "ncclGroupStart");
    size_t offset = 0, own = 0;
    for (int r = 0; r < size(); ++r) {
      if (r == rank())
        own = offset;
      check(nccl().reduce(data + offset, data + offset, counts[r], ncclFloat,
                          ncclSum, r, comm, cuda::stream()),
            "ncclReduce");
      offset += counts[r];
    }
    check(nccl().groupEnd(), "ncclGroupEnd");
    if (own != 0)
      cuda::check(cudaMemcpyAsync(data, data + own,
                                  counts[rank()] * sizeof(float),
                                  cudaMemcpyDefault, cuda::stream()),
                  "cudaMemcpyAsync");
    wait("reduce-scatter");
  }

  // One in-place ncclBroadcast per part from its owner.
  void allGatherParts(float *data, const std::vector<size_t> &counts) override {
    if (!onDevice(data))
      return host->allGatherParts(data, counts);
    check(nccl().groupStart(), "ncclGroupStart");
    size_t offset = 0;
    for (int r = 0; r < size(); ++r) {
      check(nccl().broadcast(data + offset, data + offset, counts[r],
                             ncclFloat, r, comm, cuda::stream()),
            "ncclBroadcast");
      offset += counts[r];
    }
    check(nccl().groupEnd(), "ncclGroupEnd");
    wait("all-gather");
  }

  std::unique_ptr<Communicator> split(int color, int key) override {
    return std::make_unique<NcclCommunicator>(host->split(color, key),
                                              timeoutSeconds);
  }

  [[noreturn]] void abort(int exitCode) override {
    nccl().commAbort(comm);
    host->abort(exitCode);
    std::_Exit(exitCode); // not reached: the host communicator ends the job
  }

private:
  struct Pending : PendingCollective {
    Pending(NcclCommunicator &comm, cudaEvent_t reduced)
        : comm(comm), reduced(reduced) {}
    ~Pending() override { cudaEventDestroy(reduced); }
    void wait() override {
      comm.waitUntil([&] { return cudaEventQuery(reduced); }, "all-reduce");
    }
    NcclCommunicator &comm;
    cudaEvent_t reduced;
  };

  /// The stream of the collectives started during a step.
  cudaStream_t sideStream() {
    if (!side)
      cuda::check(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking),
                  "cudaStreamCreate");
    return side;
  }

  /// Device memory for `floats` gathered values, kept for the next step
  /// (the previous block is free: every collective waits for the stream).
  float *staging(size_t floats) {
    if (floats > stagingFloats) {
      if (stagingBuffer)
        cuda::check(cudaFree(stagingBuffer), "cudaFree");
      stagingBuffer = nullptr;
      cuda::check(cudaMalloc(&stagingBuffer, floats * sizeof(float)),
                  "cudaMalloc (all-gather staging)");
      stagingFloats = floats;
    }
    return static_cast<float *>(stagingBuffer);
  }

  template <typename HostFallback>
  void allReduce(float *data, size_t count, ncclRedOp_t op,
                 HostFallback onHost) {
    if (!onDevice(data))
      return onHost();
    check(nccl().allReduce(data, data, count, ncclFloat, op, comm,
                           cuda::stream()),
          "ncclAllReduce");
    wait("all-reduce");
  }

  /// Waits for the kernels' stream.
  void wait(const char *what) {
    waitUntil([] { return cudaStreamQuery(cuda::stream()); }, what);
  }

  /// Waits until `query` (cudaStreamQuery, cudaEventQuery) says done; a
  /// peer's failure shows as an asynchronous NCCL error, a dead or hung
  /// peer as the timeout.
  template <typename Query> void waitUntil(Query query, const char *what) {
    auto start = std::chrono::steady_clock::now();
    for (;;) {
      cudaError_t status = query();
      if (status == cudaSuccess)
        return;
      cuda::check(status == cudaErrorNotReady ? cudaSuccess : status, what);
      ncclResult_t async = ncclSuccess;
      check(nccl().commGetAsyncError(comm, &async), "ncclCommGetAsyncError");
      check(async, what);
      double waited = std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count();
      if (timeoutSeconds > 0 && waited > timeoutSeconds) {
        nccl().commAbort(comm);
        LMC_CHECK(false, "NCCL ", what, " did not finish within ",
                  timeoutSeconds,
                  " s (--collective-timeout): a process died or hangs");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

  std::unique_ptr<Communicator> host;
  double timeoutSeconds;
  ncclComm_t comm = nullptr;
  cudaStream_t side = nullptr;
  void *stagingBuffer = nullptr;
  size_t stagingFloats = 0;
};

} // namespace

std::unique_ptr<Communicator> connectDevice(std::unique_ptr<Communicator> host,
                                            double timeoutSeconds) {
  return std::make_unique<NcclCommunicator>(std::move(host), timeoutSeconds);
}

} // namespace lmc::rt
