//===- EnumChoices.h - An enumeration's names as choices --------*- C++ -*-===//
//
// Modifiers for llvm::cl options and MLIR pass options (ODS `Option`s take
// them as their last field) whose values are an enumeration: the choices
// come from where the enumeration's names are defined, so a pass option, a
// flag and a parser never spell the list twice.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_SUPPORT_ENUMCHOICES_H
#define LMC_SUPPORT_ENUMCHOICES_H

#include <string>

namespace lmc {

/// The cases of an ODS enumeration (EnumAttr.td's I32EnumAttr), numbered
/// 0 .. Max, spelled by their `stringifyEnum`:
///   Option<Precision> p{..., OdsEnumChoices<Precision,
///                                           getMaxEnumValForPrecision()>{}};
template <typename Enum, unsigned Max> struct OdsEnumChoices {
  template <typename Opt> void apply(Opt &option) const {
    for (unsigned i = 0; i <= Max; ++i) {
      Enum value = static_cast<Enum>(i);
      option.getParser().addLiteralOption(stringifyEnum(value), value, "");
    }
  }
};

/// "f32, bf16 or f16": the cases of an ODS enumeration (as OdsEnumChoices
/// offers them) for a message that lists the choices.
template <typename Enum, unsigned Max> std::string odsEnumNames() {
  std::string out;
  for (unsigned i = 0; i <= Max; ++i) {
    if (i)
      out += i == Max ? " or " : ", ";
    out += stringifyEnum(static_cast<Enum>(i)).str();
  }
  return out;
}

/// The entries of a table of {name, kind} pairs (runtime/include/lmc's
/// kOptimizerNames), for enumerations the runtime shares and so cannot
/// define in ODS.
template <const auto &Table> struct TableChoices {
  template <typename Opt> void apply(Opt &option) const {
    for (const auto &entry : Table)
      option.getParser().addLiteralOption(entry.name, entry.kind, "");
  }
};

} // namespace lmc

#endif // LMC_SUPPORT_ENUMCHOICES_H
