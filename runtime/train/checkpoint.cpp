//===- checkpoint.cpp - Training checkpoints for exact resume ------------===//

#include "train/checkpoint.h"

#include "base/error.h"
#include "comm/tensor_parallel.h"
#include "comm/zero.h"
#include "io/crc32c.h"
#include "io/file_io.h"
#include "io/safetensors.h"
#include "model/pieces.h"
#include "train/shuffle.h"

#include "lmc/runtime/model_fingerprint.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

namespace lmc::rt {

namespace {

constexpr const char *kFormatKey = "lmc.checkpoint";
constexpr const char *kFormatVersion = "1";

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", (unsigned long long)v);
  return buf;
}

std::string exactDouble(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

const std::string &get(const std::map<std::string, std::string> &m,
                       const std::string &key) {
  auto it = m.find(key);
  LMC_CHECK(it != m.end(), "metadata lacks '", key, "'");
  return it->second;
}

uint64_t getUnsigned(const std::map<std::string, std::string> &m,
                     const std::string &key, int base = 10) {
  const std::string &text = get(m, key);
  errno = 0;
  char *end = nullptr;
  unsigned long long v = std::strtoull(text.c_str(), &end, base);
  LMC_CHECK(!text.empty() && *end == '\0' && errno != ERANGE &&
                text.find_first_of("-+ ") == std::string::npos,
            "metadata '", key, "' is not a valid number: '", text, "'");
  return v;
}

int64_t getCount(const std::map<std::string, std::string> &m,
                 const std::string &key) {
  uint64_t v = getUnsigned(m, key);
  LMC_CHECK(v <= uint64_t(INT64_MAX), "metadata '", key, "' is too large");
  return int64_t(v);
}

double getDouble(const std::map<std::string, std::string> &m,
                 const std::string &key) {
  const std::string &text = get(m, key);
  char *end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  LMC_CHECK(!text.empty() && *end == '\0', "metadata '", key,
            "' is not a valid number: '", text, "'");
  return v;
}

uint32_t dataCrc(const std::vector<TensorView> &tensors) {
  uint32_t crc = 0;
  for (const TensorView &t : tensors)
    crc = crc32c(t.data, size_t(numElements(t.shape)) * dtypeSize(t.dtype),
                 crc);
  return crc;
}

} // namespace

uint64_t modelFingerprint(std::string_view descriptor, uint64_t weightsSize) {
  return fingerprintModel(descriptor.data(), descriptor.size(), weightsSize);
}

std::string checkpointFileName(int64_t step) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "step_%08lld.safetensors", (long long)step);
  return buf;
}

std::optional<int64_t> parseCheckpointFileName(const std::string &name) {
  const std::string prefix = "step_", suffix = ".safetensors";
  if (name.size() < prefix.size() + 8 + suffix.size() ||
      name.compare(0, prefix.size(), prefix) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return std::nullopt;
  std::string digits = name.substr(
      prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.size() > 18 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoll(digits);
}

std::map<std::string, std::string>
checkpointMetadata(const CheckpointMeta &meta, uint64_t fingerprint,
                   uint32_t crc) {
  return {
      {"format", "pt"},
      {kFormatKey, kFormatVersion},
      {"lmc.fingerprint", hex64(fingerprint)},
      {"lmc.data_crc32c", concat(crc)},
      {"lmc.step", concat(meta.step)},
      {"lmc.data_cursor", concat(meta.dataCursor)},
      {"lmc.num_samples", concat(meta.numSamples)},
      {"lmc.seed", concat(meta.seed)},
      {"lmc.shuffle", meta.shuffle ? "1" : "0"},
      {"lmc.shuffle_order", kShuffleOrder}, // this binary's order
      {"lmc.skipped_steps", concat(meta.skippedSteps)},
      {"lmc.schedule", meta.schedule},
      {"lmc.lr", exactDouble(meta.lr)},
      {"lmc.lr_min", exactDouble(meta.lrMin)},
      {"lmc.warmup", concat(meta.warmup)},
      {"lmc.total_steps", concat(meta.totalSteps)},
  };
}

CheckpointMeta
parseCheckpointMetadata(const std::map<std::string, std::string> &m) {
  auto format = m.find(kFormatKey);
  LMC_CHECK(format != m.end(),
            "not an lmc checkpoint (no 'lmc.checkpoint' metadata)");
  LMC_CHECK(format->second == kFormatVersion,
            "unsupported lmc checkpoint version '", format->second, "'");
  CheckpointMeta meta;
  meta.step = getCount(m, "lmc.step");
  meta.dataCursor = getCount(m, "lmc.data_cursor");
  meta.numSamples = getCount(m, "lmc.num_samples");
  meta.seed = getUnsigned(m, "lmc.seed");
  const std::string &shuffle = get(m, "lmc.shuffle");
  LMC_CHECK(shuffle == "0" || shuffle == "1",
            "metadata 'lmc.shuffle' must be 0 or 1");
  meta.shuffle = shuffle == "1";
  auto order = m.find("lmc.shuffle_order");
  meta.shuffleOrder = order != m.end() ? order->second : kFisherYatesOrder;
  meta.skippedSteps = getCount(m, "lmc.skipped_steps");
  meta.schedule = get(m, "lmc.schedule");
  meta.lr = getDouble(m, "lmc.lr");
  meta.lrMin = getDouble(m, "lmc.lr_min");
  meta.warmup = getCount(m, "lmc.warmup");
  meta.totalSteps = getCount(m, "lmc.total_steps");
  return meta;
}

Checkpointer::Checkpointer(std::string dir, int64_t keep, uint64_t fingerprint)
    : dir_(std::move(dir)), keep_(keep), fingerprint_(fingerprint) {
  if (::mkdir(dir_.c_str(), 0755) != 0) {
    LMC_CHECK_SYS(errno == EEXIST, "cannot create checkpoint directory '",
                  dir_, "'");
    struct stat st;
    LMC_CHECK_SYS(::stat(dir_.c_str(), &st) == 0, "cannot stat '", dir_, "'");
    LMC_CHECK(S_ISDIR(st.st_mode), "--checkpoint-dir '", dir_,
              "' is not a directory");
  }
}

std::vector<std::pair<int64_t, std::string>> Checkpointer::list() const {
  DIR *d = ::opendir(dir_.c_str());
  LMC_CHECK_SYS(d, "cannot open checkpoint directory '", dir_, "'");
  std::vector<std::pair<int64_t, std::string>> found;
  errno = 0;
  while (struct dirent *entry = ::readdir(d)) {
    if (std::optional<int64_t> step = parseCheckpointFileName(entry->d_name))
      found.emplace_back(*step, dir_ + "/" + entry->d_name);
    errno = 0;
  }
  const int readErrno = errno;
  ::closedir(d);
  errno = readErrno;
  LMC_CHECK_SYS(readErrno == 0, "cannot read checkpoint directory '", dir_,
                "'");
  std::sort(found.begin(), found.end());
  return found;
}

std::optional<std::string> Checkpointer::newest() const {
  auto found = list();
  if (found.empty())
    return std::nullopt;
  return found.back().second;
}

std::string Checkpointer::save(ModelState &state, const CheckpointMeta &meta) {
  const auto start = std::chrono::steady_clock::now();
  const std::string path = dir_ + "/" + checkpointFileName(meta.step);
  std::vector<TensorView> tensors = state.views(/*withState=*/true);
  std::vector<AlignedBuffer> gathered;
  if (group_)
    tensors = wholeTensors(*desc_, tensors, *group_, gathered);
  if (state.stateShard()) {
    LMC_CHECK(statesGroup_, "internal error: sharded state without a group "
              "to gather it from");
    std::vector<TensorView> states =
        wholeShardedStates(state, *statesGroup_, gathered);
    if (group_) // tensor parallel too: those are model slices
      states = wholeTensors(*desc_, states, *group_, gathered);
    tensors.insert(tensors.end(), states.begin(), states.end());
  }
  tensors = joinPieces(tensors, state.joins(), gathered);
  lastPath_ = path;
  if (!writes_)
    return path;
  writeSafetensorsFile(
      path, tensors, checkpointMetadata(meta, fingerprint_, dataCrc(tensors)));
  lastSaveMs_ = 1000.0 * std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start)
                             .count();
  if (keep_ > 0) {
    auto found = list();
    for (size_t i = 0; i + size_t(keep_) < found.size(); ++i)
      LMC_CHECK_SYS(::unlink(found[i].second.c_str()) == 0 || errno == ENOENT,
                    "cannot delete old checkpoint '", found[i].second, "'");
  }
  return path;
}

CheckpointMeta Checkpointer::load(const std::string &path, ModelState &state) {
  try {
    // Mapped, and each part released once read: resuming a model as large
    // as the machine's memory must not hold the file beside the state.
    SafetensorsFile file = parseSafetensors(MappedFile::open(path));
    CheckpointMeta meta = parseCheckpointMetadata(file.metadata);
    const std::string &fp = get(file.metadata, "lmc.fingerprint");
    LMC_CHECK(fp == hex64(fingerprint_),
              "written by a different model (fingerprint ", fp,
              ", this executable's model is ", hex64(fingerprint_), ")");
    uint32_t crc = 0;
    constexpr size_t kChunk = size_t(64) << 20;
    for (size_t at = file.dataStart; at < file.fileSize(); at += kChunk) {
      const size_t n = std::min(kChunk, file.fileSize() - at);
      crc = crc32c(file.fileData() + at, n, crc);
      file.release(file.fileData() + at, n);
    }
    LMC_CHECK(concat(crc) == get(file.metadata, "lmc.data_crc32c"),
              "data checksum mismatch (the file is corrupted)");
    addPieceEntries(file, state.joins());
    state.restore(file, "checkpoint", /*withState=*/true);
    lastPath_ = path;
    return meta;
  } catch (const Error &e) {
    throw Error(concat("cannot resume from ", path, ": ", e.what()));
  }
}

} // namespace lmc::rt
