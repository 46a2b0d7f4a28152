//===- hf_checkpoint.cpp - Hugging Face save_pretrained directories ------===//

#include "io/hf_checkpoint.h"

#include "base/error.h"
#include "io/file_io.h"
#include "io/json.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

namespace lmc::rt {

namespace fs = std::filesystem;

namespace {

std::string readText(const std::string &path) {
  std::vector<uint8_t> bytes = readFile(path);
  return std::string(bytes.begin(), bytes.end());
}

/// The shard files an index lists, in order of first mention, and which
/// tensors each must hold.
struct IndexEntries {
  std::vector<std::string> files;
  std::map<std::string, std::string> fileOf; // tensor -> shard file
};

IndexEntries parseIndex(const std::string &indexPath) {
  JsonValue index;
  try {
    index = parseJson(readText(indexPath));
  } catch (const Error &e) {
    throw Error(concat(indexPath, ": ", e.what()));
  }
  const JsonValue *map = index.isObject() ? index.find("weight_map") : nullptr;
  if (!map || !map->isObject())
    throw Error(concat(indexPath,
                       ": expected an object with a \"weight_map\" object"));
  IndexEntries entries;
  for (size_t i = 0; i < map->keys.size(); ++i) {
    const JsonValue &file = map->items[i];
    if (!file.isString() || file.string.empty())
      throw Error(concat(indexPath, ": weight_map['", map->keys[i],
                         "'] must be a shard file name"));
    if (file.string.find('/') != std::string::npos)
      throw Error(concat(indexPath, ": shard '", file.string,
                         "' must be a file name in the index's directory"));
    if (std::find(entries.files.begin(), entries.files.end(), file.string) ==
        entries.files.end())
      entries.files.push_back(file.string);
    entries.fileOf[map->keys[i]] = file.string;
  }
  if (entries.files.empty())
    throw Error(concat(indexPath, ": the weight_map lists no tensors"));
  return entries;
}

HfCheckpoint readIndexed(const std::string &indexPath) {
  IndexEntries entries = parseIndex(indexPath);
  HfCheckpoint checkpoint;
  checkpoint.directory = fs::path(indexPath).parent_path().string();
  std::map<std::string, std::string> seenIn; // tensor -> shard
  for (const std::string &file : entries.files) {
    std::string path = (fs::path(checkpoint.directory) / file).string();
    SafetensorsFile shard = readSafetensorsFile(path);
    for (const SafetensorsTensor &tensor : shard.tensors) {
      auto [it, fresh] = seenIn.emplace(tensor.name, file);
      if (!fresh)
        throw Error(concat(indexPath, ": tensor '", tensor.name,
                           "' is in both '", it->second, "' and '", file,
                           "'"));
    }
    checkpoint.shardPaths.push_back(path);
    checkpoint.shards.push_back(std::move(shard));
  }
  for (const auto &[tensor, file] : entries.fileOf) {
    auto it = seenIn.find(tensor);
    if (it == seenIn.end() || it->second != file)
      throw Error(concat(indexPath, ": the index puts '", tensor, "' in '",
                         file, "', which lacks it"));
  }
  return checkpoint;
}

HfCheckpoint readSingle(const std::string &path) {
  HfCheckpoint checkpoint;
  checkpoint.directory = fs::path(path).parent_path().string();
  if (checkpoint.directory.empty())
    checkpoint.directory = ".";
  checkpoint.shardPaths.push_back(path);
  checkpoint.shards.push_back(readSafetensorsFile(path));
  return checkpoint;
}

/// An earlier save's weight files: model.safetensors, its index, shards.
bool isWeightsFile(const std::string &name) {
  static const std::regex shard(R"(model-[0-9]+-of-[0-9]+\.safetensors)");
  return name == kHfWeightsName || name == kHfIndexName ||
         std::regex_match(name, shard);
}

/// What save_pretrained and the tokenizer's save_pretrained write besides
/// the weights.
constexpr const char *kCompanionFiles[] = {
    "generation_config.json", "tokenizer.json",   "tokenizer_config.json",
    "special_tokens_map.json", "tokenizer.model", "vocab.json",
    "merges.txt",             "vocab.txt",        "added_tokens.json",
    "chat_template.jinja"};

void writeTextAtomically(const std::string &path, const std::string &text) {
  writeFileAtomically(path, {{text.data(), text.size()}});
}

} // namespace

HfCheckpoint readHfCheckpoint(const std::string &path) {
  std::error_code error;
  if (fs::is_directory(path, error)) {
    fs::path dir(path);
    if (fs::exists(dir / kHfWeightsName))
      return readSingle((dir / kHfWeightsName).string());
    if (fs::exists(dir / kHfIndexName))
      return readIndexed((dir / kHfIndexName).string());
    if (fs::exists(dir / kPeftWeightsName))
      return readSingle((dir / kPeftWeightsName).string());
    throw Error(concat(path, ": a directory without ", kHfWeightsName, ", ",
                       kHfIndexName, " or ", kPeftWeightsName,
                       " (what save_pretrained writes)"));
  }
  const std::string name = fs::path(path).filename().string();
  if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0)
    return readIndexed(path);
  return readSingle(path);
}

bool hasHfConfig(const std::string &directory) {
  std::error_code error;
  return fs::is_regular_file(fs::path(directory) / "config.json", error);
}

std::string withFloat32Dtype(const std::string &configJson) {
  static const std::regex dtype(R"re(("(?:torch_)?dtype"\s*:\s*)"[^"]*")re");
  return std::regex_replace(configJson, dtype, "$1\"float32\"");
}

void writeHfCheckpoint(const std::string &directory,
                       const std::vector<TensorView> &tensors,
                       uint64_t maxShardBytes,
                       const std::string &sourceDirectory) {
  std::error_code error;
  fs::create_directories(directory, error);
  if (error)
    throw Error(concat("--save-hf: cannot create '", directory,
                       "': ", error.message()));
  auto bytesOf = [](const TensorView &t) {
    return uint64_t(numElements(t.shape)) * dtypeSize(t.dtype);
  };
  // Shards in tensor order, each closed before the tensor that would take
  // it past the limit (as save_pretrained splits).
  std::vector<std::vector<TensorView>> shards(1);
  uint64_t inShard = 0, total = 0;
  for (const TensorView &t : tensors) {
    const uint64_t bytes = bytesOf(t);
    if (!shards.back().empty() && inShard + bytes > maxShardBytes) {
      shards.emplace_back();
      inShard = 0;
    }
    shards.back().push_back(t);
    inShard += bytes;
    total += bytes;
  }
  std::set<std::string> written;
  const std::map<std::string, std::string> metadata{{"format", "pt"}};
  if (shards.size() == 1) {
    writeSafetensorsFile((fs::path(directory) / kHfWeightsName).string(),
                         shards[0], metadata);
    written.insert(kHfWeightsName);
  } else {
    std::map<std::string, std::string> fileOf;
    for (size_t i = 0; i < shards.size(); ++i) {
      char name[64];
      std::snprintf(name, sizeof name, "model-%05zu-of-%05zu.safetensors",
                    i + 1, shards.size());
      writeSafetensorsFile((fs::path(directory) / name).string(), shards[i],
                           metadata);
      written.insert(name);
      for (const TensorView &t : shards[i])
        fileOf[t.name] = name;
    }
    std::string index =
        concat("{\n  \"metadata\": {\n    \"total_size\": ", total,
               "\n  },\n  \"weight_map\": {");
    const char *separator = "\n";
    for (const auto &[tensor, file] : fileOf) {
      index += concat(separator, "    ");
      appendJsonString(index, tensor);
      index += ": ";
      appendJsonString(index, file);
      separator = ",\n";
    }
    index += "\n  }\n}\n";
    writeTextAtomically((fs::path(directory) / kHfIndexName).string(), index);
    written.insert(kHfIndexName);
  }
  for (const fs::directory_entry &entry :
       fs::directory_iterator(directory, error)) {
    const std::string name = entry.path().filename().string();
    if (isWeightsFile(name) && !written.count(name))
      fs::remove(entry.path(), error);
  }

  // The model's description and its tokenizer, unless saving in place.
  if (fs::equivalent(directory, sourceDirectory, error))
    return;
  const fs::path source(sourceDirectory);
  writeTextAtomically(
      (fs::path(directory) / "config.json").string(),
      withFloat32Dtype(readText((source / "config.json").string())));
  for (const char *file : kCompanionFiles)
    if (fs::is_regular_file(source / file, error)) {
      std::vector<uint8_t> bytes = readFile((source / file).string());
      writeFileAtomically((fs::path(directory) / file).string(),
                          {{bytes.data(), bytes.size()}});
    }
}

} // namespace lmc::rt
