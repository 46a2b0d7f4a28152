//===- index_error.cpp - A computed index or divisor out of range --------===//
//
// Inputs are checked where the runtime reads them (train/index_check.h);
// indices the model computes (position ids from a cumulative sum, index
// arithmetic) are checked by the step itself before its gather reads them,
// and integer divisors before it divides, and end the run here. Called from any thread of a parallel loop: the
// message goes out in one write and the process ends without running
// exit handlers under the other threads' feet.
//
//===----------------------------------------------------------------------===//

#include "lmc/runtime/kernels.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace {

/// Writes `message` (snprintf's `length`) to stderr in one write and ends
/// the process without exit handlers.
[[noreturn]] void endRun(const char *message, int length, size_t capacity) {
  std::fflush(stdout);
  if (length > 0)
    (void)!write(STDERR_FILENO, message,
                 size_t(length) < capacity ? size_t(length) : capacity - 1);
  std::_Exit(1);
}

} // namespace

extern "C" void lmc_rt_index_out_of_range(int64_t value, int64_t size,
                                          const char *site) {
  char message[1024];
  int length = std::snprintf(
      message, sizeof message,
      "error: %s: index %" PRId64 " is out of range for a dimension of size "
      "%" PRId64 " (a negative index counts from the end once; PyTorch "
      "raises IndexError)\n",
      site && *site ? site : "gather", value, size);
  endRun(message, length, sizeof message);
}

extern "C" void lmc_rt_integer_division_by_zero(const char *site) {
  char message[1024];
  int length = std::snprintf(
      message, sizeof message,
      "error: %s: integer division by zero (PyTorch raises "
      "ZeroDivisionError)\n",
      site && *site ? site : "div");
  endRun(message, length, sizeof message);
}
