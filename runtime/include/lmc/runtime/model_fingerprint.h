//===- model_fingerprint.h - Which model a file belongs to ----------------===//
//
// FNV-1a over a model's descriptor text and its weights' byte count. The
// compiler writes it into the weights payload's trailer and the runtime
// into every checkpoint, so a payload or checkpoint of another model is
// refused. Header-only: both sides include it (the compiler does not link
// the runtime).
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_MODEL_FINGERPRINT_H
#define LMC_RUNTIME_MODEL_FINGERPRINT_H

#include <cstddef>
#include <cstdint>

namespace lmc::rt {

inline uint64_t fingerprintModel(const char *descriptor, size_t length,
                                 uint64_t weightsSize) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto feed = [&](uint8_t byte) {
    h ^= byte;
    h *= 0x100000001b3ull;
  };
  for (size_t i = 0; i < length; ++i)
    feed(uint8_t(descriptor[i]));
  for (int i = 0; i < 8; ++i)
    feed(uint8_t(weightsSize >> (8 * i)));
  return h;
}

} // namespace lmc::rt

#endif // LMC_RUNTIME_MODEL_FINGERPRINT_H
