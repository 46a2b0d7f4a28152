//===- npy.cpp - NumPy .npy reader ---------------------------------------===//

#include "io/npy.h"

#include "base/error.h"
#include "io/file_io.h"

#include <cstring>
#include <optional>

namespace lmc::rt {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

/// The header is a Python dict literal such as
///   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
/// This parses exactly that grammar: string keys; values that are strings,
/// True/False, or tuples of non-negative integers.
class HeaderParser {
public:
  explicit HeaderParser(const std::string &text) : text_(text) {}

  struct Header {
    std::string descr;
    bool fortranOrder = false;
    Shape shape;
  };

  Header parse() {
    Header header;
    bool sawDescr = false, sawOrder = false, sawShape = false;
    expect('{');
    while (true) {
      skipSpace();
      if (peek() == '}')
        break;
      std::string key = parseString();
      expect(':');
      if (key == "descr") {
        skipSpace();
        if (peek() != '\'' && peek() != '"')
          fail("'descr' must be a string (structured dtypes are not "
               "supported)");
        header.descr = parseString();
        sawDescr = true;
      } else if (key == "fortran_order") {
        header.fortranOrder = parseBool();
        sawOrder = true;
      } else if (key == "shape") {
        header.shape = parseTuple();
        sawShape = true;
      } else {
        fail(concat("unexpected key '", key, "'"));
      }
      skipSpace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      skipSpace();
      if (peek() != '}')
        fail("expected ',' or '}'");
    }
    expect('}');
    skipSpace();
    if (pos_ != text_.size())
      fail("unexpected characters after the dictionary");
    if (!sawDescr || !sawOrder || !sawShape)
      fail("missing 'descr', 'fortran_order' or 'shape'");
    return header;
  }

private:
  [[noreturn]] void fail(const std::string &what) const {
    throw Error(concat("malformed .npy header: ", what));
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n'))
      ++pos_;
  }
  void expect(char c) {
    skipSpace();
    if (peek() != c)
      fail(concat("expected '", c, "'"));
    ++pos_;
  }
  std::string parseString() {
    skipSpace();
    char quote = peek();
    if (quote != '\'' && quote != '"')
      fail("expected a string");
    size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string::npos)
      fail("unterminated string");
    std::string s = text_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return s;
  }
  bool parseBool() {
    skipSpace();
    if (text_.compare(pos_, 4, "True") == 0) {
      pos_ += 4;
      return true;
    }
    if (text_.compare(pos_, 5, "False") == 0) {
      pos_ += 5;
      return false;
    }
    fail("'fortran_order' must be True or False");
  }
  Shape parseTuple() {
    Shape shape;
    expect('(');
    while (true) {
      skipSpace();
      if (peek() == ')')
        break;
      if (!(peek() >= '0' && peek() <= '9'))
        fail("'shape' must be a tuple of non-negative integers");
      int64_t dim = 0;
      while (peek() >= '0' && peek() <= '9') {
        if (dim > (INT64_MAX - 9) / 10)
          fail("dimension too large");
        dim = dim * 10 + (peek() - '0');
        ++pos_;
      }
      shape.push_back(dim);
      skipSpace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != ')')
        fail("expected ',' or ')' in 'shape'");
    }
    expect(')');
    return shape;
  }

  const std::string &text_;
  size_t pos_ = 0;
};

DType dtypeFromDescr(const std::string &descr) {
  if (descr == "<f4")
    return DType::F32;
  if (descr == "<f8")
    return DType::F64;
  if (descr == "<i8")
    return DType::I64;
  if (descr == "<i4")
    return DType::I32;
  if (!descr.empty() && descr.find('O') != std::string::npos)
    throw Error("object arrays (dtype 'O') are not supported");
  if (!descr.empty() && descr[0] == '>')
    throw Error(concat("big-endian dtype '", descr, "' is not supported"));
  throw Error(concat("unsupported dtype '", descr,
                     "' (supported: <f4, <f8, <i8, <i4)"));
}

uint32_t readLittleEndian(const uint8_t *p, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

} // namespace

NpyArray parseNpy(std::vector<uint8_t> bytes) {
  LMC_CHECK(bytes.size() >= kMagicSize + 2 &&
                std::memcmp(bytes.data(), kMagic, kMagicSize) == 0,
            "not a .npy file (bad magic)");
  const int major = bytes[6], minor = bytes[7];
  LMC_CHECK((major == 1 || major == 2 || major == 3) && minor == 0,
            "unsupported .npy format version ", major, ".", minor);
  // Version 1 stores the header length in 2 bytes, later versions in 4.
  const int lengthBytes = major == 1 ? 2 : 4;
  const size_t prefix = kMagicSize + 2 + size_t(lengthBytes);
  LMC_CHECK(bytes.size() >= prefix, "truncated .npy header");
  const size_t headerSize = readLittleEndian(bytes.data() + 8, lengthBytes);
  LMC_CHECK(headerSize <= kMaxNpyHeaderSize, ".npy header too long (",
            headerSize, " bytes, limit ", kMaxNpyHeaderSize, ")");
  LMC_CHECK(bytes.size() >= prefix + headerSize, "truncated .npy header");

  std::string text(reinterpret_cast<const char *>(bytes.data() + prefix),
                   headerSize);
  HeaderParser::Header header = HeaderParser(text).parse();
  LMC_CHECK(!header.fortranOrder,
            "fortran_order arrays are not supported (save with C order)");

  NpyArray array;
  array.dtype = dtypeFromDescr(header.descr);
  array.shape = std::move(header.shape);
  array.dataOffset = prefix + headerSize;
  array.bytes = std::move(bytes);

  const int64_t count = numElements(array.shape);
  LMC_CHECK(uint64_t(count) <= SIZE_MAX / dtypeSize(array.dtype),
            "shape too large");
  const size_t expected = size_t(count) * dtypeSize(array.dtype);
  const size_t actual = array.dataSize();
  LMC_CHECK(actual >= expected, "truncated data: shape ",
            formatShape(array.shape), " of ", dtypeName(array.dtype), " needs ",
            expected, " bytes, file has ", actual);
  LMC_CHECK(actual == expected, "data size mismatch: shape ",
            formatShape(array.shape), " of ", dtypeName(array.dtype), " needs ",
            expected, " bytes, file has ", actual);
  return array;
}

NpyArray readNpyFile(const std::string &path) {
  std::vector<uint8_t> bytes = readFile(path);
  try {
    return parseNpy(std::move(bytes));
  } catch (const Error &e) {
    throw Error(concat(path, ": ", e.what()));
  }
}

} // namespace lmc::rt
