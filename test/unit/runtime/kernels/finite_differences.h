// Central finite differences of a double reference loss, the oracle of the
// kernels' gradient tests.
#ifndef LMC_TEST_UNIT_RUNTIME_KERNELS_FINITE_DIFFERENCES_H
#define LMC_TEST_UNIT_RUNTIME_KERNELS_FINITE_DIFFERENCES_H

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <initializer_list>
#include <vector>

namespace lmc::test {

/// An input of the loss (read by it, nudged here) and the kernel's
/// gradient of the loss with respect to it.
struct GradientOf {
  std::vector<double> *input;
  const std::vector<float> *gradient;
  const char *name;
};

/// Expects every entry of each gradient within tolerance * (1 + |d|) of d,
/// the central difference (step h) of `loss` in that entry of the input.
inline void expectFiniteDifferences(const std::function<double()> &loss,
                                    std::initializer_list<GradientOf> checks,
                                    double h, double tolerance) {
  for (const GradientOf &check : checks)
    for (size_t i = 0; i < check.input->size(); ++i) {
      double &x = (*check.input)[i], saved = x;
      x = saved + h;
      double up = loss();
      x = saved - h;
      double down = loss();
      x = saved;
      double expected = (up - down) / (2 * h);
      EXPECT_NEAR((*check.gradient)[i], expected,
                  tolerance * (1 + std::fabs(expected)))
          << check.name << "[" << i << "]";
    }
}

} // namespace lmc::test

#endif // LMC_TEST_UNIT_RUNTIME_KERNELS_FINITE_DIFFERENCES_H
