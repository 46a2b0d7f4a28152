//===- optimizers.h - The optimizers lmc compiles, by name ---------------===//
//
// One list for the compiler (--optimizer, the DSL's train block,
// lmc-optimizer) and the runtime (the descriptor's `optimizer` line, which
// the compiler writes from the same names). Header-only, plain C++.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_OPTIMIZERS_H
#define LMC_RUNTIME_OPTIMIZERS_H

#include <optional>
#include <string>
#include <string_view>

namespace lmc {

enum class Optimizer { Sgd, Momentum, Adam, AdamW };

struct OptimizerName {
  const char *name; // PyTorch's spelling, lower case
  Optimizer kind;
};

inline constexpr OptimizerName kOptimizerNames[] = {
    {"sgd", Optimizer::Sgd},
    {"momentum", Optimizer::Momentum},
    {"adam", Optimizer::Adam},
    {"adamw", Optimizer::AdamW},
};

/// The optimizer called `name`, if lmc has one.
inline std::optional<Optimizer> optimizerNamed(std::string_view name) {
  for (const OptimizerName &entry : kOptimizerNames)
    if (name == entry.name)
      return entry.kind;
  return std::nullopt;
}

inline const char *optimizerName(Optimizer kind) {
  for (const OptimizerName &entry : kOptimizerNames)
    if (entry.kind == kind)
      return entry.name;
  return "?";
}

/// "sgd, momentum, adam or adamw", for a message that lists the choices.
inline std::string optimizerChoices() {
  std::string out;
  constexpr size_t n = sizeof(kOptimizerNames) / sizeof(kOptimizerNames[0]);
  for (size_t i = 0; i < n; ++i) {
    if (i)
      out += i + 1 == n ? " or " : ", ";
    out += kOptimizerNames[i].name;
  }
  return out;
}

/// Adam and AdamW: two moments per parameter, beta1, beta2 and eps.
inline bool isAdam(Optimizer kind) {
  return kind == Optimizer::Adam || kind == Optimizer::AdamW;
}

} // namespace lmc

#endif // LMC_RUNTIME_OPTIMIZERS_H
