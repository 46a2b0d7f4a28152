//===- comm_mpi.cpp - Collectives over MPI communicators ------------------===//

#include "comm/comm.h"

#include "base/error.h"
#include "comm/watchdog.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>

namespace lmc::rt {

namespace {

std::string mpiErrorText(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    return concat("MPI error ", code);
  return std::string(text, size_t(length));
}

#define LMC_CHECK_MPI(call, what)                                              \
  do {                                                                         \
    int lmcMpiCode = (call);                                                   \
    LMC_CHECK(lmcMpiCode == MPI_SUCCESS, what, ": ", mpiErrorText(lmcMpiCode)); \
  } while (0)

class MpiCommunicator final : public Communicator {
public:
  /// The whole job: MPI_Init, and MPI_Finalize when destroyed.
  MpiCommunicator(const LaunchInfo &launch, double timeoutSeconds)
      : comm_(MPI_COMM_WORLD), ownsMpi_(true),
        timeoutSeconds_(timeoutSeconds) {
    LMC_CHECK_MPI(MPI_Init(nullptr, nullptr), "MPI_Init");
    // Errors come back as codes (and become lmc errors) instead of
    // aborting inside MPI without a message.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    LMC_CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    LMC_CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
    LMC_CHECK(rank_ == launch.rank && size_ == launch.size,
              "MPI reports rank ", rank_, " of ", size_, " but ",
              launch.launcher, " announced rank ", launch.rank, " of ",
              launch.size);
    startWatchdog();
  }
  /// A group of the job's processes (from split()).
  MpiCommunicator(MPI_Comm comm, double timeoutSeconds)
      : comm_(comm), ownsMpi_(false), timeoutSeconds_(timeoutSeconds) {
    LMC_CHECK_MPI(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    LMC_CHECK_MPI(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
    startWatchdog();
  }
  ~MpiCommunicator() override {
    watchdog_.reset();
    if (ownsMpi_)
      MPI_Finalize();
    else
      MPI_Comm_free(&comm_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void allReduceSum(float *data, size_t count) override {
    allReduce(data, count, MPI_SUM);
  }

  void allReduceMax(float *data, size_t count) override {
    allReduce(data, count, MPI_MAX);
  }

  bool startsCollectives() const override { return true; }

  // MPI_Iallreduce (Open MPI moves it along inside later MPI calls and in
  // the wait); counts beyond an int reduce at once.
  std::unique_ptr<PendingCollective> startAllReduceSum(float *data,
                                                       size_t count) override {
    if (count > INT_MAX)
      return Communicator::startAllReduceSum(data, count);
    auto pending = std::make_unique<MpiPending>(*this, count);
    LMC_CHECK_MPI(MPI_Iallreduce(MPI_IN_PLACE, data, int(count), MPI_FLOAT,
                                 MPI_SUM, comm_, &pending->request),
                  "MPI_Iallreduce");
    return pending;
  }

  void broadcast(void *data, size_t bytes) override {
    std::optional<CollectiveWatchdog::Watch> watch =
        watchIf("broadcast", bytes);
    auto *p = static_cast<unsigned char *>(data);
    for (size_t done = 0; done < bytes;) {
      int chunk = int(std::min<size_t>(bytes - done, INT_MAX));
      LMC_CHECK_MPI(MPI_Bcast(p + done, chunk, MPI_BYTE, 0, comm_),
                    "MPI_Bcast");
      done += size_t(chunk);
    }
  }

  void allGather(const void *in, void *out, size_t bytes) override {
    std::optional<CollectiveWatchdog::Watch> watch =
        watchIf("all-gather", bytes * size_t(size_));
    LMC_CHECK(bytes <= INT_MAX, "all-gather of ", bytes,
              " bytes per process: more than MPI's int count");
    LMC_CHECK_MPI(MPI_Allgather(in, int(bytes), MPI_BYTE, out, int(bytes),
                                MPI_BYTE, comm_),
                  "MPI_Allgather");
  }

  void reduceScatterSum(float *data,
                        const std::vector<size_t> &counts) override {
    std::vector<int> intCounts = mpiCounts(counts, "reduce-scatter");
    std::optional<CollectiveWatchdog::Watch> watch =
        watchIf("reduce-scatter", total(counts) * sizeof(float));
    // In place, MPI leaves this process's sum at the start of the buffer.
    LMC_CHECK_MPI(MPI_Reduce_scatter(MPI_IN_PLACE, data, intCounts.data(),
                                     MPI_FLOAT, MPI_SUM, comm_),
                  "MPI_Reduce_scatter");
  }

  void allGatherParts(float *data, const std::vector<size_t> &counts) override {
    std::vector<int> intCounts = mpiCounts(counts, "all-gather");
    std::vector<int> offsets(counts.size());
    for (size_t r = 1; r < counts.size(); ++r)
      offsets[r] = offsets[r - 1] + intCounts[r - 1];
    std::optional<CollectiveWatchdog::Watch> watch =
        watchIf("all-gather", total(counts) * sizeof(float));
    LMC_CHECK_MPI(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data,
                                 intCounts.data(), offsets.data(), MPI_FLOAT,
                                 comm_),
                  "MPI_Allgatherv");
  }

  std::unique_ptr<Communicator> split(int color, int key) override {
    MPI_Comm group;
    LMC_CHECK_MPI(MPI_Comm_split(comm_, color, key, &group), "MPI_Comm_split");
    MPI_Comm_set_errhandler(group, MPI_ERRORS_RETURN);
    return std::make_unique<MpiCommunicator>(group, timeoutSeconds_);
  }

  [[noreturn]] void abort(int exitCode) override {
    MPI_Abort(MPI_COMM_WORLD, exitCode); // the whole job, from any group
    std::_Exit(exitCode);
  }

private:
  struct MpiPending : PendingCollective {
    MpiPending(MpiCommunicator &comm, size_t count)
        : comm(comm), count(count) {}
    void wait() override {
      std::optional<CollectiveWatchdog::Watch> watch =
          comm.watchIf("all-reduce", count * sizeof(float));
      LMC_CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait");
    }
    MpiCommunicator &comm;
    size_t count;
    MPI_Request request = MPI_REQUEST_NULL;
  };

  void allReduce(float *data, size_t count, MPI_Op op) {
    std::optional<CollectiveWatchdog::Watch> watch =
        watchIf("all-reduce", count * sizeof(float));
    // MPI counts are ints: reduce in chunks below INT_MAX elements.
    for (size_t done = 0; done < count;) {
      int chunk = int(std::min<size_t>(count - done, INT_MAX));
      LMC_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, data + done, chunk, MPI_FLOAT,
                                  op, comm_),
                    "MPI_Allreduce");
      done += size_t(chunk);
    }
  }

  static size_t total(const std::vector<size_t> &counts) {
    size_t sum = 0;
    for (size_t count : counts)
      sum += count;
    return sum;
  }

  /// One count per process; MPI's counts and offsets are ints.
  std::vector<int> mpiCounts(const std::vector<size_t> &counts,
                             const char *collective) const {
    LMC_CHECK(counts.size() == size_t(size_), collective, " with ",
              counts.size(), " parts among ", size_, " processes");
    LMC_CHECK(total(counts) <= INT_MAX, collective, " of ", total(counts),
              " floats: more than MPI's int count");
    return std::vector<int>(counts.begin(), counts.end());
  }

  void startWatchdog() {
    if (timeoutSeconds_ > 0)
      watchdog_.emplace(concat("process ", rank_, " of ", size_),
                        timeoutSeconds_);
  }

  std::optional<CollectiveWatchdog::Watch> watchIf(const char *collective,
                                                   size_t bytes) {
    if (!watchdog_)
      return std::nullopt;
    return watchdog_->watch(collective, bytes);
  }

  MPI_Comm comm_;
  bool ownsMpi_;
  double timeoutSeconds_;
  int rank_ = 0, size_ = 1;
  std::optional<CollectiveWatchdog> watchdog_;
};

} // namespace

std::unique_ptr<Communicator> connectMpi(const LaunchInfo &launch,
                                         double timeoutSeconds) {
  return std::make_unique<MpiCommunicator>(launch, timeoutSeconds);
}

} // namespace lmc::rt
