//===- watchdog.cpp - Ends a process whose collective waits too long ------===//

#include "comm/watchdog.h"

#include <cstdio>
#include <unistd.h>

namespace lmc::rt {

CollectiveWatchdog::CollectiveWatchdog(std::string who, double seconds)
    : who_(std::move(who)), timeout_(seconds), thread_([this] { run(); }) {}

CollectiveWatchdog::~CollectiveWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_one();
  thread_.join();
}

CollectiveWatchdog::Watch CollectiveWatchdog::watch(const char *collective,
                                                    size_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    deadline_ = Clock::now() +
                std::chrono::duration_cast<Clock::duration>(timeout_);
    collective_ = collective;
    bytes_ = bytes;
  }
  changed_.notify_one();
  return Watch(*this);
}

void CollectiveWatchdog::disarm() {
  std::lock_guard<std::mutex> lock(mutex_);
  deadline_.reset();
}

void CollectiveWatchdog::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    if (!deadline_) {
      changed_.wait(lock);
      continue;
    }
    const Clock::time_point deadline = *deadline_;
    changed_.wait_until(lock, deadline);
    if (stopping_ || !deadline_ || *deadline_ != deadline ||
        Clock::now() < deadline)
      continue; // disarmed, re-armed or woken early
    std::fprintf(stderr,
                 "error: %s: %s of %zu bytes waited more than %g s for the "
                 "other processes (one of them died or hangs; "
                 "--collective-timeout sets the limit)\n",
                 who_.c_str(), collective_, bytes_, timeout_.count());
    std::fflush(stderr);
    // Not exit(): the main thread is inside MPI, and static destructors or
    // MPI_Finalize would wait for it. A process that ends without
    // MPI_Finalize makes mpirun and srun end the rest of the job.
    _exit(1);
  }
}

} // namespace lmc::rt
