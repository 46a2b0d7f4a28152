//===- signals.h - Graceful stop on SIGTERM / SIGINT ---------------------===//
//
// While a StopSignals object lives, the first SIGTERM or SIGINT only sets a
// flag: the step loop finishes the current step, writes a checkpoint and
// exits 0 (what Slurm's pre-timeout SIGTERM expects). The handler is
// one-shot (SA_RESETHAND), so a second signal terminates at once.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_SIGNALS_H
#define LMC_RUNTIME_SIGNALS_H

#include <signal.h>

namespace lmc::rt {

class StopSignals {
public:
  StopSignals();  // installs the handlers (checked)
  ~StopSignals(); // restores the previous handlers
  StopSignals(const StopSignals &) = delete;
  StopSignals &operator=(const StopSignals &) = delete;

  /// The signal received so far, or 0.
  static int received();

private:
  struct sigaction oldTerm_ {}, oldInt_{};
};

/// "SIGTERM", "SIGINT", or "signal N".
const char *signalName(int sig);

} // namespace lmc::rt

#endif // LMC_RUNTIME_SIGNALS_H
