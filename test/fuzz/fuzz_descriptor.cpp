//===- fuzz_descriptor.cpp - libFuzzer target: the model descriptor ------===//
//
// The first 2 bytes give the size of the embedded weights the init ranges
// are checked against; the rest is the descriptor text.
//
//===----------------------------------------------------------------------===//
#include "base/error.h"
#include "model/descriptor.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2)
    return 0;
  uint64_t weightsSize = uint64_t(data[0]) | uint64_t(data[1]) << 8;
  std::string_view text(reinterpret_cast<const char *>(data + 2), size - 2);
  try {
    lmc::rt::Descriptor desc = lmc::rt::parseDescriptor(text, weightsSize);
    for (const lmc::rt::InitSpec &init : desc.inits)
      if (init.offset > weightsSize || init.size > weightsSize - init.offset)
        __builtin_trap(); // the parser promised in-range init data
  } catch (const lmc::rt::Error &) {
  }
  return 0;
}
