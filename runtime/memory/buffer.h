//===- buffer.h - 64-byte aligned, zero-initialized host buffers ---------===//
#ifndef LMC_RUNTIME_BUFFER_H
#define LMC_RUNTIME_BUFFER_H

#include <cstddef>
#include <memory>

namespace lmc::rt {

/// The ABI requires every buffer handed to a step to be 64-byte aligned.
class AlignedBuffer {
public:
  static constexpr size_t kAlignment = 64;

  AlignedBuffer() = default;
  /// Allocates `size` zeroed bytes (at least one cache line, so a
  /// zero-element tensor still has a valid, aligned pointer). From 2 MiB
  /// on, an anonymous mapping of its own: zero without being touched.
  explicit AlignedBuffer(size_t size);
  /// A buffer that does not own its memory: `size` bytes at `data` (64-byte
  /// aligned) inside another buffer that outlives it.
  static AlignedBuffer view(void *data, size_t size);

  void *data() { return data_.get(); }
  const void *data() const { return data_.get(); }
  template <typename T> T *as() { return static_cast<T *>(data()); }
  template <typename T> const T *as() const {
    return static_cast<const T *>(data());
  }
  size_t size() const { return size_; }

private:
  struct Free {
    Free() : owns(true), mappedBytes(0) {}
    explicit Free(bool owns, size_t mappedBytes = 0)
        : owns(owns), mappedBytes(mappedBytes) {}
    void operator()(void *p) const;
    bool owns;
    size_t mappedBytes; // an anonymous mapping of this size, else malloc'd
  };
  std::unique_ptr<void, Free> data_;
  size_t size_ = 0;
};

} // namespace lmc::rt

#endif // LMC_RUNTIME_BUFFER_H
