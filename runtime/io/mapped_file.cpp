//===- mapped_file.cpp - A whole file mapped read-only -------------------===//

#include "io/mapped_file.h"

#include "base/error.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace lmc::rt {

MappedFile MappedFile::open(const std::string &path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  LMC_CHECK_SYS(fd >= 0, "cannot open '", path, "'");
  struct stat info {};
  const bool stated = ::fstat(fd, &info) == 0;
  if (!stated || !S_ISREG(info.st_mode)) {
    ::close(fd);
    LMC_CHECK_SYS(stated, "cannot stat '", path, "'");
    throw Error(concat("'", path, "' is not a regular file"));
  }
  const size_t size = size_t(info.st_size);
  if (size == 0) {
    ::close(fd);
    return MappedFile();
  }
  void *data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd); // the mapping keeps the file
  LMC_CHECK_SYS(data != MAP_FAILED, "cannot map '", path, "' (", size,
                " bytes)");
  return MappedFile(data, size);
}

MappedFile::MappedFile(MappedFile &&other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile &MappedFile::operator=(MappedFile &&other) noexcept {
  if (this != &other) {
    if (data_)
      ::munmap(data_, size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (data_)
    ::munmap(data_, size_);
}

} // namespace lmc::rt
