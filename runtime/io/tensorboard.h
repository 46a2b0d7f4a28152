//===- tensorboard.h - TensorBoard event files (--log-dir) ---------------===//
//
// DIR/events.out.tfevents.<unix time>.<host>.<pid>.<n>, a new file for
// every run (never over an existing one): a TFRecord file (per record:
// uint64 length, masked CRC-32C of the length, the bytes, masked CRC-32C of
// the bytes; little-endian) of serialized tensorflow.Event protos. The first
// record has file_version "brain.Event:2"; each scalar is an Event with a
// Summary holding one simple_value. The few protobuf fields are encoded by
// hand:
//   Event   { double wall_time = 1; int64 step = 2; string file_version = 3;
//             Summary summary = 5; }
//   Summary { repeated Value value = 1; }
//   Value   { string tag = 1; float simple_value = 2; }
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_TENSORBOARD_H
#define LMC_RUNTIME_TENSORBOARD_H

#include <cstdint>
#include <cstdio>
#include <string>

namespace lmc::rt {

/// One TFRecord: length, masked CRC of the length, data, masked CRC of data.
std::string tfRecord(const std::string &data);
/// Serialized Event protos.
std::string fileVersionEvent(double wallTime);
std::string scalarEvent(double wallTime, int64_t step, const std::string &tag,
                        float value);

class EventWriter {
public:
  /// Creates DIR (one level) and the event file; writes the version record.
  explicit EventWriter(const std::string &dir);
  ~EventWriter();
  EventWriter(const EventWriter &) = delete;
  EventWriter &operator=(const EventWriter &) = delete;

  void scalar(const std::string &tag, int64_t step, double value);
  /// Flushes buffered records (done after every logged step).
  void flush();
  void close();
  const std::string &path() const { return path_; }

private:
  void write(const std::string &record);
  std::string path_;
  std::FILE *file_ = nullptr;
};

} // namespace lmc::rt

#endif // LMC_RUNTIME_TENSORBOARD_H
