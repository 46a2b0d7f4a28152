//===- init_matching.cpp - An --init file's tensors to the model's names -===//

#include "model/init_matching.h"

#include "base/error.h"

#include "lmc/runtime/half.h"

#include <algorithm>
#include <cstring>
#include <map>

namespace lmc::rt {

namespace {

/// `name` ends with "." + `suffix`.
bool endsWithComponents(const std::string &name, const std::string &suffix) {
  return name.size() > suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) ==
             0 &&
         name[name.size() - suffix.size() - 1] == '.';
}

/// A file's tensor name without the prefix PEFT gives the adapters it saves
/// (`base_model.model.<the base model's module>.lora_A.weight`), which no
/// export has.
std::string withoutPeftPrefix(const std::string &name) {
  static const std::string prefix = "base_model.model.";
  return name.compare(0, prefix.size(), prefix) == 0
             ? name.substr(prefix.size())
             : name;
}

/// Whether a file tensor named `have` matches the model's `want` by a name
/// suffix, either way (`have` without PEFT's prefix).
bool suffixMatches(const std::string &have, const std::string &want) {
  const std::string bare = withoutPeftPrefix(have);
  return endsWithComponents(have, want) || endsWithComponents(want, have) ||
         (bare != have && (bare == want || endsWithComponents(want, bare)));
}

/// "'a', 'b' and 3 more" (`quote`), or the items as they are, "; "-joined.
/// The input embeddings a tied head shares, as Hugging Face names them
/// (GPT-2, Llama/Mistral, BERT-style, GPT-NeoX, T5).
constexpr const char *kTiedEmbeddings[] = {
    "wte.weight", "embed_tokens.weight", "word_embeddings.weight",
    "embed_in.weight", "shared.weight"};

std::string listOf(const std::vector<std::string> &items, size_t most,
                   bool quote = true) {
  std::string list;
  for (size_t i = 0; i < items.size() && i < most; ++i)
    list += quote ? concat(i ? ", '" : "'", items[i], "'")
                  : concat(i ? "; " : "", items[i]);
  if (items.size() > most)
    list += concat(" and ", items.size() - most, " more");
  return list;
}

/// Whether a file tensor named `have` can serve the model's `want`.
bool canServe(const std::string &have, const std::string &want) {
  if (have == want || suffixMatches(have, want))
    return true;
  if (want != "lm_head.weight" && !endsWithComponents(want, "lm_head.weight"))
    return false;
  for (const char *embedding : kTiedEmbeddings)
    if (have == embedding || endsWithComponents(have, embedding))
      return true;
  return false;
}

} // namespace

size_t countMatchable(const std::vector<const SafetensorsFile *> &shards,
                      const std::vector<const TensorSpec *> &expected) {
  size_t count = 0;
  for (const TensorSpec *spec : expected) {
    bool found = false;
    for (const SafetensorsFile *shard : shards)
      for (const SafetensorsTensor &tensor : shard->tensors)
        found = found || canServe(tensor.name, spec->name);
    count += found;
  }
  return count;
}

MatchedInit matchInitTensors(const SafetensorsFile &file,
                             const std::vector<const TensorSpec *> &expected,
                             const std::string &source) {
  return matchInitTensors(std::vector<const SafetensorsFile *>{&file},
                          expected, source);
}

MatchedInit matchInitTensors(const std::vector<const SafetensorsFile *> &shards,
                             const std::vector<const TensorSpec *> &expected,
                             const std::string &source) {
  // The shards' tensors as one list (a checkpoint's names are unique across
  // its shards: readHfCheckpoint checks), each with its shard.
  std::vector<const SafetensorsTensor *> tensors;
  std::vector<const SafetensorsFile *> shardOf;
  for (const SafetensorsFile *shard : shards)
    for (const SafetensorsTensor &tensor : shard->tensors) {
      tensors.push_back(&tensor);
      shardOf.push_back(shard);
    }
  const size_t none = tensors.size();
  std::vector<size_t> match(expected.size(), none);
  std::vector<int> claims(tensors.size(), 0);
  std::map<std::string, size_t> byName;
  for (size_t t = 0; t < tensors.size(); ++t)
    byName.emplace(tensors[t]->name, t);

  size_t exact = 0;
  std::vector<bool> takenExactly(tensors.size(), false);
  for (size_t e = 0; e < expected.size(); ++e)
    if (auto it = byName.find(expected[e]->name); it != byName.end()) {
      match[e] = it->second;
      ++claims[it->second];
      takenExactly[it->second] = true;
      ++exact;
    }
  // Then a suffix at a `.` boundary, either way, among the tensors no exact
  // name took.
  std::vector<std::string> unmatched, ambiguous, tiedTo;
  std::string example;
  for (size_t e = 0; e < expected.size(); ++e) {
    if (match[e] != none)
      continue;
    const std::string &want = expected[e]->name;
    std::vector<size_t> candidates;
    for (size_t t = 0; t < tensors.size(); ++t) {
      const std::string &have = tensors[t]->name;
      if (!takenExactly[t] && suffixMatches(have, want))
        candidates.push_back(t);
    }
    if (candidates.empty()) {
      unmatched.push_back(want);
    } else if (candidates.size() > 1) {
      std::vector<std::string> names;
      for (size_t t : candidates)
        names.push_back(tensors[t]->name);
      ambiguous.push_back(concat("'", want, "' (", listOf(names, 3), ")"));
    } else {
      match[e] = candidates[0];
      ++claims[candidates[0]];
      if (example.empty())
        example = concat("'", want, "' = '", tensors[candidates[0]]->name,
                         "'");
    }
  }
  // Tied heads: save_pretrained leaves out a head tied to the input
  // embedding (GPT-2's lm_head.weight is transformer.wte.weight); an export
  // that kept the head as its own parameter reads the embedding.
  size_t tied = 0;
  std::vector<bool> tiedHead(expected.size(), false);
  for (size_t e = 0; e < expected.size(); ++e) {
    const std::string &want = expected[e]->name;
    auto missing = std::find(unmatched.begin(), unmatched.end(), want);
    if (missing == unmatched.end() ||
        !(want == "lm_head.weight" ||
          endsWithComponents(want, "lm_head.weight")))
      continue;
    std::vector<size_t> embeddings;
    for (size_t t = 0; t < tensors.size(); ++t)
      for (const char *embedding : kTiedEmbeddings)
        if (tensors[t]->name == embedding ||
            endsWithComponents(tensors[t]->name, embedding))
          embeddings.push_back(t);
    if (embeddings.size() != 1)
      continue; // unmatched (or ambiguous) below
    match[e] = embeddings[0];
    tiedHead[e] = true;
    unmatched.erase(missing);
    tiedTo.push_back(concat("'", want, "' = '",
                            tensors[embeddings[0]]->name, "'"));
    ++tied;
  }
  // A file tensor serves one parameter (a tied head reads its embedding
  // besides).
  for (size_t t = 0; t < tensors.size(); ++t)
    if (claims[t] > 1) {
      std::vector<std::string> takers;
      for (size_t e = 0; e < expected.size(); ++e)
        if (match[e] == t)
          takers.push_back(expected[e]->name);
      ambiguous.push_back(concat("'", tensors[t]->name,
                                 "' matches several parameters (",
                                 listOf(takers, 3), ")"));
    }
  if (!unmatched.empty() || !ambiguous.empty()) {
    std::string message = concat(source, ":");
    if (!unmatched.empty())
      message += concat(" no tensor for ", unmatched.size(), " of the model's ",
                        expected.size(), " (", listOf(unmatched, 8), ")");
    if (!ambiguous.empty())
      message += concat(unmatched.empty() ? "" : ";", " ambiguous: ",
                        listOf(ambiguous, 8, /*quote=*/false));
    throw Error(message + "; names match exactly or as a suffix at a '.' "
                          "(docs/training-executable.md)");
  }

  // The matched tensors under the model's names; bf16/f16 widened to f32.
  // Saved back, a tied head that is the model's only copy of the embedding
  // (the export shares one tensor) takes the embedding's name, as
  // save_pretrained writes it; beside an embedding of its own it is
  // lm_head.weight.
  MatchedInit out;
  // (A tied head does not count among its embedding's claims.)
  for (size_t e = 0; e < expected.size(); ++e)
    out.sourceNames.push_back(tiedHead[e] && claims[match[e]] > 0
                                  ? std::string("lm_head.weight")
                                  : tensors[match[e]]->name);
  size_t widened = 0;
  std::string widenedFrom;
  size_t narrowed = 0;
  std::string narrowedFrom;
  for (size_t e = 0; e < expected.size(); ++e) {
    const SafetensorsTensor &from = *tensors[match[e]];
    const SafetensorsFile &file = *shardOf[match[e]];
    SafetensorsTensor to = from;
    to.name = expected[e]->name;
    const uint8_t *data = file.data(from);
    const size_t bytes = from.end - from.begin;
    const bool half = from.dtype == "BF16" || from.dtype == "F16";
    out.file.bytes.resize((out.file.bytes.size() + 7) / 8 * 8);
    to.begin = out.file.bytes.size();
    if (half && expected[e]->dtype == DType::F32) {
      float (*widen)(uint16_t) = from.dtype == "BF16" ? bf16ToFloat : f16ToFloat;
      const size_t count = bytes / 2;
      out.file.bytes.resize(to.begin + count * sizeof(float));
      float *dst = reinterpret_cast<float *>(out.file.bytes.data() + to.begin);
      for (size_t i = 0; i < count; ++i) {
        uint16_t bits;
        std::memcpy(&bits, data + 2 * i, 2);
        dst[i] = widen(bits);
      }
      to.dtype = "F32";
      ++widened;
      widenedFrom = from.dtype;
    } else if (expected[e]->dtype == DType::BF16 &&
               (from.dtype == "F32" || from.dtype == "F16")) {
      // A bf16 frozen base (lmc --lora --base-precision bf16) from an f32
      // or f16 checkpoint: rounded to nearest even, as torch's .to().
      const size_t width = from.dtype == "F32" ? 4 : 2;
      const size_t count = bytes / width;
      out.file.bytes.resize(to.begin + count * 2);
      uint8_t *dst = out.file.bytes.data() + to.begin;
      for (size_t i = 0; i < count; ++i) {
        float value;
        if (width == 4) {
          std::memcpy(&value, data + 4 * i, 4);
        } else {
          uint16_t bits;
          std::memcpy(&bits, data + 2 * i, 2);
          value = f16ToFloat(bits);
        }
        const uint16_t narrow = floatToBf16(value);
        std::memcpy(dst + 2 * i, &narrow, 2);
      }
      to.dtype = "BF16";
      ++narrowed;
      narrowedFrom = from.dtype;
    } else {
      out.file.bytes.insert(out.file.bytes.end(), data, data + bytes);
    }
    file.release(data, bytes);
    to.end = out.file.bytes.size();
    out.file.tensors.push_back(std::move(to));
  }

  std::vector<bool> used(tensors.size(), false);
  for (size_t t : match)
    used[t] = true;
  std::vector<std::string> unused;
  for (size_t t = 0; t < tensors.size(); ++t)
    if (!used[t])
      unused.push_back(tensors[t]->name);
  const size_t bySuffix = expected.size() - exact - tied;
  out.summary = concat("--init ", source, ": ", expected.size(),
                       " tensors matched (", exact, " by exact name");
  if (bySuffix)
    out.summary += concat(", ", bySuffix, " by a name suffix, e.g. ", example);
  if (tied)
    out.summary += concat(", ", tied, " tied (", listOf(tiedTo, 2, false), ")");
  out.summary += ")";
  if (widened)
    out.summary += concat(", ", widened, " widened from ", widenedFrom,
                          " to F32");
  if (narrowed)
    out.summary += concat(", ", narrowed, " rounded from ", narrowedFrom,
                          " to BF16");
  if (!unused.empty())
    out.summary += concat("; ", unused.size(), " tensor",
                          unused.size() == 1 ? "" : "s",
                          " of the file unused: ", listOf(unused, 4));
  return out;
}

} // namespace lmc::rt
