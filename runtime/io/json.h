//===- json.h - Small strict JSON parser (for safetensors headers) -------===//
//
// Accepts only what a safetensors header needs: objects, arrays, strings and
// integers. Rejects true/false/null, fractions and exponents, duplicate object
// keys, control characters in strings, invalid escapes, nesting deeper than
// kMaxDepth and any trailing garbage (trailing whitespace is fine: writers pad
// the header with spaces).
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
  enum class Kind { Object, Array, String, Integer };

  Kind kind = Kind::Object;
  std::string string;            // Kind::String
  int64_t integer = 0;           // Kind::Integer
  std::vector<JsonValue> items;  // Kind::Array; Kind::Object: member values
  std::vector<std::string> keys; // Kind::Object: member keys, in file order

  bool isObject() const { return kind == Kind::Object; }
  bool isArray() const { return kind == Kind::Array; }
  bool isString() const { return kind == Kind::String; }
  bool isInteger() const { return kind == Kind::Integer; }
  /// Member with this key, or nullptr (objects only).
  const JsonValue *find(std::string_view key) const;
};

constexpr int kMaxJsonDepth = 32;

/// Parses `text` as one JSON value. Throws Error("invalid JSON at byte N:
/// ...").
JsonValue parseJson(std::string_view text);

/// Appends `s` to `out` as a JSON string literal (quoted, escaped).
void appendJsonString(std::string &out, std::string_view s);

} // namespace lmc::rt

#endif // LMC_RUNTIME_JSON_H
