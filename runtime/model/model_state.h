//===- model_state.h - Parameters, optimizer state and model buffers -----===//
//
// Every param, state and buffer tensor (BatchNorm's running statistics) has
// two aligned memory blocks: the step reads the "current" one and writes the
// "next" one; swap() makes the freshly written ones current. A param or
// state the steps update in place (the descriptor's `inplace` lines) has
// one block that is both. A frozen tensor (lmc --lora's base) has one
// block, the weights payload's bytes where they lie unless --init or a
// checkpoint replaced them; it is in no --save file, and in checkpoints
// only once a file replaced it.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_MODEL_STATE_H
#define LMC_RUNTIME_MODEL_STATE_H

#include "io/hf_checkpoint.h"
#include "io/safetensors.h"
#include "memory/buffer.h"
#include "model/descriptor.h"

#include <array>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace lmc::rt {

/// ZeRO-1's part of the optimizer state (docs/distributed.md): the params
/// laid end to end at `offsets` (floats; GradientArena's layout) and this
/// process's range [begin, end) of that arena. Each state slot (the `slot`
/// of the states `<param>.<slot>`) is kept for that range only.
/// What --init loaded: the one-line summary of how the names matched, and
/// each param's and buffer's name in the file (what --save-hf writes).
struct LoadedInit {
  std::string summary;
  std::map<std::string, std::string> sourceNames;
};

struct StateShard {
  std::vector<size_t> offsets;    // parallel to the params
  size_t floats = 0;              // the arena (whole lines)
  size_t begin = 0, end = 0;      // multiples of 16 floats
  std::vector<std::string> slots; // "exp_avg", "exp_avg_sq"
};

class ModelState {
public:
  /// Allocates params, state and buffers; params and buffers start from the
  /// embedded init bytes (ranges already validated by parseDescriptor; a
  /// param split over the model group takes slice `modelRank`), state from
  /// zero (or its init line: the loss scale). With a `shard` (ZeRO-1) only
  /// its range of each state slot is kept (zero; such models have no
  /// initial state values) instead of whole state tensors. Files still hold
  /// whole tensors: views() then leaves the state out (the processes gather
  /// it: wholeShardedStates) and restore() takes this process's range.
  /// With `weightsOutlive` (`weights` stays mapped as long as the state)
  /// the frozen tensors are read where they are instead of copied: a
  /// base model of many GB takes no second copy. A file that replaces them
  /// (--init, a checkpoint) gets them blocks of their own first.
  ModelState(const Descriptor &desc, const unsigned char *weights,
             int64_t modelRank = 0, std::optional<StateShard> shard = {},
             bool weightsOutlive = false);

  const std::vector<const TensorSpec *> &params() const { return params_; }
  const std::vector<const TensorSpec *> &states() const { return states_; }
  const std::vector<const TensorSpec *> &buffers() const { return buffers_; }
  const std::vector<const TensorSpec *> &frozen() const { return frozen_; }

  /// Fused parameters files hold whole (pieces.h).
  const std::vector<Join> &joins() const { return joins_; }

  /// Index into params()/states() by name, or -1.
  int paramIndex(const std::string &name) const;
  int stateIndex(const std::string &name) const;

  AlignedBuffer &param(size_t i) { return paramBuffers_[current_][i]; }
  AlignedBuffer &nextParam(size_t i) { return paramBuffers_[1 - current_][i]; }
  AlignedBuffer &state(size_t i) { return stateBuffers_[current_][i]; }
  AlignedBuffer &nextState(size_t i) { return stateBuffers_[1 - current_][i]; }
  AlignedBuffer &bufferValue(size_t i) { return bufferValues_[current_][i]; }

  /// The buffer of the param, state, model buffer or frozen tensor `spec`
  /// names (its role and name): the current one a step reads, or with
  /// `next` the one it writes (a frozen tensor's one block either way).
  /// Null for other roles.
  void *buffer(const TensorSpec &spec, bool next);

  /// The shard, when the state is sharded.
  const std::optional<StateShard> &stateShard() const { return shard_; }
  /// With a shard the params are laid end to end at its offsets: the
  /// current arena, or the one a step writes.
  float *paramArena(bool next) {
    return paramArenas_[next ? 1 - current_ : current_].as<float>();
  }
  /// Where a sharded state `<param>.<slot>` lives: its param's index and
  /// its slot's index in the shard.
  struct StateHome {
    size_t param, slot;
  };
  StateHome stateHome(const TensorSpec &state) const;
  /// A sharded state slot's range (current, or the one a step writes).
  AlignedBuffer &stateRange(size_t slot, bool next) {
    return stateBuffers_[next ? 1 - current_ : current_][slot];
  }

  /// After a step: the written buffers become current.
  void swap() { current_ = 1 - current_; }
  /// After a grad_step, which updates only the model buffers: the written
  /// ones become current (copied: params and state are not swapped).
  void commitBuffers();

  /// Replaces the current params and buffers with the tensors of a
  /// safetensors file (--init), matched by name as matchInitTensors does
  /// (exactly, else by a unique suffix at a '.'; bf16/f16 widened); each
  /// must then have the same dtype and shape (the whole shape of a split
  /// one, of which this process takes its slice; the fused tensor of a
  /// piece). `checkpoint` may be sharded (its pieces' entries are added).
  /// With frozen tensors (lmc --lora's base) the file holds the params and
  /// buffers (the adapters), the frozen ones (the base model's
  /// checkpoint), or both: each group whole, the other left as it is.
  LoadedInit loadParams(HfCheckpoint &checkpoint, const std::string &source);
  /// Writes the current params and buffers atomically (keys = their names,
  /// as in a PyTorch state_dict).
  void saveParams(const std::string &path);

  /// The current params and buffers (keys = their names), then, with
  /// `withState`, the optimizer state (keys = state names) and the frozen
  /// tensors when a file replaced them (a checkpoint must bring them
  /// back).
  std::vector<TensorView> views(bool withState);
  /// Replaces the current params, buffers and (with `withState`) state, and
  /// the frozen tensors when a checkpoint holds them, with the tensors of
  /// `file` (with addPieceEntries' entries for pieces); validates
  /// everything before copying anything.
  /// `source` prefixes error messages.
  void restore(const SafetensorsFile &file, const std::string &source,
               bool withState);

private:
  using Storage = std::array<std::vector<AlignedBuffer>, 2>;
  /// One kind of tensor: its specs, their two blocks each, its name in
  /// messages.
  struct Group {
    const std::vector<const TensorSpec *> *specs;
    Storage *storage;
    const char *what;
  };
  /// Params and buffers, then, with `withState`, the optimizer state, and
  /// with `withFrozen` the frozen tensors: the order of files and
  /// checkpoints.
  std::vector<Group> groups(bool withState, bool withFrozen = false);
  /// Gives the frozen tensors blocks of their own (a copy) where they are
  /// read from the weights.
  void ownFrozen();
  /// restore() of these groups.
  void restoreGroups(const SafetensorsFile &file, const std::string &source,
                     const std::vector<Group> &restored, bool shardedState);
  /// The params' two arenas (and their views) and one block per state
  /// slot of the shard's range, twice.
  void allocateShardedStorage();
  /// Copies this process's range of every sharded state from `file`.
  void restoreStateRanges(const SafetensorsFile &file);

  std::vector<const TensorSpec *> params_, states_, buffers_, frozen_;
  // Name -> index: the step buffers are looked up by name every step.
  std::unordered_map<std::string, int> paramIndex_, stateIndex_, bufferIndex_,
      frozenIndex_;
  Storage paramBuffers_, stateBuffers_, bufferValues_;
  /// One block per frozen tensor, seen twice (no step writes one).
  Storage frozenValues_;
  /// Whether --init or a checkpoint replaced the frozen tensors: files
  /// written later (checkpoints) hold them then, so that a resumed run
  /// trains the same model.
  bool frozenFromFile_ = false;
  /// Whether the frozen blocks are views of the weights (read-only).
  bool frozenBorrowed_ = false;
  int current_ = 0;
  /// Processes splitting the split tensors, and this one's slice.
  int64_t modelParallel_ = 1, modelRank_ = 0;
  /// Fused parameters files hold whole (`join` lines).
  std::vector<Join> joins_;
  /// With ZeRO-1: stateBuffers_ then hold one range per slot, and
  /// paramBuffers_ are views into paramArenas_.
  std::optional<StateShard> shard_;
  std::array<AlignedBuffer, 2> paramArenas_;
};

} // namespace lmc::rt

#endif // LMC_RUNTIME_MODEL_STATE_H
