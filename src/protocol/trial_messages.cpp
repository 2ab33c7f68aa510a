#include "protocol/trial_messages.hpp"

#include "core/text.hpp"
#include "protocol/fields.hpp"

namespace slurmtune::protocol {
namespace {

// The error of a failed trial: its stderr's last lines fit; the frame bounds it anyway.
constexpr std::size_t kMaxError = 32768;

}  // namespace

std::string encode(const TrialEnding& m) {
  return std::string("{\"status\": \"") + (m.completed ? "completed" : "failed") +
         "\", \"error\": " + core::json_quote(m.error) + "}";
}

TrialEnding decode_trial_ending(const core::JsonObject& body, const char* message) {
  const std::string status = required_text(body, "status", message, 16);
  if (status != "completed" && status != "failed")
    throw ProtocolError(std::string(message) +
                        ": 'status' must be \"completed\" or \"failed\", not \"" +
                        core::visible(status) + "\"");
  TrialEnding m;
  m.completed = status == "completed";
  if (field(body, "error")) m.error = required_text(body, "error", message, kMaxError, true);
  return m;
}

}  // namespace slurmtune::protocol
