//===- watchdog.h - Ends a process whose collective waits too long --------===//
//
// MPI has no timeouts: when a process of the job dies between collectives
// the launcher ends the job, but when one hangs (stopped, deadlocked, a
// stuck file system) the others wait in their next collective forever.
// The watchdog is a thread that ends this process with a message when a
// watched call outlives its deadline; the launcher then ends the others.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_WATCHDOG_H
#define LMC_RUNTIME_WATCHDOG_H

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

namespace lmc::rt {

class CollectiveWatchdog {
public:
  /// `who` prefixes the message ("process 1 of 4"); `seconds` > 0.
  CollectiveWatchdog(std::string who, double seconds);
  ~CollectiveWatchdog();
  CollectiveWatchdog(const CollectiveWatchdog &) = delete;
  CollectiveWatchdog &operator=(const CollectiveWatchdog &) = delete;

  /// Watches one collective for as long as it lives.
  class Watch {
  public:
    Watch(Watch &&other) noexcept
        : watchdog_(std::exchange(other.watchdog_, nullptr)) {}
    Watch(const Watch &) = delete;
    Watch &operator=(const Watch &) = delete;
    ~Watch() {
      if (watchdog_)
        watchdog_->disarm();
    }

  private:
    friend class CollectiveWatchdog;
    explicit Watch(CollectiveWatchdog &watchdog) : watchdog_(&watchdog) {}
    CollectiveWatchdog *watchdog_;
  };
  [[nodiscard]] Watch watch(const char *collective, size_t bytes);

private:
  using Clock = std::chrono::steady_clock;
  void disarm();
  void run();

  const std::string who_;
  const std::chrono::duration<double> timeout_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool stopping_ = false;
  std::optional<Clock::time_point> deadline_;
  const char *collective_ = "";
  size_t bytes_ = 0;
  std::thread thread_; // last: starts once the fields above exist
};

} // namespace lmc::rt

#endif // LMC_RUNTIME_WATCHDOG_H
