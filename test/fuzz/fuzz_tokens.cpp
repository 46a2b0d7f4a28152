//===- fuzz_tokens.cpp - libFuzzer target: token .bin shards -------------===//
#include "base/error.h"
#include "train/tokens.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  try {
    lmc::rt::TokenShard shard =
        lmc::rt::parseTokenShard(std::vector<uint8_t>(data, data + size));
    volatile uint32_t sink = 0;
    if (shard.numTokens > 0)
      sink = sink ^ shard.token(0) ^ shard.token(shard.numTokens - 1);
    (void)sink;
  } catch (const lmc::rt::Error &) {
  }
  return 0;
}
