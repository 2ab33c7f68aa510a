#include "protocol/credentials.hpp"

#include <type_traits>

#include "protocol/wire/mutual_auth.hpp"

namespace slurmtune::protocol {
namespace {

// One label for every derived credential, then what it covers: distinct from the
// mutual-authentication proofs' labels ("slurmtune coordinator\n", "slurmtune worker\n"),
// so no proof is ever a credential or the reverse.
std::string derive(std::string_view secret, std::string_view what) {
  std::string message = "slurmtune credential\n";
  message.append(what);
  return to_hex(hmac_sha256(secret, message));
}

}  // namespace

std::string attempt_credential(std::string_view secret, core::TrialId trial, std::uint64_t attempt,
                               std::uint64_t launch) {
  return derive(secret, "attempt\n" + std::to_string(trial) + "\n" + std::to_string(attempt) +
                            "\n" + std::to_string(launch));
}

std::string group_step_credential(std::string_view secret, int step) {
  return derive(secret, "step\n" + std::to_string(step));
}

std::string worker_credential(std::string_view secret, std::string_view node) {
  return derive(secret, "worker\n" + std::string(node));
}

std::string credential_for(std::string_view secret, const HelloFrom& from,
                           const AttemptGrant& grant) {
  return std::visit(
      [secret, &grant](const auto& hello) -> std::string {
        using T = std::decay_t<decltype(hello)>;
        if constexpr (std::is_same_v<T, TrialHello>)
          return attempt_credential(
              grant.host.empty() ? std::string(secret) : worker_credential(secret, grant.host),
              hello.trial, hello.attempt, grant.launch);
        else if constexpr (std::is_same_v<T, GroupHello>)
          return group_step_credential(secret, hello.step);
        else if constexpr (std::is_same_v<T, WorkerHello>)
          return worker_credential(secret, hello.node);
        else
          return std::string(secret);
      },
      from);
}

std::string claim_of(const HelloFrom& from) {
  return std::visit(
      [](const auto& hello) -> std::string {
        using T = std::decay_t<decltype(hello)>;
        if constexpr (std::is_same_v<T, TrialHello>)
          return "trial " + std::to_string(hello.trial) + ", attempt " +
                 std::to_string(hello.attempt);
        else if constexpr (std::is_same_v<T, GroupHello>)
          return "group step " + std::to_string(hello.step);
        else if constexpr (std::is_same_v<T, WorkerHello>)
          return "worker " + hello.node;
        else
          return "joined worker " + hello.node + " of job " + hello.allocation;
      },
      from);
}

}  // namespace slurmtune::protocol
