//===- file_io.h - Checked whole-file reads and atomic writes ------------===//
#ifndef LMC_RUNTIME_FILE_IO_H
#define LMC_RUNTIME_FILE_IO_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace lmc::rt {

/// Reads the whole file; throws Error naming the file on any failure.
std::vector<uint8_t> readFile(const std::string &path);

struct ByteSpan {
  const void *data;
  size_t size;
};

/// Writes the concatenation of `pieces` to `path` so that a crash never leaves
/// a partial file: temp file in the same directory, fsync, rename over the
/// target, fsync the directory.
void writeFileAtomically(const std::string &path,
                         const std::vector<ByteSpan> &pieces);

} // namespace lmc::rt

#endif // LMC_RUNTIME_FILE_IO_H
