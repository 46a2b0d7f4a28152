//===- protobuf_wire.h - Protocol Buffers' wire format, written by hand ---===//
//
// The two files the runtime writes as protobuf (ONNX models for
// --export-onnx, TensorBoard event records) need only varints, keys and
// length-delimited fields; the protobuf library would be a dependency of
// every executable for that.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_RUNTIME_IO_PROTOBUF_WIRE_H
#define LMC_RUNTIME_IO_PROTOBUF_WIRE_H

#include <cstdint>
#include <string>

namespace lmc::rt::wire {

constexpr uint32_t kVarint = 0, kFixed64 = 1, kLengthDelimited = 2,
                   kFixed32 = 5;

/// `value` in base-128, least significant group first.
inline void appendVarint(std::string &out, uint64_t value) {
  while (value >= 0x80) {
    out += char(uint8_t(value) | 0x80);
    value >>= 7;
  }
  out += char(uint8_t(value));
}

/// A field's key: its number and wire type.
inline void appendKey(std::string &out, uint32_t field, uint32_t wireType) {
  appendVarint(out, (uint64_t(field) << 3) | wireType);
}

/// A length-delimited field (string, bytes, embedded message).
inline void appendLengthDelimited(std::string &out, uint32_t field,
                                  const std::string &bytes) {
  appendKey(out, field, kLengthDelimited);
  appendVarint(out, bytes.size());
  out += bytes;
}

} // namespace lmc::rt::wire

#endif // LMC_RUNTIME_IO_PROTOBUF_WIRE_H
