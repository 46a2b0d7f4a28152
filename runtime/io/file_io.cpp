//===- file_io.cpp - Checked whole-file reads and atomic writes ----------===//

#include "io/file_io.h"

#include "base/error.h"

#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace lmc::rt {

namespace {

/// Closes the descriptor on scope exit unless released.
class FdGuard {
public:
  explicit FdGuard(int fd) : fd_(fd) {}
  ~FdGuard() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

private:
  int fd_;
};

void writeAll(int fd, const void *data, size_t size, const std::string &path) {
  const char *p = static_cast<const char *>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR)
      continue;
    LMC_CHECK_SYS(n > 0, "cannot write '", path, "'");
    p += n;
    size -= size_t(n);
  }
}

std::string directoryOf(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

} // namespace

std::vector<uint8_t> readFile(const std::string &path) {
  FdGuard fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  LMC_CHECK_SYS(fd.get() >= 0, "cannot open '", path, "'");
  struct stat st;
  LMC_CHECK_SYS(::fstat(fd.get(), &st) == 0, "cannot stat '", path, "'");
  LMC_CHECK(S_ISREG(st.st_mode), "'", path, "' is not a regular file");
  std::vector<uint8_t> bytes(size_t(st.st_size));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::read(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    LMC_CHECK_SYS(n >= 0, "cannot read '", path, "'");
    LMC_CHECK(n > 0, "'", path, "' shrank while being read");
    done += size_t(n);
  }
  LMC_CHECK_SYS(::close(fd.release()) == 0, "cannot close '", path, "'");
  return bytes;
}

void writeFileAtomically(const std::string &path,
                         const std::vector<ByteSpan> &pieces) {
  const std::string tmp = concat(path, ".tmp.", ::getpid());
  FdGuard fd(
      ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  LMC_CHECK_SYS(fd.get() >= 0, "cannot create '", tmp, "'");
  try {
    for (const ByteSpan &piece : pieces)
      writeAll(fd.get(), piece.data, piece.size, tmp);
    LMC_CHECK_SYS(::fsync(fd.get()) == 0, "cannot fsync '", tmp, "'");
    LMC_CHECK_SYS(::close(fd.release()) == 0, "cannot close '", tmp, "'");
    LMC_CHECK_SYS(::rename(tmp.c_str(), path.c_str()) == 0, "cannot rename '",
                  tmp, "' to '", path, "'");
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  // Make the rename itself durable.
  const std::string dir = directoryOf(path);
  FdGuard dirFd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  LMC_CHECK_SYS(dirFd.get() >= 0, "cannot open directory '", dir, "'");
  LMC_CHECK_SYS(::fsync(dirFd.get()) == 0, "cannot fsync directory '", dir,
                "'");
}

} // namespace lmc::rt
