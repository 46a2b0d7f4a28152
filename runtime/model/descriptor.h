//===- descriptor.h - The compiled model's descriptor text ---------------===//
//
// Parses and validates the line-oriented descriptor defined in
// docs/runtime-abi.md. Everything the runtime knows about the model's
// buffers comes from here.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_DESCRIPTOR_H
#define LMC_RUNTIME_DESCRIPTOR_H

#include "base/dtype.h"
#include "lmc/runtime/descriptor_lines.h"
#include "model/schedule.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lmc::rt {

/// The tensors' roles and their names (lmc/runtime/descriptor_lines.h).
using Role = descriptor::Role;
using descriptor::roleName;

/// The hyper that carries the random key of a micro-batch (an i64 scalar,
/// the last train arg; an arg of grad_step, not of apply_step).
constexpr const char *kRngKeyHyper = "rng_key";

/// The dynamic loss scaler's states (f32 scalars, not per parameter).
constexpr const char *kLossScaleState = "loss_scaler.scale";
constexpr const char *kGrowthTrackerState = "loss_scaler.growth_tracker";

/// The values an integer input may hold (`bound` line): row indices of an
/// embedding table or class labels, in [0, limit).
struct IndexBound {
  int64_t limit = 0;
  /// What the values index, for messages: "rows of 'wte.weight'",
  /// "classes".
  std::string what;
  /// Also allowed: a cross-entropy's ignore_index (`bound labels C
  /// classes -100`).
  std::optional<int64_t> ignored;
};

/// One buffer of a step: `train arg input x f32 2 64 784`.
struct TensorSpec {
  Role role = Role::Param;
  std::string name;
  DType dtype = DType::F32;
  /// This process's shape: for a tensor split over the `model` processes
  /// (`split` line), its slice.
  Shape shape;
  /// The dimension split over the `model` processes, or -1 (whole).
  int splitDim = -1;
  /// For an integer input the step uses as indices: their range (checked
  /// on every batch before the step reads it).
  std::optional<IndexBound> bound;

  int64_t numElements() const { return lmc::rt::numElements(shape); }
  size_t byteSize() const { return size_t(numElements()) * dtypeSize(dtype); }
};

/// The whole tensor's shape: `spec`'s times `modelParallel` on its split
/// dimension (its own shape when it is not split).
Shape wholeShape(const TensorSpec &spec, int64_t modelParallel);

/// A fused parameter the compiler cut into equal pieces along dimension 0
/// (`join` line, lmc-split-fused-projections): files hold `name`, the
/// pieces one after another, and each piece's optimizer state
/// `<piece>.<slot>` as `<name>.<slot>`.
struct Join {
  std::string name;
  std::vector<std::string> pieces; // params, in order
};

/// The initial value of a param or buffer.
struct InitSpec {
  std::string name;
  uint64_t offset = 0;
  uint64_t size = 0;
};

/// The compiled default schedule (`schedule` line; the DSL's train block);
/// each field is overridden by its flag.
struct ScheduleDefaults {
  ScheduleKind kind = ScheduleKind::Constant;
  std::optional<int64_t> warmup, decaySteps, steps;
  std::optional<double> lrMin;
};

/// What the compiler's activation checkpointing did (`remat` line).
struct Remat {
  std::string policy; // per-block | selective
  uint64_t cuts = 0, recomputed = 0;
};

/// The low-rank adapters lmc --lora added (`lora` line): the trained
/// parameters named `<module>.lora_A.weight` / `.lora_B.weight`.
struct LoraSpec {
  int64_t rank = 0;
  double alpha = 0, dropout = 0;
  bool rslora = false; // scaling alpha / sqrt(rank) instead of alpha / rank
  /// What the adapters are added to (`lora_weight` lines): the weight's
  /// name, the module of its adapters (`<module>.lora_A.weight`), and
  /// whether the weight is [out, in] (nn.Linear's layout, read as x W^T)
  /// rather than [in, out].
  struct Weight {
    std::string name, module;
    bool outIn = true;
  };
  std::vector<Weight> weights;
  double scaling() const {
    return rslora ? alpha / std::sqrt(double(rank)) : alpha / double(rank);
  }
};

/// A loop nest or runtime call the compiled code times under --profile
/// (`profile` lines, lmc-profile-regions), by region number.
struct ProfileRegion {
  std::string function; // the step function that makes the call
  std::string kind;     // loop | matmul_f32 | ... (the runtime function)
  std::string label;    // ONNX node names or DSL positions, "(backward)"
};

struct Descriptor {
  std::string loss;      // cross_entropy | mse | output:NAME
  std::string optimizer; // sgd | momentum | adam | adamw
  std::vector<std::pair<std::string, double>> hparams; // in file order
  uint64_t flops = 0; // forward + backward FLOPs per train step
  std::string precision = "f32"; // compute precision of the matmuls
  /// The most parts a product is cut into for the threads (lmc
  /// --matmul-parts; lmc_rt_set_matmul_parts).
  int64_t matmulParts = 16;
  /// Estimated peak bytes of grad_step's intermediates (0: not given).
  uint64_t activationBytes = 0;
  /// Activation checkpointing (lmc --remat), when compiled with it.
  std::optional<Remat> remat;
  /// LoRA adapters (lmc --lora), when compiled with them.
  std::optional<LoraSpec> lora;
  /// The arena each compiled function holds its intermediates in while it
  /// runs (lmc-plan-buffers: sizes known at compile time), in file order.
  std::vector<std::pair<std::string, uint64_t>> arenas;
  /// The params and states every step that returns them writes over their
  /// argument's buffer (`inplace` lines): the runtime keeps one copy.
  std::set<std::string> inPlace;
  std::vector<ProfileRegion> profileRegions;
  std::optional<ScheduleDefaults> schedule;
  /// Fused parameters files hold whole (`join` lines).
  std::vector<Join> joins;
  std::vector<TensorSpec> trainArgs, trainResults, evalArgs, evalResults;
  /// The train step in two halves (optional; both or neither): grad_step
  /// (params, buffers, inputs) -> (grads, buffers, loss) and apply_step
  /// (params, states, grads, hypers) -> (params, states[, grad_norm]).
  std::vector<TensorSpec> gradArgs, gradResults, applyArgs, applyResults;
  /// apply_step's update of one chunk of the flattened parameters
  /// (optional; ZeRO-1): (param, states, grad, hypers, grad_norm) ->
  /// (param, states), each tensor of chunkElements() floats.
  std::vector<TensorSpec> chunkArgs, chunkResults;
  /// Parallel to params(), buffers() and frozen(), in that order.
  std::vector<InitSpec> inits;
  /// The states with an initial value (the loss scale); others start at 0.
  std::vector<InitSpec> stateInits;
  /// First dimension shared by all train inputs (0 if there are none).
  int64_t batchSize = 0;
  /// The mesh the steps were partitioned for (`mesh` line; 1 x 1 without).
  int64_t dataParallel = 1, modelParallel = 1;
  /// The whole tensor's shape (its shape times the processes on its split
  /// dimension).
  Shape globalShape(const TensorSpec &spec) const;
  size_t globalByteSize(const TensorSpec &spec) const;

  std::optional<double> hparam(std::string_view name) const;
  /// Train args with this role, in descriptor order.
  std::vector<const TensorSpec *> trainArgsWithRole(Role role) const;
  /// The largest arena (0: none planned): the most memory the
  /// intermediates of one compiled function take while it runs.
  uint64_t largestArena() const {
    uint64_t largest = 0;
    for (const auto &arena : arenas)
      largest = std::max(largest, arena.second);
    return largest;
  }
  std::vector<const TensorSpec *> params() const {
    return trainArgsWithRole(Role::Param);
  }
  /// Non-trainable model state the steps update (BatchNorm statistics).
  std::vector<const TensorSpec *> buffers() const {
    return trainArgsWithRole(Role::Buffer);
  }
  std::vector<const TensorSpec *> frozen() const {
    return trainArgsWithRole(Role::Frozen);
  }
  /// Whether the train step has a `hyper NAME` arg.
  bool hasHyper(std::string_view name) const;
  /// Whether the train step returns `grad_norm grad_norm f32 0`.
  bool hasGradNorm() const;
  /// Whether the model has grad_step / apply_step.
  bool hasSplitStep() const { return !gradArgs.empty(); }
  /// Whether the model has chunk_step, and the floats of its chunk.
  bool hasChunkStep() const { return !chunkArgs.empty(); }
  int64_t chunkElements() const {
    return chunkArgs.empty() ? 0 : chunkArgs.front().shape[0];
  }
  /// Whether the step does dynamic loss scaling (state loss_scaler.scale):
  /// it skips an update with a non-finite gradient itself.
  bool hasLossScaling() const;
};

/// Parses and validates the descriptor; init ranges are checked against
/// `weightsSize`. Throws Error("model descriptor line N: ...").
Descriptor parseDescriptor(std::string_view text, uint64_t weightsSize);

} // namespace lmc::rt

#endif // LMC_RUNTIME_DESCRIPTOR_H
