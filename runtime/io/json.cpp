//===- json.cpp - Small strict JSON parser -------------------------------===//

#include "io/json.h"

#include "base/error.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <tuple>

namespace lmc::rt {

const JsonValue *JsonValue::find(std::string_view key) const {
  for (size_t i = 0; i < keys.size(); ++i)
    if (keys[i] == key)
      return &items[i];
  return nullptr;
}

namespace {

class JsonParser {
public:
  JsonParser(std::string_view text, JsonSyntax syntax)
      : text_(text), syntax_(syntax) {}

  JsonValue parseDocument() {
    JsonValue value = parseValue(0);
    skipWhitespace();
    if (pos_ != text_.size())
      fail("unexpected trailing characters");
    return value;
  }

private:
  [[noreturn]] void fail(const std::string &what) const {
    throw Error(concat("invalid JSON at byte ", pos_, ": ", what));
  }

  void skipWhitespace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }

  bool atEnd() const { return pos_ >= text_.size(); }
  char peek() const { return atEnd() ? '\0' : text_[pos_]; }

  void expect(char c) {
    if (peek() != c || atEnd())
      fail(concat("expected '", c, "'"));
    ++pos_;
  }

  JsonValue parseValue(int depth) {
    if (depth > kMaxJsonDepth)
      fail("nesting too deep");
    skipWhitespace();
    if (atEnd())
      fail("unexpected end of input");
    char c = peek();
    if (c == '{')
      return parseObject(depth);
    if (c == '[')
      return parseArray(depth);
    if (c == '"') {
      JsonValue v;
      v.kind = JsonValue::Kind::String;
      v.string = parseString();
      return v;
    }
    if (syntax_ == JsonSyntax::Full) {
      for (auto [word, kind, value] :
           {std::tuple{"true", JsonValue::Kind::Bool, true},
            std::tuple{"false", JsonValue::Kind::Bool, false},
            std::tuple{"null", JsonValue::Kind::Null, false}})
        if (text_.substr(pos_, std::string_view(word).size()) == word) {
          pos_ += std::string_view(word).size();
          JsonValue v;
          v.kind = kind;
          v.boolean = value;
          return v;
        }
      if (c == '-' || (c >= '0' && c <= '9'))
        return parseNumber();
      fail(concat("unexpected character '", c, "'"));
    }
    if (c == '-' || (c >= '0' && c <= '9'))
      return parseInteger();
    fail(concat("unexpected character '", c,
                "' (only objects, arrays, strings and integers are allowed)"));
  }

  JsonValue parseObject(int depth) {
    JsonValue v;
    v.kind = JsonValue::Kind::Object;
    expect('{');
    skipWhitespace();
    if (peek() == '}') {
      ++pos_;
      return v;
    }
    while (true) {
      skipWhitespace();
      if (peek() != '"')
        fail("expected a string key");
      size_t keyPos = pos_;
      std::string key = parseString();
      if (v.find(key)) {
        pos_ = keyPos;
        fail(concat("duplicate key \"", key, "\""));
      }
      skipWhitespace();
      expect(':');
      v.keys.push_back(std::move(key));
      v.items.push_back(parseValue(depth + 1));
      skipWhitespace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect('}');
      return v;
    }
  }

  JsonValue parseArray(int depth) {
    JsonValue v;
    v.kind = JsonValue::Kind::Array;
    expect('[');
    skipWhitespace();
    if (peek() == ']') {
      ++pos_;
      return v;
    }
    while (true) {
      v.items.push_back(parseValue(depth + 1));
      skipWhitespace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect(']');
      return v;
    }
  }

  JsonValue parseInteger() {
    size_t start = pos_;
    bool negative = peek() == '-';
    if (negative)
      ++pos_;
    if (!(peek() >= '0' && peek() <= '9') || atEnd())
      fail("expected a digit");
    if (peek() == '0' && pos_ + 1 < text_.size() && text_[pos_ + 1] >= '0' &&
        text_[pos_ + 1] <= '9')
      fail("leading zeros are not allowed");
    // Accumulate as a negative number so INT64_MIN fits.
    int64_t value = 0;
    while (!atEnd() && peek() >= '0' && peek() <= '9') {
      int digit = peek() - '0';
      if (value < (INT64_MIN + digit) / 10) {
        pos_ = start;
        fail("integer out of range");
      }
      value = value * 10 - digit;
      ++pos_;
    }
    if (peek() == '.' || peek() == 'e' || peek() == 'E')
      fail("only integers are allowed");
    if (!negative) {
      if (value == INT64_MIN) {
        pos_ = start;
        fail("integer out of range");
      }
      value = -value;
    }
    JsonValue v;
    v.kind = JsonValue::Kind::Integer;
    v.integer = value;
    return v;
  }

  /// JSON's number grammar: an integer (int64) when it has no fraction or
  /// exponent, else a finite double.
  JsonValue parseNumber() {
    size_t start = pos_;
    auto digits = [&] {
      size_t from = pos_;
      while (!atEnd() && peek() >= '0' && peek() <= '9')
        ++pos_;
      if (pos_ == from)
        fail("expected a digit");
    };
    if (peek() == '-')
      ++pos_;
    if (peek() == '0' && pos_ + 1 < text_.size() && text_[pos_ + 1] >= '0' &&
        text_[pos_ + 1] <= '9')
      fail("leading zeros are not allowed");
    digits();
    bool integral = true;
    if (peek() == '.') {
      ++pos_;
      digits();
      integral = false;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      if (peek() == '+' || peek() == '-')
        ++pos_;
      digits();
      integral = false;
    }
    std::string literal(text_.substr(start, pos_ - start));
    if (integral) { // an int64, or an error out of its range
      pos_ = start;
      return parseInteger();
    }
    errno = 0;
    double value = std::strtod(literal.c_str(), nullptr);
    if (errno == ERANGE || !std::isfinite(value)) {
      pos_ = start;
      fail("number out of range");
    }
    JsonValue v;
    v.kind = JsonValue::Kind::Number;
    v.number = value;
    return v;
  }

  unsigned parseHex4() {
    if (pos_ + 4 > text_.size())
      fail("truncated \\u escape");
    unsigned code = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text_[pos_++];
      code <<= 4;
      if (c >= '0' && c <= '9')
        code |= unsigned(c - '0');
      else if (c >= 'a' && c <= 'f')
        code |= unsigned(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        code |= unsigned(c - 'A' + 10);
      else
        fail("invalid \\u escape");
    }
    return code;
  }

  static void appendUtf8(std::string &out, unsigned code) {
    if (code < 0x80) {
      out += char(code);
    } else if (code < 0x800) {
      out += char(0xC0 | (code >> 6));
      out += char(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += char(0xE0 | (code >> 12));
      out += char(0x80 | ((code >> 6) & 0x3F));
      out += char(0x80 | (code & 0x3F));
    } else {
      out += char(0xF0 | (code >> 18));
      out += char(0x80 | ((code >> 12) & 0x3F));
      out += char(0x80 | ((code >> 6) & 0x3F));
      out += char(0x80 | (code & 0x3F));
    }
  }

  std::string parseString() {
    expect('"');
    std::string out;
    while (true) {
      if (atEnd())
        fail("unterminated string");
      char c = text_[pos_++];
      if (c == '"')
        return out;
      if (static_cast<unsigned char>(c) < 0x20) {
        --pos_;
        fail("control character in string");
      }
      if (c != '\\') {
        out += c;
        continue;
      }
      if (atEnd())
        fail("unterminated string");
      char e = text_[pos_++];
      switch (e) {
      case '"':
      case '\\':
      case '/':
        out += e;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        unsigned code = parseHex4();
        if (code >= 0xD800 && code <= 0xDBFF) {
          if (pos_ + 2 > text_.size() || text_[pos_] != '\\' ||
              text_[pos_ + 1] != 'u')
            fail("unpaired surrogate in \\u escape");
          pos_ += 2;
          unsigned low = parseHex4();
          if (low < 0xDC00 || low > 0xDFFF)
            fail("unpaired surrogate in \\u escape");
          code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
        } else if (code >= 0xDC00 && code <= 0xDFFF) {
          fail("unpaired surrogate in \\u escape");
        }
        appendUtf8(out, code);
        break;
      }
      default:
        --pos_;
        fail(concat("invalid escape '\\", e, "'"));
      }
    }
  }

  std::string_view text_;
  JsonSyntax syntax_;
  size_t pos_ = 0;
};

} // namespace

JsonValue parseJson(std::string_view text, JsonSyntax syntax) {
  return JsonParser(text, syntax).parseDocument();
}

void appendJsonString(std::string &out, std::string_view s) {
  out += '"';
  for (char c : s) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(c));
        out += buf;
      } else {
        out += c;
      }
    }
  }
  out += '"';
}

} // namespace lmc::rt
