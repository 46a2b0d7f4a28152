//===- signals.cpp - Graceful stop on SIGTERM / SIGINT -------------------===//

#include "train/signals.h"

#include "base/error.h"

#include <cerrno>
#include <cstdio>

namespace lmc::rt {

namespace {

volatile sig_atomic_t receivedSignal = 0;

extern "C" void onStopSignal(int sig) { receivedSignal = sig; }

} // namespace

StopSignals::StopSignals() {
  receivedSignal = 0;
  struct sigaction action {};
  action.sa_handler = onStopSignal;
  action.sa_flags = SA_RESETHAND | SA_RESTART;
  LMC_CHECK_SYS(sigemptyset(&action.sa_mask) == 0, "sigemptyset");
  LMC_CHECK_SYS(sigaction(SIGTERM, &action, &oldTerm_) == 0,
                "cannot install the SIGTERM handler");
  LMC_CHECK_SYS(sigaction(SIGINT, &action, &oldInt_) == 0,
                "cannot install the SIGINT handler");
}

StopSignals::~StopSignals() {
  // Nothing to report from a destructor; restoring cannot fail with valid
  // arguments.
  sigaction(SIGTERM, &oldTerm_, nullptr);
  sigaction(SIGINT, &oldInt_, nullptr);
}

int StopSignals::received() { return receivedSignal; }

const char *signalName(int sig) {
  if (sig == SIGTERM)
    return "SIGTERM";
  if (sig == SIGINT)
    return "SIGINT";
  static char buf[32];
  std::snprintf(buf, sizeof buf, "signal %d", sig);
  return buf;
}

} // namespace lmc::rt
