//===- info.cpp - --info: describe the compiled model --------------------===//

#include "cli/info.h"

#include "base/error.h"
#include "base/format_bytes.h"
#include "model/gradient_arena.h"
#include "model/memory_budget.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace lmc::rt {

namespace {

std::string typeOf(const TensorSpec &spec) {
  return concat(dtypeName(spec.dtype), formatShape(spec.shape));
}

/// Appends "  name  type  [extra]" rows with the name column aligned.
void appendRows(std::string &out, const std::vector<const TensorSpec *> &specs,
                bool withCounts) {
  size_t nameWidth = 0, typeWidth = 0;
  for (const TensorSpec *spec : specs) {
    nameWidth = std::max(nameWidth, spec->name.size());
    typeWidth = std::max(typeWidth, typeOf(*spec).size());
  }
  for (const TensorSpec *spec : specs) {
    std::string name = spec->name, type = typeOf(*spec);
    out += "  " + name + std::string(nameWidth - name.size() + 2, ' ') + type;
    if (withCounts)
      out += std::string(typeWidth - type.size() + 2, ' ') +
             std::to_string(spec->numElements());
    else if (spec->bound) // checked on every batch (train/index_check.h)
      out += std::string(typeWidth - type.size() + 2, ' ') + "values in [0, " +
             std::to_string(spec->bound->limit) + "): " + spec->bound->what;
    out += '\n';
  }
}

} // namespace

std::string formatModelInfo(const Descriptor &desc) {
  std::string out;
  std::vector<const TensorSpec *> params = desc.params();
  int64_t total = 0;
  size_t bytes = 0;
  for (const TensorSpec *p : params) {
    total += p->numElements();
    bytes += p->byteSize();
  }
  out += concat("parameters (", params.size(), " tensors):\n");
  appendRows(out, params, /*withCounts=*/true);
  out += concat("total parameters: ", total, " (", bytes, " bytes)\n");
  std::vector<const TensorSpec *> buffers = desc.buffers();
  if (!buffers.empty()) {
    out += concat("buffers, not trained (", buffers.size(), " tensors):\n");
    appendRows(out, buffers, /*withCounts=*/true);
  }
  std::vector<const TensorSpec *> frozen = desc.frozen();
  if (!frozen.empty()) {
    int64_t frozenTotal = 0;
    size_t frozenBytes = 0;
    for (const TensorSpec *f : frozen) {
      frozenTotal += f->numElements();
      frozenBytes += f->byteSize();
    }
    out += concat("frozen, not trained (", frozen.size(), " tensors, ",
                  frozenTotal, " values, ", frozenBytes, " bytes):\n");
    appendRows(out, frozen, /*withCounts=*/true);
  }

  std::vector<const TensorSpec *> states = desc.trainArgsWithRole(Role::State);
  if (!states.empty()) {
    size_t stateBytes = 0;
    for (const TensorSpec *s : states)
      stateBytes += s->byteSize();
    out += concat("optimizer state: ", states.size(), " tensors (", stateBytes,
                  " bytes)\n");
  }

  out += concat("batch size: ", desc.batchSize, "\n");
  out += "inputs:\n";
  appendRows(out, desc.trainArgsWithRole(Role::Input), /*withCounts=*/false);
  std::vector<const TensorSpec *> evalInputs, evalOutputs;
  for (const TensorSpec &arg : desc.evalArgs)
    if (arg.role == Role::Input)
      evalInputs.push_back(&arg);
  for (const TensorSpec &res : desc.evalResults)
    if (res.role == Role::Output)
      evalOutputs.push_back(&res);
  if (!evalInputs.empty()) {
    out += "eval inputs:\n";
    appendRows(out, evalInputs, /*withCounts=*/false);
  }
  if (!evalOutputs.empty()) {
    out += "eval outputs:\n";
    appendRows(out, evalOutputs, /*withCounts=*/false);
  }

  out += concat("loss: ", desc.loss, "\n");
  out += concat("optimizer: ", desc.optimizer, "\n");
  if (!desc.hparams.empty()) {
    out += "hparams:";
    for (const auto &[name, value] : desc.hparams) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.6g", value);
      out += concat(" ", name, "=", buf);
    }
    out += '\n';
  }
  out += concat("flops per step: ", desc.flops, "\n");
  out += concat("precision: ", desc.precision,
                desc.precision == "f32" ? "\n"
                                        : " matmuls, f32 parameters and "
                                          "accumulation\n");
  out += concat("matmul parts: up to ", desc.matmulParts,
                " per product (the same results on any --threads)\n");
  if (desc.hasLossScaling())
    out += "loss scaling: dynamic (initial scale 65536; a step with a "
           "non-finite gradient is skipped and halves it)\n";
  if (desc.activationBytes > 0)
    out += concat("activation memory: ", formatBytes(desc.activationBytes),
                  " (estimated peak of the step's intermediates)\n");
  if (desc.remat)
    out += concat("activation checkpointing: ", desc.remat->policy, " (",
                  desc.remat->cuts, " cuts of the residual stream kept, ",
                  desc.remat->recomputed,
                  " ops recomputed in the backward pass)\n");
  if (desc.lora) {
    const LoraSpec &lora = *desc.lora;
    double scaling = lora.rslora ? lora.alpha / std::sqrt(double(lora.rank))
                                 : lora.alpha / double(lora.rank);
    out += concat("LoRA: rank ", lora.rank, ", alpha ", lora.alpha,
                  " (scaling ", scaling, lora.rslora ? ", rsLoRA" : "",
                  "), dropout ", lora.dropout,
                  "; only the adapters train, the base is frozen\n");
  }
  if (!desc.arenas.empty()) {
    out += "step memory:";
    for (const auto &[function, bytes] : desc.arenas)
      out += concat(" ", function, " ", formatBytes(bytes), ",");
    out.back() = ' ';
    out += "(intermediates, planned at compile time)\n";
  }
  const MemoryNeed need = estimateMemory(desc, /*splitStep=*/false);
  out += concat("memory need: ", formatBytes(need.total()), " (",
                describeParts(need),
                "; estimate for one process; --memory-budget)\n");
  if (!desc.inPlace.empty())
    out += concat("updated in place: ", desc.inPlace.size(), " of ",
                  desc.params().size() +
                      desc.trainArgsWithRole(Role::State).size(),
                  " params and optimizer state tensors (one copy each)\n");
  if (desc.schedule) {
    const ScheduleDefaults &s = *desc.schedule;
    out += concat("schedule: ", scheduleKindName(s.kind));
    if (s.warmup)
      out += concat(" warmup=", *s.warmup);
    if (s.lrMin) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.6g", *s.lrMin);
      out += concat(" lr_min=", buf);
    }
    if (s.decaySteps)
      out += concat(" decay_steps=", *s.decaySteps);
    if (s.steps)
      out += concat(" steps=", *s.steps);
    out += " (compiled default; flags override)\n";
  }
  out += concat("gradient accumulation and data parallelism: ",
                desc.hasSplitStep() ? "yes (grad_step/apply_step)" : "no",
                "\n");
  if (desc.hasSplitStep())
    out += concat("data-parallel all-reduce: ",
                  GradientArena(desc.params()).floats * sizeof(float),
                  " bytes per step (gradients: ", bytes, " bytes)\n");
  if (desc.modelParallel == 1) {
    out += "mesh: none (data parallel across the processes of mpirun/srun)\n";
    return out;
  }
  out += concat("mesh: data=", desc.dataParallel, " model=", desc.modelParallel,
                " (tensor parallel: ", desc.modelParallel,
                " processes split the parameters, data parallel across the "
                "groups)\n");
  std::string splits;
  for (const TensorSpec *param : desc.params())
    if (param->splitDim >= 0)
      splits += concat(splits.empty() ? "" : ", ", param->name, " dim ",
                       param->splitDim);
  out += concat("split over model: ", splits.empty() ? "none" : splits,
                " (shapes above are one process's slices)\n");
  return out;
}

} // namespace lmc::rt
