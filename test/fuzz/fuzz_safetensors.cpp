//===- fuzz_safetensors.cpp - libFuzzer target: the safetensors reader ---===//
#include "base/error.h"
#include "io/safetensors.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  try {
    lmc::rt::SafetensorsFile file =
        lmc::rt::parseSafetensors(std::vector<uint8_t>(data, data + size));
    // Every tensor's range must lie in the file: read its first and last
    // byte (ASan reports an out-of-bounds range).
    volatile uint8_t sink = 0;
    for (const lmc::rt::SafetensorsTensor &t : file.tensors) {
      if (file.find(t.name) == nullptr)
        __builtin_trap();
      if (t.end > t.begin)
        sink = sink ^ file.data(t)[0] ^ file.data(t)[t.end - t.begin - 1];
    }
    (void)sink;
  } catch (const lmc::rt::Error &) {
  }
  return 0;
}
