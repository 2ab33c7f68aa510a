#pragma once
// TensorBoard's event files, written without TensorFlow: a TFRecord stream (each
// record: length, masked CRC-32C of the length, data, masked CRC-32C of the data) of
// serialized `tensorflow.Event` protocol buffers. ProtoWriter encodes the few messages
// needed (Event, Summary, the HParams plugin's data) field by field, in the protobuf
// wire format; doc/cli.md#tensorboard lists the fields.
#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>

namespace slurmtune::cli {

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as TFRecord uses it.
std::uint32_t crc32c(std::string_view data);
/// TFRecord's masked CRC: rotated right by 15 bits plus 0xa282ead8.
std::uint32_t masked_crc32c(std::string_view data);
/// One TFRecord: what an event file holds per event.
std::string tfrecord(std::string_view data);

/// A protobuf message under construction; fields are appended in the order given.
class ProtoWriter {
 public:
  ProtoWriter& varint(int field, std::uint64_t value);    ///< int32/int64/enum/bool
  ProtoWriter& fixed64(int field, double value);          ///< double
  ProtoWriter& fixed32(int field, float value);           ///< float
  ProtoWriter& bytes(int field, std::string_view value);  ///< string, bytes, a message
  ProtoWriter& message(int field, const ProtoWriter& inner) { return bytes(field, inner.data_); }
  const std::string& data() const { return data_; }

 private:
  void key(int field, int wire_type);
  void raw_varint(std::uint64_t value);
  std::string data_;
};

/// `tensorflow.Event` with `file_version`: the first record of every event file.
std::string file_version_event(double wall_time);
/// `tensorflow.Event` at `step` with a `Summary` of one scalar (`simple_value`).
std::string scalar_event(double wall_time, std::int64_t step, std::string_view tag, float value);
/// `tensorflow.Event` whose summary carries an HParams plugin message (`plugin_data`
/// serialized HParamsPluginData) under `tag`, as tensorboard.plugins.hparams writes it.
std::string hparams_event(double wall_time, std::string_view tag, const ProtoWriter& plugin_data);

}  // namespace slurmtune::cli
