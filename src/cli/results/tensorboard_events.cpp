#include "cli/results/tensorboard_events.hpp"

#include <array>
#include <bit>
#include <cstring>

namespace slurmtune::cli {
namespace {

constexpr std::array<std::uint32_t, 256> crc32c_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k)
      c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    table[i] = c;
  }
  return table;
}
constexpr auto kCrcTable = crc32c_table();

std::string little_endian(std::uint64_t value, int bytes) {
  std::string out;
  for (int i = 0; i < bytes; ++i)
    out += static_cast<char>((value >> (8 * i)) & 0xFF);
  return out;
}

// Summary.Value.metadata: SummaryMetadata { plugin_data { plugin_name, content } }.
ProtoWriter plugin_metadata(std::string_view plugin, std::string_view content) {
  ProtoWriter plugin_data;
  plugin_data.bytes(1, plugin).bytes(2, content);
  ProtoWriter metadata;
  metadata.message(1, plugin_data);
  return metadata;
}

// The length-0 float vector TensorBoard's hparams summaries carry as their tensor:
// TensorProto { dtype: DT_FLOAT, tensor_shape { dim { size: 0 } } }.
ProtoWriter null_tensor() {
  ProtoWriter dim, shape, tensor;
  shape.message(2, dim);
  tensor.varint(1, 1).message(2, shape);
  return tensor;
}

}  // namespace

std::uint32_t crc32c(std::string_view data) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (const char c : data)
    crc = kCrcTable[(crc ^ static_cast<std::uint8_t>(c)) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

std::uint32_t masked_crc32c(std::string_view data) {
  return std::rotr(crc32c(data), 15) + 0xa282ead8u;
}

std::string tfrecord(std::string_view data) {
  const std::string length = little_endian(data.size(), 8);
  std::string out = length;
  out += little_endian(masked_crc32c(length), 4);
  out.append(data);
  out += little_endian(masked_crc32c(data), 4);
  return out;
}

void ProtoWriter::key(int field, int wire_type) {
  raw_varint(static_cast<std::uint64_t>(field) << 3 | static_cast<std::uint64_t>(wire_type));
}

void ProtoWriter::raw_varint(std::uint64_t value) {
  while (value >= 0x80) {
    data_ += static_cast<char>((value & 0x7F) | 0x80);
    value >>= 7;
  }
  data_ += static_cast<char>(value);
}

ProtoWriter& ProtoWriter::varint(int field, std::uint64_t value) {
  key(field, 0);
  raw_varint(value);
  return *this;
}

ProtoWriter& ProtoWriter::fixed64(int field, double value) {
  key(field, 1);
  data_ += little_endian(std::bit_cast<std::uint64_t>(value), 8);
  return *this;
}

ProtoWriter& ProtoWriter::fixed32(int field, float value) {
  key(field, 5);
  data_ += little_endian(std::bit_cast<std::uint32_t>(value), 4);
  return *this;
}

ProtoWriter& ProtoWriter::bytes(int field, std::string_view value) {
  key(field, 2);
  raw_varint(value.size());
  data_.append(value);
  return *this;
}

// Event { wall_time = 1 (double), step = 2 (int64), file_version = 3, summary = 5 }
// Summary { value = 1 }; Summary.Value { tag = 1, simple_value = 2, tensor = 8, metadata = 9 }
std::string file_version_event(double wall_time) {
  ProtoWriter event;
  event.fixed64(1, wall_time).bytes(3, "brain.Event:2");
  return event.data();
}

std::string scalar_event(double wall_time, std::int64_t step, std::string_view tag, float value) {
  ProtoWriter scalar, summary, event;
  scalar.bytes(1, tag).fixed32(2, value);
  summary.message(1, scalar);
  event.fixed64(1, wall_time).varint(2, static_cast<std::uint64_t>(step)).message(5, summary);
  return event.data();
}

std::string hparams_event(double wall_time, std::string_view tag, const ProtoWriter& plugin_data) {
  ProtoWriter value, summary, event;
  value.bytes(1, tag)
      .message(8, null_tensor())
      .message(9, plugin_metadata("hparams", plugin_data.data()));
  summary.message(1, value);
  event.fixed64(1, wall_time).message(5, summary);
  return event.data();
}

}  // namespace slurmtune::cli
