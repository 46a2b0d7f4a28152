//===- tokens.cpp - Token shards for language models (--tokens) ----------===//

#include "train/tokens.h"

#include "base/error.h"
#include "io/file_io.h"
#include "train/index_check.h"

#include <algorithm>
#include <cstring>
#include <glob.h>

namespace lmc::rt {

namespace {

constexpr size_t kHeaderInts = 256;
constexpr size_t kHeaderBytes = kHeaderInts * sizeof(int32_t);

int32_t readInt32(const uint8_t *p) {
  uint32_t v = uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 |
               uint32_t(p[3]) << 24;
  int32_t out;
  std::memcpy(&out, &v, sizeof out);
  return out;
}

template <typename T> void store(void *row, int64_t i, uint32_t token) {
  static_cast<T *>(row)[i] = T(token);
}

} // namespace

uint32_t TokenShard::token(int64_t i) const {
  const uint8_t *p = bytes() + dataOffset + size_t(i) * size_t(width);
  if (width == 2)
    return uint32_t(p[0]) | uint32_t(p[1]) << 8;
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 |
         uint32_t(p[3]) << 24;
}

namespace {

/// Reads the format of a shard's `size` bytes into `shard`.
void parseLayout(const uint8_t *bytes, size_t size, TokenShard &shard) {
  const int32_t magic = size >= 4 ? readInt32(bytes) : 0;
  if (magic == kLlmcMagicU16 || magic == kLlmcMagicU32) {
    shard.width = magic == kLlmcMagicU16 ? 2 : 4;
    LMC_CHECK(size >= kHeaderBytes, "llm.c token file (magic ", magic,
              ") is truncated: ", size, " bytes, the header alone is ",
              kHeaderBytes);
    const int32_t count = readInt32(bytes + 8);
    LMC_CHECK(count >= 0, "llm.c header: negative token count ", count);
    const uint64_t expected = kHeaderBytes + uint64_t(count) * shard.width;
    LMC_CHECK(size == expected, "llm.c header says ", count, " tokens of ",
              shard.width, " bytes (file size ", expected,
              ") but the file has ", size, " bytes");
    shard.dataOffset = kHeaderBytes;
    shard.numTokens = count;
  } else {
    LMC_CHECK(size % 2 == 0, "not an llm.c token file (first int32 ", magic,
              " is not magic ", kLlmcMagicU16, " or ", kLlmcMagicU32,
              ") and, as raw uint16 tokens, its size ", size, " is odd");
    shard.width = 2;
    shard.numTokens = int64_t(size / 2);
  }
}

} // namespace

TokenShard parseTokenShard(std::vector<uint8_t> bytes) {
  TokenShard shard;
  parseLayout(bytes.data(), bytes.size(), shard);
  shard.owned = std::move(bytes);
  return shard;
}

TokenShard readTokenShard(const std::string &path) {
  try {
    TokenShard shard;
    shard.mapped = MappedFile::open(path);
    parseLayout(shard.mapped.data(), shard.mapped.size(), shard);
    shard.path = path;
    return shard;
  } catch (const Error &e) {
    const std::string msg = e.what();
    if (msg.find(path) != std::string::npos)
      throw;
    throw Error(concat(path, ": ", msg));
  }
}

std::vector<std::string> expandGlob(const std::string &pattern,
                                    const char *flag) {
  glob_t g{};
  const int rc = ::glob(pattern.c_str(), 0, nullptr, &g);
  std::vector<std::string> paths;
  if (rc == 0)
    for (size_t i = 0; i < g.gl_pathc; ++i)
      paths.emplace_back(g.gl_pathv[i]);
  ::globfree(&g);
  LMC_CHECK(rc != GLOB_NOSPACE, "out of memory expanding '", pattern, "'");
  LMC_CHECK(rc != GLOB_ABORTED, flag, " '", pattern,
            "': cannot read a directory");
  LMC_CHECK(rc == 0 && !paths.empty(), flag, " '", pattern,
            "': no such file");
  return paths; // glob(3) sorts them
}

TokenDataset TokenDataset::load(const std::string &pattern,
                                const std::vector<const TensorSpec *> &specs,
                                const char *flag) {
  std::vector<TokenShard> shards;
  for (const std::string &path : expandGlob(pattern, flag))
    shards.push_back(readTokenShard(path));
  return fromShards(std::move(shards), specs, flag);
}

TokenDataset
TokenDataset::fromShards(std::vector<TokenShard> shards,
                         const std::vector<const TensorSpec *> &specs,
                         const char *flag) {
  TokenDataset data;
  LMC_CHECK(specs.size() == 2, flag, " needs a model with two inputs (tokens "
            "[B, T] and labels or targets [B, T]); this one has ",
            specs.size());
  int target = -1;
  for (size_t i = 0; i < 2; ++i)
    if (specs[i]->name == "labels" || specs[i]->name == "targets")
      target = int(i);
  LMC_CHECK(target >= 0, flag,
            " needs a model input named 'labels' or 'targets'");
  data.targetColumn_ = size_t(target);
  data.inputColumn_ = 1 - size_t(target);
  const TensorSpec &in = *specs[data.inputColumn_];
  const TensorSpec &tg = *specs[data.targetColumn_];
  for (const TensorSpec *spec : {&in, &tg})
    LMC_CHECK(spec->shape.size() == 2 &&
                  (spec->dtype == DType::I64 || spec->dtype == DType::I32),
              flag, ": model input '", spec->name,
              "' must be i64 or i32 [B, T], it is ", dtypeName(spec->dtype),
              formatShape(spec->shape));
  LMC_CHECK(in.shape == tg.shape, flag, ": inputs '", in.name, "' ",
            formatShape(in.shape), " and '", tg.name, "' ",
            formatShape(tg.shape), " differ in shape");
  data.seqLen_ = in.shape[1];
  data.inputSpec_ = &in;
  data.targetSpec_ = &tg;
  LMC_CHECK(data.seqLen_ > 0, flag, ": sequence length is 0");
  int64_t total = 0, windows = 0;
  data.windowsBefore_.push_back(0);
  for (const TokenShard &shard : shards) {
    total += shard.numTokens;
    // Windows of T+1 tokens at stride T: starts 0, T, ... while they fit.
    if (shard.numTokens >= data.seqLen_ + 1)
      windows += (shard.numTokens - 1) / data.seqLen_;
    data.windowsBefore_.push_back(windows);
  }
  LMC_CHECK(windows > 0, flag, ": ", total,
            " tokens in total; no shard holds one window of T+1 = ",
            data.seqLen_ + 1, " tokens");
  data.shards_ = std::move(shards);
  return data;
}

int64_t TokenDataset::numTokens() const {
  int64_t n = 0;
  for (const TokenShard &s : shards_)
    n += s.numTokens;
  return n;
}

void TokenDataset::fillBatch(const std::vector<int64_t> &samples,
                             std::vector<AlignedBuffer> &buffers) const {
  const int64_t T = seqLen_;
  for (size_t i = 0; i < samples.size(); ++i) {
    const int64_t sample = samples[i];
    // The last shard whose first window is at or before the sample.
    const size_t s = size_t(std::upper_bound(windowsBefore_.begin(),
                                             windowsBefore_.end(), sample) -
                            windowsBefore_.begin()) -
                     1;
    const TokenShard &shard = shards_[s];
    const int64_t start = (sample - windowsBefore_[s]) * T;
    const TensorSpec &in = *inputSpec_, &tg = *targetSpec_;
    void *inRow = buffers[inputColumn_].as<uint8_t>() +
                  i * size_t(T) * dtypeSize(in.dtype);
    void *tgRow = buffers[targetColumn_].as<uint8_t>() +
                  i * size_t(T) * dtypeSize(tg.dtype);
    // Token ids are unsigned: only the upper bound can be passed.
    auto check = [&](const TensorSpec &spec, uint32_t value, int64_t at) {
      if (spec.bound && int64_t(value) >= spec.bound->limit)
        throw Error(indexOutOfRange(
            spec, value,
            concat(shard.path.empty() ? "token shard" : shard.path, ": token ",
                   at, " (window ", sample - windowsBefore_[s], ")")));
    };
    for (int64_t j = 0; j < T; ++j) {
      const uint32_t a = shard.token(start + j);
      const uint32_t b = shard.token(start + j + 1);
      check(in, a, start + j);
      check(tg, b, start + j + 1);
      if (in.dtype == DType::I64)
        store<int64_t>(inRow, j, a);
      else
        store<int32_t>(inRow, j, a);
      if (tg.dtype == DType::I64)
        store<int64_t>(tgRow, j, b);
      else
        store<int32_t>(tgRow, j, b);
    }
  }
}

} // namespace lmc::rt
