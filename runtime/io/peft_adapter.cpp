//===- peft_adapter.cpp - LoRA adapters in Hugging Face PEFT's format -----===//

#include "io/peft_adapter.h"

#include "base/error.h"
#include "io/file_io.h"
#include "io/json.h"

#include <charconv>
#include <filesystem>
#include <map>

namespace fs = std::filesystem;

namespace lmc::rt {
namespace {

constexpr std::string_view kLoraA = ".lora_A.weight";
constexpr std::string_view kLoraB = ".lora_B.weight";
constexpr const char *kPeftKeyPrefix = "base_model.model.";

bool endsWith(const std::string &s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// The shortest text that reads back as `value` (as Python's repr).
std::string shortest(double value) {
  char text[32];
  auto [end, error] = std::to_chars(text, text + sizeof(text), value);
  return std::string(text, end);
}

std::string adapterConfig(const PeftLoraConfig &lora,
                          const std::vector<std::string> &modules) {
  std::string out = "{\n  \"peft_type\": \"LORA\",\n  \"task_type\": null,\n"
                    "  \"base_model_name_or_path\": null,\n"
                    "  \"inference_mode\": true,\n";
  out += concat("  \"r\": ", lora.rank, ",\n  \"lora_alpha\": ",
                shortest(lora.alpha), ",\n  \"lora_dropout\": ",
                shortest(lora.dropout), ",\n  \"use_rslora\": ",
                lora.rslora ? "true" : "false", ",\n");
  out += concat("  \"bias\": \"none\",\n  \"fan_in_fan_out\": ",
                lora.fanInFanOut ? "true" : "false", ",\n");
  out += "  \"init_lora_weights\": true,\n  \"modules_to_save\": null,\n"
         "  \"target_modules\": [";
  for (size_t i = 0; i < modules.size(); ++i) {
    out += i ? ", " : "";
    appendJsonString(out, modules[i]);
  }
  out += "]\n}\n";
  return out;
}

} // namespace

std::optional<PeftLoraConfig> readPeftLoraConfig(const std::string &directory) {
  const fs::path path = fs::path(directory) / "adapter_config.json";
  std::error_code error;
  if (!fs::is_regular_file(path, error))
    return std::nullopt;
  const std::vector<uint8_t> bytes = readFile(path.string());
  JsonValue config;
  try {
    config = parseJson(std::string_view(
                           reinterpret_cast<const char *>(bytes.data()),
                           bytes.size()),
                       JsonSyntax::Full);
  } catch (const Error &e) {
    throw Error(concat(path.string(), ": ", e.what()));
  }
  auto field = [&](const char *key) -> const JsonValue * {
    return config.isObject() ? config.find(key) : nullptr;
  };
  const JsonValue *type = field("peft_type"), *rank = field("r"),
                  *alpha = field("lora_alpha");
  LMC_CHECK(type && type->isString() && type->string == "LORA" && rank &&
                rank->isInteger() && rank->integer > 0 && alpha &&
                alpha->isNumeric(),
            path.string(), ": not a LoRA adapter's config (expected "
            "peft_type \"LORA\", a positive integer r and a number "
            "lora_alpha)");
  PeftLoraConfig lora;
  lora.rank = rank->integer;
  lora.alpha = alpha->numeric();
  if (const JsonValue *rs = field("use_rslora"); rs && rs->isBool())
    lora.rslora = rs->boolean;
  if (const JsonValue *p = field("lora_dropout"); p && p->isNumeric())
    lora.dropout = p->numeric();
  if (const JsonValue *f = field("fan_in_fan_out"); f && f->isBool())
    lora.fanInFanOut = f->boolean;
  return lora;
}

void writePeftAdapter(const std::string &directory,
                      const std::vector<TensorView> &params,
                      const PeftLoraConfig &lora,
                      const std::string &stripPrefix) {
  // module -> {A, B}, in name order (safetensors files sort their keys).
  std::map<std::string, std::pair<const TensorView *, const TensorView *>>
      modules;
  for (const TensorView &t : params) {
    bool isA = endsWith(t.name, kLoraA), isB = endsWith(t.name, kLoraB);
    LMC_CHECK(isA || isB, "--save-adapter: '", t.name,
              "' trains beside the adapters (lmc --train); PEFT keeps such "
              "tensors as modules_to_save, which --save-adapter does not "
              "write: compile without --train, or use --save");
    std::string module = t.name.substr(0, t.name.size() - kLoraA.size());
    LMC_CHECK(module.compare(0, stripPrefix.size(), stripPrefix) == 0,
              "--save-adapter: '", t.name, "' does not start with the "
              "--adapter-strip-prefix '", stripPrefix, "'");
    auto &pair = modules[module.substr(stripPrefix.size())];
    (isA ? pair.first : pair.second) = &t;
  }
  LMC_CHECK(!modules.empty(), "--save-adapter: the model has no adapters");
  std::vector<TensorView> tensors;
  std::vector<std::string> names;
  for (const auto &[module, pair] : modules) {
    LMC_CHECK(pair.first && pair.second, "--save-adapter: module '", module,
              "' has only one of lora_A and lora_B");
    names.push_back(module);
    for (const TensorView *t : {pair.first, pair.second}) {
      TensorView renamed = *t;
      renamed.name = kPeftKeyPrefix + module +
                     std::string(t == pair.first ? kLoraA : kLoraB);
      tensors.push_back(renamed);
    }
  }
  std::error_code error;
  fs::create_directories(directory, error);
  LMC_CHECK(!error, "--save-adapter: cannot create '", directory,
            "': ", error.message());
  writeSafetensorsFile((fs::path(directory) / "adapter_model.safetensors")
                           .string(),
                       tensors, {{"format", "pt"}});
  std::string config = adapterConfig(lora, names);
  writeFileAtomically((fs::path(directory) / "adapter_config.json").string(),
                      {{config.data(), config.size()}});
}

} // namespace lmc::rt
