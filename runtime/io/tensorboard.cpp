//===- tensorboard.cpp - TensorBoard event files (--log-dir) -------------===//

#include "io/tensorboard.h"

#include "base/error.h"
#include "io/crc32c.h"
#include "io/protobuf_wire.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace lmc::rt {

namespace {

using wire::appendKey;
using wire::appendLengthDelimited;
using wire::appendVarint;

template <typename T> void appendLittleEndian(std::string &out, T value) {
  unsigned char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T)); // the runtime targets little-endian
  out.append(reinterpret_cast<const char *>(bytes), sizeof(T));
}

std::string eventHeader(double wallTime, int64_t step) {
  std::string event;
  appendKey(event, 1, wire::kFixed64); // wall_time: double
  appendLittleEndian(event, wallTime);
  if (step != 0) {
    appendKey(event, 2, wire::kVarint); // step: int64 (varint)
    appendVarint(event, uint64_t(step));
  }
  return event;
}

double nowSeconds() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

} // namespace

std::string tfRecord(const std::string &data) {
  std::string out;
  appendLittleEndian(out, uint64_t(data.size()));
  appendLittleEndian(out, maskedCrc32c(out.data(), 8));
  out += data;
  appendLittleEndian(out, maskedCrc32c(data.data(), data.size()));
  return out;
}

std::string fileVersionEvent(double wallTime) {
  std::string event = eventHeader(wallTime, 0);
  appendLengthDelimited(event, 3, "brain.Event:2");
  return event;
}

std::string scalarEvent(double wallTime, int64_t step, const std::string &tag,
                        float value) {
  std::string summaryValue;
  appendLengthDelimited(summaryValue, 1, tag);
  appendKey(summaryValue, 2, wire::kFixed32); // simple_value: float (fixed32)
  appendLittleEndian(summaryValue, value);
  std::string summary;
  appendLengthDelimited(summary, 1, summaryValue);
  std::string event = eventHeader(wallTime, step);
  appendLengthDelimited(event, 5, summary);
  return event;
}

EventWriter::EventWriter(const std::string &dir) {
  if (::mkdir(dir.c_str(), 0755) != 0)
    LMC_CHECK_SYS(errno == EEXIST, "cannot create --log-dir '", dir, "'");
  char host[256] = "localhost";
  LMC_CHECK_SYS(::gethostname(host, sizeof host - 1) == 0,
                "cannot get the host name");
  host[sizeof host - 1] = '\0';
  const double now = nowSeconds();
  // As TensorFlow's writers name them: the pid and a counter after the
  // second and the host, and never over an existing file, so that a run
  // resumed (or restarted by a scheduler) within the same second adds a
  // file beside the first run's instead of truncating its history.
  static int counter = 0;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    path_ = concat(dir, "/events.out.tfevents.", (long long)now, ".", host,
                   ".", (long long)::getpid(), ".", counter++);
    file_ = std::fopen(path_.c_str(), "wbx"); // O_EXCL
    if (file_ || errno != EEXIST)
      break;
  }
  LMC_CHECK_SYS(file_, "cannot create TensorBoard event file '", path_, "'");
  write(tfRecord(fileVersionEvent(now)));
  flush();
}

EventWriter::~EventWriter() {
  if (file_)
    std::fclose(file_);
}

void EventWriter::write(const std::string &record) {
  LMC_CHECK_SYS(std::fwrite(record.data(), 1, record.size(), file_) ==
                    record.size(),
                "cannot write '", path_, "'");
}

void EventWriter::scalar(const std::string &tag, int64_t step, double value) {
  write(tfRecord(scalarEvent(nowSeconds(), step, tag, float(value))));
}

void EventWriter::flush() {
  LMC_CHECK_SYS(std::fflush(file_) == 0, "cannot write '", path_, "'");
}

void EventWriter::close() {
  if (!file_)
    return;
  std::FILE *f = file_;
  file_ = nullptr;
  LMC_CHECK_SYS(std::fclose(f) == 0, "cannot close '", path_, "'");
}

} // namespace lmc::rt
