//===- test_util.h - Helpers shared by the runtime unit tests ------------===//
#ifndef LMC_RUNTIME_TEST_UTIL_H
#define LMC_RUNTIME_TEST_UTIL_H

#include "base/error.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace lmc::rt::test {

/// Asserts that `stmt` throws lmc::rt::Error whose message contains `needle`.
#define EXPECT_ERROR_CONTAINS(stmt, needle)                                    \
  do {                                                                         \
    try {                                                                      \
      stmt;                                                                    \
      ADD_FAILURE() << "expected an error containing: " << (needle);           \
    } catch (const ::lmc::rt::Error &e) {                                      \
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)         \
          << "message: " << e.what();                                          \
    }                                                                          \
  } while (0)

template <typename T> std::vector<uint8_t> toBytes(const std::vector<T> &v) {
  std::vector<uint8_t> bytes(v.size() * sizeof(T));
  std::memcpy(bytes.data(), v.data(), bytes.size());
  return bytes;
}

/// A .npy file with the given header dict text, as numpy writes it: padded
/// with spaces and a final newline so the data is 64-byte aligned.
inline std::vector<uint8_t> makeNpy(const std::string &dict,
                                    const std::vector<uint8_t> &data,
                                    int major = 1) {
  const size_t lengthBytes = major == 1 ? 2 : 4;
  std::string header = dict;
  while ((6 + 2 + lengthBytes + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', uint8_t(major), 0};
  for (size_t i = 0; i < lengthBytes; ++i)
    out.push_back(uint8_t((header.size() >> (8 * i)) & 0xFF));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

} // namespace lmc::rt::test

#endif // LMC_RUNTIME_TEST_UTIL_H
