//===- descriptor_lines.h - The model descriptor's line keywords ---------===//
//
// The descriptor (docs/runtime-abi.md) is text the compiler writes
// (lib/Driver/Descriptor.cpp) and the runtime reads
// (runtime/model/descriptor.cpp): each line starts with the keyword of its
// kind, and the kinds come in the order of `Line`. Both sides take the
// keywords from here. Header-only, plain C++.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_DESCRIPTOR_LINES_H
#define LMC_RUNTIME_DESCRIPTOR_LINES_H

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace lmc::descriptor {

/// The version the header line names: `lmc-model 1`.
inline constexpr int kVersion = 1;

/// The line kinds, in the order a descriptor must have them.
enum class Line {
  Header,
  Loss,
  Optimizer,
  Hparam,
  Flops,
  Precision,
  MatmulParts,
  Activations,
  Remat,
  Lora,
  LoraWeight,
  Schedule,
  TrainArg,
  TrainResult,
  EvalArg,
  EvalResult,
  GradArg,
  GradResult,
  ApplyArg,
  ApplyResult,
  ChunkArg,
  ChunkResult,
  Bound,
  Init,
  Join,
  Mesh,
  Split,
  Arena,
  InPlace,
  Profile,
  End
};

/// Each kind's first words, indexed by `Line`: an entry point's tensor
/// lines are `<step> arg` and `<step> result`.
inline constexpr const char *kKeywords[] = {
    "lmc-model", "loss",         "optimizer",    "hparam",
    "flops",     "precision",    "matmul_parts", "activations",
    "remat",     "lora",         "lora_weight",  "schedule",
    "train arg", "train result", "eval arg",     "eval result",
    "grad arg",  "grad result",  "apply arg",    "apply result",
    "chunk arg", "chunk result", "bound",        "init",
    "join",      "mesh",         "split",        "arena",
    "inplace",   "profile",      "end"};
static_assert(sizeof(kKeywords) / sizeof(kKeywords[0]) ==
                  static_cast<size_t>(Line::End) + 1,
              "one keyword per line kind");

constexpr const char *keyword(Line line) {
  return kKeywords[static_cast<size_t>(line)];
}

/// The kind of a line whose first field is `first` and second `second`
/// ("" if it has none); nothing for an unknown line.
inline std::optional<Line> lineNamed(std::string_view first,
                                     std::string_view second) {
  for (size_t i = 0; i <= static_cast<size_t>(Line::End); ++i) {
    std::string_view words = kKeywords[i];
    size_t space = words.find(' ');
    if (space == std::string_view::npos ? words == first
                                        : words.substr(0, space) == first &&
                                              words.substr(space + 1) == second)
      return static_cast<Line>(i);
  }
  return std::nullopt;
}

inline bool isTensorLine(Line line) {
  return line >= Line::TrainArg && line <= Line::ChunkResult;
}

/// The tensor lines of the entry point `<step>_step` (train, eval, grad,
/// apply, chunk): its arguments' kind, or its results' with `result`;
/// nothing for another word.
inline std::optional<Line> tensorLine(std::string_view step, bool result) {
  std::optional<Line> line = lineNamed(step, result ? "result" : "arg");
  if (line && !isTensorLine(*line))
    return std::nullopt;
  return line;
}

/// What a tensor line's tensor is to the step (its third field), and the
/// `lmc.role` of an entry point's argument or result in the compiler.
enum class Role {
  Param,
  State,
  Buffer,
  /// A model tensor no step updates (lmc --lora's frozen base): one copy,
  /// from the weights payload or a base checkpoint (--init), in no --save
  /// file.
  Frozen,
  Input,
  Hyper,
  Grad,
  Loss,
  GradNorm,
  Output
};

/// Each role's name, indexed by `Role`.
inline constexpr const char *kRoleNames[] = {
    "param", "state", "buffer", "frozen",    "input",
    "hyper", "grad",  "loss",   "grad_norm", "output"};
static_assert(sizeof(kRoleNames) / sizeof(kRoleNames[0]) ==
                  static_cast<size_t>(Role::Output) + 1,
              "one name per role");

constexpr const char *roleName(Role role) {
  return kRoleNames[static_cast<size_t>(role)];
}

/// "param, state, ...": every role's name, for a message that lists them.
inline std::string roleChoices() {
  std::string out;
  for (const char *name : kRoleNames)
    out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

/// The role called `name`, if there is one.
inline std::optional<Role> roleNamed(std::string_view name) {
  for (size_t i = 0; i <= static_cast<size_t>(Role::Output); ++i)
    if (name == kRoleNames[i])
      return static_cast<Role>(i);
  return std::nullopt;
}

} // namespace lmc::descriptor

#endif // LMC_RUNTIME_DESCRIPTOR_LINES_H
