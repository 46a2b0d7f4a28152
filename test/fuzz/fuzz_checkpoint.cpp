//===- fuzz_checkpoint.cpp - libFuzzer target: checkpoint restore --------===//
//
// A checkpoint is a safetensors file whose metadata describes the run; the
// fuzzer feeds it to the same steps Checkpointer::load takes after the
// fingerprint and checksum checks (which a fuzzer cannot pass): metadata
// parsing, then ModelState::restore into a small momentum-SGD model.
//
//===----------------------------------------------------------------------===//
#include "base/error.h"
#include "io/safetensors.h"
#include "model/descriptor.h"
#include "model/model_state.h"
#include "train/checkpoint.h"

#include <cstddef>
#include <cstdint>

namespace {
const char *kDesc = "lmc-model 1\nloss mse\noptimizer momentum\n"
                    "hparam lr 0.1\nflops 0\n"
                    "train arg param w f32 1 2\n"
                    "train arg param b f64 1 3\n"
                    "train arg state w.momentum_buffer f32 1 2\n"
                    "train arg state b.momentum_buffer f64 1 3\n"
                    "train arg input x f32 1 2\n"
                    "train result param w f32 1 2\n"
                    "train result param b f64 1 3\n"
                    "train result state w.momentum_buffer f32 1 2\n"
                    "train result state b.momentum_buffer f64 1 3\n"
                    "train result loss loss f32 0\n"
                    "init w 0 8\ninit b 8 24\nend\n";
const unsigned char kWeights[32] = {0};
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const lmc::rt::Descriptor desc =
      lmc::rt::parseDescriptor(kDesc, sizeof(kWeights));
  try {
    lmc::rt::SafetensorsFile file =
        lmc::rt::parseSafetensors(std::vector<uint8_t>(data, data + size));
    try {
      (void)lmc::rt::parseCheckpointMetadata(file.metadata);
    } catch (const lmc::rt::Error &) {
    }
    lmc::rt::ModelState state(desc, kWeights);
    state.restore(file, "checkpoint", /*withState=*/true);
  } catch (const lmc::rt::Error &) {
  }
  return 0;
}
