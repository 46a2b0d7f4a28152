//===- mapped_file.h - A whole file mapped read-only ---------------------===//
//
// Data files of real size (token shards of 100 M tokens, 20 GB sets) are
// mapped, not read: their pages come in as a step touches them and the
// kernel may drop them again, so a run's data memory is bounded by what it
// reads, not by the set's size.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_MAPPED_FILE_H
#define LMC_RUNTIME_MAPPED_FILE_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace lmc::rt {

class MappedFile {
public:
  /// Maps all of `path` read-only; throws Error naming the file when it
  /// cannot be opened, is not a regular file or cannot be mapped. An empty
  /// file maps to no bytes.
  static MappedFile open(const std::string &path);

  MappedFile() = default;
  MappedFile(MappedFile &&other) noexcept;
  MappedFile &operator=(MappedFile &&other) noexcept;
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;
  ~MappedFile();

  const uint8_t *data() const { return static_cast<const uint8_t *>(data_); }
  size_t size() const { return size_; }

private:
  MappedFile(void *data, size_t size) : data_(data), size_(size) {}
  void *data_ = nullptr;
  size_t size_ = 0;
};

} // namespace lmc::rt

#endif // LMC_RUNTIME_MAPPED_FILE_H
