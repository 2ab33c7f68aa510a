#pragma once
// Mutual authentication for connections made to a *published* address (workers of a
// joined allocation, which find the coordinator through a file next to the study):
// both sides prove they hold the study's token without sending it, so a process that
// took over a stale address (a coordinator that has since ended) learns nothing and is
// refused. The proofs are HMAC-SHA-256 (RFC 2104, FIPS 180-4; OpenSSL's libcrypto) over
// both sides' fresh nonces, one direction-specific label each, so a proof cannot be
// reflected back.
//
//   worker -> coordinator  HELLO     {..., "challenge": Nw}             (no token)
//   coordinator -> worker  CHALLENGE {"nonce": Nc, "proof": HMAC(t, "coordinator" Nw Nc)}
//   worker -> coordinator  PROOF     {"proof": HMAC(t, "worker" Nc Nw)}
//   coordinator -> worker  WELCOME
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace slurmtune::protocol {

using Sha256Digest = std::array<std::uint8_t, 32>;

Sha256Digest sha256(std::string_view data);
Sha256Digest hmac_sha256(std::string_view key, std::string_view message);
std::string to_hex(const Sha256Digest& digest);

/// What the coordinator sends to prove it holds `token`.
std::string coordinator_proof(std::string_view token, std::string_view worker_nonce,
                              std::string_view coordinator_nonce);
/// What the worker sends back to prove it holds `token`.
std::string worker_proof(std::string_view token, std::string_view coordinator_nonce,
                         std::string_view worker_nonce);

}  // namespace slurmtune::protocol
