//===- fuzz_npy.cpp - libFuzzer target: the .npy reader ------------------===//
#include "base/error.h"
#include "io/npy.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  try {
    lmc::rt::NpyArray array =
        lmc::rt::parseNpy(std::vector<uint8_t>(data, data + size));
    // Touch every byte the reader vouches for.
    volatile uint8_t sink = 0;
    for (size_t i = 0; i < array.dataSize(); ++i)
      sink = sink ^ array.data()[i];
    (void)sink;
  } catch (const lmc::rt::Error &) {
  }
  return 0;
}
