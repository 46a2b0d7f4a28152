//===- npy.h - NumPy .npy reader -----------------------------------------===//
//
// Reads format versions 1.0, 2.0 and 3.0 of
// https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
// for the little-endian dtypes the ABI knows (<f4 <f8 <i8 <i4), C order only.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_NPY_H
#define LMC_RUNTIME_NPY_H

#include "base/dtype.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lmc::rt {

/// numpy's own limit (np.load's max_header_size default).
constexpr size_t kMaxNpyHeaderSize = 10000;

struct NpyArray {
  DType dtype = DType::F32;
  Shape shape;
  /// The whole file; the array data starts at dataOffset.
  std::vector<uint8_t> bytes;
  size_t dataOffset = 0;

  const uint8_t *data() const { return bytes.data() + dataOffset; }
  size_t dataSize() const { return bytes.size() - dataOffset; }
};

/// Parses .npy bytes. Throws Error describing the problem (no file name).
NpyArray parseNpy(std::vector<uint8_t> bytes);

/// Reads and parses a .npy file. Errors are prefixed with the path.
NpyArray readNpyFile(const std::string &path);

} // namespace lmc::rt

#endif // LMC_RUNTIME_NPY_H
