#pragma once
// A connection's authentication, before anything else it says counts: its first frame
// must be HELLO with the credential of what it claims (protocol/credentials.hpp, compared
// in constant time), or a HELLO with a "challenge" followed by PROOF (mutual
// authentication, protocol/wire/mutual_auth.hpp: the coordinator proves it holds the
// credential first). The same check serves a direct connection and a channel an agent
// carries: the agent forwards a claim it cannot forge.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "protocol/credentials.hpp"
#include "protocol/session_messages.hpp"
#include "protocol/wire/protocol.hpp"

namespace slurmtune::runtime {

class HelloCheck {
 public:
  /// What a trial HELLO's credential must cover (its running launch, and who derived the
  /// credential); a default grant for other HELLOs.
  using GrantOf = std::function<protocol::AttemptGrant(const protocol::Hello&)>;

  /// Takes the next frame of a connection not yet authenticated. Returns the HELLO once
  /// its claim is proven. A HELLO that asks for a challenge returns nullopt and leaves
  /// the CHALLENGE frame to send in `reply`. Throws ProtocolError for anything else.
  std::optional<protocol::Hello> on_frame(const protocol::Frame& frame, const std::string& secret,
                                          const GrantOf& grant_of, std::string& reply);

 private:
  std::optional<protocol::Hello> challenged_;
  std::string client_nonce_, server_nonce_, key_;
};

}  // namespace slurmtune::runtime
