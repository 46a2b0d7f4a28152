//===- weights_payload.h - The initial weights after the executable -----===//
//
// `lmc -o train` appends the model's initial weights to the linked
// executable instead of compiling them into its data: page-aligned bytes
// followed by a 32-byte trailer (little-endian u64 offset, u64 size, u64
// model fingerprint, then the magic "LMCWGHT1"). They need no relocation
// and no loaded segment, so nothing in the format caps the model, and the
// runtime maps them from its own file and reads each byte once, into the
// parameter buffers (docs/runtime-abi.md, "Weights payload").
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_WEIGHTS_PAYLOAD_H
#define LMC_RUNTIME_WEIGHTS_PAYLOAD_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace lmc::rt {

/// A read-only mapping of the weights payload at the end of `path`;
/// unmapped when destroyed (the values then live in the parameters).
class WeightsPayload {
public:
  /// Maps the payload of the executable `path`. Throws Error with one line
  /// when the trailer is missing (a truncated or stripped file), when its
  /// offset or size do not fit the file, or when its size or fingerprint
  /// are not those of the model compiled into the executable.
  static WeightsPayload map(const std::string &path, uint64_t expectedSize,
                            uint64_t expectedFingerprint);

  WeightsPayload(WeightsPayload &&other) noexcept;
  WeightsPayload &operator=(WeightsPayload &&) = delete;
  WeightsPayload(const WeightsPayload &) = delete;
  ~WeightsPayload();

  const unsigned char *data() const {
    return static_cast<const unsigned char *>(mapping_) + skip_;
  }
  uint64_t size() const { return size_; }

private:
  WeightsPayload(void *mapping, size_t mappedBytes, size_t skip,
                 uint64_t size)
      : mapping_(mapping), mappedBytes_(mappedBytes), skip_(skip),
        size_(size) {}
  void *mapping_ = nullptr;
  size_t mappedBytes_ = 0;
  size_t skip_ = 0; // from the page-aligned mapping to the payload
  uint64_t size_ = 0;
};

} // namespace lmc::rt

#endif // LMC_RUNTIME_WEIGHTS_PAYLOAD_H
