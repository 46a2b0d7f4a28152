//===- lora_merge.cpp - LoRA adapters merged into their weights -----------===//

#include "model/lora_merge.h"

#include "base/error.h"

#include "lmc/runtime/half.h"

#include <cstring>
#include <map>

namespace lmc::rt {

namespace {

bool isAdapter(const std::string &name) {
  for (const char *suffix : {".lora_A.weight", ".lora_B.weight"})
    if (name.size() > std::strlen(suffix) &&
        name.compare(name.size() - std::strlen(suffix), std::string::npos,
                     suffix) == 0)
      return true;
  return false;
}

/// The f32 value of element `at` of a frozen tensor (f32, or bf16 under
/// --base-precision bf16).
float frozenValue(const void *data, DType dtype, int64_t at) {
  return dtype == DType::BF16
             ? bf16ToFloat(static_cast<const uint16_t *>(data)[at])
             : static_cast<const float *>(data)[at];
}

/// `weight` + `scaling` · B A into `out` (f32; each [out, in], or [in, out]
/// for a weight stored transposed), the products summed in double. A bf16
/// weight is widened: rounding the sum back to bf16 (PEFT's merge into a
/// bf16 base) would lose most of what fine-tuning changed.
void mergeInto(float *out, const void *weight, DType dtype, const float *a,
               const float *b, int64_t rows, int64_t rank, int64_t cols,
               bool outIn, double scaling) {
  for (int64_t o = 0; o < rows; ++o)
    for (int64_t i = 0; i < cols; ++i) {
      double delta = 0;
      for (int64_t k = 0; k < rank; ++k)
        delta += double(b[o * rank + k]) * double(a[k * cols + i]);
      const int64_t at = outIn ? o * cols + i : i * rows + o;
      out[at] = frozenValue(weight, dtype, at) + float(scaling * delta);
    }
}

} // namespace

std::vector<TensorView> mergedModel(const Descriptor &desc, ModelState &state,
                                    std::vector<AlignedBuffer> &merged) {
  LMC_CHECK(desc.lora, "internal error: merging a model without adapters");
  const LoraSpec &lora = *desc.lora;
  std::map<std::string, const LoraSpec::Weight *> adapted;
  for (const LoraSpec::Weight &w : lora.weights)
    adapted[w.name] = &w;
  auto current = [&](const std::string &name) {
    for (const TensorSpec *spec : state.params())
      if (spec->name == name)
        return static_cast<const float *>(state.buffer(*spec, false));
    throw Error(concat("internal error: no param '", name, "'"));
  };

  std::vector<TensorView> tensors;
  for (TensorView &t : state.views(/*withState=*/false))
    if (!isAdapter(t.name))
      tensors.push_back(t);
  merged.reserve(state.frozen().size());
  // The merged model is f32 throughout, a bf16 base widened (exactly).
  for (const TensorSpec *spec : state.frozen()) {
    void *data = state.buffer(*spec, false);
    auto it = adapted.find(spec->name);
    const size_t bytes = size_t(spec->numElements()) * sizeof(float);
    if (it != adapted.end()) {
      const LoraSpec::Weight &w = *it->second;
      const int64_t rows = spec->shape[w.outIn ? 0 : 1],
                    cols = spec->shape[w.outIn ? 1 : 0];
      merged.emplace_back(bytes);
      mergeInto(merged.back().as<float>(), data, spec->dtype,
                current(w.module + ".lora_A.weight"),
                current(w.module + ".lora_B.weight"), rows, lora.rank, cols,
                w.outIn, lora.scaling());
      data = merged.back().data();
    } else if (spec->dtype == DType::BF16) {
      merged.emplace_back(bytes);
      for (int64_t at = 0; at < spec->numElements(); ++at)
        merged.back().as<float>()[at] = frozenValue(data, spec->dtype, at);
      data = merged.back().data();
    }
    tensors.push_back({spec->name, DType::F32, spec->shape, data});
  }
  return tensors;
}

} // namespace lmc::rt
