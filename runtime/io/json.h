//===- json.h - Small strict JSON parser (for safetensors headers) -------===//
//
// By default accepts only what a safetensors header needs: objects, arrays,
// strings and integers. Rejects true/false/null, fractions and exponents,
// duplicate object keys, control characters in strings, invalid escapes,
// nesting deeper than kMaxDepth and any trailing garbage (trailing
// whitespace is fine: writers pad the header with spaces). JsonSyntax::Full
// also takes true/false/null and numbers with fractions or exponents (the
// configuration files Python's json.dump writes).
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_JSON_H
#define LMC_RUNTIME_JSON_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lmc::rt {

struct JsonValue {
  enum class Kind { Object, Array, String, Integer, Number, Bool, Null };

  Kind kind = Kind::Object;
  std::string string;            // Kind::String
  int64_t integer = 0;           // Kind::Integer
  double number = 0;             // Kind::Number (JsonSyntax::Full)
  bool boolean = false;          // Kind::Bool (JsonSyntax::Full)
  std::vector<JsonValue> items;  // Kind::Array; Kind::Object: member values
  std::vector<std::string> keys; // Kind::Object: member keys, in file order

  bool isObject() const { return kind == Kind::Object; }
  bool isArray() const { return kind == Kind::Array; }
  bool isString() const { return kind == Kind::String; }
  bool isInteger() const { return kind == Kind::Integer; }
  bool isBool() const { return kind == Kind::Bool; }
  bool isNull() const { return kind == Kind::Null; }
  /// An integer or a number (JsonSyntax::Full), as a double.
  bool isNumeric() const { return isInteger() || kind == Kind::Number; }
  double numeric() const { return isInteger() ? double(integer) : number; }
  /// Member with this key, or nullptr (objects only).
  const JsonValue *find(std::string_view key) const;
};

constexpr int kMaxJsonDepth = 32;

enum class JsonSyntax {
  Strict, // objects, arrays, strings, integers
  Full,   // also true, false, null, fractions and exponents
};

/// Parses `text` as one JSON value. Throws Error("invalid JSON at byte N:
/// ...").
JsonValue parseJson(std::string_view text,
                    JsonSyntax syntax = JsonSyntax::Strict);

/// Appends `s` to `out` as a JSON string literal (quoted, escaped).
void appendJsonString(std::string &out, std::string_view s);

} // namespace lmc::rt

#endif // LMC_RUNTIME_JSON_H
