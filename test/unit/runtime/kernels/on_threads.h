// The kernels' "same bits on 1 and 2 threads" tests run a call on a given
// number of the runtime's threads.
#ifndef LMC_TEST_UNIT_RUNTIME_KERNELS_ON_THREADS_H
#define LMC_TEST_UNIT_RUNTIME_KERNELS_ON_THREADS_H

#include "lmc/runtime/kernels.h"

namespace lmc::test {

/// What `call()` returns, run with the runtime's pool at `threads`
/// threads; the pool is back at one thread after.
template <typename Call> auto onThreads(int threads, Call call) {
  lmc_rt_set_threads(threads);
  auto result = call();
  lmc_rt_set_threads(1);
  return result;
}

} // namespace lmc::test

#endif // LMC_TEST_UNIT_RUNTIME_KERNELS_ON_THREADS_H
