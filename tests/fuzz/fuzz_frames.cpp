// libFuzzer target: the control plane's frame decoder and message decoding, as the
// coordinator runs them on bytes from the network. The first byte sets the chunk size
// the stream arrives in. A malformed stream must end in ProtocolError; decoded payloads
// go through the same field accessors the message handlers use.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/error.hpp"
#include "runtime/message_fields.hpp"
#include "runtime/protocol.hpp"

using namespace slurmtune::runtime;

namespace {
void read_fields(const slurmtune::core::JsonObject& body) {
  for (const char* name : {"step", "trial", "rank", "size", "group", "ranks"}) {
    try {
      static_cast<void>(number(body, name, "FUZZ"));
    } catch (const ProtocolError&) {
    }
  }
  for (const char* name : {"token", "status", "error", "path", "nodes", "slurm_step"})
    static_cast<void>(text(body, name));
  if (const auto* metrics = field(body, "metrics"); metrics && metrics->is_object())
    for (const auto& [name, value] : std::get<slurmtune::core::JsonObject>(metrics->data))
      static_cast<void>(value.is_number());
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t chunk = 1 + data[0] % 64;
  const std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
  FrameDecoder decoder;
  try {
    for (std::size_t at = 0; at < stream.size(); at += chunk) {
      decoder.feed(stream.substr(at, chunk));
      while (auto frame = decoder.next()) {
        try {
          read_fields(payload_object(*frame));
        } catch (const ProtocolError&) {
        }
      }
    }
  } catch (const ProtocolError&) {
  }
  return 0;
}
