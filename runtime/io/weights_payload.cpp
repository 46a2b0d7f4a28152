//===- weights_payload.cpp - The initial weights after the executable ---===//

#include "io/weights_payload.h"

#include "base/error.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace lmc::rt {

namespace {

constexpr char kMagic[8] = {'L', 'M', 'C', 'W', 'G', 'H', 'T', '1'};
constexpr size_t kTrailerBytes = 32;

uint64_t readU64(const unsigned char *bytes) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i)
    value |= uint64_t(bytes[i]) << (8 * i);
  return value;
}

/// Closes the descriptor on every path out of map().
struct FileDescriptor {
  int fd;
  ~FileDescriptor() { ::close(fd); }
};

} // namespace

WeightsPayload WeightsPayload::map(const std::string &file,
                                   uint64_t expectedSize,
                                   uint64_t expectedFingerprint) {
  // Messages name the executable, not /proc/self/exe.
  std::string path = file;
  char resolved[4096];
  ssize_t length = ::readlink(file.c_str(), resolved, sizeof resolved - 1);
  if (length > 0)
    path.assign(resolved, size_t(length));
  FileDescriptor executable{::open(file.c_str(), O_RDONLY | O_CLOEXEC)};
  LMC_CHECK_SYS(executable.fd >= 0, "cannot open '", path,
                "' to read the model's weights");
  struct stat info {};
  LMC_CHECK_SYS(::fstat(executable.fd, &info) == 0, "cannot stat '", path, "'");
  const uint64_t fileSize = uint64_t(info.st_size);
  unsigned char trailer[kTrailerBytes];
  const bool hasTrailer =
      fileSize >= kTrailerBytes &&
      ::pread(executable.fd, trailer, kTrailerBytes,
              off_t(fileSize - kTrailerBytes)) == ssize_t(kTrailerBytes) &&
      std::memcmp(trailer + 24, kMagic, sizeof kMagic) == 0;
  LMC_CHECK(hasTrailer, "'", path,
            "' has no weights payload at its end (the file was truncated or "
            "stripped); compile the model again with lmc");
  const uint64_t offset = readU64(trailer), size = readU64(trailer + 8),
                 fingerprint = readU64(trailer + 16);
  LMC_CHECK(offset <= fileSize - kTrailerBytes &&
                size == fileSize - kTrailerBytes - offset,
            "'", path, "': the weights payload (", size, " bytes at offset ",
            offset, ") does not fit the file's ", fileSize,
            " bytes; the file was truncated or altered");
  LMC_CHECK(size == expectedSize && fingerprint == expectedFingerprint, "'",
            path, "': the weights payload (", size,
            " bytes) belongs to another model than the one compiled into "
            "this executable (", expectedSize, " bytes of weights)");
  if (size == 0)
    return WeightsPayload(nullptr, 0, 0, 0);
  const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  const uint64_t start = offset / page * page;
  const size_t mappedBytes = size_t(offset + size - start);
  void *mapping = ::mmap(nullptr, mappedBytes, PROT_READ, MAP_PRIVATE,
                         executable.fd, off_t(start));
  LMC_CHECK_SYS(mapping != MAP_FAILED, "cannot map the weights of '", path,
                "' (", size, " bytes)");
  // Read once, front to back, into the parameter buffers.
  ::madvise(mapping, mappedBytes, MADV_SEQUENTIAL);
  return WeightsPayload(mapping, mappedBytes, size_t(offset - start), size);
}

WeightsPayload::WeightsPayload(WeightsPayload &&other) noexcept
    : mapping_(other.mapping_), mappedBytes_(other.mappedBytes_),
      skip_(other.skip_), size_(other.size_) {
  other.mapping_ = nullptr;
}

WeightsPayload::~WeightsPayload() {
  if (mapping_)
    ::munmap(mapping_, mappedBytes_);
}

} // namespace lmc::rt
