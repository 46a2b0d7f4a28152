//===- LmcAttributes.h - The attributes lmc passes exchange ----*- C++ -*-===//
//
// The importers tag the forward function's arguments and results; the
// training passes read and extend those tags; the driver turns the entry
// points' tags into the runtime descriptor (docs/runtime-abi.md). The lmc
// dialect verifies the values of those it owns (LmcDialect.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef LMC_DIALECT_LMC_IR_LMCATTRIBUTES_H
#define LMC_DIALECT_LMC_IR_LMCATTRIBUTES_H

#include "lmc/runtime/descriptor_lines.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace lmc::attrs {

/// On a forward argument: the parameter's name (its checkpoint key).
constexpr llvm::StringLiteral kParam = "lmc.param";
/// On a parameter argument: its initial value (an ElementsAttr).
constexpr llvm::StringLiteral kInit = "lmc.init";
/// On a parameter argument (unit): the parameter stays constant
/// (lmc-lora's base weights) but, unlike --freeze's, is not folded into the
/// code: lmc-autodiff keeps it an argument without a gradient and the
/// entry points take it with role `frozen` (a large base compiles as fast
/// as a trained one, its bytes in the weights payload).
constexpr llvm::StringLiteral kFrozen = "lmc.frozen";
/// On the module: {rank, alpha, scaling, rslora, dropout, targets, weights,
/// layouts}, the adapters lmc-lora added (the descriptor's `lora` and
/// `lora_weight` lines).
constexpr llvm::StringLiteral kLora = "lmc.lora";
/// On a forward argument: the name of a model input.
constexpr llvm::StringLiteral kInput = "lmc.input";
/// On a forward argument: the name of a buffer, non-trainable model state
/// that a training step updates (BatchNormalization's running statistics;
/// a checkpoint key, with an `lmc.init`). On a forward result: the buffer's
/// value after the step.
constexpr llvm::StringLiteral kBuffer = "lmc.buffer";
/// On a forward argument (an i64 scalar): the key of the step's random
/// numbers (Dropout), a different one for every micro-batch; the runtime
/// derives it from --seed (hyper `rng_key`). The value is the unit
/// attribute.
constexpr llvm::StringLiteral kRngKey = "lmc.rng_key";
/// On a @forward_grad argument (an f32 scalar, lmc-autodiff's `loss-scale`):
/// the loss's cotangent, the dynamic loss scale.
constexpr llvm::StringLiteral kLossScale = "lmc.loss_scale";
/// On a forward result: the name of a model output.
constexpr llvm::StringLiteral kOutput = "lmc.output";
/// On entry-point arguments and results: a descriptor::Role by its name
/// (param | state | buffer | frozen | input | hyper | grad | loss |
/// grad_norm | output); roleIn reads it, roleAttr writes it.
constexpr llvm::StringLiteral kRole = "lmc.role";
/// On entry-point arguments and results: the name that goes with the role.
constexpr llvm::StringLiteral kName = "lmc.name";
/// On the module: the loss that lmc-attach-loss attached.
constexpr llvm::StringLiteral kLoss = "lmc.loss";
/// On the module: the optimizer and its hyperparameters (a dictionary).
constexpr llvm::StringLiteral kOptimizer = "lmc.optimizer";
/// On the module: the compute precision lmc-mixed-precision applied ("bf16",
/// "f16"); absent means f32.
constexpr llvm::StringLiteral kPrecision = "lmc.precision";
/// On the module: the default learning-rate schedule, a dictionary {name,
/// warmup, lr_min, decay_steps, steps} (the DSL's train block sets it); the
/// descriptor hands it to the runtime, whose flags override it.
constexpr llvm::StringLiteral kSchedule = "lmc.schedule";
/// Module: {data = D, model = M}, the mesh the steps are partitioned for
/// (lmc-shard-annotate).
constexpr llvm::StringLiteral kMesh = "lmc.mesh";
/// Module: {<fused parameter> = [<piece>, ...], ...}: the parameters
/// lmc-split-fused-projections cut a fused one into (along dimension 0, in
/// order), which files hold joined under the fused one's name.
constexpr llvm::StringLiteral kPieces = "lmc.pieces";
/// Module: {<param> = <dimension split over model> : i64, ...}.
constexpr llvm::StringLiteral kSplits = "lmc.splits";
/// The one-axis `shard.grid` (the `model` processes) lmc partitions over.
constexpr llvm::StringLiteral kShardGrid = "mesh";
/// Function: a loop nest lmc-outline-loop-nests moved out of its caller;
/// emitted with internal linkage and never inlined back.
constexpr llvm::StringLiteral kOutlined = "lmc.outlined";
/// Module: {<function> = <bytes> : i64, ...}, the size of each function's
/// buffer arena (lmc-plan-buffers); the descriptor reports them.
constexpr llvm::StringLiteral kArenas = "lmc.arenas";
/// memref.view: one buffer of an arena, disjoint from every other buffer
/// live at the same time (lmc-plan-buffers).
constexpr llvm::StringLiteral kPlanned = "lmc.planned";
/// On a train_step/apply_step result (between lmc-tie-updates-to-arguments
/// and lmc-drop-in-place-results): the position of the argument whose
/// buffer the updated tensor is written into.
constexpr llvm::StringLiteral kUpdatesArgument = "lmc.updates_argument";
/// Module: the names of the params and states every entry point updates in
/// place (lmc-drop-in-place-results; the descriptor's `inplace` lines).
constexpr llvm::StringLiteral kInPlace = "lmc.in_place";
/// Module: {<function> = array<i64: slot, ...>}: the slots of the function's
/// packed buffer list (arguments, then results) whose results were dropped
/// because they were updated in place; the driver's wrappers skip them.
constexpr llvm::StringLiteral kInPlaceSlots = "lmc.in_place_slots";

/// Module: {policy, cuts, recomputed}: what lmc-rematerialize did (its
/// policy, the cuts it found, the ops it cloned into the backward pass).
constexpr llvm::StringLiteral kRemat = "lmc.remat";
/// On an op lmc-rematerialize cloned into the backward pass (unit): a
/// recomputation, which model FLOPs leave out.
constexpr llvm::StringLiteral kRecomputed = "lmc.recomputed";

/// Location metadata (a FusedLoc around the forward op's location) on the
/// ops lmc-autodiff builds for the backward pass, so that a profile can
/// tell a forward op's gradient from the op itself.
constexpr llvm::StringLiteral kBackwardLoc = "backward";
/// Module: ["<function> <kind> <label>", ...]: the calls lmc-profile-regions
/// timed, indexed by the region number it passes the runtime (the
/// descriptor's `profile` lines).
constexpr llvm::StringLiteral kProfileRegions = "lmc.profile_regions";
/// On a gpu.binary: {kernel = {registers, spill_stores, spill_loads,
/// shared_bytes, stack_bytes}}, ptxas's report of each kernel
/// (lmc-assemble-gpu-kernels; `lmc --target cuda -v` summarises it).
constexpr llvm::StringLiteral kKernelResources = "lmc.kernel_resources";

/// The function names the passes agree on.
constexpr llvm::StringLiteral kForward = "forward";
constexpr llvm::StringLiteral kForwardGrad = "forward_grad";
constexpr llvm::StringLiteral kTrainStep = "train_step";
constexpr llvm::StringLiteral kEvalStep = "eval_step";
constexpr llvm::StringLiteral kGradStep = "grad_step";
constexpr llvm::StringLiteral kApplyStep = "apply_step";
constexpr llvm::StringLiteral kChunkStep = "chunk_step";

using descriptor::Role;

/// The role in an entry point's argument or result attributes; nothing
/// without one.
inline std::optional<Role> roleIn(mlir::DictionaryAttr attributes) {
  auto role = attributes ? attributes.getAs<mlir::StringAttr>(kRole)
                         : mlir::StringAttr();
  return role ? descriptor::roleNamed(role.getValue()) : std::nullopt;
}

inline mlir::StringAttr roleAttr(mlir::MLIRContext *context, Role role) {
  return mlir::StringAttr::get(context, descriptor::roleName(role));
}

} // namespace lmc::attrs

#endif // LMC_DIALECT_LMC_IR_LMCATTRIBUTES_H
