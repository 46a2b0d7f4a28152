//===- checkpoint.h - Training checkpoints for exact resume --------------===//
//
// One safetensors file per checkpoint, DIR/step_<8+ digits>.safetensors:
// the parameters (keys = parameter names), the optimizer state (keys = state
// names) and, in __metadata__, everything else resume needs (step, data
// cursor, shuffle seed, schedule, the model fingerprint and a CRC-32C of the
// data buffer). Written atomically (temp file, fsync, rename, directory
// fsync). docs/training.md describes the format.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_CHECKPOINT_H
#define LMC_RUNTIME_CHECKPOINT_H

#include "comm/comm.h"
#include "model/descriptor.h"
#include "model/model_state.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lmc::rt {

/// The run state besides tensors.
struct CheckpointMeta {
  int64_t step = 0;         // optimizer steps done
  int64_t dataCursor = 0;   // samples (or token windows) drawn so far
  int64_t numSamples = 0;   // samples in the training set the cursor indexes
  uint64_t seed = 0;        // --seed
  bool shuffle = false;     // --shuffle
  // Read from a file: the order its run's --shuffle drew samples in (files
  // are written with kShuffleOrder; earlier versions' lack the key:
  // kFisherYatesOrder).
  std::string shuffleOrder;
  int64_t skippedSteps = 0; // steps skipped by --on-nonfinite skip
  // Schedule the run used (recorded; the schedule position is `step`).
  std::string schedule;
  double lr = 0, lrMin = 0;
  int64_t warmup = 0, totalSteps = 0;
};

/// FNV-1a 64 of the descriptor text followed by the weights size (8 bytes,
/// little-endian): identifies the compiled model a checkpoint belongs to.
uint64_t modelFingerprint(std::string_view descriptor, uint64_t weightsSize);

/// "step_00000010.safetensors".
std::string checkpointFileName(int64_t step);
/// The step of a checkpoint file name, or nullopt for any other name
/// (temp files, foreign files).
std::optional<int64_t> parseCheckpointFileName(const std::string &name);

/// Metadata <-> CheckpointMeta. parseCheckpointMetadata throws Error on
/// missing or malformed keys.
std::map<std::string, std::string>
checkpointMetadata(const CheckpointMeta &meta, uint64_t fingerprint,
                   uint32_t dataCrc);
CheckpointMeta parseCheckpointMetadata(
    const std::map<std::string, std::string> &metadata);

class Checkpointer {
public:
  /// Creates `dir` if it does not exist (one level).
  Checkpointer(std::string dir, int64_t keep, uint64_t fingerprint);

  /// A tensor-parallel run: the processes of `group` (all of them call
  /// save) gather the split tensors, and only the one with `writes` writes
  /// the file.
  void gatherOver(const Descriptor &desc, Communicator &group, bool writes) {
    desc_ = &desc;
    group_ = &group;
    writes_ = writes;
  }

  /// ZeRO-1: each process of `group` holds a range of the optimizer state;
  /// all of them call save, which gathers the whole state, and only the one
  /// with `writes` writes the file.
  void gatherStatesOver(Communicator &group, bool writes) {
    statesGroup_ = &group;
    writes_ = writes;
  }

  /// Writes a checkpoint of the current params and state; then deletes the
  /// oldest checkpoints beyond --keep. Returns the path.
  std::string save(ModelState &state, const CheckpointMeta &meta);

  /// The newest checkpoint file in the directory (highest step), if any.
  std::optional<std::string> newest() const;

  /// Validates `path` completely (format, fingerprint, checksum, every
  /// tensor), then restores params and state. Throws Error naming the file;
  /// on error nothing is changed.
  CheckpointMeta load(const std::string &path, ModelState &state);

  /// The last checkpoint written or loaded ("" if none).
  const std::string &lastPath() const { return lastPath_; }
  /// Wall time of the last save, in milliseconds.
  double lastSaveMs() const { return lastSaveMs_; }

private:
  /// Checkpoint files in the directory, sorted by step.
  std::vector<std::pair<int64_t, std::string>> list() const;

  std::string dir_;
  int64_t keep_;
  uint64_t fingerprint_;
  std::string lastPath_;
  double lastSaveMs_ = 0;
  const Descriptor *desc_ = nullptr;
  Communicator *group_ = nullptr;
  Communicator *statesGroup_ = nullptr;
  bool writes_ = true;
};

} // namespace lmc::rt

#endif // LMC_RUNTIME_CHECKPOINT_H
